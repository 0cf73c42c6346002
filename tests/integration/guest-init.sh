#!/bin/sh
# /init of the vpower integration-test guest (busybox sh, PID 1).
#
# Kernel command-line parameters:
#   vpower.load=busy|light|idle   workload (default idle)
#     busy:  one endless shell loop per vCPU (or per vpower.busy_vcpus=N)
#     light: one loop that wakes every ~100 ms, burns a short burst
#            (vpower.light_iters=N loop iterations, default 100) and sleeps
#     idle:  nothing
#   vpower.busy_vcpus=N           number of busy loops for vpower.load=busy
#   vpower.light_iters=N          burst length for vpower.load=light
#   vpower.agent=1                start /bin/vpower-agent in the background
#
# Prints "VPOWER-GUEST-READY ..." on the console (ttyS0) once the workload
# runs.  PID 1 must never exit (the kernel would panic), so this script
# deliberately does not use `set -e` and ends in an endless sleep loop.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /tmp /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
# Send our output to the console in case the kernel gave us nothing.
[ -c /dev/console ] && exec >/dev/console 2>&1 </dev/null

if [ -f /lib/modules/load-order ]; then
    while read -r m; do
        [ -f "/lib/modules/$m.ko" ] || continue
        insmod "/lib/modules/$m.ko" 2>/dev/null ||
            grep -q "^$m " /proc/modules || echo "vpower-guest: insmod $m failed"
    done < /lib/modules/load-order
fi

# No udev: create /dev/virtio-ports/NAME links for virtio-serial ports.
i=0
while [ $i -lt 20 ]; do
    ls /sys/class/virtio-ports/ 2>/dev/null | grep -q . && break
    grep -q '^virtio_console ' /proc/modules || break
    sleep 0.1 2>/dev/null || usleep 100000
    i=$((i + 1))
done
mkdir -p /dev/virtio-ports
for p in /sys/class/virtio-ports/*; do
    [ -f "$p/name" ] || continue
    name=$(cat "$p/name")
    [ -n "$name" ] && ln -sf "/dev/${p##*/}" "/dev/virtio-ports/$name"
done

load=idle
busy_vcpus=
light_iters=100
agent=0
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        vpower.load=*) load=${arg#vpower.load=} ;;
        vpower.busy_vcpus=*) busy_vcpus=${arg#vpower.busy_vcpus=} ;;
        vpower.light_iters=*) light_iters=${arg#vpower.light_iters=} ;;
        vpower.agent=*) agent=${arg#vpower.agent=} ;;
    esac
done

ncpu=$(grep -c '^processor' /proc/cpuinfo)

# nap: sleep ~100 ms without forking.  A fork+exec of `sleep` costs several
# ms of host CPU under TCG, far more than the burst itself, so wait with
# the shell builtin `read -t` on a FIFO that never gets data (opened
# read-write so the open does not block).
mkfifo /run/vpower-nap
nap() {
    read -t 0.1 _ <> /run/vpower-nap
}

case "$load" in
    busy)
        n=${busy_vcpus:-$ncpu}
        j=0
        while [ "$j" -lt "$n" ]; do
            (while :; do :; done) &
            j=$((j + 1))
        done
        ;;
    light)
        (
            while :; do
                k=0
                while [ "$k" -lt "$light_iters" ]; do k=$((k + 1)); done
                nap
            done
        ) &
        ;;
    idle) ;;
    *) echo "vpower-guest: unknown vpower.load=$load, staying idle"; load=idle ;;
esac

if [ "$agent" = 1 ] && [ -x /bin/vpower-agent ]; then
    /bin/vpower-agent &
    echo "vpower-guest: started vpower-agent (pid $!)"
fi

ports=$(ls /dev/virtio-ports 2>/dev/null | tr '\n' ',')
echo "VPOWER-GUEST-READY load=$load vcpus=$ncpu ports=${ports%,} uptime=$(cut -d' ' -f1 /proc/uptime)"

trap '' TERM INT HUP
while :; do
    sleep 3600
done
