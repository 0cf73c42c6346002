#!/bin/sh
# tests/sim/test-true-model.sh -- vpower-sim --true-model and
# --model-correction.  The hosts follow the Xeon model; vpower decides
# with a copy whose idle and platform power are doubled
# (tests/sim/wrong-model.sh idle2x):
#   - --true-model charges the true model's energy (the run with the
#     wrong model alone charges far more), and the model check sees the
#     wrong model off by tens of percent and warns;
#   - --model-correction shrinks that error to a few percent, and
#     vpower's energy comes closer to the run that decides with the true
#     model than the uncorrected run's;
#   - --model-correction without --true-model, and a true model of
#     another machine, are refused with a message.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
true_m=$src/config/models/xeon-r640-2s.model
wrong=$tmp/idle2x.model
sh "$src/tests/sim/wrong-model.sh" idle2x "$true_m" > "$wrong" || exit 99
fail() { echo "FAIL: $*"; exit 1; }

run() {   # run ARGS... -> the text report in $tmp/out
    "$sim" --trace "$src/tests/sim/data/pl-ok" --hours 2 --threads 1 "$@" \
        > "$tmp/out" 2> "$tmp/err" || { cat "$tmp/err"; fail "$*"; }
}
energy() { awk '$1 == "vpower" && $2 ~ /^[0-9]+$/ { print $2 }' "$tmp/out"; }
error() {  # the model's error against the meter over the run, %
    sed -n 's/.*over the same periods: error \([-+0-9.]*\) %.*/\1/p' "$tmp/out"
}
absdiff() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; print d < 0 ? -d : d }'; }
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

run --model "$true_m"
e_true=$(energy)
run --model "$wrong"
e_wrong_charged=$(energy)
run --model "$wrong" --true-model "$true_m"
e_wrong=$(energy) err_wrong=$(error)
grep -q "1 host(s) warned, 0 correcting" "$tmp/out" ||
    fail "no warning without correction: $(tail -4 "$tmp/out")"
run --model "$wrong" --true-model "$true_m" --model-correction
e_corr=$(energy) err_corr=$(error)
grep -q "1 host(s) warned, 1 correcting" "$tmp/out" ||
    fail "not correcting: $(tail -4 "$tmp/out")"
echo "true model $e_true J; wrong model: charged by itself $e_wrong_charged J," \
    "by the true model $e_wrong J (error $err_wrong %);" \
    "corrected $e_corr J (error $err_corr %)"

[ -n "$e_true" ] && [ -n "$e_wrong" ] && [ -n "$e_corr" ] &&
    [ -n "$err_wrong" ] && [ -n "$err_corr" ] || fail "unparsed output"
# --true-model: energy is the true model's, not the wrong one's.
lt "$(absdiff "$e_wrong" "$e_true")" "$(awk -v e="$e_true" 'BEGIN { print e / 50 }')" ||
    fail "--true-model: $e_wrong J is not charged like $e_true J"
lt "$(awk -v e="$e_true" 'BEGIN { print e * 1.2 }')" "$e_wrong_charged" ||
    fail "the wrong model alone should charge far more than $e_true J"
lt 30 "$err_wrong" || fail "wrong model's error $err_wrong %, expected > 30 %"
# --model-correction: the error shrinks, the energy moves to the true run's.
lt "$(absdiff "$err_corr" 0)" 5 || fail "corrected error $err_corr %"
lt "$(absdiff "$e_corr" "$e_true")" "$(absdiff "$e_wrong" "$e_true")" ||
    fail "corrected $e_corr J not closer to $e_true J than $e_wrong J"

# The JSON report carries the same check.
"$sim" --trace "$src/tests/sim/data/pl-ok" --hours 2 --threads 1 --json \
    --model "$wrong" --true-model "$true_m" --model-correction \
    > "$tmp/out.json" 2> /dev/null || fail "--json run"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["model_check"]
sys.exit(not (c["hosts_correcting"] == 1 and abs(c["error_pct"]) < 5
              and c["original_error_pct"] > 30))
' "$tmp/out.json" || fail "JSON model_check: $(grep -A9 model_check "$tmp/out.json")"

# Refusals.
"$sim" --model "$wrong" --trace "$src/tests/sim/data/pl-ok" --hours 1 \
    --model-correction > /dev/null 2> "$tmp/err"
[ $? = 2 ] && grep -q "needs a meter: give --true-model" "$tmp/err" ||
    fail "--model-correction alone: $(cat "$tmp/err")"
"$sim" --model "$true_m" --trace "$src/tests/sim/data/pl-ok" --hours 1 \
    --true-model "$src/config/models/juno-r0.model" > /dev/null 2> "$tmp/err"
[ $? = 1 ] && grep -q "only powers may differ" "$tmp/err" ||
    fail "another machine's true model: $(cat "$tmp/err")"
echo "PASS"
