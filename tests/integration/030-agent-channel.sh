#!/bin/bash
# 030-agent-channel.sh -- vpower-agent in a real TCG guest over real
# virtio-serial, against the host's real guest-channel code.
#
# Two guests built with the agent tools in their initramfs:
#   "agent"   (2 vCPUs) runs vpower-agent; once the host answers its
#             handshake, `vpower-hint bench` sends 1000 latency-begin/end
#             hints through the agent and prints the write->ack latency
#             p50/p99 (VPOWER-HINT-LATENCY on its console).
#   "direct"  (1 vCPU) has no agent: vpower-hint must exit 3 naming the
#             missing agent, then `vpower-hint --direct` must get its hint
#             applied over the port itself.
#   "hostile" (1 vCPU) runs gch-hostile on the port: garbage, an
#             oversized header, an unknown type, a vCPU it does not have
#             and a 10,000-message flood.
# The host end is tests/integration/gch-testhost: manager/guestchan.c
# (connect, backoff, decode, bounds, token bucket at 20/s, acks) on the
# sched loop with a stub daemon, so the channel is tested on its own
# (031 covers vpowerd's placement).  Checks: every bench hint applied and
# acknowledged, none of the agent VM's messages rejected, the hostile
# VM's junk counted (rejected >= 4 + flood beyond the bucket) and its
# accepted hints within burst + rate * time, and the agent VM unaffected.
set -eu
VP_AGENT_GUEST=1
. "$(dirname "$0")/lib.sh"
VPD_TMP=$VP_TMPDIR
. "$(dirname "$0")/vpowerd-lib.sh"

B=$VPOWER_BUILDDIR
for f in agent/vpower-agent agent/vpower-hint agent/gch-hostile tests/integration/gch-testhost; do
    [ -x "$B/$f" ] || vp_error "$B/$f not built (make check builds it)"
done

HOST_PID=
host_cleanup() {
    if [ -n "$HOST_PID" ]; then
        kill -TERM "$HOST_PID" 2>/dev/null || true
        wait "$HOST_PID" 2>/dev/null || true
    fi
}
trap 'rc=$?; set +e; host_cleanup; (exit $rc); vp_cleanup' EXIT

# Guest image: the harness's, plus the agent tools in /bin.
vp_agent_guest_files

vpd_lock
vp_services_up
vp_build_guest

count=${VP_BENCH_COUNT:-1000}
vp_guest_start agent light 2 "vpower.agent=1 vpower.agenttest=bench vpower.bench_count=$count"
vp_guest_start hostile idle 1 "vpower.agent=1 vpower.agenttest=hostile"
vp_guest_start direct idle 1 "vpower.agent=1 vpower.agenttest=direct"

"$B/tests/integration/gch-testhost" --rate 20 \
    "agent=$(vp_agent_sock agent):2" "hostile=$(vp_agent_sock hostile):1" \
    "direct=$(vp_agent_sock direct):1" \
    > "$VP_TMPDIR/host.out" 2> "$VP_TMPDIR/host.err" &
HOST_PID=$!
t_host=$(date +%s.%N)

vp_guest_wait_ready agent 180
vp_guest_wait_ready hostile 180
vp_guest_wait_ready direct 180

# wait_console NAME REGEX SECONDS
wait_console() {
    local log i
    log=$(vp_console_log "$1")
    for ((i = 0; i < $3 * 2; i++)); do
        grep -aEq "$2" "$log" && return 0
        kill -0 "$HOST_PID" 2>/dev/null || { cat "$VP_TMPDIR/host.err" >&2; vp_fail "gch-testhost died"; }
        sleep 0.5
    done
    vp_guest_dump_console "$1"
    tail -n 20 "$VP_TMPDIR/host.err" >&2
    return 1
}
wait_console hostile 'VPOWER-AGENT-HOSTILE-DONE' 240 ||
    vp_fail "hostile guest did not finish its attack"
wait_console direct 'VPOWER-AGENT-DIRECT ' 240 ||
    vp_fail "direct guest did not finish"
wait_console agent 'VPOWER-AGENT-BENCH-DONE' 600 ||
    vp_fail "agent guest did not finish the bench"
t_end=$(date +%s.%N)
kill -TERM "$HOST_PID"
wait "$HOST_PID" || vp_fail "gch-testhost exited $?"
HOST_PID=

grep -a 'VPOWER-' "$(vp_console_log agent)" | tr -d '\r' | grep -v READY >&2 || true
grep -a 'VPOWER-HOSTILE' "$(vp_console_log hostile)" | tr -d '\r' >&2 || true
grep -a 'VPOWER-AGENT-' "$(vp_console_log direct)" | tr -d '\r' >&2 || true
grep '^STATS' "$VP_TMPDIR/host.out" >&2

stat() { # stat VM FIELD
    sed -n "s/^STATS $1 .*\b$2=\([0-9]*\).*/\1/p" "$VP_TMPDIR/host.out"
}
lat=$(grep -a -m1 'VPOWER-HINT-LATENCY' "$(vp_console_log agent)" | tr -d '\r') ||
    vp_fail "no VPOWER-HINT-LATENCY line from the agent guest"
n=$(echo "$lat" | sed -n 's/.* n=\([0-9]*\).*/\1/p')
failed=$(echo "$lat" | sed -n 's/.* failed=\([0-9]*\).*/\1/p')
p50=$(echo "$lat" | sed -n 's/.* p50_us=\([0-9]*\).*/\1/p')
p99=$(echo "$lat" | sed -n 's/.* p99_us=\([0-9]*\).*/\1/p')
max=$(echo "$lat" | sed -n 's/.* max_us=\([0-9]*\).*/\1/p')
vp_log "RESULT hint-channel n=$n p50_us=$p50 p99_us=$p99 max_us=$max (TCG guest, write -> guestchan ack, stub policy)"
echo "HINT-LATENCY-030 n=$n p50_us=$p50 p99_us=$p99 max_us=$max"
[ "$n" = "$count" ] && [ "$failed" = 0 ] ||
    vp_fail "bench: $n of $count hints acknowledged, $failed failed"

# The agent VM: every message well formed and within its rate.
[ "$(stat agent rejected)" = 0 ] || vp_fail "agent VM had $(stat agent rejected) messages rejected"
[ "$(stat agent hello)" = 1 ] || vp_fail "agent VM never completed the handshake"
ah=$(grep -c '^HINT agent latency-' "$VP_TMPDIR/host.out" || true)
[ "$ah" -ge "$count" ] || vp_fail "only $ah latency hints of the agent VM reached policy"

# The hostile VM: junk counted, flood held to the bucket.
hr=$(stat hostile rejected)
hh=$(stat hostile hints)
secs=$(vp_elapsed "$t_host" "$t_end" 0)
max=$((10 + 20 * (secs + 1)))
vp_log "hostile VM: $hh hints accepted, $hr rejected over ${secs}s (bucket allows <= $max)"
[ "$hr" -ge 4 ] || vp_fail "hostile VM: only $hr rejections for garbage/oversized/unknown/bad vCPU"
[ "$hh" -le "$max" ] || vp_fail "hostile VM: $hh hints accepted, more than burst + rate * time ($max)"
[ $((hr + hh)) -ge 10000 ] || vp_fail "hostile VM: $hr rejected + $hh accepted < 10000 flood messages (lost?)"
grep -q '^HINT hostile util' "$VP_TMPDIR/host.out" &&
    vp_fail "hostile VM's out-of-range vCPU report reached policy"
grep -aq 'VPOWER-AGENT-HOSTILE-DONE rc=0' "$(vp_console_log hostile)" ||
    vp_fail "gch-hostile could not write its messages"

# No agent: a clear refusal with exit 3; --direct works without it.
grep -aq 'VPOWER-AGENT-NOAGENT rc=3 .*cannot reach vpower-agent' "$(vp_console_log direct)" ||
    vp_fail "vpower-hint without an agent did not exit 3 with a message"
grep -aq 'VPOWER-AGENT-DIRECT rc=0 .*latency-begin: applied' "$(vp_console_log direct)" ||
    vp_fail "vpower-hint --direct did not get its hint applied"
grep -q '^HINT direct latency-begin 500 ' "$VP_TMPDIR/host.out" ||
    vp_fail "the direct guest's latency-begin did not reach policy"
[ "$(stat direct rejected)" = 0 ] || vp_fail "direct guest had $(stat direct rejected) messages rejected"
exit 0
