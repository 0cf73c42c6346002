#!/bin/bash
# tests/cli/vpowerctl.sh -- vpowerctl against the real vpowerd.
#
# vpowerd runs with the dummy hypervisor (--driver=dummy) on a sysfs
# fixture tree, its control socket in a private directory, admin_group a
# temporary group.  Every verb, --json against docs/schema, every error
# class and exit code, and the non-root/admin split are checked
# (tests/cli/verbs.sh, shared with ctl-server.sh), plus what only the real
# daemon can show: set-policy performance gives the VM its own core in
# the dummy driver's pin table and survives as domain metadata; the
# override spreads at once; a domain name holding an escape sequence and
# invalid UTF-8 is valid UTF-8 (U+FFFD) in --json, escaped in columns and
# in the log, never raw, and one holding bidirectional and invisible
# characters is \u escapes in --json and escaped in columns; stopping
# vpowerd removes the socket, after which vpowerctl exits 3 with its
# hint.
set -eu
T=$(basename "$0" .sh)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verbs.sh"
VPD_TMP=$CLI_TMP
. "$CLI_SRCDIR/tests/integration/vpowerd-lib.sh"
cleanup() {
    local rc=$?
    [ -z "$VPD_PID" ] || kill -KILL "$VPD_PID" 2>/dev/null || true
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -f "$CLI_TMP/vpowerd.log" ]; then
        echo "----- vpowerd.log -----" >&2; tail -n 40 "$CLI_TMP/vpowerd.log" >&2
    fi
    cli_cleanup
    exit "$rc"
}
trap cleanup EXIT
[ -x "$VPD_BIN" ] || hard "$VPD_BIN not built"
make_user

fx=$CLI_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
cat > "$CLI_TMP/doms" <<EOD
web   2  10 5
db    1  20
EOD
export VPOWER_SOCKET=$CLI_TMP/run/vpowerd.sock
cat > "$CLI_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 500
pack_dwell_ms 400
journal $CLI_TMP/journal
control_socket $VPOWER_SOCKET
admin_group $CLI_GROUP
EOD
export VPOWER_DUMMY_STATE=$CLI_TMP/pins
vpd_start "$CLI_TMP/vpowerd.log" --config "$CLI_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$CLI_TMP/doms" --sysfs-root "$fx"
if ! wait_socket "$VPOWER_SOCKET" "$VPD_PID"; then
    kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died: $(tail -5 "$CLI_TMP/vpowerd.log")"
    fail "no control socket at $VPOWER_SOCKET"
fi
vpd_wait_log "$CLI_TMP/vpowerd.log" "decision" 10 || fail "vpowerd made no decision"

VM=web
check_verbs

# What only the real daemon shows.
expect 0 "" status --json
[ "$(jq_py "j['driver'], j['connected']")" = "dummy True" ] || fail "status: $OUT"
# The daemon's own CPU time lies between what the kernel counted for it
# just before and just after the request (utime + stime; 0.05 s of slack
# for tick rounding), and is not zero.
t0=$(vpd_cpu_seconds "$VPD_PID")
expect 0 "" status --json
t1=$(vpd_cpu_seconds "$VPD_PID")
cpu=$(jq_py "j['cpu_seconds']")
awk -v c="$cpu" -v a="$t0" -v b="$t1" \
    'BEGIN { exit !(c > 0 && c >= a - 0.05 && c <= b + 0.05) }' ||
    fail "status cpu_seconds $cpu outside the kernel's $t0..$t1 s"
expect 0 "" status
grep -qE '^Own CPU: +[0-9]+\.[0-9]{2} s \([0-9]+\.[0-9]{2} % of one CPU\)$' "$CLI_TMP/out" ||
    fail "status shows no 'Own CPU:' line: $OUT"
expect 0 "" list --json
[ "$(jq_py "sorted(v['name'] for v in j['vms'])")" = "['db', 'web']" ] || fail "list: $OUT"
pin() { awk -v d="$1" -v w="$2" '$1 == d && $2 == w { print $3 }' "$VPOWER_DUMMY_STATE" 2>/dev/null; }
expect 0 "" set-policy db performance
for ((i = 0; i < 50; i++)); do
    [ -n "$(pin db vcpu0)" ] && [ "$(pin db vcpu0)" != "$(pin web vcpu0)" ] &&
        [ "$(pin db vcpu0)" != "0-1" ] && break
    sleep 0.1
done
log "after set-policy db performance: db on $(pin db vcpu0), web on $(pin web vcpu0)"
[ "$(pin db vcpu0)" != "$(pin web vcpu0)" ] || fail "performance VM shares web's CPUs"
expect 0 "" get-policy db --json
[ "$(jq_py "j['policy'], j['source']")" = "performance metadata" ] || fail "get-policy db: $OUT"
expect 0 "" explain db --json
[ "$(jq_py "j['reason']")" = performance ] || fail "explain db: $OUT"
expect 0 "" set-policy db balanced

# Hostile domain names, as libvirt may report them.
# ESC, 0xff (not UTF-8), DEL and U+009B (CSI as a C1 control).
printf 'bad\xff\x1b[31m\x7f\xc2\x9bvm 1 5\n' >> "$CLI_TMP/doms"
# U+202E (right-to-left override: the rest of the line reads backwards),
# U+200B (zero-width space), U+FEFF (byte-order mark), U+2028 (line
# separator).
printf 'rtl\xe2\x80\xaeevil\xe2\x80\x8b\xef\xbb\xbf\xe2\x80\xa8vm 1 5\n' \
    >> "$CLI_TMP/doms"
for ((i = 0; i < 50; i++)); do
    run list --names
    grep -q '^bad' "$CLI_TMP/out" && grep -q '^rtl' "$CLI_TMP/out" && break
    sleep 0.1
done
expect 0 "" list --json
python3 - "$CLI_TMP/out" <<'EOP' || fail "list --json with bad names: $(cat -A "$CLI_TMP/out" | grep -E 'bad|rtl')"
import json, sys
raw = open(sys.argv[1], "rb").read()
for c in ("\x1b", "\x7f", "\x9b", "\u202e", "\u200b", "\ufeff", "\u2028"):
    assert c.encode("utf-8") not in raw, "raw %r in --json" % c
assert b"\xff" not in raw, "raw 0xff in --json"
for e in (b"\\u007f", b"\\u009b", b"\\u202e", b"\\u200b", b"\\ufeff",
          b"\\u2028"):
    assert e in raw, "no %s in --json" % e.decode()
names = [v["name"] for v in json.loads(raw.decode("utf-8"))["vms"]]
assert "bad\ufffd\x1b[31m\x7f\x9bvm" in names, names
assert "rtl\u202eevil\u200b\ufeff\u2028vm" in names, names
EOP
CHECKS=$((CHECKS + 1))
expect 0 "" list
# vpowerd sent U+FFFD for the invalid byte; vpowerctl escapes the rest.
grep -qF " bad"$'\xef\xbf\xbd''\x1b[31m\x7f\xc2\x9bvm ' "$CLI_TMP/out" ||
    fail "list: $(cat -A "$CLI_TMP/out")"
! grep -q $'\x1b' "$CLI_TMP/out" || fail "list printed ESC: $(cat -A "$CLI_TMP/out")"
grep -qF ' rtl\xe2\x80\xaeevil\xe2\x80\x8b\xef\xbb\xbf\xe2\x80\xa8vm ' \
    "$CLI_TMP/out" || fail "list: $(cat -A "$CLI_TMP/out")"
! grep -q $'\xe2\x80\xae' "$CLI_TMP/out" ||
    fail "list printed U+202E: $(cat -A "$CLI_TMP/out")"
bad_id=$(awk '/ bad/ { print $1 }' "$CLI_TMP/out")
expect 0 "" explain "$bad_id"
! grep -q $'\x1b' "$CLI_TMP/out" || fail "explain printed ESC: $(cat -A "$CLI_TMP/out")"
grep -qaF 'bad\xff\x1b[31m\x7f\xc2\x9bvm' "$CLI_TMP/vpowerd.log" ||
    fail "bad name not logged escaped"
! grep -qa $'\x1b' "$CLI_TMP/vpowerd.log" || fail "ESC reached vpowerd's log"
CHECKS=$((CHECKS + 5))

# Stopping removes the socket; then exit 3 with the hint.
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
[ ! -e "$VPOWER_SOCKET" ] || fail "vpowerd left its socket behind"
expect 3 "cannot connect to vpowerd at $VPOWER_SOCKET: No such file or directory \(is vpowerd running\?" status
log "PASS: $CHECKS checks"
