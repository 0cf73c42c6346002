#!/bin/bash
# 017-vpowerd-smt.sh -- SMT isolation in the real vpowerd, with the
# dummy hypervisor on a sysfs fixture with siblings (8 CPUs, 4 cores of
# 2 threads): no libvirt, no root needed.
#
# Checks: after 'vpowerctl set-policy a balanced --no-share-smt', the
# pins of every other VM (vCPUs and emulators) stay off every thread of
# the cores a's vCPUs may run on, in every pin table written over
# several decisions; 'vpowerctl explain a' says what isolation cost;
# with share_smt back on, a shares the pool again.  Then vpowerd starts
# again with 'default_share_smt no' and a fresh hypervisor: a VM without
# a policy of its own is isolated, and says so in get-policy.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin
CTL=$VPD_BUILDDIR/manager/vpowerctl
[ -x "$CTL" ] || { echo "[$T] ERROR: $CTL not built" >&2; exit 99; }
command -v python3 >/dev/null || { echo "[$T] SKIP: no python3"; exit 77; }

fx=$VPD_TMP/sys
"$VPD_SRCDIR/tests/fixtures/mksysfs.sh" "$fx" --cpus 8 --smt 2 \
    --freqs "1000000 2000000" >/dev/null
cat > "$VPD_TMP/doms" <<EOD
a  1 10
b  1 10
c  2 10 10
EOD
vpd_base_conf
export VPOWER_DUMMY_STATE=$VPD_TMP/pins VPOWER_SOCKET=$VPD_TMP/vpowerd.sock
vpd_start "$VPD_TMP/vpowerd.log" --config "$VPD_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx"
vpd_wait_log "$VPD_TMP/vpowerd.log" "decision" 10 || fail "no decision"

# isolated: 0 when a's pins are set and no other VM's pin touches a
# thread of a core a's vCPUs may run on (siblings from the fixture).
isolated() {
    python3 - "$VPOWER_DUMMY_STATE" "$fx" <<'EOPY'
import sys
pins, root = sys.argv[1], sys.argv[2]
def cpus(text):
    out = set()
    for part in text.strip().split(','):
        lo, _, hi = part.partition('-')
        out.update(range(int(lo), int(hi or lo) + 1))
    return out
def core(c):
    with open(f"{root}/cpu{c}/topology/thread_siblings_list") as f:
        return cpus(f.read())
a, other = set(), set()
for line in open(pins):
    vm, what, lst = line.split()
    if vm == 'a' and what.startswith('vcpu'):
        for c in cpus(lst):
            a |= core(c)
    elif vm != 'a':
        other |= cpus(lst)
sys.exit(0 if a and not (a & other) else 1)
EOPY
}

"$CTL" set-policy a balanced --no-share-smt > /dev/null ||
    fail "set-policy --no-share-smt failed"
for ((i = 0; i < 100; i++)); do
    isolated && break
    kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
    sleep 0.1
done
isolated || fail "a not isolated after 10 s: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
log "isolated: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
# Every pin table written over the next decisions keeps the rule.
for ((i = 0; i < 30; i++)); do
    isolated || fail "isolation lost: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
    sleep 0.1
done
out=$("$CTL" explain a | tr "\n" " ")
case $out in
    *smt-isolated*"isolation cost"*) ;;
    *) fail "explain a does not say what isolation cost: $out" ;;
esac

"$CTL" set-policy a balanced > /dev/null || fail "set-policy failed"
for ((i = 0; i < 100; i++)); do
    ! isolated && break
    sleep 0.1
done
! isolated || fail "a still isolated with share_smt on"
out=$("$CTL" explain a | tr "\n" " ")
case $out in
    *"SMT isolation"*) fail "explain a still names isolation: $out" ;;
esac
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"

# default_share_smt: no VM has metadata in a fresh dummy hypervisor.
echo "default_share_smt no" >> "$VPD_TMP/vpowerd.conf"
export VPOWER_DUMMY_STATE=$VPD_TMP/pins2
vpd_start "$VPD_TMP/vpowerd2.log" --config "$VPD_TMP/vpowerd.conf" \
    --driver=dummy --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx"
vpd_wait_log "$VPD_TMP/vpowerd2.log" "decision" 10 || fail "no decision"
out=$("$CTL" get-policy a)
printf '%s\n' "$out" | grep -Eq '^Share SMT: +no$' ||
    fail "default_share_smt no: get-policy a says: $out"
for ((i = 0; i < 100; i++)); do
    isolated && break
    sleep 0.1
done
isolated || fail "default_share_smt no: a not isolated: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
log "ok"
