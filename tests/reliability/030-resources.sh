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
#  2. The real vpowerd (dummy hypervisor, sysfs fixture, 200 domains):
#     its fd count and VmRSS from /proc/PID while the domains stop in
#     rounds of 50 (each stop seen at the next sample), and while the
#     survivors' load file is rewritten and re-read 100 times.  (Starts
#     are part 1 and, on real guests, 032-guest-restarts.sh; the dummy
#     driver's start events are tested in 040-dummy-new-domains.sh.)
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
control_socket $REL_TMP/vpowerd.sock
EOD
export VPOWER_DUMMY_STATE=$REL_TMP/pins
vpd_start "$REL_LOG" --config "$REL_TMP/vpowerd.conf" --driver=dummy \
    --dummy-domains "$doms" --sysfs-root "$fx"
rel_wait_started "$REL_LOG" 30 || rel_fail "vpowerd did not start"
sleep 2
fd0=$(rel_fds_kept "$VPD_PID") rss0=$(rel_rss_kb "$VPD_PID")
stops=0
# Rewrites of the load file (re-read on every sample when its mtime
# moved) with all 200 domains.
for ((r = 0; r < 100; r++)); do
    all_doms 200 | awk -v r="$r" '{ $3 = ($3 + r) % 50 + 1; print }' > "$doms.new"
    mv "$doms.new" "$doms"
    sleep 0.05
done
for ((first = 0; first < 200; first += 50)); do
    all_doms 200 | awk -v a="$((first + 50))" '{ if (substr($1, 3) + 0 >= a) print }' > "$doms.new"
    mv "$doms.new" "$doms"
    for ((i = 0; i < 100; i++)); do
        stops=$(grep -c ' gone$' "$REL_LOG")
        [ "$stops" -ge $((first + 50)) ] && break
        kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died after $stops domain stops"
        sleep 0.1
    done
done
fd1=$(rel_fds_kept "$VPD_PID") rss1=$(rel_rss_kb "$VPD_PID")
vpd_stop
[ "$VPD_RC" = 0 ] || rel_fail "vpowerd exited $VPD_RC"
[ "$stops" = 200 ] || rel_fail "only $stops of 200 domain stops seen"
[ "$fd1" -le "$fd0" ] || rel_fail "vpowerd fds grew from $fd0 to $fd1 across $stops domain stops"
# Under AddressSanitizer freed memory is quarantined (RSS grows by
# design); LeakSanitizer checks for leaks at vpowerd's exit instead.
if ldd "$VPD_BIN" 2>/dev/null | grep -q libasan; then
    rel_log "VmRSS bound not checked: vpowerd runs under AddressSanitizer (quarantine); $rss0 -> $rss1 kB"
else
    [ "$rss1" -le $((rss0 + 2048)) ] || rel_fail "vpowerd VmRSS grew from $rss0 to $rss1 kB across $stops domain stops"
fi
rel_log "real vpowerd: $stops domain stops: fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
rel_log "RESULT: in-process: $part1 | real vpowerd: $stops domain stops, fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
exit 0
