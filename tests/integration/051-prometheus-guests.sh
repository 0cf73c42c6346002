#!/bin/bash
# 051-prometheus-guests.sh -- Prometheus scrapes vpower-exporter while the
# real vpowerd manages real TCG guests through libvirtd.
#
# Guests "busy", "light" and "idle" (1 vCPU each); vpowerd runs against
# qemu:///system and a cpufreq/cpuidle fixture tree (the machine's own
# sysfs is never touched), managing only this test's domains, with its
# control socket in the test's temp dir.  A real Prometheus server
# scrapes the exporter every second for >= 30 s; its HTTP API must return
# vpower_vm_energy_joules_total for each guest with the libvirt domain
# name and UUID as labels; `promtool check metrics` is silent; bad
# requests get errors; while 200 connections are held open a normal
# scrape answers and vpowerd's decision rate holds.
set -eu
. "$(dirname "$0")/lib.sh"
VPD_TMP=$VP_TMPDIR
. "$(dirname "$0")/vpowerd-lib.sh"
PL_NAME=051-prometheus-guests
. "$(dirname "$0")/prom-lib.sh"

pl_require
PL_TMP=$VP_TMPDIR
cleanup_all() {
    pl_stop
    if [ -n "$VPD_PID" ]; then
        kill -TERM "$VPD_PID" 2>/dev/null || true
        sleep 2
        kill -KILL "$VPD_PID" 2>/dev/null || true
    fi
}
# set +e: under set -e, '(exit $rc)' with rc != 0 would end the trap
# before vp_cleanup destroys the guests.
trap 'rc=$?; set +e; cleanup_all; (exit $rc); vp_cleanup' EXIT
[ -x "$VPD_BIN" ] || vp_error "$VPD_BIN not built"

vp_services_up

fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
SOCK=$VPD_TMP/vpowerd.sock
cat > "$VPD_TMP/vpowerd.conf" <<EOD
managed_cpus 0-1
period_ms 500
max_period_ms 500
pack_dwell_ms 1000
journal $VPD_TMP/journal
control_socket $SOCK
EOD
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --sysfs-root "$fx" --connect "$VP_URI"

EPORT=$(pl_free_port)
pl_start_exporter "$SOCK" "$EPORT"
EXP=http://127.0.0.1:$EPORT/metrics
for ((i = 0; i < 100; i++)); do
    kill -0 "$VPD_PID" 2>/dev/null || { tail -20 "$VPD_TMP/vpowerd.log" >&2; vp_fail "vpowerd died"; }
    [ "$(pl_value "$EXP" vpower_up)" = 1 ] && break
    sleep 0.2
done
if [ "$(pl_value "$EXP" vpower_up)" != 1 ]; then
    tail -3 "$PL_TMP/exporter-$EPORT.log" >&2
    tail -5 "$VPD_TMP/vpowerd.log" >&2
    # vpowerd serves its control socket: no socket is a failure now.
    [ -S "$SOCK" ] || vp_fail "vpowerd did not create its control socket $SOCK"
    vp_fail "vpowerd's control socket does not answer status/list"
fi
# vpowerd answers before the guests boot (it picks them up from libvirt
# events), so a daemon without a control socket costs no guest boots.
# The period is fixed (period_ms = max_period_ms): an adaptive period
# stretching while the load is stable would lower the decision rate by
# itself and pl_flood's "rate holds" check would measure that.
vp_build_guest
for g in busy:busy light:light idle:idle; do
    vp_guest_start "${g%%:*}" "${g#*:}" 1
done
for g in busy light idle; do
    vp_guest_wait_ready "$g" 120
done
T_START=$(date +%s)
pl_start_prometheus "$EPORT"
pl_check_http "$EPORT"
pl_promtool "$EPORT"
pl_flood "$EPORT" 200 8

while [ $(($(date +%s) - T_START)) -lt 32 ]; do
    kill -0 "$VPD_PID" 2>/dev/null || vp_fail "vpowerd died"
    sleep 1
done
n=$(pl_scalar 'count_over_time(vpower_up{job="vpower"}[30s])')
pl_ge "${n:-0}" 20 || vp_fail "Prometheus stored only ${n:-0} scrapes in 30 s"
upmin=$(pl_scalar 'min_over_time(vpower_up{job="vpower"}[30s])')
[ "$upmin" = 1 ] || vp_fail "vpower_up was 0 during the last 30 s"
pl_query vpower_vm_energy_joules_total > "$PL_TMP/energy.txt"
vp_log "Prometheus: $(wc -l < "$PL_TMP/energy.txt") vpower_vm_energy_joules_total series over $n scrapes"
for g in busy light idle; do
    dom=$(vp_dom "$g")
    uuid=$(vp_virsh domuuid "$dom" | tr -d '[:space:]')
    python3 - "$PL_TMP/energy.txt" "$dom" "$uuid" <<'EOPY' || vp_fail "no vpower_vm_energy_joules_total{domain=\"$dom\",uuid=\"$uuid\"}: $(cat "$PL_TMP/energy.txt")"
import json, sys
for line in open(sys.argv[1]):
    labels, value = line.rstrip("\n").split("\t")
    labels = json.loads(labels)
    if labels.get("domain") == sys.argv[2] and labels.get("uuid") == sys.argv[3]:
        print("  %s: %s J" % (sys.argv[2], value), file=sys.stderr)
        sys.exit(0)
sys.exit(1)
EOPY
done
dec=$(pl_scalar 'increase(vpower_decisions_total[20s])')
pl_ge "${dec:-0}" 20 || vp_fail "only ${dec:-0} decisions in 20 s at a fixed 0.5 s period"
vp_log "decisions in the last 20 s: $dec"
exit 0
