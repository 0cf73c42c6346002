#!/bin/bash
# 031-agent-vpowerd.sh -- guest hints through the real vpowerd.
#
# vpowerd runs against real libvirtd/QEMU (TCG) and a cpufreq fixture
# (2 CPUs, 1.0-2.0 GHz), managing only this test's domains, with
# sched_priority 10 and its journal and the fixture on tmpfs (as /run
# and sysfs are on a host, vpd_mem_dir).  Guests:
#   "lat"   2 vCPUs, light load, vpower-agent; scenario "phases":
#           latency-begin (200 us), hold, latency-end, hold, then a bench
#           of 1000 latency-begin/end hints through vpowerd, then the
#           same bench on a second port (org.vpower.echo.0) whose host
#           end is gch-testhost, which only acknowledges: the channel
#           alone, in the same boot.  Both print RESULT lines (n, p50,
#           p99, max in us), and so does vpowerd's own timing of the
#           bench (status hint_apply_seconds: read to last action
#           returned, the hints that changed the plan), taken while a
#           control-socket client asks for status every 100 ms.
#           Before vpowerd starts, pin-floor times 400 live vCPU pins of
#           "other" through libvirt alone and 400 through the same
#           libvirt driver: the floor under the host side (RESULT hint
#           pin-floor).
#   "other" 1 vCPU, idle, no agent.
#   "hostile" 1 vCPU, started later: garbage, oversized header, unknown
#           type, vCPU 7 of 1, 10,000-message flood, once the test has
#           taken the reference placement and says "g" on the guest's
#           echo port.
# Checks: within one period (+ console/TCG slack) of latency-begin the
# VM's vCPUs are on different cores of their own and those cores'
# fixture scaling_max_freq is at max; after latency-end the placement
# goes back to what the policy chose without the hint (packed, when the
# light load lets the policy pack); every bench hint is applied
# and acknowledged; the hostile guest's junk is logged and ignored: it
# gets no more hints applied than hint_rate allows, the other VMs' hint
# counters do not move, and their placement stays (or, if the flood's
# CPU use spread them, returns) to what the policy chose before.
# Skips (77) while vpowerd does not serve guest channels yet.
set -eu
VP_AGENT_GUEST=1
. "$(dirname "$0")/lib.sh"
VPD_TMP=$VP_TMPDIR
. "$(dirname "$0")/vpowerd-lib.sh"

B=$VPOWER_BUILDDIR
[ -x "$VPD_BIN" ] || vp_error "$VPD_BIN not built"
for f in agent/vpower-agent agent/vpower-hint agent/gch-hostile \
         tests/integration/gch-testhost tests/integration/pin-floor; do
    [ -x "$B/$f" ] || vp_error "$B/$f not built (make check builds it)"
done

ECHO_PID= POLL_PID= GO_PID=
vpd_guest_trap

# Guest image: the harness's, plus the agent tools in /bin.
vp_agent_guest_files

vpd_lock
vp_services_up
vpd_wait_quiet "${VP_QUIET_WAIT:-120}" ||
    vp_skip "other domains keep running on the host; placement checks need the 2 CPUs to itself"
vp_build_guest

phase=${VP_PHASE_S:-25}
count=${VP_BENCH_COUNT:-1000}
VP_GUEST_ECHO_PORT=1 vp_guest_start lat light 2 "vpower.agent=1 vpower.agenttest=phases vpower.phase_s=$phase vpower.bench_count=$count"
# The echo port's host end: acks at once, no vpowerd behind it.
"$B/tests/integration/gch-testhost" --rate 20 "lat-echo=$(vp_echo_sock lat):2" \
    > "$VPD_TMP/echo.out" 2> "$VPD_TMP/echo.err" &
ECHO_PID=$!
vp_guest_start other idle 1
vp_guest_wait_ready lat 180
vp_guest_wait_ready other 180

# The floor under the host side: one live vCPU pin through vpowerd's
# libvirt driver, before vpowerd runs (the idle guest "other", moved
# between CPU 0 and CPU 1 and put back).  A hint's plan waits for every
# pin it changes, so no host-side figure can be below this one's.
floor=$(vpd_pin_floor other)
vp_log "RESULT hint pin-floor $floor (one live vCPU pin through vpowerd's libvirt driver, and libvirt_* through libvirt alone; no vpowerd running)"
echo "HINT-PINFLOOR-031 $floor"

# The fixture and the journal in memory, as sysfs and /run/vpower are.
vpd_mem_dir
fx=$VPD_MEM/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
cat > "$VPD_TMP/vpowerd.conf" <<EOD
managed_cpus 0-1
period_ms 500
max_period_ms 1000
pack_dwell_ms 1000
hint_rate 20
sched_priority 10
journal $VPD_MEM/journal
EOD
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
vpd_start "$VPD_TMP/vpowerd.log" ${VPD_VERBOSE:+-v} --config "$VPD_TMP/vpowerd.conf" \
    --sysfs-root "$fx" --connect "$VP_URI"

placement() { echo "lat $(vpd_vcpu_pin lat 0) $(vpd_vcpu_pin lat 1) other $(vpd_vcpu_pin other 0)"; }
spread() { local a b; a=$(vpd_vcpu_pin lat 0); b=$(vpd_vcpu_pin lat 1); [[ "$a" =~ ^[0-9]+$ ]] && [[ "$b" =~ ^[0-9]+$ ]] && [ "$a" != "$b" ]; }
console() { vp_console_log "$1"; }

vpd_wait_log "$VPD_TMP/vpowerd.log" 'lat.*(connected to guest channel|says hello)' 60 ||
    { tail -n 20 "$VPD_TMP/vpowerd.log" >&2; vp_fail "vpowerd never connected to lat's channel"; }

# Before the hint: what the policy does for this load on its own.  The
# guest holds phase_s seconds after READY before latency-begin.
vpd_wait_marker lat 'VPOWER-AGENT-READY' 240 > /dev/null
sleep $((phase / 2))
before_hint=$(placement)
vp_log "before latency-begin: $before_hint"
t_begin=$(vpd_wait_marker lat 'VPOWER-AGENT-LATENCY-BEGIN' 240)
grep -a 'VPOWER-AGENT-LATENCY-BEGIN' "$(console lat)" | tr -d '\r' >&2
grep -aq 'VPOWER-AGENT-LATENCY-BEGIN rc=0' "$(console lat)" ||
    vp_fail "latency-begin was not acknowledged as applied"
# Within one period (500 ms) plus console and TCG slack: the guest prints
# the marker only after the ack, i.e. after the plan was applied.
ok=
for ((i = 0; i < 30; i++)); do
    spread && { ok=1; break; }
    sleep 0.1
done
t_seen=$(date +%s.%N)
vp_log "after latency-begin ($(vp_elapsed "$t_begin" "$t_seen" 2) s after the marker): $(placement)"
[ -n "$ok" ] || { tail -n 20 "$VPD_TMP/vpowerd.log" >&2; vp_fail "lat's vCPUs not on separate cores after latency-begin: $(placement)"; }
c0=$(vpd_vcpu_pin lat 0); c1=$(vpd_vcpu_pin lat 1)
f0=$(cat "$fx/cpu$c0/cpufreq/scaling_max_freq"); f1=$(cat "$fx/cpu$c1/cpufreq/scaling_max_freq")
vp_log "fixture scaling_max_freq during latency: cpu$c0=$f0 cpu$c1=$f1"
[ "$f0" = 2000000 ] && [ "$f1" = 2000000 ] ||
    vp_fail "latency-critical VM's cores not at max frequency (cpu$c0=$f0 cpu$c1=$f1)"

vpd_wait_marker lat 'VPOWER-AGENT-LATENCY-END' $((phase + 60)) > /dev/null
grep -aq 'VPOWER-AGENT-LATENCY-END rc=0' "$(console lat)" ||
    vp_fail "latency-end was not acknowledged as applied"
ok=
for ((i = 0; i < 100; i++)); do
    [ "$(placement)" = "$before_hint" ] && { ok=1; break; }
    sleep 0.2
done
vp_log "after latency-end: $(placement)"
[ -n "$ok" ] || vp_fail "placement not back to [$before_hint] within 20 s of latency-end: $(placement)"

# vpowerd's status before and after the bench: its own timing of the
# hints (status hint_apply_seconds), while a client polls the control
# socket, as a monitoring agent would.
CTL=$B/manager/vpowerctl
hint_status() { "$CTL" --json status 2>/dev/null || echo '{}'; }
st0=$(hint_status)
( while sleep 0.1; do "$CTL" status > /dev/null 2>&1 || true; done ) &
POLL_PID=$!
vpd_wait_marker lat 'VPOWER-AGENT-BENCH-DONE' 900 > /dev/null
kill "$POLL_PID" 2>/dev/null || true
wait "$POLL_PID" 2>/dev/null || true
POLL_PID=
st1=$(hint_status)
lat=$(grep -a 'VPOWER-HINT-LATENCY' "$(console lat)" | grep -av CHANNEL |
      head -n 1 | tr -d '\r') || vp_fail "no VPOWER-HINT-LATENCY from lat"
n=$(vpd_field "$lat" n) failed=$(vpd_field "$lat" failed)
p50=$(vpd_field "$lat" p50_us) p99=$(vpd_field "$lat" p99_us) max=$(vpd_field "$lat" max_us)
vp_log "RESULT hint-e2e n=$n p50_us=$p50 p99_us=$p99 max_us=$max (guest write -> vpowerd decide -> pins/freq applied -> ack read)"
echo "HINT-LATENCY-031 n=$n p50_us=$p50 p99_us=$p99 max_us=$max"
[ "$n" = "$count" ] && [ "$failed" = 0 ] || vp_fail "bench: $n of $count acknowledged, $failed failed"
# p50/p99: exact over vpowerd's latest 4096 timed hints (the bench, and
# at most the two phase hints before it); max: since vpowerd started.
host=$(python3 - "$st0" "$st1" <<'EOP'
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
a, b = a.get("result", a), b.get("result", b)
h0, h = a.get("hint_apply_seconds"), b.get("hint_apply_seconds")
if not h or not h0:
    sys.exit("status has no hint_apply_seconds")
print("%.3f %.3f %.3f %d %d" % (h["p50"] * 1e3, h["p99"] * 1e3,
      h["max"] * 1e3, h["count"] - h0["count"], h["window"]))
EOP
) || vp_fail "vpowerd status: $host"
read -r h50 h99 hmax hn hwin <<< "$host"
vp_log "RESULT hint host-side p50=$h50 p99=$h99 max=$hmax ms (n=$hn) (vpowerd: hint read -> last action returned; p50/p99 over its last $hwin, max since start; lat has 2 vCPUs)"
echo "HINT-HOST-031 n=$hn p50_ms=$h50 p99_ms=$h99 max_ms=$hmax"
[ "$hn" -gt 0 ] || vp_fail "vpowerd timed none of the bench's hints"
# The same hints in lat's own histogram (list): only lat hinted so far.
latv=$("$CTL" --json list 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
j = j.get("result", j)
h = [v for v in j["vms"] if v["name"].endswith("-lat")][0].get("hint_apply_seconds")
print("%d %.3f" % (h["count"], h["p99"] * 1e3) if h else "0 0")') ||
    vp_fail "vpowerctl list: no VM lat"
read -r ln l99 <<< "$latv"
[ "$ln" -eq "$(python3 -c "import json,sys; j=json.loads(sys.argv[1]); j=j.get('result',j); print(j['hint_apply_seconds']['count'])" "$st1")" ] ||
    vp_fail "lat's own hint histogram has $ln samples, the host's another count"
vp_log "lat's own hint histogram: n=$ln p99=$l99 ms"

# The channel alone, same guest and boot: a host end that only acks.
vpd_wait_marker lat 'VPOWER-AGENT-CHANNEL ' 900 > /dev/null
ch=$(grep -a -m1 'VPOWER-AGENT-CHANNEL ' "$(console lat)" | tr -d '\r')
grep -aq 'VPOWER-AGENT-CHANNEL rc=0 ' "$(console lat)" ||
    vp_fail "channel-only bench failed: $ch"
cn=$(vpd_field "$ch" n) c50=$(vpd_field "$ch" p50_us) c99=$(vpd_field "$ch" p99_us)
cmax=$(vpd_field "$ch" max_us)
vp_log "RESULT hint-channel n=$cn p50_us=$c50 p99_us=$c99 max_us=$cmax (guest write -> gch-testhost ack read)"
echo "HINT-CHANNEL-031 n=$cn p50_us=$c50 p99_us=$c99 max_us=$cmax"
[ "$cn" = "$count" ] || vp_fail "channel bench: $cn of $count acknowledged"
vp_log "RESULT hint-vpowerd-share p50_us=$((p50 - c50)) p99_us=$((p99 - c99)) (end-to-end minus channel)"

# Hostile guest.  Let placement settle with it running, then compare
# the others' placement across its attack.
# A new VM counts as fully busy until it is measured (warm-up), so the
# others are spread for it first and packed again once it proves idle,
# which follows the policy's 60 s load average: wait until placement has
# held for 15 s in a row before taking the reference, then tell the
# guest to attack: "g" on its echo port (it would start on its own 300 s
# after boot, too late for this check, if that never arrived).
VP_GUEST_ECHO_PORT=1 vp_guest_start hostile idle 1 "vpower.agent=1 vpower.agenttest=hostile vpower.hostile_delay=300"
vp_guest_wait_ready hostile 180
before=$(placement) stable=0
for ((i = 0; i < 140 && stable < 15; i++)); do
    sleep 1
    now=$(placement)
    if [ "$now" = "$before" ]; then
        stable=$((stable + 1))
    else
        before=$now stable=0
    fi
done
[ "$stable" -ge 15 ] || vp_fail "placement did not settle before the attack: [$before]"
grep -aq 'VPOWER-AGENT-HOSTILE-START' "$(console hostile)" &&
    vp_fail "the attack began before placement settled (the guest's own 300 s ran out first)"
vms0=$("$CTL" --json list 2>/dev/null) || vp_fail "vpowerctl list failed before the attack"
log0=$(wc -l < "$VPD_TMP/vpowerd.log")
# The guest reads the port only while it has it open and drops what
# came in between, so "g" is repeated until the attack starts.
python3 - "$(vp_echo_sock hostile)" <<'EOP' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
for _ in range(600):
    s.sendall(b"g")
    time.sleep(0.2)
EOP
GO_PID=$!
t_start=$(vpd_wait_marker hostile 'VPOWER-AGENT-HOSTILE-START' 200)
kill "$GO_PID" 2>/dev/null || true
wait "$GO_PID" 2>/dev/null || true
GO_PID=
grep -aq 'VPOWER-AGENT-HOSTILE-GO' "$(console hostile)" ||
    vp_fail "the attack did not start on the host's go (echo port)"
vpd_wait_marker hostile 'VPOWER-AGENT-HOSTILE-DONE' 120 > /dev/null
sleep 3
after=$(placement)
vp_log "placement before/after the hostile guest's attack: [$before] [$after]"
grep -a 'VPOWER-HOSTILE' "$(console hostile)" | tr -d '\r' >&2

# What the guest's messages may do: the hostile VM's own hints count
# only within its token bucket (hint_rate 20/s, depth 10) and the rest
# are counted as rejected; no other VM's hint counters move.  Exit 3:
# vpowerd has not read the whole flood yet.
limits() {
    python3 - "$vms0" "$1" "$t_start" "$(date +%s.%N)" "$VP_PREFIX" <<'EOP'
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
a, b = a.get("result", a), b.get("result", b)
secs = float(sys.argv[4]) - float(sys.argv[3]) + 1.0
pre = sys.argv[5]
def vms(r):
    return {v["name"][len(pre):]: v["hints_total"] for v in r["vms"]
            if v["name"].startswith(pre)}
va, vb = vms(a), vms(b)
h0, h1 = va["hostile"], vb["hostile"]
acc = sum(h1[k] - h0[k] for k in h1 if k != "rejected")
rej = h1["rejected"] - h0["rejected"]
cap = 10 + 20 * secs
if acc > cap:
    print("hostile: %d messages applied in %.1f s, above hint_rate's %d"
          % (acc, secs, cap))
    sys.exit(1)
for n in ("lat", "other"):
    moved = {k: vb[n][k] - va[n][k] for k in vb[n]
             if k not in ("util", "rejected") and vb[n][k] != va[n][k]}
    if moved:
        print("%s: hint counters moved during the attack: %s" % (n, moved))
        sys.exit(1)
print("%d %d %.1f" % (acc, rej, secs))
if acc + rej < 10000:
    sys.exit(3)
EOP
}
for ((i = 0; ; i++)); do
    vms1=$("$CTL" --json list 2>/dev/null) || vp_fail "vpowerctl list failed after the attack"
    rc=0
    counts=$(limits "$vms1") || rc=$?
    [ "$rc" = 3 ] && [ "$i" -lt 30 ] || break
    sleep 1
done
[ "$rc" = 3 ] && counts="vpowerd counted $counts (applied, rejected, seconds): fewer than the flood's 10,000 messages"
[ "$rc" = 0 ] || vp_fail "guest channel limits: $counts"
read -r acc rej secs <<< "$counts"
vp_log "RESULT hostile: $acc messages applied, $rej rejected over $secs s (hint_rate 20/s, depth 10); other VMs' hint counters unchanged"

# The others keep being served: their placement is the one the policy
# chose before the attack, or, when the flood's real CPU use (the
# guest's vCPU and QEMU's virtio-serial work on the packed core) raised
# load or ready time enough to spread them, it comes back once that
# load has faded (the 60 s load average), with no hint of theirs
# involved.  vpowerd's decisions over the window are shown if not.
back=0
while [ "$after" != "$before" ] && [ "$back" -lt 180 ]; do
    sleep 1
    after=$(placement) back=$((back + 1))
done
if [ "$after" != "$before" ]; then
    tail -n +"$log0" "$VPD_TMP/vpowerd.log" | grep 'decision:' | tail -n 20 >&2
    vp_fail "other VMs not back to [$before] within 180 s of the attack: [$after]"
fi
[ "$back" = 0 ] || {
    tail -n +"$log0" "$VPD_TMP/vpowerd.log" | grep 'info: vpowerd: decision:' | head -n 5 >&2
    vp_log "RESULT placement spread by the attack's CPU load and back to [$before] after $back s"
}
for re in 'hostile.*garbage on the guest channel' 'hostile.*length 65535' \
          'hostile.*unknown message type' 'hostile.*names vCPU 7 but has 1' \
          'hostile.*exceeds hint_rate'; do
    grep -Eq "$re" "$VPD_TMP/vpowerd.log" || vp_fail "vpowerd did not log /$re/"
done
kill -0 "$VPD_PID" || vp_fail "vpowerd died during the attack"
if grep -q ' T cmds_start$' <(nm "$VPD_BIN" 2>/dev/null) && [ -x "$B/manager/vpowerctl" ]; then
    vp_log "vpowerctl list: $("$B/manager/vpowerctl" list 2>&1 | tr '\n' ' ' | cut -c1-300)"
fi

vpd_stop
[ "$VPD_RC" = 0 ] || { tail -n 20 "$VPD_TMP/vpowerd.log" >&2; vp_fail "vpowerd exited $VPD_RC after SIGTERM"; }
exit 0
