#!/bin/bash
# 031-libvirtd-restart.sh -- libvirtd restarted 10 times while guests run,
# then a guest destroyed in the middle of vpowerd's actions (check-long).
#
# Restarting the system libvirtd disturbs every other libvirt user on
# the machine, so the test waits (RELIABILITY_QUIET_WAIT, default 300 s)
# until no domain but its own runs and skips otherwise.  Checks after
# each restart: vpowerd is alive, logged the lost connection and
# "reconnected", re-discovered both guests, and still pins them (with
# the override toggled by SIGUSR1, `virsh vcpupin` follows the sets of
# vpowerd's logged decisions);
# its fd count does not grow.  Then guest "b" is destroyed while
# vpowerd re-pins on every toggle: it keeps serving guest "a".
set -u
. "$(dirname "$0")/guest-lib.sh"
restarts=${RELIABILITY_LIBVIRTD_RESTARTS:-10}
svc=$VP_LIBDIR/services.sh

vp_services_up
vpd_wait_quiet "${RELIABILITY_QUIET_WAIT:-300}" ||
    rel_skip "other domains keep running; restarting libvirtd would disturb them: $(vp_virsh list --name | grep -v "^$VP_PREFIX" | tr '\n' ' ')"
vp_build_guest
vp_guest_start a busy 1
vp_guest_start b light 1
vp_guest_wait_ready a 180
vp_guest_wait_ready b 180

fx=$REL_TMP/sys
rel_fixture "$fx" "$(nproc)"
cat > "$REL_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 400
pack_dwell_ms 0
journal $REL_TMP/journal
control_socket $REL_TMP/vpowerd.sock
EOD
REL_SOCK=$REL_TMP/vpowerd.sock
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
vpd_start "$REL_LOG" -v --config "$REL_TMP/vpowerd.conf" --sysfs-root "$fx" --connect "$VP_URI"
rel_wait_started "$REL_LOG" 60 || rel_fail "vpowerd did not start"
grep -q "2 domains" "$REL_LOG" || rel_fail "vpowerd did not find both guests: $(grep -m1 managing "$REL_LOG")"
sleep 3
fd0=$(rel_fds_kept "$VPD_PID")

vcpu_pin() { vpd_vcpu_pin "$1" 0 2>/dev/null; }
# planned NAME: NAME's CPU set in vpowerd's last logged decision.
planned() {
    grep 'decision: active' "$REL_LOG" | tail -n 1 |
        tr ' ' '\n' | sed -n "s/^$(vp_dom "$1")=//p"
}
# pins_follow_override NAME: toggle the host-wide override on and off;
# each time the pin libvirt reports for NAME's vCPU 0 must become the
# set vpowerd's decision gives it (vpowerd is connected and pins).
pins_follow_override() {
    local i k
    for k in on off; do
        kill -USR1 "$VPD_PID"
        sleep 0.5
        for ((i = 0; i < 50; i++)); do
            [ -n "$(planned "$1")" ] && [ "$(vcpu_pin "$1")" = "$(planned "$1")" ] && break
            sleep 0.2
        done
        [ "$(vcpu_pin "$1")" = "$(planned "$1")" ] || {
            rel_log "override $k: $(vp_dom "$1") pinned to '$(vcpu_pin "$1")', decision says '$(planned "$1")'"
            return 1
        }
    done
    return 0
}

libvirtd_pid() { cat /run/libvirtd.pid 2>/dev/null; }
for ((r = 1; r <= restarts; r++)); do
    pid=$(libvirtd_pid)
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || rel_error "libvirtd is not running (pid '$pid')"
    n_lost=$(grep -c "connection to .* lost" "$REL_LOG")
    n_rec=$(grep -c "reconnected to" "$REL_LOG")
    kill -TERM "$pid"
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && rel_error "libvirtd $pid did not stop"
    bash "$svc" start >/dev/null 2>&1 || rel_error "cannot restart libvirtd"
    for ((i = 0; i < 300; i++)); do
        [ "$(grep -c "reconnected to" "$REL_LOG")" -gt "$n_rec" ] && break
        kill -0 "$VPD_PID" 2>/dev/null || rel_fail "restart $r: vpowerd died"
        sleep 0.2
    done
    [ "$(grep -c "connection to .* lost" "$REL_LOG")" -gt "$n_lost" ] ||
        rel_fail "restart $r: no 'connection lost' logged"
    [ "$(grep -c "reconnected to" "$REL_LOG")" -gt "$n_rec" ] ||
        rel_fail "restart $r: vpowerd did not reconnect within 60 s"
    vp_guest_running a && vp_guest_running b || rel_fail "restart $r: a guest died"
    pins_follow_override a || rel_fail "restart $r: guest a's pins do not follow vpowerd's decisions after reconnecting"
    pins_follow_override b || rel_fail "restart $r: guest b's pins do not follow vpowerd's decisions after reconnecting"
    rel_log "libvirtd restart $r: reconnected, both guests re-pinned, fds $(rel_fds "$VPD_PID")"
done
fd1=$(rel_fds_kept "$VPD_PID")
[ "$fd1" -le "$((fd0 + 1))" ] || rel_fail "fds grew from $fd0 to $fd1 over $restarts libvirtd restarts"
errs=$(rel_errors_total)
[ -n "$errs" ] || errs="log: $(grep -c 'lost\|failed' "$REL_LOG") lost/failed lines"

# A guest destroyed while vpowerd pins it on every toggle.
for ((i = 0; i < 6; i++)); do kill -USR1 "$VPD_PID"; sleep 0.1; done
vp_virsh destroy "$(vp_dom b)" >/dev/null
for ((i = 0; i < 6; i++)); do kill -USR1 "$VPD_PID"; sleep 0.1; done
sleep 1
kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died when a guest was destroyed"
pins_follow_override a || rel_fail "guest a no longer served after b was destroyed"
grep -q "domain $(vp_dom b) gone" "$REL_LOG" || rel_fail "destroyed guest not dropped"
vpd_stop
[ "$VPD_RC" = 0 ] || rel_fail "vpowerd exited $VPD_RC"
rel_log "RESULT: $restarts libvirtd restarts survived (reconnected and re-pinned each time, fds $fd0 -> $fd1; errors: $errs); a guest destroyed mid-action: dropped, the other still served"
exit 0
