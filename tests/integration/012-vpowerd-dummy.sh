#!/bin/bash
# 012-vpowerd-dummy.sh -- the real vpowerd with the dummy hypervisor
# against a sysfs fixture tree: no libvirt, no root needed.
#
# Checks: it starts, decides, packs the light VMs onto one core and gives
# the performance VM its own (pins read from $VPOWER_DUMMY_STATE), lowers
# the parked core's frequency limit in the fixture; SIGTERM restores
# every pin and fixture value and exits 0; after a SIGKILL the journal is
# replayed by the next start, which restores the fixture; SIGUSR1 (the
# host-wide override) spreads at once; a bad config exits non-zero with
# "FILE:LINE: reason"; --dry-run changes nothing; sched_priority makes it
# SCHED_FIFO at that priority (as root; otherwise it warns), and without
# it vpowerd runs SCHED_OTHER.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin

vpd_dummy_world 2
vpd_snapshot "$fx" > "$VPD_TMP/before"

packed() {
    [ "$(vpd_pin light vcpu0)" = 1 ] && [ "$(vpd_pin idle vcpu0)" = 1 ] &&
        [ "$(vpd_pin busy vcpu0)" = 0 ]
}
wait_packed() {
    local i
    for ((i = 0; i < 100; i++)); do
        packed && return 0
        kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
        sleep 0.1
    done
    return 1
}

# The scheduling policy and real-time priority of process $1 (fields 41
# and 40 of /proc/PID/stat; the name, field 2, holds no spaces here).
sched_of() {
    awk '{ print ($41 == 1 ? "FIFO" : $41 == 0 ? "OTHER" : $41) "/" $40 }' \
        "/proc/$1/stat"
}

# 1. Pack, apply, restore on SIGTERM.
vpd_start "$VPD_TMP/vpowerd.log" "${args[@]}"
[ "$(sched_of "$VPD_PID")" = OTHER/0 ] ||
    fail "vpowerd runs $(sched_of "$VPD_PID") without sched_priority"
wait_packed || fail "not packed after 10 s: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
log "packed: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
[ "$(vpd_pin light emulator)" = 1 ] || fail "light's emulator not on the packed core"
# The light VMs' core slows once their load history is warm.
for ((i = 0; i < 100; i++)); do
    max1=$(cat "$fx/cpu1/cpufreq/scaling_max_freq")
    [ "$max1" -ge 2000000 ] || break
    sleep 0.1
done
max0=$(cat "$fx/cpu0/cpufreq/scaling_max_freq")
[ "$max1" -lt 2000000 ] || fail "packed light core still at max frequency ($max1)"
[ "$max0" = 2000000 ] || fail "performance core not at max frequency ($max0)"
[ -s "$VPD_TMP/journal" ] || fail "no journal while running"
log "frequency limits: cpu0 $max0 kHz (performance VM), cpu1 $max1 kHz (packed light VMs)"
grep -q "decision: active" "$VPD_TMP/vpowerd.log" || fail "no decision logged"

# 2. SIGUSR1: host-wide override, at once (not at the next period):
# every core awake at maximum frequency with shallow idle.  (The
# performance VM keeps its own core, so on 2 CPUs the others stay on 1.)
kill -USR1 "$VPD_PID"
for ((i = 0; i < 10; i++)); do
    [ "$(cat "$fx/cpu1/cpufreq/scaling_max_freq")" = 2000000 ] && break
    sleep 0.05
done
[ "$(cat "$fx/cpu1/cpufreq/scaling_max_freq")" = 2000000 ] ||
    fail "override did not raise cpu1 to max within 0.5 s"
log "override: cpu1 back at 2000000 kHz at once; deep idle disabled: $(cat "$fx"/cpu1/cpuidle/state*/disable | tr '\n' ' ')"
kill -USR1 "$VPD_PID"

vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC after SIGTERM"
for p in "busy vcpu0" "busy emulator" "light vcpu0" "light emulator" "idle vcpu0"; do
    [ "$(vpd_pin $p)" = "0-$(($(nproc) - 1))" ] || [ "$(nproc)" = 1 ] ||
        fail "$p not restored: $(vpd_pin $p)"
done
vpd_snapshot "$fx" | diff -u "$VPD_TMP/before" - >&2 || fail "fixture not restored after SIGTERM"
[ ! -e "$VPD_TMP/journal" ] || fail "journal left after a clean exit"
grep -q "restored; exiting" "$VPD_TMP/vpowerd.log" || fail "no restore message"
log "SIGTERM: pins and fixture restored, journal removed, exit 0"

# 3. SIGKILL leaves a journal; the next start replays it first.
vpd_start "$VPD_TMP/vpowerd.log" "${args[@]}"
wait_packed || fail "second run did not pack"
kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null || true; VPD_PID=
[ -s "$VPD_TMP/journal" ] || fail "no journal after SIGKILL"
vpd_snapshot "$fx" | diff -q "$VPD_TMP/before" - >/dev/null &&
    fail "fixture unchanged before the crash: the test proves nothing"
vpd_start "$VPD_TMP/vpowerd2.log" "${args[@]}" --dry-run
vpd_wait_log "$VPD_TMP/vpowerd2.log" "dry-run decision" 10 ||
    fail "dry run made no decision"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "dry run exited $VPD_RC"
vpd_snapshot "$fx" | diff -q "$VPD_TMP/before" - >/dev/null &&
    fail "--dry-run replayed the journal (it must change nothing)"
vpd_start "$VPD_TMP/vpowerd3.log" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd3.log" "crashed run: restoring" 10 ||
    fail "leftover journal not replayed"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
vpd_snapshot "$fx" | diff -u "$VPD_TMP/before" - >&2 || fail "fixture not restored after crash + restart"
log "crash: journal replayed at the next start, fixture restored"

# 4. sched_priority: SCHED_FIFO at that priority where vpowerd may (root
# with CAP_SYS_NICE, as CI runs it); elsewhere a warning and the normal
# policy.
cp "$VPD_TMP/vpowerd.conf" "$VPD_TMP/prio.conf"
echo "sched_priority 7" >> "$VPD_TMP/prio.conf"
vpd_start "$VPD_TMP/vpowerd4.log" --config "$VPD_TMP/prio.conf" "${args[@]:2}"
vpd_wait_log "$VPD_TMP/vpowerd4.log" "decision: active" 10 ||
    fail "no decision with sched_priority"
got=$(sched_of "$VPD_PID")
if chrt -f 1 true 2>/dev/null; then
    [ "$got" = FIFO/7 ] || fail "sched_priority 7: vpowerd runs $got"
    grep -q "running SCHED_FIFO at priority 7" "$VPD_TMP/vpowerd4.log" ||
        fail "SCHED_FIFO not logged"
else
    [ "$got" = OTHER/0 ] || fail "sched_priority refused, yet $got"
    grep -q "sched_priority 7: cannot run SCHED_FIFO" "$VPD_TMP/vpowerd4.log" ||
        fail "refused sched_priority not warned about"
fi
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC with sched_priority"
log "sched_priority 7: $got"

# 5. A bad config: non-zero exit, "FILE:LINE: reason", nothing changed.
printf 'period_ms 200\nperiod_ms banana\n' > "$VPD_TMP/bad.conf"
set +e
"$VPD_BIN" --foreground --config "$VPD_TMP/bad.conf" --driver=dummy \
    --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx" > "$VPD_TMP/bad.log" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] || fail "bad config accepted"
grep -q "$VPD_TMP/bad.conf:2: " "$VPD_TMP/bad.log" ||
    fail "no FILE:LINE: reason: $(cat "$VPD_TMP/bad.log")"
log "bad config: exit $rc, $(head -n1 "$VPD_TMP/bad.log")"
vpd_snapshot "$fx" | diff -q "$VPD_TMP/before" - >/dev/null || fail "bad config changed the fixture"
exit 0
