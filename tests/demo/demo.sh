#!/bin/bash
# demo.sh -- `make demo`: vpower's main job on the machine at hand.
#
# With root and libvirt: boots three lightly loaded guests under QEMU,
# measures how busy host CPU 1 is, starts vpowerd (cpufreq and cpuidle
# writes go to a fixture tree, because this is a demo on someone's
# machine: only the demo's own guests are pinned), shows vpowerctl and
# the exporter's metrics, measures again, stops vpowerd (which restores
# every pin) and destroys the guests.  Without root or libvirt it replays
# a real trace through vpower-sim instead.
set -u
here=$(cd "$(dirname "$0")" && pwd)
VPOWER_SRCDIR=${VPOWER_SRCDIR:-$(cd "$here/../.." && pwd)}
VPOWER_BUILDDIR=${VPOWER_BUILDDIR:-$PWD}
export VPOWER_SRCDIR VPOWER_BUILDDIR
b=$VPOWER_BUILDDIR
measure_s=${DEMO_MEASURE_S:-10}

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

sim_demo() {
    say "vpower-sim: $1; replaying a real trace instead"
    local traces
    for traces in "$VPOWER_SRCDIR/../shared/data/traces/planetlab-cloudsim/20110303" \
                  "$VPOWER_SRCDIR/tests/sim/data/pl-ok"; do
        [ -d "$traces" ] && break
    done
    echo "trace: $traces (first 100 VMs, 6 hours), server model"
    "$b/sim/vpower-sim" --model "$VPOWER_SRCDIR/config/models/xeon-r640-2s.model" \
        --trace "$traces" --vms 100 --hours 6 --compare
}

if [ "$(id -u)" != 0 ]; then
    sim_demo "not root (the live demo boots guests under libvirt)"
    exit $?
fi
if ! command -v virsh >/dev/null || ! [ -x /usr/sbin/libvirtd ]; then
    sim_demo "libvirt is not installed (run .ci/install-deps)"
    exit $?
fi

VP_TEST=demo
. "$VPOWER_SRCDIR/tests/integration/lib.sh"
VPD_TMP=$VP_TMPDIR
. "$VPOWER_SRCDIR/tests/integration/vpowerd-lib.sh"
EXP_PID=

demo_cleanup() {
    local rc=$?     # vp_cleanup exits with the status it is entered with

    set +e
    [ -n "$EXP_PID" ] && kill "$EXP_PID" 2>/dev/null
    [ -n "$VPD_PID" ] && vpd_stop
    (exit "$rc")
    vp_cleanup
}
trap demo_cleanup EXIT
vpd_lock

say "starting libvirtd and building a tiny guest (Debian kernel + busybox)"
vp_services_up
vp_build_guest
guests="l1 l2 l3"
for g in $guests; do vp_guest_start "$g" light 1; done
for g in $guests; do vp_guest_wait_ready "$g" 180; done
echo "three guests running, each waking every 100 ms for a short burst:"
vp_virsh list | grep "$VP_PREFIX"

# irqs CPU: device interrupts the CPU has taken so far (the numbered
# rows of /proc/interrupts).
irqs() {
    awk -v c=$(($1 + 2)) '$1 ~ /^[0-9]+:$/ { s += $c } END { printf "%.0f\n", s }' /proc/interrupts
}
say "without vpowerd: host CPU 1 over $measure_s s"
sleep 3
i0=$(irqs 1)
before=$(vp_cpu_nonidle_pct 1 "$measure_s")
irq_before=$(($(irqs 1) - i0))
echo "cpu1 non-idle: $before %, $irq_before device interrupts   (from /sys/devices/system/cpu/cpu1/cpuidle/state*/time and /proc/interrupts)"

say "starting vpowerd and vpower-exporter"
fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
sock=$VPD_TMP/vpowerd.sock
cat > "$VPD_TMP/vpowerd.conf" <<EOF
managed_cpus 0-1
pack_dwell_ms 3000
control_socket $sock
journal $VPD_TMP/journal
housekeeping yes
EOF
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --sysfs-root "$fx" --connect "$VP_URI"
port=$((20000 + RANDOM % 20000))
"$b/manager/vpower-exporter" --socket "$sock" --listen "127.0.0.1:$port" \
    > "$VPD_TMP/exporter.log" 2>&1 &
EXP_PID=$!
echo "vpowerd pid $VPD_PID (fixture sysfs $fx), exporter on 127.0.0.1:$port"

ctl() { "$b/manager/vpowerctl" --socket "$sock" "$@"; }
for ((i = 0; i < 60; i++)); do
    ctl status >/dev/null 2>&1 && break
    sleep 1
done
echo "waiting for vpowerd to measure the guests and pack them (dwell 3 s)..."
for ((i = 0; i < 90; i++)); do
    pins=$(for g in $guests; do
        vp_virsh vcpupin "$(vp_dom "$g")" --vcpu 0 --live | awk '{ print $NF }'
        vp_virsh emulatorpin "$(vp_dom "$g")" --live | awk '{ print $NF }'
    done | sort -u)
    [ "$(echo "$pins" | wc -l)" = 1 ] && [[ "$pins" =~ ^[01]$ ]] && break
    sleep 1
done

say "vpowerctl status"
ctl status
say "vpowerctl list"
ctl list
say "vpowerctl explain $(vp_dom l1)"
ctl explain "$(vp_dom l1)"
say "libvirt's view: virsh vcpupin / emulatorpin"
for g in $guests; do
    printf '%s: vcpu0 -> %s, emulator -> %s\n' "$(vp_dom "$g")" \
        "$(vp_virsh vcpupin "$(vp_dom "$g")" --vcpu 0 --live | awk '{ print $NF }')" \
        "$(vp_virsh emulatorpin "$(vp_dom "$g")" --live | awk '{ print $NF }')"
done

freed=1
[ "$pins" = 1 ] && freed=0
say "with vpowerd: host CPU $freed (the one it freed) over $measure_s s"
own() { ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu_seconds"])'; }
c0=$(own)
i0=$(irqs "$freed")
after=$(vp_cpu_nonidle_pct "$freed" "$measure_s")
irq_after=$(($(irqs "$freed") - i0))
c1=$(own)
echo "cpu$freed non-idle: $after %, $irq_after device interrupts   (without vpowerd, cpu1 was $before %, $irq_before interrupts)"
awk -v a="$c0" -v b="$c1" -v s="$measure_s" 'BEGIN {
    printf "vpowerd itself over those %d s: %.3f s of CPU time (%.2f %% of one CPU)\n", s, b - a, 100 * (b - a) / s }'
echo "housekeeping (host services, interrupts and kernel workqueues follow the active set):"
ctl status | grep -A2 '^Housekeeping:' || true

say "a few metrics from the exporter (http://127.0.0.1:$port/metrics)"
curl -s "http://127.0.0.1:$port/metrics" |
    grep -E '^vpower_(up|active_cpus|power_watts|cpu_state|vm_energy_joules_total|decisions_total|daemon_cpu_seconds_total|housekeeping_state|cpu_interrupts_total)' |
    grep -v ' 0$' | head -n 24

say "stopping vpowerd: it restores every pin, interrupt and cpuset it changed"
vpd_stop
echo "vpowerd exited $VPD_RC"
for g in $guests; do
    printf '%s: vcpu0 -> %s\n' "$(vp_dom "$g")" \
        "$(vp_virsh vcpupin "$(vp_dom "$g")" --vcpu 0 --live | awk '{ print $NF }')"
done
say "destroying the demo guests"
exit 0
