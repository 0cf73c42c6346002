#!/bin/sh
# tests/sim/wrong-model.sh KIND MODEL -- prints energy model MODEL made
# wrong in one way, for runs with vpower-sim --true-model MODEL:
#   idle2x   every idle state's power and the platform power doubled
#   uncore25 every package's uncore 25 W while awake
#   flatv    a flat voltage curve: busy power proportional to frequency
#            through the nominal point, so the lowest frequency is no
#            longer the cheapest per unit of work
#   turbo30  turbo points' busy power 30 % lower
# Only powers change: vpower-sim refuses a true model of another machine.
set -eu
[ $# = 2 ] || { echo "usage: $0 idle2x|uncore25|flatv|turbo30 MODEL" >&2; exit 2; }
kind=$1 model=$2
case $kind in idle2x|uncore25|flatv|turbo30) ;;
*) echo "$0: unknown kind '$kind'" >&2; exit 2 ;; esac
awk -v kind="$kind" '
# Nominal point of each domain: the last non-turbo opp before the next
# "domain" line; flatv needs it first, so the file is read twice.
NR == FNR {
    if ($1 == "domain") { d++ }
    if ($1 == "opp" && $5 != "turbo") { nomf[d] = $2; nomp[d] = $4 }
    next
}
$1 == "domain" { d2++ }
kind == "idle2x" && $1 == "idle" { $5 = 2 * $5 }
kind == "idle2x" && $1 == "platform" { $2 = 2 * $2 }
kind == "uncore25" && $1 == "package" { $4 = 25000 }
kind == "flatv" && $1 == "opp" { $4 = int(nomp[d2] * $2 / nomf[d2] + 0.5) }
kind == "turbo30" && $1 == "opp" && $5 == "turbo" { $4 = int($4 * 0.7 + 0.5) }
$1 == "name" { $2 = $2 "-" kind }
{ print }
' "$model" "$model"
