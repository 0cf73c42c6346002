#!/bin/bash
# 032-guest-restarts.sh -- vpowerd's fds and memory across 20 real guest
# restarts (check-long): a guest is destroyed and created again 20
# times while a second one runs; vpowerd must pick up each new instance
# (libvirt's STARTED event), drop the old one, and end with the fd count
# it had after the first restart and VmRSS within 2 MB.
set -u
. "$(dirname "$0")/guest-lib.sh"
n=${RELIABILITY_GUEST_RESTARTS:-20}

vp_services_up
vp_build_guest
vp_guest_start stay light 1
vp_guest_start churn idle 1
vp_guest_wait_ready stay 180
vp_guest_wait_ready churn 180
fx=$REL_TMP/sys
rel_fixture "$fx" "$(nproc)"
printf 'period_ms 200\nmax_period_ms 400\npack_dwell_ms 0\njournal %s\ncontrol_socket %s\n' \
    "$REL_TMP/journal" "$REL_TMP/vpowerd.sock" > "$REL_TMP/vpowerd.conf"
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
vpd_start "$REL_LOG" --config "$REL_TMP/vpowerd.conf" --sysfs-root "$fx" --connect "$VP_URI"
rel_wait_started "$REL_LOG" 60 || rel_fail "vpowerd did not start"
fd0= rss0=
for ((k = 1; k <= n; k++)); do
    vp_guest_destroy churn
    vp_virsh create "$VP_TMPDIR/churn.xml" >/dev/null || rel_error "cannot re-create the guest"
    for ((i = 0; i < 100; i++)); do
        [ "$(grep -c "domain $(vp_dom churn) (" "$REL_LOG")" -gt "$k" ] && break
        sleep 0.2
    done
    [ "$(grep -c "domain $(vp_dom churn) (" "$REL_LOG")" -gt "$k" ] ||
        rel_fail "restart $k: new guest instance not discovered"
    kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died"
    if [ "$k" = 1 ]; then
        sleep 2; fd0=$(rel_fds_kept "$VPD_PID"); rss0=$(rel_rss_kb "$VPD_PID")
    fi
done
sleep 2
fd1=$(rel_fds_kept "$VPD_PID") rss1=$(rel_rss_kb "$VPD_PID")
vpd_stop
[ "$VPD_RC" = 0 ] || rel_fail "vpowerd exited $VPD_RC"
[ "$fd1" -le "$fd0" ] || rel_fail "fds grew from $fd0 to $fd1 over $n guest restarts"
[ "$rss1" -le $((rss0 + 2048)) ] || rel_fail "VmRSS grew from $rss0 to $rss1 kB"
rel_log "RESULT: $n real guest restarts: fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB"
exit 0
