#!/bin/bash
# 015-vpowerd-notify.sh -- vpowerd as a systemd Type=notify service with a
# watchdog, without systemd: notify-check.py binds the socket systemd
# would ($NOTIFY_SOCKET), sets $WATCHDOG_USEC and $WATCHDOG_PID as systemd
# does for the main process, and runs the real vpowerd on the dummy
# hypervisor and a 4-CPU sysfs fixture (no libvirt, no root).
#
# Checks: READY=1 with a STATUS= line; STATUS= follows the daemon's state
# (3 VMs, 2 of 4 CPUs active once packed; "override performance" with 4
# of 4 at once after SIGUSR1); WATCHDOG=1 about twice per interval with
# no gap as long as the interval; none while the process is stopped
# (SIGSTOP), again within an interval of SIGCONT; STOPPING=1 on SIGTERM
# and exit 0.  A watchdog meant for another process ($WATCHDOG_PID not
# vpowerd's) gets no keep-alives.  Skipped (77) when vpowerd was built
# without libsystemd.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
VPD_FAIL_LOGS=("$VPD_TMP/check.log")
vpd_test_begin
command -v python3 >/dev/null ||
    { echo "[$T] ERROR: python3 needed" >&2; exit 99; }
if ! grep -q '^#define HAVE_LIBSYSTEMD 1' "$VPD_BUILDDIR/config.h"; then
    echo "[$T] SKIP: vpowerd built without libsystemd (no sd_notify)" >&2
    exit 77
fi
CHECK=$VPD_SRCDIR/tests/integration/notify-check.py
# The check that failed, or how notify-check.py ended.
check_failure() {
    sed -n 's/^FAIL: //p' "$VPD_TMP/check.log" | grep . ||
        echo "notify-check exited $rc"
}

vpd_dummy_world 4
args=(--foreground "${args[@]}")

# 1. The whole protocol with a 400 ms watchdog.
set +e
python3 "$CHECK" --socket "$VPD_TMP/notify" --watchdog-usec 400000 \
    --status-re '^managing: 3 VMs, 2 of 4 managed CPUs active$' \
    --override-re '^override performance: 3 VMs, 4 of 4 managed CPUs active$' \
    --log "$VPD_TMP/vpowerd.log" -- "$VPD_BIN" "${args[@]}" \
    > "$VPD_TMP/check.log" 2>&1
rc=$?
set -e
grep '^RESULT' "$VPD_TMP/check.log" | sed "s/^/[$T] /" >&2
[ "$rc" = 0 ] || fail "$(check_failure)"
[ ! -e "$VPD_TMP/journal" ] || fail "journal left after SIGTERM"

# 2. $WATCHDOG_PID names another process: READY=1, but no keep-alives.
rm -f "$VPD_TMP/notify"
set +e
python3 "$CHECK" --socket "$VPD_TMP/notify" --watchdog-usec 400000 \
    --foreign-watchdog \
    --log "$VPD_TMP/vpowerd.log" -- "$VPD_BIN" "${args[@]}" \
    > "$VPD_TMP/check.log" 2>&1
rc=$?
set -e
grep '^RESULT' "$VPD_TMP/check.log" | sed "s/^/[$T] /" >&2
[ "$rc" = 0 ] || fail "$(check_failure)"
exit 0
