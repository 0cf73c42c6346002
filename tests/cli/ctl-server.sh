#!/bin/bash
# tests/cli/ctl-server.sh -- vpowerctl against the real control server
# (manager/ctl.c + cmds.c) around a hand-built daemon state
# (tests/cli/ctl-server.c): no hypervisor, exact known values.
#
# Checks: socket directory 0755 and socket 0666 are created; every verb's
# human and --json output (against docs/schema); every error class with
# its exit code and message; a non-root user reads but is refused changes
# (exit 4) while a member of admin_group may change; raw-socket framing
# (garbage, over-long line, pipelining, 64-client limit); refusal to use a
# world-writable directory or a live socket; the socket is removed on exit.
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
out_has '^Energy: +100\.0 J \(baseline 160\.0 J, saved 60\.0 J, 37\.5%\)$'
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
expect 0 "" get-policy 0D2E4F60-7A8B-4C9D-8E0F-A1B2C3D4E5F6   # UUID, any case
out_has '^Name: +db$'

# Raw protocol.
for c in garbage longline keepalive pipeline noeol clients; do
    python3 "$CLI_SRCDIR/tests/cli/proto-client.py" "$VPOWER_SOCKET" "$c" ||
        fail "protocol check '$c'"
    CHECKS=$((CHECKS + 1))
done
kill -0 "$SRV_PID" || fail "server died during the protocol checks"
expect 0 "" status

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
