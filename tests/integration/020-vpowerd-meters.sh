#!/bin/bash
# 020-vpowerd-meters.sh -- vpowerd finds the power meters below
# powercap_root and hwmon_root at start and `vpowerctl status` says which
# and what each covers: the real vpowerd with the dummy hypervisor on a
# sysfs fixture and fixture powercap and hwmon trees (no root needed).
#
# Checks: with both trees, the RAPL package and DRAM zones and the ACPI
# power meter are listed with their fixture paths and scopes, and the
# power meter measures the whole host (platform); with only the powercap
# tree, package+DRAM is the whole-host meter and no power meter is
# listed; with only the hwmon tree, no RAPL zone is.  So each directive
# changes what is found.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin
CTL=$VPD_BUILDDIR/manager/vpowerctl
[ -x "$CTL" ] || { echo "[$T] ERROR: $CTL not built" >&2; exit 99; }

fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
echo "light 1 10" > "$VPD_TMP/doms"
export VPOWER_DUMMY_STATE=$VPD_TMP/pins VPOWER_SOCKET=$VPD_TMP/vpowerd.sock

# put REL TEXT: a fixture file below $VPD_TMP.
put() { mkdir -p "$(dirname "$VPD_TMP/$1")"; printf '%s\n' "$2" > "$VPD_TMP/$1"; }
pc=$VPD_TMP/powercap hw=$VPD_TMP/hwmon
put powercap/intel-rapl:0/name package-0
put powercap/intel-rapl:0/energy_uj 1000
put powercap/intel-rapl:0/max_energy_range_uj 262143328850
put powercap/intel-rapl:0:0/name dram
put powercap/intel-rapl:0:0/energy_uj 2000
put powercap/intel-rapl:0:0/max_energy_range_uj 65712999613
put hwmon/hwmon0/name power_meter
put hwmon/hwmon0/power1_average 150000000
mkdir -p "$VPD_TMP/empty"

# status POWERCAP_ROOT HWMON_ROOT: vpowerd's status with those roots.
status() {
    cat > "$VPD_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 500
journal $VPD_TMP/journal
control_socket $VPD_TMP/vpowerd.sock
powercap_root $1
hwmon_root $2
EOD
    vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
        --driver=dummy --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx"
    vpd_wait_log "$VPD_TMP/vpowerd.log" "decision" 10 || fail "no decision"
    "$CTL" status > "$VPD_TMP/status" || fail "vpowerctl status failed"
    vpd_stop
    [ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
}
has() {
    grep -Eq -- "$1" "$VPD_TMP/status" ||
        fail "$2: status lacks /$1/: $(cat "$VPD_TMP/status")"
}
hasnt() {
    ! grep -Eq -- "$1" "$VPD_TMP/status" ||
        fail "$2: status shows /$1/: $(cat "$VPD_TMP/status")"
}

status "$pc" "$hw"
has "^Meters: +3 found; whole host: platform$" "both trees"
has "package-0: rapl, package, $pc/intel-rapl:0/energy_uj$" "both trees"
has "dram-0: rapl, dram, $pc/intel-rapl:0:0/energy_uj$" "both trees"
has "power_meter/power1: hwmon, platform, $hw/hwmon0/power1_average.* \(host\)$" "both trees"
grep -q "whole-host meter: power_meter/power1 (platform)" "$VPD_TMP/vpowerd.log" ||
    fail "whole-host meter not logged"
log "both trees: $(grep -c ': rapl\|: hwmon' "$VPD_TMP/status") meters listed, platform meter chosen"

status "$pc" "$VPD_TMP/empty"
has "^Meters: +2 found; whole host: package\+dram$" "powercap only"
has "package-0: rapl, package, $pc/intel-rapl:0/energy_uj \(host\)$" "powercap only"
hasnt "power_meter" "hwmon_root elsewhere"
log "hwmon_root elsewhere: no power meter, package+dram is the host meter"

status "$VPD_TMP/empty" "$hw"
has "^Meters: +1 found; whole host: platform$" "hwmon only"
hasnt "rapl" "powercap_root elsewhere"
log "powercap_root elsewhere: no RAPL zone, the power meter alone"
