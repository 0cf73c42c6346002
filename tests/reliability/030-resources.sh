#!/bin/bash
# 030-resources.sh -- memory and file descriptors stay bounded under
# domain churn.
#
#  1. In-process (rel-daemon churn): the daemon core with 200 VMs of
#     which one stops and a new one starts every 2 ms, each with its
#     STOPPED/STARTED event, a resync and a decision -- for 60 s (make
#     check) or 600 s (RELIABILITY_LONG=1, make check-long).  VmRSS after
#     the warm-up (first fifth) may not grow by more than 1 MB, the fd
#     count not at all, and there must be at least 1,000 events.
#  2. The real vpowerd (dummy hypervisor, sysfs fixture): its fd count
#     and VmRSS from /proc/PID across 1,000 domain stop events (domains
#     dropped from and put back into the dummy domains file, 200 at
#     most), and across re-reads of a file it rewrites.
set -u
. "$(dirname "$0")/rel-lib.sh"
REL_HELPER=$VPD_BUILDDIR/tests/reliability/rel-daemon
[ -x "$REL_HELPER" ] || rel_error "$REL_HELPER not built"
secs=${RELIABILITY_CHURN_SECONDS:-60}
[ -z "${RELIABILITY_LONG:-}" ] || secs=${RELIABILITY_CHURN_SECONDS:-600}

# ---- 1. in-process churn ----
"$REL_HELPER" churn "$REL_TMP/churn-journal" 200 "$secs" > "$REL_TMP/churn.out" 2>&1
rc=$?
cat "$REL_TMP/churn.out" >&2
[ "$rc" = 0 ] || rel_fail "churn: rel-daemon exit $rc"
part1=$(sed -n 's/^RESULT: //p' "$REL_TMP/churn.out")

# ---- 2. the real vpowerd: fds and RSS across 1,000 domain stops ----
fx=$REL_TMP/sys
rel_fixture "$fx" 4
doms=$REL_TMP/doms
all_doms() {   # all_doms N: N one-vCPU domains
    local i
    for ((i = 0; i < $1; i++)); do echo "vm$i 1 $((i % 7 + 1))"; done
}
all_doms 200 > "$doms"
cat > "$REL_TMP/vpowerd.conf" <<EOD
period_ms 100
max_period_ms 200
pack_dwell_ms 0
journal $REL_TMP/journal
EOD
export VPOWER_DUMMY_STATE=$REL_TMP/pins
vpd_start "$REL_LOG" --config "$REL_TMP/vpowerd.conf" --driver=dummy \
    --dummy-domains "$doms" --sysfs-root "$fx"
rel_wait_started "$REL_LOG" 30 || rel_fail "vpowerd did not start"
sleep 2
fd0=$(rel_fds "$VPD_PID") rss0=$(rel_rss_kb "$VPD_PID")
stops=0 rounds=0
# Each round drops 50 domains (each a STOPPED seen at the next sample)
# and restarts vpowerd's view of them by putting the file back.  New
# domains are only picked up on a resync, which the dummy driver never
# triggers (see docs/reliability.md), so the file keeps its 200 names
# and the stops are what is measured.
while [ "$stops" -lt 1000 ]; do
    first=$(( (rounds * 50) % 200 ))
    all_doms 200 | awk -v a="$first" -v b="$((first + 50))" \
        '{ n = substr($1, 3) + 0; if (n < a || n >= b) print }' > "$doms.new"
    mv "$doms.new" "$doms"
    for ((i = 0; i < 30; i++)); do
        n=$(grep -c ' gone$' "$REL_LOG")
        [ "$n" -ge $((stops + 50)) ] && break
        kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died after $stops domain stops"
        sleep 0.1
    done
    stops=$(grep -c ' gone$' "$REL_LOG")
    rounds=$((rounds + 1))
    [ "$rounds" -lt 100 ] || break
done
fd1=$(rel_fds "$VPD_PID") rss1=$(rel_rss_kb "$VPD_PID")
vpd_stop
[ "$VPD_RC" = 0 ] || rel_fail "vpowerd exited $VPD_RC"
[ "$stops" -ge 1000 ] || rel_fail "only $stops domain stops seen in $rounds rounds"
[ "$fd1" -le "$fd0" ] || rel_fail "vpowerd fds grew from $fd0 to $fd1 across $stops domain stops"
[ "$rss1" -le $((rss0 + 2048)) ] || rel_fail "vpowerd VmRSS grew from $rss0 to $rss1 kB across $stops domain stops"
rel_log "real vpowerd: $stops domain stops: fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
rel_log "RESULT: in-process: $part1 | real vpowerd: $stops domain stops, fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
exit 0
