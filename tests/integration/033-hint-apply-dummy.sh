#!/bin/bash
# 033-hint-apply-dummy.sh -- vpowerd times the host side of guest hints.
#
# The real vpowerd on the dummy hypervisor and dummy host (no libvirt,
# no root); a fake QEMU end (python, the wire format of
# docs/guest-agent.md) plays the guest agent of "g" and, around every
# hint, asks the control socket for status.  A hint whose decision
# applied actions (actions_total grew) must add exactly one sample to
# status hint_apply_seconds, a hint that found its plan in force none;
# each sample is > 0, < 1 s and no longer than the hint's round trip as
# the guest saw it (the host side is part of it).  The p50/p99/max of
# the status reply must agree with the samples (max the largest, p50 <=
# p99 <= max) and vpowerctl status prints them.  The period is 10
# minutes, so every decision here is a hint's.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
GUEST_PID=
vpd_test_hook() { [ -z "$GUEST_PID" ] || kill -KILL "$GUEST_PID" 2>/dev/null; }
VPD_FAIL_LOGS=("$VPD_TMP/guest.log")
vpd_test_begin
CTL=$VPD_BUILDDIR/manager/vpowerctl
[ -x "$CTL" ] || { echo "[$T] ERROR: $CTL not built" >&2; exit 99; }
command -v python3 >/dev/null || { echo "[$T] SKIP: no python3" >&2; exit 77; }

SOCK=$VPD_TMP/vpowerd.sock
AGENT=$VPD_TMP/g.agent.sock
cat > "$VPD_TMP/doms" <<EOD
web   2 30 10
g     1 5 agent=$AGENT
idle  1 1
EOD
cat > "$VPD_TMP/vpowerd.conf" <<EOD
period_ms 600000
max_period_ms 600000
hint_rate 1000
EOD

cat > "$VPD_TMP/guest.py" <<'EOP'
import json, socket, struct, subprocess, sys, time
path, ctl, sock, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
MAGIC = 0x56504731
def msg(typ, seq, payload):
    return struct.pack(">IBBHIHH", MAGIC, 1, typ, 0, seq, len(payload), 0) + payload
def recv(c):
    h = b""
    while len(h) < 16:
        b = c.recv(16 - len(h))
        if not b:
            raise SystemExit("host closed the channel")
        h += b
    magic, ver, typ, flags, seq, n, _ = struct.unpack(">IBBHIHH", h)
    p = b""
    while len(p) < n:
        p += c.recv(n - len(p))
    return typ, seq, p
def status():
    j = json.loads(subprocess.check_output([ctl, "--socket", sock, "--json", "status"]))
    return j.get("result", j)
def fail(why):
    print("FAIL:", why)
    sys.exit(1)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); s.listen(1); s.settimeout(20)
c, _ = s.accept(); c.settimeout(10)
c.sendall(msg(1, 1, struct.pack(">BBHII16s", 1, 1, 0, 0x1f, 1, b"fake-0.1")))
if recv(c)[0] != 2:
    fail("no HELLO_ACK")
u32 = lambda v: struct.pack(">I", v)
# Each twice: the second finds its plan in force.
hints = [(3, u32(200), "latency-begin"), (3, u32(200), "latency-begin"),
         (4, b"", "latency-end"), (4, b"", "latency-end"),
         (6, u32(5000), "boost"), (6, u32(5000), "boost")]
first = status()
if "hint_apply_seconds" not in first:
    fail("status has no hint_apply_seconds")
changed = same = 0
samples = []
seq = 10
for r in range(rounds):
    for typ, payload, name in hints:
        a = status()
        seq += 1
        t0 = time.monotonic()
        c.sendall(msg(typ, seq, payload))
        t, sq, p = recv(c)
        rtt = time.monotonic() - t0
        b = status()
        if (t, sq, p[0]) != (9, seq, 0):
            fail("%s: ack type %d seq %d status %d" % (name, t, sq, p[0]))
        if b["decisions_total"] - a["decisions_total"] != 1:
            fail("%s: %d decisions, not the hint's one" % (name, b["decisions_total"] - a["decisions_total"]))
        acts = sum(b["actions_total"].values()) - sum(a["actions_total"].values())
        ha, hb = a["hint_apply_seconds"], b["hint_apply_seconds"]
        dn, ds = hb["count"] - ha["count"], hb["sum"] - ha["sum"]
        print("%-13s actions %2d samples %d host %.3f ms round trip %.3f ms" % (name, acts, dn, ds * 1e3, rtt * 1e3))
        if dn != (1 if acts > 0 else 0):
            fail("%s: %d actions but %d samples" % (name, acts, dn))
        if dn:
            changed += 1
            samples.append(ds)
            if not 0 < ds < 1:
                fail("%s: host side %.6f s" % (name, ds))
            if ds > rtt:
                fail("%s: host side %.6f s above the round trip %.6f s" % (name, ds, rtt))
        else:
            same += 1
h = status()["hint_apply_seconds"]
print("changed %d unchanged %d; status %s" % (changed, same, json.dumps(h)))
if changed < rounds or same < rounds:
    fail("the scenario lost its point: %d hints changed the plan, %d did not" % (changed, same))
if h["count"] - first["hint_apply_seconds"]["count"] != changed:
    fail("count grew by %d, %d hints changed the plan" % (h["count"] - first["hint_apply_seconds"]["count"], changed))
if abs(h["max"] - max(samples)) > 2e-9 and first["hint_apply_seconds"]["count"] == 0:
    fail("max %.9f, largest sample %.9f" % (h["max"], max(samples)))
if not 0 < h["p50"] <= h["p99"] <= h["max"] < 1:
    fail("p50 %.6f p99 %.6f max %.6f" % (h["p50"], h["p99"], h["max"]))
if h["cumulative"][-1] > h["count"] or h["window"] != min(h["count"], 4096):
    fail("buckets or window inconsistent")
print("OK")
EOP
python3 "$VPD_TMP/guest.py" "$AGENT" "$CTL" "$SOCK" "${VP_HINT_ROUNDS:-5}" \
    > "$VPD_TMP/guest.log" 2>&1 &
GUEST_PID=$!
for ((i = 0; i < 50; i++)); do [ -S "$AGENT" ] && break; sleep 0.1; done
[ -S "$AGENT" ] || fail "fake guest did not listen"

vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$VPD_TMP/doms" --host-driver=dummy \
    --socket "$SOCK"
wait "$GUEST_PID" || { GUEST_PID=; fail "guest: $(tail -n 1 "$VPD_TMP/guest.log")"; }
GUEST_PID=
grep -q '^OK$' "$VPD_TMP/guest.log" || fail "guest did not finish"
log "$(grep '^changed' "$VPD_TMP/guest.log" | cut -c1-200)"

# The human view prints the same figures in ms.
out=$("$CTL" --socket "$SOCK" status) || fail "vpowerctl status failed"
echo "$out" | grep -Eq '^Hints applied: +[1-9][0-9]*, host side p50 [0-9.]+ ms, p99 [0-9.]+ ms \(last [0-9]+\), max [0-9.]+ ms$' ||
    fail "vpowerctl status lacks the hint line: $(echo "$out" | grep -i hint)"
log "$(echo "$out" | grep '^Hints applied')"

vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
exit 0
