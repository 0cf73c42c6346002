#!/bin/bash
# docs/equal-service.sh -- Regenerates the equal-service table of
# docs/baselines.md ("Equal service"): vpower against the serving rival
# it fares worst against, on short slices of each trace family, with
# vpower-sim --compare's placement costs (500 us per move to another
# core, 20 us per pin change) charged.  Energies include the work left
# at the end (left_finish_j); "late" is work not run in the step it was
# demanded in.  Run from the top of the source
# tree after `make sim/vpower-sim`:
#
#     docs/equal-service.sh [path/to/vpower-sim]
#
# Traces come from ../shared/data/traces (or $VPOWER_TRACES); slices are
# $HOURS hours long (default 2).  Takes about 3 minutes on one core.
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
def tot(r):
    return r["energy_j"] + r["left_finish_j"]
head = "| %s | %.3f | %.2f / %.1f / %.0f |" % (
    label, tot(v) / perf, v["unmet_pct"], v["late_work_pct"],
    v["mean_delay_ms"])
if not eq.get("rival"):
    print(head + " no rival serves | | | | |")
    sys.exit(0)
r = p[eq["rival"]]
ratio = eq["ratio"]
print(head + " %s: %.3f, %.1f %% late | %.3f | %s | %.3f / %.1f / %.0f"
      " | %s |" % (
          eq["rival"], tot(r) / perf, r["late_work_pct"], tot(v) / tot(r),
          eq["headroom_pct"] or "20 (as run)", eq["vpower_j"] / perf,
          eq["vpower_late_work_pct"], eq["vpower_mean_delay_ms"],
          ("**%.3f** (vpower loses)" if ratio >= 1 else "%.3f") % ratio))
' "$label"
}

echo "| host model, trace slice ($hours h) | vpower / performance | vpower unmet % / late % / delay ms | serving rival vpower fares worst against: / performance, late work | vpower / rival, as run | headroom_pct at equal service | vpower at equal service: / performance, late % / delay ms | vpower / rival at equal service |"
echo "|---|---|---|---|---|---|---|---|"
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
row "Xeon, Bitbrains x10 (440 vCPUs), 4 hosts" \
    --model "$xeon" --trace "$bb" --repeat 10 --hosts 4
row "Juno, PlanetLab 20110303, 8 VMs" \
    --model "$juno" --trace "$pl/20110303" --vms 8
row "Juno, PlanetLab 20110322, 8 VMs" \
    --model "$juno" --trace "$pl/20110322" --vms 8
