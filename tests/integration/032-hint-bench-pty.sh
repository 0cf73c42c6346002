#!/bin/bash
# 032-hint-bench-pty.sh -- `vpower-hint bench` against the real host
# channel code, without a guest.
#
# pty-relay.py stands in for QEMU's virtio-serial chardev (a raw pty for
# the guest side, a UNIX socket for the host end); gch-testhost (the
# real manager/guestchan.c, acks at once) is the host end; vpower-hint
# --direct benches through it.  Checks: bench sends 1000 hints by
# default and prints the counts and p50 <= p99 <= max; every hint
# reached the host; below 1000 hints it warns.  Prints a RESULT line:
# the tool and guestchan.c alone, a floor under 030's and 031's figures.
# No root, no libvirt; skips (77) without python3.
set -eu
: "${VPOWER_BUILDDIR:=$PWD}"
B=$(cd "$VPOWER_BUILDDIR" && pwd)
S=$(cd "$(dirname "$0")" && pwd)
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
for f in agent/vpower-hint tests/integration/gch-testhost; do
    [ -x "$B/$f" ] || { echo "ERROR: $B/$f not built" >&2; exit 99; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/vp-032.XXXXXX")
RELAY= HOST=
cleanup() {
    [ -z "$HOST" ] || kill "$HOST" 2>/dev/null || true
    [ -z "$RELAY" ] || kill "$RELAY" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 "$S/pty-relay.py" "$T/port.sock" > "$T/relay.out" &
RELAY=$!
for ((i = 0; i < 100; i++)); do
    [ -s "$T/relay.out" ] && [ -S "$T/port.sock" ] && break
    sleep 0.1
done
port=$(head -n 1 "$T/relay.out")
[ -n "$port" ] || fail "pty-relay.py printed no port"
"$B/tests/integration/gch-testhost" --rate 1000 "vm=$T/port.sock:1" \
    > "$T/host.out" 2> "$T/host.err" &
HOST=$!

# field NAME: the number after " NAME=" in $line.
field() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
line=$(timeout 300 "$B/agent/vpower-hint" --direct --port "$port" \
       -t 5000 bench --interval-ms 2 2> "$T/bench.err") ||
    { cat "$T/bench.err" "$T/host.err" >&2; fail "bench exited $?"; }
echo "$line"
[ "$(field sent)" = 1000 ] || fail "bench sent $(field sent), not 1000 by default"
[ "$(field n)" = 1000 ] && [ "$(field failed)" = 0 ] ||
    fail "bench: $(field n) acknowledged, $(field failed) failed"
p50=$(field p50_us) p99=$(field p99_us) max=$(field max_us)
[ -n "$p50" ] && [ -n "$p99" ] && [ -n "$max" ] && [ -n "$(field mean_us)" ] ||
    fail "bench line lacks a figure: $line"
[ "$p50" -le "$p99" ] && [ "$p99" -le "$max" ] ||
    fail "bench figures out of order: $line"
grep -q 'p99' "$T/bench.err" && fail "bench of 1000 hints warned: $(cat "$T/bench.err")"
echo "RESULT hint-channel-pty n=1000 p50_us=$p50 p99_us=$p99 max_us=$max (vpower-hint -> pty -> guestchan.c ack, no guest)"

# A short bench says its p99 means little.
line=$("$B/agent/vpower-hint" --direct --port "$port" bench --count 10 \
       --interval-ms 2 2> "$T/bench.err") || fail "short bench exited $?"
[ "$(field n)" = 10 ] || fail "short bench: $line"
grep -q 'p99 of 10 hints is close to their maximum' "$T/bench.err" ||
    fail "short bench did not warn: $(cat "$T/bench.err")"

kill -TERM "$HOST"
wait "$HOST" || true
HOST=
grep -q '^STATS vm .*hints=1010 rejected=0' "$T/host.out" ||
    fail "host end: $(grep STATS "$T/host.out")"
exit 0
