#!/bin/bash
# 019-vpowerd-migration.sh -- vpowerd and live migrations, on the dummy
# hypervisor's scripted migrations (migr= in its domains file) against a
# sysfs fixture tree: no libvirt, no root needed.
#
# Checks: a domain with an outgoing migration job keeps its pins while
# the job runs (the others are packed) and is managed again when the job
# ends without the domain leaving; once it has migrated away its journal
# entries are forgotten and nothing is restored to it at exit; a domain
# that arrives by migration gets the policy of its metadata and its
# migrated pins are neither taken as static pins nor restored at exit.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin
CTL=$VPD_BUILDDIR/manager/vpowerctl
[ -x "$CTL" ] || { echo "[$T] ERROR: $CTL not built" >&2; exit 99; }

fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
vpd_base_conf
export VPOWER_DUMMY_STATE=$VPD_TMP/pins VPOWER_SOCKET=$VPD_TMP/vpowerd.sock
ALL="0-$(($(nproc) - 1))"

# doms LINES...: replaces the domains file atomically.
doms() {
    printf '%s\n' "$@" > "$VPD_TMP/doms.new"
    mv "$VPD_TMP/doms.new" "$VPD_TMP/doms"
}
wait_for() {
    local i
    for ((i = 0; i < 100; i++)); do
        eval "$1" && return 0
        kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
        sleep 0.1
    done
    return 1
}
mover_uuid() { awk '/domain mover \(/ { sub(/.*\(/, ""); sub(/\).*/, ""); print; exit }' "$VPD_TMP/vpowerd.log"; }

# 1. An outgoing migration job runs from the start: the mover is planned
# around where it may run (all CPUs) and its pins are never written,
# where without the job it would be packed with light onto CPU 1.
doms "busy  1 95 kind=performance" "light 1 10" "mover 1 10 migr=out"
vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx"
vpd_wait_log "$VPD_TMP/vpowerd.log" "decision:" 10 || fail "no decision"
sleep 3                     # Unfrozen, it is packed within about 1 s.
for w in vcpu0 emulator; do
    p=$(vpd_pin mover $w)
    [ -z "$p" ] || [ "$p" = "$ALL" ] ||
        fail "pins of a migrating domain changed: mover $w $p"
done
grep -q "domain mover: migration runs: pins frozen" "$VPD_TMP/vpowerd.log" ||
    fail "no log line for the frozen domain"
log "migrating out: mover's pins untouched for 3 s of decisions"

# 2. The job ends without the domain leaving (failed before its final
# pause, no event): managed again, packed with light.
doms "busy  1 95 kind=performance" "light 1 10" "mover 1 10"
wait_for '[ "$(vpd_pin mover vcpu0)" = 1 ] && [ "$(vpd_pin light vcpu0)" = 1 ]' ||
    fail "mover not managed after its migration job ended: $(vpd_pin mover vcpu0)"
uuid=$(mover_uuid)
[ -n "$uuid" ] || fail "no uuid of mover in the log"
wait_for 'grep -q "$uuid" "$VPD_TMP/journal"' ||
    fail "mover's originals not journalled once managed"
log "failed migration: mover managed again (vcpu0 on 1), journalled"

# 3. It migrates away: its journal entries go, nothing is restored.
doms "busy  1 95 kind=performance" "light 1 10" "mover 1 10 migr=gone"
wait_for '! grep -q "$uuid" "$VPD_TMP/journal"' ||
    fail "journal still holds the migrated-away domain: $(cat "$VPD_TMP/journal")"
grep -Eq "domain (mover|$uuid) migrated away" "$VPD_TMP/vpowerd.log" ||
    fail "migration away not logged"
log "migrated away: mover's journal entries forgotten"

# 4. A domain arrives: received (paused, frozen) with the source host's
# live pins, then resumed here with its metadata policy.
doms "busy  1 95 kind=performance" "light 1 10" "mover 1 10 migr=gone" \
     "guest 1 10 static=0 migr=in"
wait_for 'grep -q "domain guest: migration runs: pins frozen" "$VPD_TMP/vpowerd.log"' ||
    fail "incoming domain not frozen"
sleep 0.6
p=$(vpd_pin guest vcpu0)
[ -z "$p" ] || [ "$p" = 0 ] || fail "incoming domain repinned: $p"
doms "busy  1 95 kind=performance" "light 1 10" "mover 1 10 migr=gone" \
     "guest 1 10 static=0 kind=powersave"
wait_for 'grep -q "domain guest arrived by migration: policy powersave (metadata)" "$VPD_TMP/vpowerd.log"' ||
    fail "arrived domain's metadata policy not read"
out=$("$CTL" get-policy guest)
printf '%s\n' "$out" | grep -Eiq 'powersave' ||
    fail "get-policy guest after arrival: $out"
log "arrived: guest has its metadata policy"

vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
for w in vcpu0 emulator; do
    [ "$(vpd_pin guest $w)" = "$ALL" ] ||
        fail "arrived domain's migrated pins taken as static or originals: guest $w $(vpd_pin guest $w)"
done
# The departure line says "not restored" and names the domain when the
# event comes before a listing drops it: that line is no restore.
if grep -E "restor.*mover|mover.*restor" "$VPD_TMP/vpowerd.log" |
        grep -v "migrated away: originals forgotten, not restored"; then
    fail "something was restored to the migrated-away domain"
fi
log "exit: guest back on $ALL, nothing restored to mover"
