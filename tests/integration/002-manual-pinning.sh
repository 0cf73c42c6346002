#!/bin/bash
# 002-manual-pinning: the reference figure, by hand.  With three light
# guests floating over both host CPUs, cpu1 is busy some % of the time;
# after pinning every vCPU and emulator thread of those guests onto cpu0
# (`virsh vcpupin --live`, `virsh emulatorpin --live`), cpu1 is almost idle.
# Reference on the project's 2-core machine: ~8.5 % -> ~0.2 %.
#
# Only the test's own transient guests are pinned; nothing on the host is
# changed, and the pins vanish with the guests.
#
# cpu1 is shared with whatever else runs on the host, which can only add
# to the figures.  The "after" figure is therefore the lowest of up to
# VP_AFTER_TRIES (default 6) windows: the test stops at the first window
# that meets the limits.  Each window also accounts the CPU time of the
# guests' QEMU processes and of the rest of the host; if even the best
# window fails and the rest of the host used more than the limit, the
# figure cannot be measured here and the test skips (exit 77) with that
# reason, unless VP_STRICT=1.
set -eu
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cpu=${VP_MEASURE_CPU:-1}
pin_to=${VP_PIN_CPU:-0}
secs=${VP_MEASURE_SECONDS:-10}
tries=${VP_AFTER_TRIES:-6}
max_after=${VP_MAX_AFTER_PCT:-2}
guests=(l1 l2 l3)

[ -d "/sys/devices/system/cpu/cpu$cpu" ] || vp_skip "host has no cpu$cpu"
[ "$(cat "/sys/devices/system/cpu/cpu$cpu/online" 2>/dev/null || echo 1)" = 1 ] ||
    vp_skip "cpu$cpu is offline"

vp_services_up
vp_build_guest

# For the record only: what the rest of the host does to cpu1 right now.
baseline=$(vp_cpu_nonidle_pct "$cpu" "$secs")
vp_log "baseline (no test guests): cpu$cpu non-idle $baseline % over ${secs}s"

for g in "${guests[@]}"; do vp_guest_start "$g" light 1; done
for g in "${guests[@]}"; do vp_guest_wait_ready "$g" "$VP_BOOT_TIMEOUT"; done

# Let boot-time work (module loading, udev-less device set-up) settle.
sleep 3

m=$(vp_measure "$cpu" "$secs" "${guests[@]}")
read -r before _ guests_b foreign_b <<< "$m"
vp_log "before pinning: cpu$cpu non-idle $before % over ${secs}s (3 light guests unpinned;" \
    "guests used $guests_b % of one CPU, the rest of the host $foreign_b %)"

for g in "${guests[@]}"; do vp_pin_guest "$g" "$pin_to"; done

# Every QEMU thread (vCPUs, emulator, I/O helpers) must now be confined.
for g in "${guests[@]}"; do
    for tid in $(vp_threads "$g"); do
        aff=$(vp_thread_affinity "$tid")
        [ -z "$aff" ] && continue   # thread exited meanwhile
        [ "$aff" = "$pin_to" ] ||
            vp_fail "thread $tid ($(cat "/proc/$tid/comm" 2>/dev/null)) of $(vp_dom "$g") may run on CPUs $aff, not only $pin_to"
    done
    vp_log "$(vp_dom "$g"): vCPU threads $(vp_vcpu_threads "$g" | awk '{printf "%s%s", s, $2; s=","}') and all other threads pinned to cpu$pin_to"
done

# ok PCT: true if PCT meets both limits.
ok() { vp_lt "$1" "$max_after" && vp_lt "$1" "$(awk -v b="$before" 'BEGIN { print b / 3 }')"; }

sleep 1
after='' foreign_a='' guests_best='' all=''
for ((i = 1; i <= tries; i++)); do
    m=$(vp_measure "$cpu" "$secs" "${guests[@]}")
    read -r v _ guests_a f <<< "$m"
    all="$all${all:+ }$v"
    if [ -z "$after" ] || vp_lt "$v" "$after"; then after=$v foreign_a=$f guests_best=$guests_a; fi
    ok "$after" && break
    vp_log "after pinning, window $i: cpu$cpu non-idle $v % (guests $guests_a %, rest of the host $f %); measuring again"
done
vp_log "after pinning: cpu$cpu non-idle $after % over ${secs}s (windows: $all;" \
    "guests used $guests_best % of one CPU, the rest of the host $foreign_a %)"
vp_log "RESULT cpu$cpu non-idle: baseline $baseline %, before $before %, after $after %"

if ! ok "$after"; then
    # The guests can no longer run on cpu$cpu (checked above).  If the
    # rest of the host was busy enough to explain the excess, the figure
    # could not be measured: say so instead of blaming the pinning.
    if vp_lt "$max_after" "$foreign_a" && [ "${VP_STRICT:-0}" != 1 ]; then
        vp_skip "host too busy to measure: other work used $foreign_a % of a CPU during the" \
            "best window (cpu$cpu $after %); rerun on a quiet host or set VP_STRICT=1"
    fi
    vp_lt "$after" "$max_after" ||
        vp_fail "cpu$cpu still $after % non-idle after pinning everything to cpu$pin_to (limit $max_after %)"
    vp_fail "cpu$cpu non-idle fell only from $before % to $after % (expected below a third)"
fi

for g in "${guests[@]}"; do vp_guest_destroy "$g"; done
vp_log "PASS"
