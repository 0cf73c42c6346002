# shellcheck shell=bash
# tests/reliability/guest-lib.sh -- real-guest part of the reliability
# tests: tests/integration/lib.sh (guests, skips, cleanup of every
# domain this test created) under rel-lib.sh (vpowerd, temp dir).
# rel-lib's EXIT trap stops vpowerd first and then runs lib.sh's
# vp_cleanup, which destroys the guests and exits with the test's status.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/rel-lib.sh"
rel_on_exit() {
    if [ -n "$VPD_PID" ]; then
        kill -TERM "$VPD_PID" 2>/dev/null
        sleep 1
    fi
}
rel_chain_exit() { vp_cleanup; }
# One vpowerd guest test at a time on this machine (same lock as the
# daemon's own guest tests).
if declare -F vpd_lock >/dev/null; then
    vpd_lock
fi

# rel_guest_pins: every test guest's live vCPU and emulator pins, as
# libvirt records them and as the kernel has them.
rel_guest_pins() {
    local d pid t
    for d in $(vp_virsh list --name | grep "^$VP_PREFIX" | sort); do
        echo "== $d"
        vp_virsh vcpupin "$d" --live
        vp_virsh emulatorpin "$d" --live
        # The kernel's view too: vpowerd puts a local domain's pins in
        # force through its cpuset groups before libvirt records them
        # (manager/drivers/cgpin.h).  QEMU's main thread and its vCPU
        # threads ("CPU N/KVM|TCG"); its worker threads come and go.
        pid=$(cat "/run/libvirt/qemu/$d.pid" 2>/dev/null) || continue
        for t in /proc/"$pid"/task/*; do
            case "$(cat "$t/comm" 2>/dev/null)" in
            "CPU "*) ;;
            *) [ "${t##*/}" = "$pid" ] || continue ;;
            esac
            echo "thread $(cat "$t/comm" 2>/dev/null): $(awk '/^Cpus_allowed_list/ { print $2 }' "$t/status" 2>/dev/null)"
        done | sort
    done
}
