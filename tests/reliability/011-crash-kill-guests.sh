#!/bin/bash
# 011-crash-kill-guests.sh -- 010's crash test against real TCG guests
# under the real libvirtd: the host state now includes libvirt pins.
#
# Two guests (busy, idle; 1 vCPU each); busy's agent sends latency-begin
# and latency-end hints back to back whenever vpowerd runs (agent test
# mode "storm"), so kills land in the middle of hints' pins.  Snapshot
# first: the sysfs fixture tree (every file), `virsh vcpupin`/
# `emulatorpin --live` of each guest and the kernel's affinity of their
# QEMU main and vCPU threads.  Then RELIABILITY_GUEST_KILLS (default 10)
# rounds: start vpowerd (only this test's domains, VPOWER_ONLY_DOMAINS),
# keep it busy toggling the host-wide override on top of the hints,
# SIGKILL it after a random 0.5-4 s, restart it (it must replay the
# journal: pins through libvirt, fixture through sysfs), SIGTERM it, and
# compare the whole snapshot.  Seeded.
set -u
VP_AGENT_GUEST=1
. "$(dirname "$0")/guest-lib.sh"
rel_seed
kills=${RELIABILITY_GUEST_KILLS:-10}

vp_agent_guest_files
vp_services_up
vp_build_guest
vp_guest_start busy busy 1 "vpower.agent=1 vpower.agenttest=storm"
vp_guest_start idle idle 1
vp_guest_wait_ready busy 180
vp_guest_wait_ready idle 180

fx=$REL_TMP/sys
rel_fixture "$fx" "$(nproc)"
snap() { rel_snapshot "$fx"; rel_guest_pins; }
snap > "$REL_TMP/before"
grep -q "^== $VP_PREFIX" "$REL_TMP/before" || rel_error "no guest pins in the snapshot"
grep -q "^thread CPU 0/" "$REL_TMP/before" ||
    rel_error "no vCPU thread affinities in the snapshot"
cat > "$REL_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 400
pack_dwell_ms 0
hint_rate 1000
journal $REL_TMP/journal
control_socket $REL_TMP/vpowerd.sock
EOD
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
args=(-v --config "$REL_TMP/vpowerd.conf" --sysfs-root "$fx" --connect "$VP_URI")

survived=0 changed=0 replays=0 hinted=0 hints=0 t0=$SECONDS
for ((k = 1; k <= kills; k++)); do
    : > "$REL_LOG"
    vpd_start "$REL_LOG" "${args[@]}"
    rel_wait_started "$REL_LOG" 60 || rel_fail "round $k: vpowerd did not start"
    delay=$((500 + $(rel_rand 3500)))
    end=$(( $(date +%s%N) / 1000000 + delay ))
    while [ $(( $(date +%s%N) / 1000000 )) -lt "$end" ]; do
        [ "$(rel_rand 3)" != 0 ] || kill -USR1 "$VPD_PID" 2>/dev/null
        sleep "0.$(rel_rand 3)"
    done
    kill -0 "$VPD_PID" 2>/dev/null || rel_fail "round $k: vpowerd died before the kill"
    kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null; VPD_PID=
    n=$(grep -c ': hint latency-' "$REL_LOG")
    [ "$n" = 0 ] || hinted=$((hinted + 1))
    hints=$((hints + n))
    snap | cmp -s "$REL_TMP/before" - || changed=$((changed + 1))
    : > "$REL_LOG"
    vpd_start "$REL_LOG" "${args[@]}"
    rel_wait_started "$REL_LOG" 60 || rel_fail "round $k: restart did not come up"
    grep -q "crashed run: restoring" "$REL_LOG" && replays=$((replays + 1))
    vpd_stop
    [ "$VPD_RC" = 0 ] || rel_fail "round $k: vpowerd exited $VPD_RC on SIGTERM"
    if ! snap | diff -u "$REL_TMP/before" - > "$REL_TMP/diff"; then
        head -n 40 "$REL_TMP/diff" >&2
        rel_fail "round $k (kill after $delay ms): host state (fixture or guest pins) differs (seed $REL_SEED)"
    fi
    survived=$((survived + 1))
    rel_log "round $k: killed after $delay ms and $n hints, restored"
done
[ "$changed" -ge 1 ] || rel_fail "no kill hit a changed host state: the test proves nothing"
[ "$hinted" -ge 1 ] || rel_fail "no round had a guest hint applied before its kill"
rel_log "RESULT: $survived/$kills SIGKILLs survived on real guests: $changed hit changed pins/fixture, $hinted came during a hint storm ($hints hints applied in all), $replays restarts replayed a journal; vcpupin/emulatorpin, thread affinities and fixture identical after each; $((SECONDS - t0)) s, seed $REL_SEED"
exit 0
