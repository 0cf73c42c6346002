#!/bin/bash
# docs/wrong-models.sh -- Regenerates the wrong-model table of
# docs/simulator.md ("What a wrong model costs"): vpower deciding with a
# wrong energy model on hosts that follow the Xeon model
# (vpower-sim --true-model), with the daemon's online correction
# (--model-correction), and with the true model, against schedutil, on
# the first HOURS (default 24: the whole day) of the PlanetLab 20110303
# (100 VMs) and Bitbrains (20 VMs / 44 vCPUs) rows of the README.  Run
# from the top of the source tree after `make`:
#
#     docs/wrong-models.sh [path/to/vpower-sim] [HOURS]
#
# Traces come from ../shared/data/traces (or $VPOWER_TRACES).  The wrong
# models are tests/sim/wrong-model.sh's.  Energy is the true model's in
# every column, as a fraction of schedutil's (lower is better), with the
# share of demand left unmet where it exceeds 0.1 %; "error" is the
# model's error against the simulated meter over the run, uncorrected
# and corrected.
set -euo pipefail

sim=${1:-./sim/vpower-sim}
hours=${2:-24}
traces=${VPOWER_TRACES:-../shared/data/traces}
xeon=config/models/xeon-r640-2s.model
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run POLICY ARGS...: "ENERGY_J UNMET_PCT ERROR_PCT" of POLICY's row
run() {
    local pol=$1
    shift
    "$sim" "$@" --hours "$hours" --threads 1 --policy "$pol" \
        > "$tmp/out" 2> /dev/null
    awk -v p="$pol" '
        $1 == p && $2 ~ /^[0-9]+$/ { e = $2; u = $6 }
        /over the same periods: error/ {
            sub(/.*error /, ""); sub(/ %.*/, ""); err = $0
        }
        END { print e, u, (err == "" ? "-" : err) }' "$tmp/out"
}
# cell ENERGY UNMET REF: "0.973" or "0.973 (1.2 % unmet)"
cell() {
    awk -v e="$1" -v u="$2" -v r="$3" 'BEGIN {
        printf "%.3f", e / r; if (u > 0.1) printf " (%.1f %% unmet)", u }'
}

printf '%s\n' "| trace | wrong model | vpower, wrong model | with correction |\
 vpower, true model | schedutil (J) | model error, uncorrected / corrected |" |
    tr -d '\n'
echo
echo "|---|---|---|---|---|---|---|"
pl=$traces/planetlab-cloudsim/20110303
bb=$traces/bitbrains-gwa-t-12-rnd-2013-7
for t in "PlanetLab 20110303, 100 VMs|--trace $pl --vms 100" \
         "Bitbrains, 20 VMs / 44 vCPUs|--trace $bb"; do
    label=${t%%|*}
    args=${t#*|}
    set -- $(run schedutil --model "$xeon" $args)
    ref=$1
    set -- $(run vpower --model "$xeon" $args)
    true_cell=$(cell "$1" "$2" "$ref")
    for kind in idle2x uncore25 flatv turbo30; do
        sh tests/sim/wrong-model.sh "$kind" "$xeon" > "$tmp/$kind.model"
        set -- $(run vpower --model "$tmp/$kind.model" --true-model "$xeon" \
                     $args)
        wrong_cell=$(cell "$1" "$2" "$ref") err_w=$3
        set -- $(run vpower --model "$tmp/$kind.model" --true-model "$xeon" \
                     --model-correction $args)
        corr_cell=$(cell "$1" "$2" "$ref") err_c=$3
        echo "| $label | $kind | $wrong_cell | $corr_cell | $true_cell |" \
            "$ref | $err_w % / $err_c % |"
    done
done
