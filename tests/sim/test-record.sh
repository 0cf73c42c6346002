#!/bin/sh
# tests/sim/test-record.sh -- vpower-sim replays real vpowerd recordings
# plan by plan.
#
# 1. A fresh recording: the vpowerd of this build with the dummy drivers
#    (tests/sim/record-dummy.sh, ~6 s) must replay with 0 differing plans
#    -- the daemon and the simulator run the same policy code.  A plan
#    changed in it must be found and named.
# 2. The committed recording tests/sim/data/rec/dummy-4vm.rec (same
#    script, older policy build; see its README) must still be read: 36
#    decisions.  Its plans are compared but not required identical: they
#    are identical only with the policy build that wrote it.
# 3. Malformed recordings are FILE:LINE errors.
# 4. A last block cut by a kill is dropped with a note, not an error.
# 5. A saturated host's turbo points replay only with the recording's
#    saturation_turbo (both readers).
set -u
src=${VPOWER_SRCDIR:-.}
build=${VPOWER_BUILDDIR:-.}
sim=$build/sim/vpower-sim
rec=$src/tests/sim/data/rec/dummy-4vm.rec
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

[ -x "$sim" ] || { echo "no $sim" >&2; exit 99; }
[ -r "$rec" ] || { echo "no $rec" >&2; exit 99; }

vpd=$build/manager/vpowerd
[ -x "$vpd" ] || { echo "no $vpd" >&2; exit 99; }
rc_prog=$build/tests/integration/replay-check
[ -x "$rc_prog" ] || { echo "no $rc_prog" >&2; exit 99; }

# 1. A fresh recording from this build's vpowerd replays exactly.
mkdir "$tmp/run" || exit 99
sh "$src/tests/sim/record-dummy.sh" "$vpd" "$tmp/fresh" "$tmp/run" 2 ||
    fail "vpowerd run: $(tail -3 "$tmp/run/vpowerd.log")"
out=$("$sim" --trace "$tmp/fresh" --verify-plans) || fail "fresh: exit $?"
echo "$out"
echo "$out" | grep -q "^plans: [1-9][0-9]* identical, 0 different$" ||
    fail "fresh recording: $out"
n=$(echo "$out" | sed -n 's/^plans: \([0-9]*\) identical.*/\1/p')
[ "${n:-0}" -ge 5 ] || fail "only ${n:-0} decisions recorded"
"$sim" --trace "$tmp/fresh" --trace-format record --verify-plans \
    >/dev/null || fail "--trace-format record"
# vpowerd's test hook that hides other tests' domains is vpowerd's: the
# replay's domains are the recording's, whatever the environment says.
VPOWER_ONLY_DOMAINS=no-such-prefix "$sim" --trace "$tmp/fresh" \
    --verify-plans >/dev/null ||
    fail "replay with \$VPOWER_ONLY_DOMAINS set in the environment"
# A changed plan (one vCPU's allowed set in the 4th PV line of VM 2) is
# found and named.
awk '/^PV 2 /{n++; if (n == 4) $5 = "0-7"} {print}' "$tmp/fresh" > "$tmp/mod"
out=$("$sim" --trace "$tmp/mod" --verify-plans); rc=$?
[ "$rc" = 1 ] || fail "changed plan: exit $rc, want 1"
echo "$out" | grep -q " identical, 1 different" || fail "count: $out"
echo "$out" | grep -q "first difference: block at line [0-9]*.*vcpu allowed .* '0-7' live" ||
    fail "first difference not named: $out"

# 2. The committed recording is read whole.
out=$("$sim" --trace "$rec") || fail "committed: exit $?"
echo "committed: $out"
echo "$out" | grep -q "^recording .*: 36 decisions over 17.4 s, up to 4 VMs / 9 vCPUs$" ||
    fail "committed recording: $out"

# 3. Malformed input: FILE:LINE: reason, exit 1.
expect_err() {  # name sed-script want
    sed "$2" "$rec" > "$tmp/$1"
    err=$("$sim" --trace "$tmp/$1" --trace-format record 2>&1 >/dev/null)
    rc=$?
    [ "$rc" = 1 ] || fail "$1: exit $rc, want 1"
    echo "$err" | grep -q "$tmp/$1:$3" || fail "$1: got '$err', want ':$3'"
}
line=$(grep -n '^S ' "$rec" | sed -n 5p | cut -d: -f1)
expect_err s-text "${line}s/ [0-9]* [0-9]*\$/ 12x 0/" "$line: malformed S line"
line=$(grep -n '^V ' "$rec" | sed -n 7p | cut -d: -f1)
expect_err v-short "${line}s/ [-0-9]*\$//" "$line: malformed V line"
line=$(grep -n '^VM 1 ' "$rec" | sed -n 1p | cut -d: -f1)
expect_err v-missing "$((line + 3)),$((line + 4))d" \
    "$((line + 3)): VM line before the previous VM's V lines are complete (1 missing)"
line=$(grep -n '^P ' "$rec" | sed -n 3p | cut -d: -f1)
expect_err p-freqs "${line}s/ [0-9,]* [-0-9,]*\$/ 1,2 -1/" "$line: P needs one"
expect_err version "1s/^VPREC 1 /VPREC 2 /" "1: record format version 2"
expect_err model "/^MT cpus/s/cpus 8/cpus 7/" "[0-9]*: model text does not match"
line=$(grep -n '^E$' "$rec" | sed -n 4p | cut -d: -f1)
expect_err no-e "${line}d" "[0-9]*: T line inside a block"

# 4. Killed mid-write: the cut block is dropped with a note.
head -c $(( $(wc -c < "$rec") - 40 )) "$rec" > "$tmp/cut"
out=$("$sim" --trace "$tmp/cut") || fail "cut: exit $?"
echo "$out" | grep -q ": 35 decisions" || fail "cut: $out"
echo "$out" | grep -q "no E line" || fail "cut: no note: $out"

# 5. Saturation turbo is read from CONF.  vpowerd (dummy drivers, the
#    turbo4 model) runs 12 vCPUs at 100 % on 8 CPUs: saturated with
#    vCPUs waiting, it takes the turbo points after POL_SAT_HOLD_NS (5 s).
#    The recording replays plan for plan in both readers; with the CONF
#    key set to 0, or left out (a recording that does not name it was
#    made without it), the same samples give other plans.
mkdir "$tmp/sat" || exit 99
printf 'a 4 100\nb 4 100\nc 4 100\n' > "$tmp/sat/doms"
printf 'period_ms 200\nmax_period_ms 1000\njournal %s\ncontrol_socket %s\n' \
    "$tmp/sat/journal" "$tmp/sat/vpowerd.sock" > "$tmp/sat/vpowerd.conf"
"$vpd" --foreground --config "$tmp/sat/vpowerd.conf" --driver=dummy \
    --host-driver=dummy --sysfs-root "cpus=8,freqs=1200000:2933000" \
    --model "$src/tests/sim/data/turbo4.model" \
    --dummy-domains "$tmp/sat/doms" --record "$tmp/sat.rec" \
    > "$tmp/sat/vpowerd.log" 2>&1 &
pid=$!
sleep 9
kill -TERM "$pid"
wait "$pid" || fail "saturated vpowerd: $(tail -3 "$tmp/sat/vpowerd.log")"
grep -q '^CONF .* saturation_turbo=1 ' "$tmp/sat.rec" ||
    fail "saturation_turbo=1 not in the CONF line"
nt=$(grep -c '^P [^ ]* [^ ]* [0-9]* [0-9]* 3600000 ' "$tmp/sat.rec")
echo "saturated recording: $nt plans at the turbo point"
[ "$nt" -ge 1 ] || fail "no plan took the turbo point on a saturated host"
for r in sat1 sat0 satx; do
    case $r in
    sat1) cp "$tmp/sat.rec" "$tmp/$r" ;;
    sat0) sed '/^CONF /s/saturation_turbo=1/saturation_turbo=0/' \
              "$tmp/sat.rec" > "$tmp/$r" ;;
    satx) sed '/^CONF /s/ saturation_turbo=1//' "$tmp/sat.rec" > "$tmp/$r" ;;
    esac
    out=$("$sim" --trace "$tmp/$r" --verify-plans)
    rc=$?
    if [ $r = sat1 ]; then
        [ $rc = 0 ] || fail "$r: vpower-sim: $out"
    else
        [ $rc = 1 ] || fail "$r: vpower-sim exit $rc, want 1 (key ignored?)"
        echo "$out" | grep -q "frequency 3600000 kHz live, [0-9]* replayed" ||
            fail "$r: first difference not the turbo point: $out"
    fi
    "$rc_prog" "$tmp/$r" > "$tmp/$r.rc" 2>&1
    rc=$?
    if [ $r = sat1 ]; then
        [ $rc = 0 ] || fail "$r: replay-check: $(tail -2 "$tmp/$r.rc")"
    else
        [ $rc = 1 ] ||
            fail "$r: replay-check exit $rc, want 1: $(tail -3 "$tmp/$r.rc")"
        echo "$r: $(grep 'replay-check: block' "$tmp/$r.rc")"
        grep -q "domain [0-9]* [0-9]* kHz, recorded 3600000;" "$tmp/$r.rc" ||
            fail "$r: replay-check does not name the turbo point: $(tail -2 "$tmp/$r.rc")"
    fi
done

[ $fails = 0 ] && echo "all record replay checks passed"
[ $fails = 0 ]
