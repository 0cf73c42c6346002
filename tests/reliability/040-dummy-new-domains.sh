#!/bin/bash
# 040-dummy-new-domains.sh -- the dummy hypervisor reports domains the
# way libvirt does: one that appears in its domains file while vpowerd
# runs is managed, one that vanishes is dropped, and a file that does not
# parse (a bad or half-written rewrite) changes nothing: every domain
# stays managed and vpowerd keeps running.  (Reliability finding 1 in
# docs/reliability.md, fixed: the driver raises DRV_EV_STARTED/STOPPED.)
set -u
. "$(dirname "$0")/rel-lib.sh"
fx=$REL_TMP/sys
rel_fixture "$fx" 2
doms=$REL_TMP/doms
printf 'first 1 20\n' | rel_put "$doms"
printf 'period_ms 100\nmax_period_ms 200\njournal %s\ncontrol_socket %s\n' "$REL_TMP/journal" "$REL_TMP/vpowerd.sock" > "$REL_TMP/c.conf"
vpd_start "$REL_LOG" --config "$REL_TMP/c.conf" --driver=dummy \
    --dummy-domains "$doms" --sysfs-root "$fx"
rel_wait_started "$REL_LOG" 20 || rel_fail "vpowerd did not start"

wait_log() {   # wait_log PATTERN SECONDS
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        grep -q "$1" "$REL_LOG" && return 0
        sleep 0.1
    done
    return 1
}

printf 'first 1 20\nsecond 1 20\n' | rel_put "$doms"
wait_log "domain second (" 5 ||
    rel_fail "domain 'second', added to the domains file while vpowerd ran, was not managed within 5 s"

# A torn rewrite: the second line stops after its name.
printf 'first 1 20\nsecond\n' | rel_put "$doms"
wait_log "doms:2: 'second': vCPU count must be" 5 ||
    rel_fail "a domains file that does not parse was not reported with its line"
sleep 1.5
kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died on a bad domains file"
! grep -q "domain .* gone" "$REL_LOG" ||
    rel_fail "a bad domains file dropped a domain: $(grep -m1 'domain .* gone' "$REL_LOG")"

printf 'first 1 20\n' | rel_put "$doms"
wait_log "domain second gone" 5 ||
    rel_fail "domain 'second', removed from the domains file, was still managed after 5 s"
kill -0 "$VPD_PID" 2>/dev/null || rel_fail "vpowerd died"
grep -q "domain first gone" "$REL_LOG" && rel_fail "domain 'first' was dropped too"
vpd_stop
[ "$VPD_RC" = 0 ] || rel_fail "vpowerd exited $VPD_RC on SIGTERM"
rel_log "RESULT: a domain added while running was managed, a removed one dropped, a bad file reported at its line and nothing dropped"
exit 0
