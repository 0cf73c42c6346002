# shellcheck shell=bash
# tests/cli/verbs.sh -- vpowerctl checks shared by the fake-host and the
# real-daemon tests.  Sourced after lib.sh; needs VPOWER_SOCKET exported,
# VM (a running VM's name), and CLI_USER/CLI_USER2 from make_user (the
# second one in the admin group).

check_verbs() {
    local uuid id n

    # status
    expect 0 "" status
    out_has '^vpowerd: +[0-9.]+, up '
    out_has '^Power: +[0-9.]+ W \(model estimate\)'
    out_has '^CPUs: +[0-9]+ active, [0-9]+ parked, [0-9]+ offline'
    out_has '^CPU +STATE +MANAGED +FREQ_MHZ +NONIDLE_S +IDLE_S'
    expect 0 "" status --json
    schema status
    expect 0 "" --json status          # global option before the verb
    schema status

    # list
    expect 0 "" list
    out_has '^ID +NAME +POLICY +REASON +VCPUS +LOAD% +READY% +ENERGY_J +CPUS'
    out_has " $VM "
    expect 0 "" list --json
    schema list
    uuid=$(jq_py "[v['uuid'] for v in j['vms'] if v['name']=='$VM'][0]")
    id=$(jq_py "[v['id'] for v in j['vms'] if v['name']=='$VM'][0]")
    n=$(jq_py 'len(j["vms"])')
    expect 0 "" list --names
    out_has "^$VM\$"
    [ "$(grep -c . "$CLI_TMP/out")" = "$n" ] ||
        fail "list --names printed $(grep -c . "$CLI_TMP/out") names, --json $n VMs"

    # get-policy by name, UUID and id, like virsh.
    expect 0 "" get-policy "$VM"
    out_has "^Name: +$VM\$"
    out_has '^Policy: +(balanced|performance|powersave)$'
    expect 0 "" get-policy "$uuid"
    out_has "^Name: +$VM\$"
    expect 0 "" get-policy "$id"
    out_has "^Name: +$VM\$"
    expect 0 "" get-policy "$VM" --json
    schema get-policy

    # set-policy with every option, then back.
    expect 0 "" set-policy "$VM" powersave --latency-us 50 --min-freq-khz 1000000 \
        --never-offline --share-smt
    out_has "^Policy of $VM set to powersave\.\$"
    expect 0 "" get-policy "$VM" --json
    schema get-policy
    [ "$(jq_py "j['policy'],j['latency_us'],j['min_freq_khz'],j['never_offline'],j['share_smt'],j['source']")" \
        = "powersave 50 1000000 True True metadata" ] ||
        fail "set-policy not in force: $OUT"
    expect 0 "" get-policy "$VM"
    out_has '^Latency bound: +50 us$'
    out_has '^Min frequency: +1000000 kHz$'
    out_has '^Source: +domain metadata$'
    # Options not given are reset (the whole policy is replaced).
    expect 0 "" set-policy "$VM" balanced --json
    schema get-policy
    [ "$(jq_py "j['policy'],j['latency_us'],j['never_offline']")" = "balanced 0 False" ] ||
        fail "set-policy balanced did not reset the options: $OUT"

    # explain
    expect 0 "" explain "$VM"
    out_has "^$VM: [a-z-]+\$"
    expect 0 "" explain "$VM" --json
    schema explain

    # override
    expect 0 "" override performance
    out_has '^Host-wide override: performance$'
    expect 0 "" status --json
    [ "$(jq_py "j['override']")" = performance ] || fail "override not in status"
    expect 0 "" override off --json
    schema override
    [ "$(jq_py "j['override']")" = off ] || fail "override off: $OUT"

    # version, help
    expect 0 "" version
    out_has '^vpowerctl [0-9]'
    out_has '^vpowerd [0-9.]+ \(protocol 1\)$'
    expect 0 "" version --json
    schema version
    expect 0 "" help
    out_has 'set-policy VM POLICY'
    expect 0 "" --help
    expect 0 "" --version
    out_has '^vpowerctl [0-9]'

    # Errors from the daemon: exit 1, a message that says what to do.
    expect 1 "no running domain named 'no-such-vm' \(try: vpowerctl list\)" \
        get-policy no-such-vm
    expect 1 "no running domain named" explain no-such-vm
    expect 1 "no running domain named" set-policy no-such-vm balanced
    expect 1 "minimum frequency 9000000 kHz is above" \
        set-policy "$VM" balanced --min-freq-khz 9000000

    # Usage errors: exit 2, checked before anything is sent.
    expect 2 "unknown command 'frobnicate'" frobnicate
    expect 2 "unknown policy 'turbo' \(use balanced, performance or powersave\)" \
        set-policy "$VM" turbo
    expect 2 "--latency-us needs a whole number of microseconds, not 'abc'" \
        set-policy "$VM" balanced --latency-us abc
    expect 2 "--latency-us 0 is out of range \(1 to 10000000" \
        set-policy "$VM" balanced --latency-us 0
    expect 2 "out of range" set-policy "$VM" balanced --latency-us 10000001
    expect 2 "whole number" set-policy "$VM" balanced --latency-us -5
    expect 2 "whole number" set-policy "$VM" balanced --latency-us 5x
    expect 2 "whole number" set-policy "$VM" balanced --min-freq-khz 1.5
    expect 2 "out of range" set-policy "$VM" balanced --min-freq-khz 99999999999
    expect 2 "usage: vpowerctl get-policy VM" get-policy
    expect 2 "usage: vpowerctl set-policy" set-policy "$VM"
    expect 2 "usage: vpowerctl status" status extra
    expect 2 "override takes 'performance' or 'off', not 'on'" override on
    expect 2 "policy options only go with set-policy" status --latency-us 5
    expect 2 "unknown option '--bogus'" status --bogus
    expect 2 "option '--socket' needs an argument" status --socket
    expect 2 "needs a number of seconds" status --timeout soon
    expect 2 "-d and -n only go with top" status -n 2
    expect 2 "" # no verb: help on stderr

    # Cannot connect: exit 3 with the hint.
    expect 3 "cannot connect to vpowerd at $CLI_TMP/none.sock: No such file or directory \(is vpowerd running\? start it with 'vpowerd' or 'systemctl start vpowerd'" \
        --socket "$CLI_TMP/none.sock" status
    VPOWER_SOCKET=$CLI_TMP/none2.sock expect 3 "at $CLI_TMP/none2.sock" list

    # Non-root: may read, may not change (exit 4, says why and what to do).
    expect 0 "" --as "$CLI_USER" status
    expect 0 "" --as "$CLI_USER" list --json
    schema list
    expect 0 "" --as "$CLI_USER" get-policy "$VM"
    expect 4 "set-policy changes vpowerd's behaviour: only root or the admin group may do it \(run it with sudo" \
        --as "$CLI_USER" set-policy "$VM" performance
    expect 4 "only root" --as "$CLI_USER" override performance
    expect 0 "" status --json
    [ "$(jq_py "j['override']")" = off ] || fail "a refused override changed something"
    # A member of admin_group may.
    expect 0 "" --as "$CLI_USER2" set-policy "$VM" performance
    expect 0 "" --as "$CLI_USER2" set-policy "$VM" balanced
}
