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

# rel_guest_pins: every test guest's live vCPU and emulator pins.
rel_guest_pins() {
    local d
    for d in $(vp_virsh list --name | grep "^$VP_PREFIX" | sort); do
        echo "== $d"
        vp_virsh vcpupin "$d" --live
        vp_virsh emulatorpin "$d" --live
    done
}
