#!/bin/bash
# 060-policy-metadata.sh -- acceptance of "vpowerctl and the control
# socket" against the real vpowerd, real libvirtd and real TCG guests.
#
# g1: PERSISTENT domain (virsh define + start), 1 vCPU, light load.
# g2: transient domain (virsh create), 2 vCPUs, light load.
# On this 2-CPU machine a 2-vCPU performance VM would take both cores and
# leave nothing to prove about "own cores"; so g1 has 1 vCPU and the
# checks are: after `vpowerctl set-policy g1 performance`
#   - within 2 s g1's vCPU is pinned to ONE CPU (call it X),
#     read with `virsh vcpupin --live`;
#   - soon after (pack dwell) g2's vCPUs are all pinned off X: g1 has X
#     to itself, g2 is packed onto the other CPU;
#   - `virsh metadata g1 http://vpower.org/xmlns/policy/1` shows
#     kind="performance", live and --config;
#   - vpowerctl get-policy says performance, source metadata.
# Then: SIGTERM restores every pin as found; a new vpowerd reads the
# policy back from the metadata and applies it again; after virsh destroy
# + start of g1 the definition still holds the element and vpowerd
# applies it to the new run; a non-root user gets status (0) but
# set-policy is refused (exit 4, clear message); an unknown VM gives exit
# 1 naming the VM, an unknown policy and a bad number exit 2; after the
# final SIGTERM every pin (live, and g1's --config) is as found and the
# sysfs fixture is untouched.
set -eu
. "$(dirname "$0")/lib.sh"
VPD_TMP=$VP_TMPDIR
. "$(dirname "$0")/vpowerd-lib.sh"
CTL=$VPD_BUILDDIR/manager/vpowerctl
NS=http://vpower.org/xmlns/policy/1
TUSER=

cleanup_060() {
    if [ -n "$VPD_PID" ]; then
        kill -TERM "$VPD_PID" 2>/dev/null
        sleep 2
        kill -KILL "$VPD_PID" 2>/dev/null
    fi
    [ -z "$TUSER" ] || userdel "$TUSER" 2>/dev/null
}
# set +e: under set -e a failing command in the trap would end it before
# vp_cleanup destroys and undefines the guests.
trap 'rc=$?; set +e; cleanup_060; (exit $rc); vp_cleanup' EXIT
[ -x "$VPD_BIN" ] || vp_error "$VPD_BIN not built"
[ -x "$CTL" ] || vp_error "$CTL not built"
command -v python3 >/dev/null || vp_skip "python3 not installed"
command -v useradd >/dev/null && command -v runuser >/dev/null ||
    vp_skip "useradd/runuser not installed"
vpd_lock
t_begin=$SECONDS

vp_services_up
vp_build_guest

# g1 persistent: define + start, so destroy/start keeps the definition
# (vp_cleanup undefines every domain with our prefix).
D1=$(vp_dom g1)
D2=$(vp_dom g2)
vp_guest_xml g1 light 1 "" > "$VP_TMPDIR/g1.xml"
: > "$(vp_console_log g1)"
vp_virsh define "$VP_TMPDIR/g1.xml" >/dev/null || vp_error "virsh define g1 failed"
vp_virsh start "$D1" >/dev/null || vp_error "virsh start $D1 failed"
vp_guest_start g2 light 2
vp_guest_wait_ready g1 "$VP_BOOT_TIMEOUT"
vp_guest_wait_ready g2 "$VP_BOOT_TIMEOUT"

ctl() { "$CTL" --socket "$SOCK" "$@"; }
vpin() { vp_virsh vcpupin "$1" --vcpu "$2" "${3:---live}" | awk 'NF { print $NF }'; }
epin() { vp_virsh emulatorpin "$1" --live | awk 'NF { print $NF }'; }
pins_now() {
    echo "g1 v0 $(vpin "$D1" 0) emu $(epin "$D1") config $(vpin "$D1" 0 --config)"
    echo "g2 v0 $(vpin "$D2" 0) v1 $(vpin "$D2" 1) emu $(epin "$D2")"
}
# json EXPR ARGS...: vpowerctl --json ARGS..., then EXPR over j.
json() {
    local e=$1
    shift
    ctl --json "$@" | python3 -c "import json,sys; j=json.load(sys.stdin); print($e)"
}
# cpu_set LIST: "0-1" -> "0 1".
cpu_set() {
    python3 -c '
import sys
s = set()
for p in sys.argv[1].split(","):
    a, _, b = p.partition("-")
    s.update(range(int(a), int(b or a) + 1))
print(" ".join(map(str, sorted(s))))' "$1"
}
# wait_own SECONDS: until g1's vCPU is pinned to one CPU; sets OWN_CPU
# and OWN_S (seconds it took).
wait_own() {
    local t0 p
    t0=$(date +%s.%N)
    OWN_CPU=
    while vp_lt "$(vp_elapsed "$t0" "$(date +%s.%N)" 2)" "$1"; do
        p=$(vpin "$D1" 0)
        if [[ "$p" =~ ^[0-9]+$ ]]; then
            OWN_CPU=$p
            break
        fi
        sleep 0.1
    done
    OWN_S=$(vp_elapsed "$t0" "$(date +%s.%N)" 2)
    [ -n "$OWN_CPU" ]
}
# wait_g2_off CPU SECONDS: until neither of g2's vCPUs may run on CPU.
wait_g2_off() {
    local i v ok
    for ((i = 0; i < $2 * 5; i++)); do
        ok=1
        for v in 0 1; do
            [[ " $(cpu_set "$(vpin "$D2" $v)") " == *" $1 "* ]] && ok=0
        done
        [ "$ok" = 1 ] && return 0
        sleep 0.2
    done
    return 1
}
start_vpowerd() {
    vpd_start "$VPD_TMP/vpowerd.log.$1" ${VPD_VERBOSE:+-v} \
        --config "$VPD_TMP/vpowerd.conf" --sysfs-root "$fx" --connect "$VP_URI"
    for ((i = 0; i < 100; i++)); do
        kill -0 "$VPD_PID" 2>/dev/null ||
            { cat "$VPD_TMP/vpowerd.log.$1" >&2; vp_fail "vpowerd ($1) died"; }
        ctl list --names 2>/dev/null | grep -qx "$D2" &&
            ctl list --names 2>/dev/null | grep -qx "$D1" && return 0
        sleep 0.2
    done
    tail -n 20 "$VPD_TMP/vpowerd.log.$1" >&2
    vp_fail "vpowerd ($1) does not list $D1 and $D2 within 20 s"
}
stop_vpowerd() {
    vpd_stop
    [ "$VPD_RC" = 0 ] ||
        { tail -n 20 "$VPD_TMP/vpowerd.log.$1" >&2; vp_fail "vpowerd ($1) exited $VPD_RC on SIGTERM"; }
    [ ! -e "$SOCK" ] || vp_fail "vpowerd ($1) left its socket $SOCK behind"
}
# soft_fail MSG: a failed check after which the remaining checks still
# mean something; the test fails at the end.
SOFT_FAILS=0
soft_fail() {
    echo "[$VP_TEST] FAIL: $*" >&2
    SOFT_FAILS=$((SOFT_FAILS + 1))
}
check_pins_restored() {
    pins_now | diff -u "$VPD_TMP/pins.before" - >&2 ||
        vp_fail "pins not back as found after SIGTERM ($1)"
    vp_log "pins back as found after SIGTERM ($1)"
}
check_metadata() {
    local m
    m=$(vp_virsh metadata "$D1" "$NS" $1 2>&1) ||
        vp_fail "virsh metadata $D1 $NS $1 failed: $m"
    grep -q 'kind="performance"' <<< "$m" ||
        vp_fail "virsh metadata $D1 $1 lacks kind=\"performance\": $m"
}
check_policy() {
    local p
    p=$(json 'j["policy"], j["source"]' get-policy "$D1") ||
        vp_fail "vpowerctl get-policy $D1 failed"
    [ "$p" = "performance metadata" ] ||
        vp_fail "vpowerctl get-policy $D1 ($1): '$p', want 'performance metadata'"
}

pins_now > "$VPD_TMP/pins.before"
vp_log "pins as found: $(tr '\n' ';' < "$VPD_TMP/pins.before")"
if vp_virsh metadata "$D1" "$NS" >/dev/null 2>&1; then
    vp_error "$D1 already has vpower metadata before the test set any"
fi

fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
vpd_snapshot "$fx" > "$VPD_TMP/sysfs.before"
SOCK=$VPD_TMP/vpowerd.sock
cat > "$VPD_TMP/vpowerd.conf" <<EOD
managed_cpus 0-1
period_ms 1000
max_period_ms 2000
pack_dwell_ms 1000
journal $VPD_TMP/journal
control_socket $SOCK
EOD
# The test user must reach the socket in our 0700 temp dir (search only;
# vpowerd refuses a directory others can write).
chmod 711 "$VP_TMPDIR"
export VPOWER_ONLY_DOMAINS=$VP_PREFIX

# ------------------------------------------------------- set-policy
start_vpowerd first
p=$(json 'j["policy"], j["source"]' get-policy "$D1")
[ "$p" = "balanced default" ] || vp_fail "get-policy $D1 before set-policy: '$p', want 'balanced default'"
out=$(ctl set-policy "$D1" performance 2>&1) || vp_fail "vpowerctl set-policy $D1 performance failed: $out"
wait_own 2 || vp_fail "g1's vCPU not pinned to a single CPU within 2 s of set-policy performance (pin $(vpin "$D1" 0))"
vp_log "RESULT set-policy performance: g1 vCPU0 on its own cpu$OWN_CPU after $OWN_S s"
wait_g2_off "$OWN_CPU" 15 ||
    vp_fail "g2's vCPUs still may run on g1's cpu$OWN_CPU 15 s after set-policy ($(pins_now | tr '\n' ';'))"
vp_log "RESULT g2 packed off cpu$OWN_CPU: $(pins_now | tr '\n' ';')"
check_metadata --live
check_metadata --config
vp_log "virsh metadata (live and --config): $(vp_virsh metadata "$D1" "$NS" --config | tr -s ' \n' ' ')"
check_policy "after set-policy"
why=$(json 'j["reason"]' explain "$D1")
vp_log "explain g1: $why"

# ------------------------------------------------------- vpowerd restart
stop_vpowerd first
check_pins_restored "first vpowerd"
start_vpowerd second
check_policy "after vpowerd restart"
if wait_own 5; then
    vp_log "RESULT after vpowerd restart: policy from metadata, g1 on its own cpu$OWN_CPU after $OWN_S s"
else
    soft_fail "restarted vpowerd did not give g1 its own CPU again within 5 s ($(pins_now | tr '\n' ';'); $(grep -h 'domain .*vCPUs' "$VPD_TMP/vpowerd.log.second" | tr '\n' ';'))"
fi

# ------------------------------------------------------- destroy + start
old_id=$(vp_virsh domid "$D1" | tr -d '[:space:]')
vp_virsh destroy "$D1" >/dev/null || vp_fail "virsh destroy $D1 failed"
check_metadata --config
vp_virsh start "$D1" >/dev/null || vp_fail "virsh start $D1 failed"
new_id=$(vp_virsh domid "$D1" | tr -d '[:space:]')
[ "$new_id" != "$old_id" ] || vp_error "$D1 kept id $old_id across destroy/start"
for ((i = 0; i < 50; i++)); do
    [ "$(json '[v["id"] for v in j["vms"] if v["name"] == "'"$D1"'"]' list 2>/dev/null)" = "[$new_id]" ] && break
    sleep 0.2
done
[ "$i" -lt 50 ] || vp_fail "vpowerd did not pick up $D1's new run (id $new_id) within 10 s"
check_metadata --live
check_policy "after destroy/start"
if wait_own 5; then
    vp_log "RESULT after destroy/start: metadata --config kept, policy performance from metadata, own cpu$OWN_CPU"
else
    soft_fail "g1 (new run) not on its own CPU within 5 s of vpowerd seeing it ($(pins_now | tr '\n' ';'))"
fi

# ------------------------------------------------------- non-root user
TUSER=vpw060$$
useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$TUSER" ||
    vp_error "useradd $TUSER failed"
rc=0
out=$(runuser -u "$TUSER" -- "$CTL" --socket "$SOCK" status 2>&1) || rc=$?
[ "$rc" = 0 ] || vp_fail "non-root vpowerctl status exited $rc: $out"
rc=0
out=$(runuser -u "$TUSER" -- "$CTL" --socket "$SOCK" set-policy "$D1" powersave 2>&1) || rc=$?
[ "$rc" = 4 ] || vp_fail "non-root set-policy exited $rc, want 4: $out"
grep -qiE 'permission|denied|root|admin' <<< "$out" ||
    vp_fail "non-root set-policy message is not clear: $out"
vp_log "RESULT non-root: status 0; set-policy exit 4: $out"
userdel "$TUSER" || vp_error "userdel $TUSER failed"
TUSER=

# ------------------------------------------------------- bad inputs
bad() {   # bad WANT_RC GREP ARGS...
    local want=$1 re=$2 rc=0 out
    shift 2
    out=$(ctl "$@" 2>&1) || rc=$?
    [ "$rc" = "$want" ] || vp_fail "vpowerctl $* exited $rc, want $want: $out"
    grep -qE -- "$re" <<< "$out" || vp_fail "vpowerctl $*: message does not name '$re': $out"
    vp_log "RESULT vpowerctl $*: exit $rc: $(head -1 <<< "$out")"
}
bad 1 "${VP_PREFIX}nosuch" set-policy "${VP_PREFIX}nosuch" performance
bad 1 "${VP_PREFIX}nosuch" get-policy "${VP_PREFIX}nosuch"
bad 2 turbo set-policy "$D1" turbo
bad 2 abc set-policy "$D1" performance --latency-us abc
bad 2 12x set-policy "$D1" performance --min-freq-khz 12x
check_policy "after the bad requests"
check_metadata --config

# ------------------------------------------------------- final SIGTERM
stop_vpowerd second
check_pins_restored "second vpowerd"
vpd_snapshot "$fx" | diff -u "$VPD_TMP/sysfs.before" - >&2 || vp_fail "fixture not restored"
[ "$SOFT_FAILS" = 0 ] ||
    vp_fail "$SOFT_FAILS check(s) failed (see FAIL lines above); the others passed in $((SECONDS - t_begin)) s"
vp_log "PASS in $((SECONDS - t_begin)) s"
exit 0
