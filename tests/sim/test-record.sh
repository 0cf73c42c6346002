#!/bin/sh
# tests/sim/test-record.sh -- vpower-sim replays a real vpowerd recording
# plan by plan.  tests/sim/data/rec/dummy-4vm.rec was written by the real
# vpowerd (--driver=dummy --host-driver=dummy, 8 CPUs; 4 VMs with 4, 2,
# 2 and 1 vCPUs, one of them performance; the load changed twice during
# the 17 s run; see docs/simulator.md "Replay").  It must replay with 0
# differing plans; a plan changed in the recording must be found and
# named; malformed recordings are FILE:LINE errors; a last block cut by a
# kill is dropped, not an error.
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

# 1. The recording replays exactly (auto-detected and explicit format).
out=$("$sim" --trace "$rec" --verify-plans) || fail "verify-plans exit $?: $out"
echo "$out"
echo "$out" | grep -q "^plans: 36 identical, 0 different$" ||
    fail "expected 36 identical plans: $out"
"$sim" --trace "$rec" --trace-format record --verify-plans >/dev/null ||
    fail "--trace-format record"

# 2. A changed plan (one vCPU's allowed set in block 20) is found.
awk '/^PV 2 /{n++; if (n == 20) $5 = "0-7"} {print}' "$rec" > "$tmp/mod"
out=$("$sim" --trace "$tmp/mod" --verify-plans); rc=$?
[ "$rc" = 1 ] || fail "changed plan: exit $rc, want 1"
echo "$out" | grep -q "35 identical, 1 different" || fail "count: $out"
echo "$out" | grep -q "first difference: block at line [0-9]*.*vcpu allowed .* '0-7' live" ||
    fail "first difference not named: $out"

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
line=$(grep -n '^P ' "$rec" | sed -n 3p | cut -d: -f1)
expect_err p-freqs "${line}s/ [0-9,]* [-0-9,]*\$/ 1,2 -1/" "$line: P needs one"
expect_err version "1s/^VPREC 1 /VPREC 2 /" "1: record format version 2"
expect_err model "/^MT cpus/s/cpus 8/cpus 7/" "[0-9]*: model text does not match"
line=$(grep -n '^E$' "$rec" | sed -n 4p | cut -d: -f1)
expect_err no-e "${line}d" "[0-9]*: T line inside a block"

# 4. Killed mid-write: the cut block is dropped with a note.
head -c $(( $(wc -c < "$rec") - 40 )) "$rec" > "$tmp/cut"
out=$("$sim" --trace "$tmp/cut" --verify-plans) || fail "cut: exit $?"
echo "$out" | grep -q "35 identical, 0 different" || fail "cut: $out"
echo "$out" | grep -q "no E line" || fail "cut: no note: $out"

[ $fails = 0 ] && echo "all record replay checks passed"
[ $fails = 0 ]
