#!/bin/bash
# tests/cli/top.sh -- `vpowerctl top` in a real terminal (tmux).
#
# Checks: the view draws status, CPUs and VMs; it redraws in place (one
# header on screen while the uptime advances); a key other than q
# refreshes; q quits with exit 0 and the terminal is usable again; -n N
# prints N frames when not on a terminal; --json frames are objects with
# status and list; the daemon going away ends top with exit 3.
set -eu
T=$(basename "$0" .sh)
. "$(dirname "$0")/lib.sh"
SRV=$CLI_BUILDDIR/tests/cli/ctl-server
SRV_PID=
SESS=vpower-top-$$
cleanup() {
    local rc=$?
    tmux kill-session -t "$SESS" 2>/dev/null || true
    [ -z "$SRV_PID" ] || kill "$SRV_PID" 2>/dev/null || true
    cli_cleanup
    exit "$rc"
}
trap cleanup EXIT
[ -x "$SRV" ] || hard "$SRV not built"
command -v tmux >/dev/null || hard "tmux is needed (apt-get install tmux)"

export VPOWER_SOCKET=$CLI_TMP/run/vpowerd.sock
"$SRV" "$VPOWER_SOCKET" > "$CLI_TMP/srv.log" 2>&1 &
SRV_PID=$!
wait_socket "$VPOWER_SOCKET" "$SRV_PID" || fail "server did not start"

screen() { tmux capture-pane -p -t "$SESS"; }
wait_screen() {
    local i
    for ((i = 0; i < 50; i++)); do
        screen > "$CLI_TMP/screen"
        grep -qE -- "$1" "$CLI_TMP/screen" && return 0
        sleep 0.1
    done
    fail "screen never showed /$1/: $(cat "$CLI_TMP/screen")"
}

# A fresh server socket per session; the shell records top's exit code
# and then a line proving the terminal echoes input again.
tmux new-session -d -s "$SESS" -x 132 -y 45 \
    "env VPOWER_SOCKET='$VPOWER_SOCKET' '$CTL' top -d 0.5; echo EXIT=\$? > '$CLI_TMP/rc'; stty -a > '$CLI_TMP/stty'; sleep 30"
wait_screen '^vpower top - every 0\.5s, q quits'
wait_screen '^3 +web +balanced +packed'
grep -qE '^CPU +STATE' "$CLI_TMP/screen" || fail "no CPU table: $(cat "$CLI_TMP/screen")"
up1=$(grep '^vpowerd:' "$CLI_TMP/screen")
sleep 1.2
screen > "$CLI_TMP/screen2"
up2=$(grep '^vpowerd:' "$CLI_TMP/screen2")
[ "$(grep -c '^vpower top' "$CLI_TMP/screen2")" = 1 ] ||
    fail "top did not redraw in place: $(cat "$CLI_TMP/screen2")"
[ "$up1" != "$up2" ] || fail "top did not refresh: '$up1' twice"
log "refreshed in place: '$up1' -> '$up2'"
tmux send-keys -t "$SESS" x          # refresh now, keep running
sleep 0.3
[ ! -e "$CLI_TMP/rc" ] || fail "a key other than q ended top"
tmux send-keys -t "$SESS" q
for ((i = 0; i < 30; i++)); do
    [ -e "$CLI_TMP/rc" ] && break
    sleep 0.1
done
[ "$(cat "$CLI_TMP/rc" 2>/dev/null)" = EXIT=0 ] || fail "q: top did not exit 0 ($(cat "$CLI_TMP/rc" 2>/dev/null))"
grep -qE '(^| )icanon' "$CLI_TMP/stty" && grep -qE '(^| )echo( |$)' "$CLI_TMP/stty" ||
    fail "terminal not restored after q: $(cat "$CLI_TMP/stty")"
tmux kill-session -t "$SESS"
log "q quit with exit 0, terminal restored"

# Not a terminal: -n frames, no clearing.
run top -n 3 -d 0.1
[ "$RC" = 0 ] || fail "top -n 3 exited $RC: $ERR"
[ "$(grep -c '^vpower top' "$CLI_TMP/out")" = 3 ] || fail "top -n 3: $(grep -c '^vpower top' "$CLI_TMP/out") frames"
grep -q $'\033' "$CLI_TMP/out" && fail "escape sequences written to a pipe"
run top --json -n 2 -d 0.1
[ "$RC" = 0 ] || fail "top --json exited $RC"
python3 - "$CLI_TMP/out" "$SCHEMA" <<'PY' || fail "top --json frames"
import json, sys
text = open(sys.argv[1]).read()
dec = json.JSONDecoder(); pos = 0; frames = []
while pos < len(text):
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos < len(text):
        obj, pos = dec.raw_decode(text, pos); frames.append(obj)
assert len(frames) == 2, len(frames)
for f in frames:
    assert set(f) == {"status", "list"}, f.keys()
    assert "power_watts" in f["status"] and "vms" in f["list"]
PY
expect 2 "-d 0 is out of range" top -d 0
expect 2 "-n needs a whole number" top -n x

# The daemon goes away under a running top: exit 3, not a hang.
tmux new-session -d -s "$SESS" -x 132 -y 45 \
    "env VPOWER_SOCKET='$VPOWER_SOCKET' '$CTL' top -d 0.2 2> '$CLI_TMP/top.err'; echo EXIT=\$? > '$CLI_TMP/rc2'; sleep 30"
wait_screen '^vpower top'
kill "$SRV_PID"; wait "$SRV_PID" || true; SRV_PID=
for ((i = 0; i < 50; i++)); do
    [ -e "$CLI_TMP/rc2" ] && break
    sleep 0.1
done
[ "$(cat "$CLI_TMP/rc2" 2>/dev/null)" = EXIT=3 ] ||
    fail "top after the daemon left: $(cat "$CLI_TMP/rc2" 2>/dev/null) $(cat "$CLI_TMP/top.err")"
grep -q "vpowerd" "$CLI_TMP/top.err" || fail "no message: $(cat "$CLI_TMP/top.err")"
log "PASS"
