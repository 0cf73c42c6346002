#!/bin/bash
# 013-vpowerd-wiring.sh -- what vpowerd wires together, end to end with the
# dummy hypervisor and dummy host (no libvirt, no root):
#  - the control socket at --socket (no config file needed for it);
#  - status names its input sources (ready time, frequency, thermal,
#    energy), per-VM energies plus the unattributed "_host" part add up to
#    the host energy, saved_joules never decreases, freq_domains count the
#    set_freq actions;
#  - the guest channel: a fake QEMU end (python, the real wire format of
#    docs/guest-agent.md) gets HELLO_ACK and an "applied" ACK for a BOOST
#    hint, which list then shows; a garbage frame is counted as rejected;
#  - --record writes a versioned record with the model, sample blocks
#    with S lines, a kick block for the hint, and rotates at
#    record_max_bytes keeping one FILE.1, and replaying the first file
#    through the policy (replay-check) gives every recorded plan again;
#  - SIGTERM exits 0 and removes the socket.
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
command -v python3 >/dev/null || { echo "[$T] ERROR: python3 needed" >&2; exit 99; }

SOCK=$VPD_TMP/vpowerd.sock
AGENT=$VPD_TMP/g.agent.sock
cat > "$VPD_TMP/doms" <<EOD
web   2 30 10
g     1 5 agent=$AGENT
idle  1 1
EOD
cat > "$VPD_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 400
pack_dwell_ms 400
journal $VPD_TMP/journal
record_max_bytes 16384
powercap_root $VPD_TMP/no-meters
hwmon_root $VPD_TMP/no-meters
EOD

# The fake QEMU end of g's channel: listens (as QEMU does with
# mode='bind'), answers nothing itself, plays the guest agent.
cat > "$VPD_TMP/guest.py" <<'EOP'
import socket, struct, sys, time
path, out = sys.argv[1], sys.argv[2]
MAGIC = 0x56504731
def msg(typ, seq, payload):
    return struct.pack(">IBBHIHH", MAGIC, 1, typ, 0, seq, len(payload), 0) + payload
def recv(c):
    h = b""
    while len(h) < 16:
        b = c.recv(16 - len(h))
        if not b: raise SystemExit("host closed")
        h += b
    magic, ver, typ, flags, seq, n, _ = struct.unpack(">IBBHIHH", h)
    p = b""
    while len(p) < n:
        p += c.recv(n - len(p))
    return typ, seq, p
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path); s.listen(1)
s.settimeout(20)
c, _ = s.accept()
c.settimeout(10)
res = []
c.sendall(msg(1, 1, struct.pack(">BBHII16s", 1, 1, 0, 0x1f, 1, b"fake-0.1")))
typ, seq, p = recv(c)
res.append("hello_ack type=%d" % typ)
t0 = time.monotonic()
c.sendall(msg(6, 7, struct.pack(">I", 500)))          # BOOST 500 ms
typ, seq, p = recv(c)
res.append("ack type=%d seq=%d status=%d for=%d ms=%.1f" % (typ, seq, p[0], p[1], (time.monotonic() - t0) * 1000))
c.sendall(msg(6, 8, struct.pack(">I", 0)))            # BOOST 0 ms: invalid
typ, seq, p = recv(c)
res.append("ack type=%d seq=%d status=%d for=%d" % (typ, seq, p[0], p[1]))
open(out, "w").write("\n".join(res) + "\n")
time.sleep(30)
EOP
python3 "$VPD_TMP/guest.py" "$AGENT" "$VPD_TMP/guest.out" > "$VPD_TMP/guest.log" 2>&1 &
GUEST_PID=$!
for ((i = 0; i < 50; i++)); do [ -S "$AGENT" ] && break; sleep 0.1; done
[ -S "$AGENT" ] || fail "fake guest did not listen"

vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$VPD_TMP/doms" --host-driver=dummy \
    --socket "$SOCK" --record "$VPD_TMP/rec"
for ((i = 0; i < 50; i++)); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "no control socket at --socket $SOCK"
vpd_wait_log "$VPD_TMP/vpowerd.log" "inputs: ready time from" 5 ||
    fail "no log line naming the input sources"
log "$(grep -o 'inputs: .*' "$VPD_TMP/vpowerd.log")"

# 1. Guest channel: HELLO_ACK, an applied ACK for BOOST, invalid for 0 ms.
for ((i = 0; i < 100; i++)); do [ -s "$VPD_TMP/guest.out" ] && break; sleep 0.1; done
[ -s "$VPD_TMP/guest.out" ] || fail "guest got no answers: $(cat "$VPD_TMP/guest.log")"
log "guest: $(tr '\n' ';' < "$VPD_TMP/guest.out")"
grep -q "^hello_ack type=2$" "$VPD_TMP/guest.out" || fail "no HELLO_ACK"
grep -Eq "^ack type=9 seq=7 status=0 for=6 " "$VPD_TMP/guest.out" ||
    fail "BOOST not acknowledged as applied"
grep -Eq "^ack type=9 seq=8 status=2 for=6$" "$VPD_TMP/guest.out" ||
    fail "BOOST 0 ms not answered invalid"

# 2. Status and list through the socket.
sleep 2
st1=$("$CTL" --socket "$SOCK" --json status) || fail "status failed"
sleep 1.5
st2=$("$CTL" --socket "$SOCK" --json status) || fail "status failed"
lst=$("$CTL" --socket "$SOCK" --json list) || fail "list failed"
python3 - "$st1" "$st2" "$lst" <<'EOP' || fail "status/list check failed"
import json, sys
s1, s2, l = (json.loads(a) for a in sys.argv[1:4])
s1 = s1.get("result", s1); s2 = s2.get("result", s2); l = l.get("result", l)
def need(c, what):
    if not c:
        print("status/list:", what, file=sys.stderr); sys.exit(1)
need(s2["ready_source"] == "dummy", "ready_source %r" % s2["ready_source"])
need(s2["frequency_source"] == "host-driver", "frequency_source")
need(s2["thermal"]["source"] == "none" and s2["thermal"]["state"] == "normal", "thermal")
need(s2["energy_source"] == "model", "energy_source")
need(s2["record"].endswith("/rec"), "record path")
need(s2["energy_joules"] > 0, "no energy")
need(s2["saved_joules"] >= s1["saved_joules"] >= 0, "saved_joules decreased")
vms = {v["name"]: v for v in l["vms"]}
total = sum(v["energy_joules"] for v in vms.values())
e = s2["energy_joules"]; u = s2["unattributed_energy_joules"]
# list was taken just after status: allow one more interval's energy.
need(abs(total + u - e) <= 0.2 * e + 1e-6, "VMs %.3f + _host %.3f != host %.3f" % (total, u, e))
need(vms["web"]["energy_joules"] > vms["idle"]["energy_joules"] > 0, "busy VM did not get more energy")
need(vms["g"]["hints_total"]["boost"] == 1, "boost hint not counted: %r" % vms["g"]["hints_total"])
need(vms["g"]["hints_total"]["rejected"] >= 1, "invalid hint not rejected")
need(vms["g"]["last_hint"] != "", "no last_hint")
need(sum(d["changes_total"] for d in s2["freq_domains"]) == s2["actions_total"]["set_freq"], "changes_total != set_freq actions")
print("energy %.2f J = VMs %.2f + _host %.2f; saved %.2f -> %.2f J; g hints %r" % (e, total, u, s1["saved_joules"], s2["saved_joules"], vms["g"]["hints_total"]), file=sys.stderr)
EOP

# 3. The record: header, samples, the hint's kick block, rotation.
for ((i = 0; i < 150; i++)); do [ -e "$VPD_TMP/rec.1" ] && break; sleep 0.2; done
[ -e "$VPD_TMP/rec.1" ] || fail "record not rotated past record_max_bytes 16384 ($(wc -c < "$VPD_TMP/rec") bytes)"
old=$(wc -c < "$VPD_TMP/rec.1")
[ "$old" -ge 16384 ] && [ "$old" -lt 40000 ] || fail "rec.1 has $old bytes"
head -n1 "$VPD_TMP/rec.1" | grep -Eq '^VPREC 1 vpowerd ' || fail "rec.1 lacks the VPREC header"
head -n1 "$VPD_TMP/rec" | grep -Eq '^VPREC 1 vpowerd ' || fail "rotated rec lacks the VPREC header"
grep -q '^L ' "$VPD_TMP/rec" || fail "rotated rec lacks the load history"
cat "$VPD_TMP/rec.1" "$VPD_TMP/rec" > "$VPD_TMP/all"
grep -q '^CONF .*pack_dwell_ns=400000000 ' "$VPD_TMP/all" || fail "CONF lacks pack_dwell_ns"
grep -q '^MT cpus ' "$VPD_TMP/all" || fail "model not embedded"
grep -Eq '^T [0-9]+ [0-9]+ sample ' "$VPD_TMP/all" || fail "no sample block"
grep -Eq '^S [0-9]+ 1 -?[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$' "$VPD_TMP/all" || fail "no S line for a second vCPU"
grep -Eq '^T [0-9]+ 0 kick ' "$VPD_TMP/all" || fail "the hint's decision left no kick block"
grep -Eq '^VM [0-9]+ g [0-9a-f-]+ [0-9]+ balanced .* [1-9][0-9]* 0 0$' "$VPD_TMP/all" ||
    fail "the boost hint is not in g's VM line"
[ "$(grep -c '^T ' "$VPD_TMP/all")" = "$(grep -c '^E$' "$VPD_TMP/all")" ] || fail "unterminated blocks"
# Replaying the run's first file through pol_load_update + pol_decide
# gives every recorded plan again (docs/record-format.md, "Replaying").
RC=$VPD_BUILDDIR/tests/integration/replay-check
[ -x "$RC" ] || { echo "[$T] ERROR: $RC not built" >&2; exit 99; }
"$RC" "$VPD_TMP/rec.1" >&2 || fail "replaying rec.1 did not reproduce the recorded plans"
# ... and so does vpower-sim, the operator's tool for "what would vpower
# have done on my host" (the same recording of real guests, plan by plan).
if line=$(vpd_verify_replay "$VPD_TMP/rec.1" "$VPD_TMP/sim.out"); then
    log "vpower-sim --verify-plans: $line"
else
    cat "$VPD_TMP/sim.out" >&2
    fail "vpower-sim --verify-plans did not reproduce the recorded plans"
fi
log "record: rec.1 $old bytes, rec $(wc -c < "$VPD_TMP/rec") bytes, $(grep -c '^T ' "$VPD_TMP/all") blocks"

vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
[ ! -e "$SOCK" ] || fail "socket left behind"
exit 0
