#!/bin/bash
# 018-vpowerd-agents.sh -- another power agent writes the files vpowerd
# manages: the real vpowerd with the dummy hypervisor on a sysfs fixture
# (no libvirt, no root).
#
# Checks: while vpowerd runs, a second writer (as tuned or an
# administrator would) raises a frequency limit vpowerd had lowered and
# disables an idle state; vpowerd logs both as changed by another writer,
# counts them in `vpowerctl status` (naming each) and in the exporter's
# vpower_foreign_knobs_total, does not write them again (not even for the SIGUSR1 override, which
# rewrites every frequency and idle limit at once) and leaves them as the
# other writer set them on SIGTERM, while everything else is restored.
# After a SIGKILL, a limit changed before the next start is not replayed
# over; the rest of the journal is.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin
CTL=$VPD_BUILDDIR/manager/vpowerctl
EXP=$VPD_BUILDDIR/manager/vpower-exporter
[ -x "$CTL" ] && [ -x "$EXP" ] ||
    { echo "[$T] ERROR: vpowerctl or vpower-exporter not built" >&2; exit 99; }
EXP_PID=
vpd_test_hook() { [ -z "$EXP_PID" ] || kill "$EXP_PID" 2>/dev/null; }

vpd_dummy_world 2
max1=$fx/cpu1/cpufreq/scaling_max_freq
c1=$fx/cpu1/cpuidle/state1/disable
c6=$fx/cpu1/cpuidle/state2/disable

# wait_lowered: vpowerd has lowered cpu1's frequency limit (its packed
# light VMs) below the hardware maximum.
wait_lowered() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(cat "$max1")" -lt 2000000 ] && return 0
        kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
        sleep 0.1
    done
    return 1
}

# 1. While vpowerd runs.
vpd_snapshot "$fx" > "$VPD_TMP/before"
vpd_start "$VPD_TMP/vpowerd.log" "${args[@]}"
wait_lowered || fail "vpowerd did not lower cpu1's limit within 10 s"
log "vpowerd set cpu1 scaling_max_freq to $(cat "$max1")"
echo 1800000 > "$max1"          # The second writer.
echo 1 > "$c1"
vpd_wait_log "$VPD_TMP/vpowerd.log" \
    "cpu1/cpufreq/scaling_max_freq changed by another writer" 5 ||
    fail "the changed frequency limit was not logged"
vpd_wait_log "$VPD_TMP/vpowerd.log" \
    "cpu1/cpuidle/state1/disable changed by another writer" 5 ||
    fail "the changed idle state was not logged"
grep -q 'expected "0" (as vpowerd first read it), found "1"' \
    "$VPD_TMP/vpowerd.log" || fail "idle state log lacks the values"
# `vpowerctl status` names both; the exporter counts them.
out=$(VPOWER_SOCKET=$VPD_TMP/vpowerd.sock "$CTL" status)
printf '%s\n' "$out" | grep -Eq '^Foreign knobs: +2 ' ||
    fail "status does not count 2 foreign knobs: $out"
printf '%s\n' "$out" |
    grep -Eq '^ +cpu1 cpufreq/scaling_max_freq: 1800000 \(vpowerd.s [0-9]+\)$' ||
    fail "status does not name the foreign frequency limit: $out"
printf '%s\n' "$out" | grep -Eq '^ +cpu1 cpuidle/state1/disable: 1 ' ||
    fail "status does not name the foreign idle state: $out"
if command -v curl > /dev/null; then
    port=$((20000 + $$ % 20000))
    "$EXP" --socket "$VPD_TMP/vpowerd.sock" --listen "127.0.0.1:$port" \
        > "$VPD_TMP/exporter.log" 2>&1 &
    EXP_PID=$!
    for ((i = 0; i < 50; i++)); do
        m=$(curl -sf --max-time 2 "http://127.0.0.1:$port/metrics" |
            awk '$1 == "vpower_foreign_knobs_total" { print $2 }') || true
        [ -n "$m" ] && break
        sleep 0.1
    done
    kill "$EXP_PID"; wait "$EXP_PID" 2>/dev/null || true; EXP_PID=
    [ "$m" = 2 ] || fail "vpower_foreign_knobs_total is '$m', not 2"
    log "status and vpower_foreign_knobs_total show the 2 foreign knobs"
fi
# The override writes every limit at once: cpu1 to the top frequency,
# deep idle off (state2 disabled), C1 allowed.
kill -USR1 "$VPD_PID"
for ((i = 0; i < 20; i++)); do
    [ "$(cat "$c6")" = 1 ] && break
    sleep 0.05
done
[ "$(cat "$c6")" = 1 ] || fail "override not applied to cpu1 within 1 s"
sleep 0.5                       # A few more periods.
[ "$(cat "$max1")" = 1800000 ] ||
    fail "vpowerd overwrote the other writer's limit: $(cat "$max1")"
[ "$(cat "$c1")" = 1 ] ||
    fail "vpowerd overwrote the other writer's C1 disable"
log "other writer's values kept while running: max $(cat "$max1")," \
    "state1 disable $(cat "$c1")"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC after SIGTERM"
[ "$(cat "$max1")" = 1800000 ] ||
    fail "SIGTERM restored over the other writer's limit"
[ "$(cat "$c1")" = 1 ] ||
    fail "SIGTERM restored over the other writer's C1 disable"
# Everything else is back as found.
vpd_snapshot "$fx" | grep -v -e '^./cpu1/cpufreq/scaling_max_freq:' \
    -e '^./cpu1/cpuidle/state1/disable:' > "$VPD_TMP/after"
grep -v -e '^./cpu1/cpufreq/scaling_max_freq:' \
    -e '^./cpu1/cpuidle/state1/disable:' "$VPD_TMP/before" |
    diff -u - "$VPD_TMP/after" >&2 || fail "vpowerd's own values not restored"
[ ! -e "$VPD_TMP/journal" ] || fail "journal left after a clean exit"
log "SIGTERM: other writer's values kept, the rest restored, exit 0"

# 2. After a crash: the journal is replayed at the next start, except
# over a value changed in between.
vpd_snapshot "$fx" > "$VPD_TMP/before2"
vpd_start "$VPD_TMP/vpowerd2.log" "${args[@]}"
for ((i = 0; i < 100; i++)); do
    [ "$(cat "$max1")" -lt 1800000 ] && break
    sleep 0.1
done
[ "$(cat "$max1")" -lt 1800000 ] || fail "second run did not lower cpu1"
kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null || true; VPD_PID=
[ -s "$VPD_TMP/journal" ] || fail "no journal after SIGKILL"
echo 1700000 > "$max1"          # The second writer, after the crash.
vpd_start "$VPD_TMP/vpowerd3.log" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd3.log" "crashed run: restoring" 10 ||
    fail "leftover journal not replayed"
vpd_wait_log "$VPD_TMP/vpowerd3.log" \
    "restore cpu1/cpufreq/scaling_max_freq: left as found" 5 ||
    fail "replay did not report the value it left"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
[ "$(cat "$max1")" = 1700000 ] ||
    fail "replay restored over a value changed after the crash: $(cat "$max1")"
vpd_snapshot "$fx" | grep -v '^./cpu1/cpufreq/scaling_max_freq:' \
    > "$VPD_TMP/after2"
grep -v '^./cpu1/cpufreq/scaling_max_freq:' "$VPD_TMP/before2" |
    diff -u - "$VPD_TMP/after2" >&2 || fail "journal not replayed for the rest"
log "crash: the value changed after it kept, the rest replayed"
exit 0
