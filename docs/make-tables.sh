#!/bin/bash
# docs/make-tables.sh -- Regenerates the savings tables of README.md
# ("What it saves") with vpower-sim --compare, one row per scenario, as
# Markdown.  Run from the top of the source tree after `make`:
#
#     docs/make-tables.sh [path/to/vpower-sim]
#
# Traces come from ../shared/data/traces (or $VPOWER_TRACES).  Rows run
# side by side, $VPOWER_JOBS at a time (default: online CPUs), and are
# printed in order; the whole table takes about 16 minutes on 2 cores.
# Every number is energy as a fraction of the performance governor's
# (lower is better); a baseline that leaves more than 1 % of the demand
# unmet has that share next to it, because its energy then pays for
# less work.  The next to last column compares vpower with the cheapest
# rival that serves (at most 1 % unmet, not refused); the last one at
# equal service, placement costs charged (docs/baselines.md, "Equal
# service": vpower replayed with the headroom_pct shown until it runs
# as little work late as the serving rivals, against the serving rival
# it fares worst against).
set -euo pipefail

sim=${1:-./sim/vpower-sim}
traces=${VPOWER_TRACES:-../shared/data/traces}
xeon=config/models/xeon-r640-2s.model
juno=config/models/juno-r0.model
pl=$traces/planetlab-cloudsim
bb=$traces/bitbrains-gwa-t-12-rnd-2013-7
neat=$traces/planetlab-openstack-neat-28/traces

jobs=${VPOWER_JOBS:-$(nproc)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
n_rows=0

# row LABEL SIM-ARGS...: starts the row's run; its Markdown line goes to
# $work/N.md, printed by finish() in the order the rows were named.
row() {
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n || true
    done
    n_rows=$((n_rows + 1))
    one_row "$work/$n_rows.md" "$@" &
    pids+=($!)
}

one_row() {   # one_row OUT LABEL SIM-ARGS...
    local dest=$1 label=$2
    shift 2
    local out=$dest.json
    if ! "$sim" "$@" --compare --json 2>"$dest.err" > "$out"; then
        echo "make-tables: $label: vpower-sim failed:" >&2
        cat "$dest.err" >&2
        return 1
    fi
    python3 -c '
import json, sys
label = sys.argv[1]
d = json.load(open(sys.argv[2]))["policies"]
perf = d["performance"]["energy_j"]
def serves(name):
    return d[name]["unmet_pct"] <= 1.0 and not d[name].get("refused")
def cell(name, bold=False):
    r = d[name]
    if r.get("refused"):
        return ""
    v = "%.3f" % (r["energy_j"] / perf)
    if bold:
        v = "**%s**" % v
    if name != "lower-bound" and r.get("unmet_pct", 0) > 1.0:
        v += " (%.1f %% unmet)" % r["unmet_pct"]
    return v
base = ["schedutil", "sched-noturbo", "hwp-balperf", "hwp-balpower",
        "tuned-vhost", "dpdk-vmpm", "nova-offline", "powersave"]
rivals = [b for b in base if serves(b)]
mine = ["vpower"] if d["vpower"]["unmet_pct"] <= 1.0 else []
best = min(mine + rivals, key=lambda n: d[n]["energy_j"])
rival = min(rivals, key=lambda n: d[n]["energy_j"])
cells = [cell("vpower", best == "vpower")]
cells += [cell(b, best == b) for b in base]
eq = json.load(open(sys.argv[2]))["equal_service"]
if eq.get("rival"):
    h = eq["headroom_pct"]
    es = "%.3f (%s, %s)" % (eq["ratio"], eq["rival"],
                            "headroom_pct %d" % h if h else "as run")
    if eq["ratio"] >= 1:
        es = "**%s**, vpower loses" % es
else:
    es = "no rival serves"
cells += [cell("lower-bound"), "%.2f %%" % d["vpower"]["unmet_pct"],
          "%.3f (%s)" % (d["vpower"]["energy_j"] / d[rival]["energy_j"],
                         rival), es]
print("| %s | %s |" % (label, " | ".join(cells)))
' "$label" "$out" > "$dest"
}

# Waits for every row, then prints the rows in order; exits 1 when any
# failed (each failed row has named itself on stderr).
finish() {
    local failed=0
    for pid in "${pids[@]}"; do
        wait "$pid" || failed=1
    done
    [ "$failed" = 0 ] || exit 1
    for i in $(seq 1 "$n_rows"); do
        cat "$work/$i.md"
    done
}

echo "| host model, trace | vpower | schedutil | schedutil, no turbo | HWP balance_performance | HWP balance_power | tuned virtual-host | DPDK vm_power_manager (analogue) | Nova offlining (analogue) | powersave governor | lower bound | vpower unmet | vpower / best serving rival | vpower / serving rival at equal service |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row "2-socket Xeon (R640 curve), PlanetLab 20110303, 100 VMs" \
    --model "$xeon" --trace "$pl/20110303" --vms 100
row "same, 20110306 (not tuned on)" \
    --model "$xeon" --trace "$pl/20110306" --vms 100
row "same, 20110322 (not tuned on)" \
    --model "$xeon" --trace "$pl/20110322" --vms 100
row "same, OpenStack Neat 28 busy VMs" \
    --model "$xeon" --trace "$neat"
row "same, Bitbrains 20 VMs / 44 vCPUs, 1 host" \
    --model "$xeon" --trace "$bb"
row "same, Bitbrains x10 (440 vCPUs), 10 hosts" \
    --model "$xeon" --trace "$bb" --repeat 10 --hosts 10
row "same, Bitbrains x10 (440 vCPUs), 4 hosts" \
    --model "$xeon" --trace "$bb" --repeat 10 --hosts 4
row "same, Bitbrains x10 (440 vCPUs), 2 hosts" \
    --model "$xeon" --trace "$bb" --repeat 10 --hosts 2
row "same, Bitbrains x10 (440 vCPUs), 1 host" \
    --model "$xeon" --trace "$bb" --repeat 10 --hosts 1
row "same, Bitbrains x5 (220 vCPUs), 1 host" \
    --model "$xeon" --trace "$bb" --repeat 5 --hosts 1
row "Arm Juno r0 (EAS model), PlanetLab 20110303, 8 VMs" \
    --model "$juno" --trace "$pl/20110303" --vms 8
row "same, 20110322 (not tuned on)" \
    --model "$juno" --trace "$pl/20110322" --vms 8
finish
echo
echo "An empty DPDK or Nova cell: the host has more vCPUs than CPUs, which"
echo "those systems refuse (dedicated 1:1 pinning); the simulator's analogue"
echo "would wrap pins around, so it has no row there."
