#!/bin/bash
# docs/equal-service.sh -- Regenerates the equal-service table of
# docs/baselines.md ("Equal service"): vpower against the serving rival
# it fares worst against, on short slices of each trace family, with
# vpower-sim --compare's placement costs (500 us per move to another
# core, 20 us per pin change) charged.  Run from the top of the source
# tree after `make sim/vpower-sim`:
#
#     docs/equal-service.sh [path/to/vpower-sim]
#
# Traces come from ../shared/data/traces (or $VPOWER_TRACES); slices are
# $HOURS hours long (default 2).  Takes about 2 minutes on one core.
set -euo pipefail

sim=${1:-./sim/vpower-sim}
traces=${VPOWER_TRACES:-../shared/data/traces}
hours=${HOURS:-2}
xeon=config/models/xeon-r640-2s.model
juno=config/models/juno-r0.model
pl=$traces/planetlab-cloudsim
bb=$traces/bitbrains-gwa-t-12-rnd-2013-7
neat=$traces/planetlab-openstack-neat-28/traces

row() {   # row LABEL SIM-ARGS...
    local label=$1
    shift
    "$sim" "$@" --hours "$hours" --threads 1 --compare --json \
        2>/dev/null | python3 -c '
import json, sys
label = sys.argv[1]
d = json.load(sys.stdin)
p, eq = d["policies"], d["equal_service"]
v = p["vpower"]
perf = p["performance"]["energy_j"]
if not eq.get("rival"):
    print("| %s | %.3f | %.2f %% | %.0f | no rival serves | | | | | |"
          % (label, v["energy_j"] / perf, v["unmet_pct"],
             v["mean_delay_ms"]))
    sys.exit(0)
r = p[eq["rival"]]
be = eq["breakeven_j_per_core_s"]
print("| %s | %.3f | %.2f %% | %.0f | %s: %.3f, %.2f %%, %.0f | "
      "%.1f / %.1f %% | %.3f | %s | %s |"
      % (label, v["energy_j"] / perf, v["unmet_pct"], v["mean_delay_ms"],
         eq["rival"], r["energy_j"] / perf, r["unmet_pct"],
         r["mean_delay_ms"], v["late_work_pct"], r["late_work_pct"],
         (v["energy_j"] + v["left_finish_j"])
         / (r["energy_j"] + r["left_finish_j"]),
         "**%.3f**" % eq["ratio"] if eq["ratio"] >= 1 else
         "%.3f" % eq["ratio"],
         "-" if be is None else "%.2f (%.2f, %.2f)"
         % (be, eq["cheapest_j_per_core_s"], eq["late_j_per_core_s"])))
' "$label"
}

echo "| host model, trace slice ($hours h) | vpower / performance | vpower unmet | vpower delay ms | rival: / performance, unmet, delay ms | late work vpower / rival | vpower / rival, plain | vpower / rival, equal service | break-even J per core-s (cheapest, charged) |"
echo "|---|---|---|---|---|---|---|---|---|"
row "Xeon, PlanetLab 20110303, 100 VMs" \
    --model "$xeon" --trace "$pl/20110303" --vms 100
row "Xeon, PlanetLab 20110322, 100 VMs" \
    --model "$xeon" --trace "$pl/20110322" --vms 100
row "Xeon, OpenStack Neat 28 busy VMs" \
    --model "$xeon" --trace "$neat"
row "Xeon, Bitbrains 20 VMs / 44 vCPUs, 1 host" \
    --model "$xeon" --trace "$bb"
row "Xeon, Bitbrains x5 (220 vCPUs), 1 host" \
    --model "$xeon" --trace "$bb" --repeat 5 --hosts 1
row "Juno, PlanetLab 20110303, 8 VMs" \
    --model "$juno" --trace "$pl/20110303" --vms 8
echo
echo "Bold: vpower uses more energy than the rival at equal service."
