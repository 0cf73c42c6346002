#!/bin/sh
# tests/sim/test-equal-service.sh -- vpower-sim --compare compares vpower
# with a serving rival at equal service: the rival named serves (a
# baseline, not refused, at most 1 % unmet); vpower, which runs more work
# late than the rivals on this trace, is replayed with more headroom,
# which cuts its late work, until it runs as little late as they do (or
# headroom_pct reaches 90); its equal-service energy is at least its
# plain one; late work still in excess is charged at the printed rate;
# the rival is the one vpower fares worst against; the placement costs
# of the run are in the comparison.  The text output prints the line.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }

run() {   # run OUT MIGRATION-COST [--json]
    out=$1 cost=$2
    shift 2
    "$sim" --model "$src/config/models/xeon-r640-2s.model" \
        --trace "$src/tests/sim/data/bb-ok" --hours 2 --compare \
        --threads 1 --migration-cost "$cost" "$@" > "$tmp/$out" \
        2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
}

run plain.json 500,20 --json
run plain.txt 500,20
run dear.json 100000,100000 --json

cat > "$tmp/check.py" <<'PY'
import json, sys

d = json.load(open(sys.argv[1]))
p, eq = d["policies"], d.get("equal_service")
bad = []
if not eq or not eq.get("rival"):
    sys.exit("FAIL: no equal_service comparison in the JSON")
riv = eq["rival"]
base = ["performance", "schedutil", "powersave", "dpdk-vmpm",
        "nova-offline", "hwp-balperf", "hwp-balpower", "tuned-vhost",
        "sched-noturbo"]


def serves(b):
    return (p[b]["unmet_pct"] <= eq["serves_unmet_pct"]
            and not p[b].get("refused"))


def close(a, b):
    return abs(a - b) <= 1e-4 * max(abs(a), abs(b), 1.0)


if riv not in base:
    sys.exit("FAIL: rival %s is not a baseline" % riv)
if not serves(riv):
    bad.append("rival %s does not serve: %s %% unmet"
               % (riv, p[riv]["unmet_pct"]))
v = p["vpower"]
target = min(p[b]["late_work_pct"] for b in base if serves(b))
h = eq["headroom_pct"]
if not v["late_work_pct"] > target + 0.1:
    bad.append("vpower ran no more work late than the rivals: the test "
               "shows nothing")
elif not 20 < h <= 90:
    bad.append("vpower was not replayed with more headroom (%s)" % h)
elif not eq["vpower_late_work_pct"] < v["late_work_pct"]:
    bad.append("headroom_pct %s did not cut vpower's late work (%s %%)"
               % (h, eq["vpower_late_work_pct"]))
elif eq["vpower_late_work_pct"] > target + 0.1 and h != 90:
    bad.append("the replay stopped at headroom_pct %s with %s %% late"
               % (h, eq["vpower_late_work_pct"]))
plain = v["energy_j"] + v["left_finish_j"]
if eq["vpower_j"] < plain * (1 - 1e-6):
    bad.append("equal-service energy %s below the plain %s"
               % (eq["vpower_j"], plain))
rate = eq["late_j_per_core_s"]
if not rate > 0:
    bad.append("late work charged %s J per core-second" % rate)


def pair(name):
    r = p[name]
    dl = eq["vpower_late_core_s"] - r["late_core_s"]
    ev = (eq["vpower_energy_j"] + eq["vpower_left_finish_j"]
          + max(dl, 0) * rate)
    er = r["energy_j"] + r["left_finish_j"] + max(-dl, 0) * rate
    return ev, er


ev, er = pair(riv)
if not (close(ev, eq["vpower_j"]) and close(er, eq["rival_j"])):
    bad.append("energies %s/%s, expected %s/%s"
               % (eq["vpower_j"], eq["rival_j"], ev, er))
if not close(eq["ratio"], eq["vpower_j"] / eq["rival_j"]):
    bad.append("ratio %s" % eq["ratio"])
for b in base:
    if serves(b):
        e1, e2 = pair(b)
        if e1 / e2 > eq["ratio"] * (1 + 1e-4):
            bad.append("vpower fares worse against %s (%.4f) than "
                       "against %s" % (b, e1 / e2, riv))
dear = json.load(open(sys.argv[2]))
if dear["policies"]["vpower"]["placement_overhead_pct"] <= 0:
    bad.append("expensive moves charged nothing")
elif close(dear["equal_service"]["vpower_j"], eq["vpower_j"]):
    bad.append("placement costs are not in the equal-service energy")
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
fails=0
python3 "$tmp/check.py" "$tmp/plain.json" "$tmp/dear.json" || fails=1
riv=$(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["equal_service"]["rival"])' \
      "$tmp/plain.json" 2> /dev/null)
if ! grep -q "^equal service vs $riv .*ratio [0-9.]*: vpower" \
        "$tmp/plain.txt"; then
    echo "FAIL: the text output has no equal-service line for $riv"
    fails=1
fi
exit $fails
