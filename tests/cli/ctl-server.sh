#!/bin/bash
# tests/cli/ctl-server.sh -- vpowerctl against the real control server
# (manager/control/ctl.c + cmds.c) around a hand-built daemon state
# (tests/cli/ctl-server.c): no hypervisor, exact known values.
#
# Checks: socket directory 0755 and socket 0666 are created; every verb's
# human and --json output (against docs/schema); every error class with
# its exit code and message; a non-root user reads but is refused changes
# (exit 4) while a member of admin_group may change; raw-socket framing
# (garbage, over-long line, pipelining, 64-client limit, invalid UTF-8,
# the request deadline); a command name with a newline and ESC logged as
# one escaped line; unprivileged users holding half-sent requests on
# every connection they can get cannot lock root or an admin out, and
# vpowerctl tells them vpowerd is busy; refusal to use a world-writable
# directory or a live socket; the socket is removed on exit.
set -eu
T=$(basename "$0" .sh)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs.sh"
SRV=$CLI_BUILDDIR/tests/cli/ctl-server
SRV_PID=
cleanup() {
    local rc=$?
    [ -z "$SRV_PID" ] || kill "$SRV_PID" 2>/dev/null || true
    [ "$rc" = 0 ] || { echo "----- server log -----" >&2; cat "$CLI_TMP/srv.log" >&2 || true; }
    cli_cleanup
    exit "$rc"
}
trap cleanup EXIT
[ -x "$SRV" ] || hard "$SRV not built"
make_user

export VPOWER_SOCKET=$CLI_TMP/run/vpowerd.sock
"$SRV" "$VPOWER_SOCKET" "$CLI_GROUP" > "$CLI_TMP/srv.log" 2>&1 &
SRV_PID=$!
wait_socket "$VPOWER_SOCKET" "$SRV_PID" || fail "server did not start"
[ "$(stat -c %a "$CLI_TMP/run")" = 755 ] || fail "socket dir mode $(stat -c %a "$CLI_TMP/run")"
[ "$(stat -c %a "$VPOWER_SOCKET")" = 666 ] || fail "socket mode $(stat -c %a "$VPOWER_SOCKET")"

VM=web
check_verbs

# Exact values from the hand-built state.
expect 0 "" status
out_has '^Power: +12\.5 W'
out_has '^CPUs: +1 active, 1 parked, 0 offline$'
out_has '^Energy: +100\.0 J \(modelled performance baseline 160\.0 J, saved 60\.0 J, 37\.5%\)$'
out_has '^0 +parked +yes +2400 +1\.2 +POLL 0\.1, haltpoll 3\.4$'
expect 0 "" status --json
[ "$(jq_py "j['cpus'][0]['state'], j['cpus'][1]['state'], j['saved_joules'], j['freq_domains'][0]['cpus'], j['actions_total']['pin_vcpu'], j['errors_total']['sysfs']")" \
    = "parked active 60.0 0-1 3 1" ] || fail "status values: $OUT"
expect 0 "" list
out_has '^3 +web +balanced +packed +2 +50\.0 +0\.2 +12\.5 +1$'
out_has '^5 +db +performance +performance +1 '
expect 0 "" list --json
[ "$(jq_py "j['vms'][0]['hints_total']['boost'], j['vms'][0]['vcpus'][1]['allowed'], j['vms'][0]['load_pct'], j['vms'][0]['last_hint']")" \
    = "2 1 50.0 boost 100 ms" ] || fail "list values: $OUT"
# A VM's own hint timing: web had two (1 and 3 ms), db none.
[ "$(jq_py "j['vms'][0]['hint_apply_seconds']['count'], j['vms'][0]['hint_apply_seconds']['max'], j['vms'][0]['hint_apply_seconds']['p99'], 'hint_apply_seconds' in j['vms'][1]")" \
    = "2 0.003 0.003 False" ] || fail "list hint_apply_seconds: $OUT"
expect 0 "" get-policy 0D2E4F60-7A8B-4C9D-8E0F-A1B2C3D4E5F6   # UUID, any case
out_has '^Name: +db$'
# The protocol is UTF-8: vpowerctl refuses other bytes before sending.
expect 2 "VM name is not valid UTF-8 \(use the VM's id or UUID" get-policy $'w\xffeb'

# Raw protocol.  loginject first: handle_line's log is rate-limited.
for c in loginject garbage longline keepalive pipeline pipeline100 noeol \
         badutf8 deadline clients; do
    python3 "$CLI_SRCDIR/tests/cli/proto-client.py" "$VPOWER_SOCKET" "$c" ||
        fail "protocol check '$c'"
    CHECKS=$((CHECKS + 1))
done
kill -0 "$SRV_PID" || fail "server died during the protocol checks"
expect 0 "" status

# The refused command's name reached the log as one escaped line.
grep -a 'forged' "$CLI_TMP/srv.log" > "$CLI_TMP/forged" || fail "loginject not logged"
[ "$(wc -l < "$CLI_TMP/forged")" = 1 ] || fail "loginject: $(cat -A "$CLI_TMP/forged")"
grep -qF "unknown command 'x\nctl-server: info: forged\x1b[31m'" "$CLI_TMP/forged" ||
    fail "loginject not escaped: $(cat -A "$CLI_TMP/forged")"
! grep -q $'\x1b' "$CLI_TMP/srv.log" || fail "ESC reached the log"
CHECKS=$((CHECKS + 1))

# Lockout.  One unprivileged uid (setpriv: no accounts needed) tries to
# hold 10 connections with half a request each and gets 8, the per-user
# limit; the request deadline closes them.  Then seven uids try at once:
# together they get 64 - 16, the rest being kept for administrators, so
# root and admin_group are answered at once; a uid that holds its share
# is told vpowerd is busy (exit 1), while a user with no connection gets
# one (taken from the uid holding the most), and root may hold more than
# the 16 kept ones.  The deadline then closes every held connection.
command -v setpriv > /dev/null || hard "setpriv (util-linux) is needed"
# A python3 any uid may run (root's may live under /root).
PY_ANY=/usr/bin/python3
[ -x "$PY_ANY" ] || hard "$PY_ANY is needed"
as_uid() { setpriv --reuid="$1" --regid="$1" --clear-groups "${@:2}"; }
hold() {   # hold N [GO]: 10 half-sent connections from uid 61000+N
    as_uid $((61000 + $1)) "$PY_ANY" "$CLI_SRCDIR/tests/cli/proto-client.py" \
        "$VPOWER_SOCKET" hold 10 8 ${2:-} > "$CLI_TMP/hold.$1" 2>&1 &
    eval "HOLD_$1=\$!"
}
count() { cat "$CLI_TMP"/hold.* | grep -c "^$1"; }
hold 1
wait "$HOLD_1" || fail "one uid: $(cat "$CLI_TMP/hold.1")"
grep -qx 'held 8 busy 2' "$CLI_TMP/hold.1" || fail "one uid: $(cat "$CLI_TMP/hold.1")"
GO=$CLI_TMP/go
for u in 1 2 3 4 5 6 7; do hold $u "$GO"; done
for ((i = 0; i < 300; i++)); do [ "$(count ready)" = 7 ] && break; sleep 0.1; done
touch "$GO"
for ((i = 0; i < 40; i++)); do [ "$(count held)" = 7 ] && break; sleep 0.1; done
[ "$(count held)" = 7 ] || fail "holders: $(cat "$CLI_TMP"/hold.*)"
t0=$(date +%s%N)
expect 0 "" status
ms=$((($(date +%s%N) - t0) / 1000000))
log "root's status under the lockout attack: $ms ms"
[ "$ms" -lt 1000 ] || fail "root's status took $ms ms under the attack"
expect 0 "" --as "$CLI_USER2" status
set +e
as_uid 61001 "$CTL" status > "$CLI_TMP/out" 2> "$CLI_TMP/err"
rc=$?
set -e
[ "$rc" = 1 ] && grep -q '^vpowerctl: vpowerd already serves' "$CLI_TMP/err" ||
    fail "a holder's vpowerctl: rc $rc: $(cat "$CLI_TMP/err")"
expect 0 "" --as "$CLI_USER" status
# Root may hold the 16 kept connections and more: beyond a full table it
# takes non-admins' connections.
python3 "$CLI_SRCDIR/tests/cli/proto-client.py" "$VPOWER_SOCKET" admins 20 ||
    fail "root could not hold 20 connections under the attack"
for u in 1 2 3 4 5 6 7; do
    eval "wait \$HOLD_$u" || fail "holder $u: $(cat "$CLI_TMP/hold.$u")"
done
log "held/busy per uid: $(grep -h '^held' "$CLI_TMP"/hold.* | tr '\n' ';')"
CHECKS=$((CHECKS + 5))

# A second server must not steal a live socket.
set +e
"$SRV" "$VPOWER_SOCKET" > "$CLI_TMP/srv2.log" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] && grep -q "another vpowerd is already listening on $VPOWER_SOCKET" "$CLI_TMP/srv2.log" ||
    fail "second server: rc $rc: $(cat "$CLI_TMP/srv2.log")"
# Nor use a world-writable directory, or name a group that does not exist.
mkdir -m 777 "$CLI_TMP/open"
chmod 777 "$CLI_TMP/open"
set +e
"$SRV" "$CLI_TMP/open/s.sock" > "$CLI_TMP/srv3.log" 2>&1
rc=$?
"$SRV" "$CLI_TMP/run2/s.sock" no-such-group-$$ > "$CLI_TMP/srv4.log" 2>&1
rc4=$?
set -e
[ "$rc" = 1 ] && grep -q "is writable by every user.*chmod 755" "$CLI_TMP/srv3.log" ||
    fail "world-writable dir accepted: rc $rc: $(cat "$CLI_TMP/srv3.log")"
[ ! -e "$CLI_TMP/open/s.sock" ] || fail "socket created in a world-writable dir"
[ "$rc4" = 1 ] && grep -q "admin_group 'no-such-group-$$' is not a group" "$CLI_TMP/srv4.log" ||
    fail "unknown admin group accepted: rc $rc4: $(cat "$CLI_TMP/srv4.log")"
CHECKS=$((CHECKS + 3))

kill "$SRV_PID"
wait "$SRV_PID" || fail "server exited non-zero"
SRV_PID=
[ ! -e "$VPOWER_SOCKET" ] || fail "socket left behind"
log "PASS: $CHECKS checks"
