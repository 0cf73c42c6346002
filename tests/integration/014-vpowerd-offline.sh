#!/bin/bash
# 014-vpowerd-offline.sh -- `offline_cores yes` on a 4-CPU sysfs fixture
# with the dummy hypervisor and two light domains:
#   1. vpowerd packs onto cpu0 and takes cpu1-3 offline, then leaves them
#      alone: no CPU changes online state over the next 4 s (a CPU it
#      parked offline must stay usable for the policy, else every
#      decision onlined it again and offlined another: found in round
#      seven, cpu1 and cpu2-3 swapping every 100 ms);
#   2. the host-wide override (SIGUSR1) wakes every CPU in its first
#      decision, at maximum frequency (reliability finding 3: the
#      offline ones used to come back only a period later);
#   3. override off: the CPUs go offline again, and the action
#      counters show both directions (onlining was never counted);
#   4. SIGTERM: the fixture is byte-identical to how it was found.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin

fx=$VPD_TMP/sys
vpd_fixture "$fx" 4 800000 1600000 2400000
vpd_snapshot "$fx" > "$VPD_TMP/before"
printf 'web 1 3\nbatch 1 2\n' > "$VPD_TMP/doms"
cat > "$VPD_TMP/vpowerd.conf" <<EOD
period_ms 100
max_period_ms 400
pack_dwell_ms 0
offline_cores yes
journal $VPD_TMP/journal
control_socket $VPD_TMP/vpowerd.sock
EOD
export VPOWER_DUMMY_STATE=$VPD_TMP/pins
L=$VPD_TMP/vpowerd.log

onl() { cat "$fx"/cpu[1-3]/online | tr -d '\n'; }
wait_onl() {   # wait_onl STATE SECONDS
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ "$(onl)" = "$1" ] && return 0
        kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
        sleep 0.05
    done
    return 1
}

vpd_start "$L" -v --config "$VPD_TMP/vpowerd.conf" --driver=dummy \
    --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx"
wait_onl 000 10 || fail "cpu1-3 not all offline after 10 s (online: $(onl))"

# 1. Stable: sample the online files every 50 ms for 4 s.
changes=0 prev=000 d0=$(grep -c 'decision: active' "$L")
for ((i = 0; i < 80; i++)); do
    sleep 0.05
    now=$(onl)
    [ "$now" = "$prev" ] || changes=$((changes + 1))
    prev=$now
done
d1=$(grep -c 'decision: active' "$L")
[ "$changes" = 0 ] ||
    fail "online states changed $changes times in 4 s with a steady light load (flapping)"
[ "$d1" -gt "$d0" ] || fail "no decision in 4 s: the test proves nothing"
log "parked: cpu1-3 offline and untouched for 4 s ($((d1 - d0)) decisions)"

# 2. Override: the first decision after it wakes every CPU.
kill -USR1 "$VPD_PID"
vpd_wait_log "$L" "performance override on" 5 >/dev/null || fail "override not logged"
for ((i = 0; i < 50; i++)); do
    first=$(sed -n '/performance override on/,$p' "$L" | grep -m1 'decision: active' || true)
    [ -n "$first" ] && break
    sleep 0.1
done
[ -n "$first" ] || fail "no decision after the override"
case $first in
*"decision: active 0-3 "*) ;;
*) fail "first decision after the override does not wake every CPU: ${first#*decision: }" ;;
esac
# (The decision is logged before its actions run.)
wait_onl 111 2 || fail "cpu1-3 not online after the override's decision ($(onl))"
sleep 0.2
for c in 0 1 2 3; do
    [ "$(cat "$fx/cpu$c/cpufreq/scaling_max_freq")" = 2400000 ] ||
        fail "cpu$c not at maximum frequency under the override: $(cat "$fx/cpu$c/cpufreq/scaling_max_freq")"
done
log "override: ${first#*decision: }"

# 3. Override off: parked again.
kill -USR1 "$VPD_PID"
wait_onl 000 10 || fail "cpu1-3 not offline again 10 s after the override ended ($(onl))"
log "override off: cpu1-3 offline again"

# The action counters (vpowerctl status, the exporter's
# vpower_actions_total) saw both directions: 3 CPUs onlined by the
# override, at least 6 offlinings (before and after it).
acts=$("$VPD_BUILDDIR/manager/vpowerctl" -s "$VPD_TMP/vpowerd.sock" status | grep '^Actions:')
n_on=$(echo "$acts" | sed -n 's/.* online \([0-9]*\).*/\1/p')
n_off=$(echo "$acts" | sed -n 's/.* offline \([0-9]*\).*/\1/p')
[ "${n_on:-0}" -ge 3 ] && [ "${n_off:-0}" -ge 6 ] ||
    fail "action counters missed CPU hotplug: $acts"
log "$acts"

# 4. Clean stop.
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC after SIGTERM"
vpd_snapshot "$fx" | diff -u "$VPD_TMP/before" - >&2 || fail "fixture not restored after SIGTERM"
log "RESULT: parked CPUs stay offline (0 changes in 4 s), the override wakes all 4 in one decision, fixture restored"
exit 0
