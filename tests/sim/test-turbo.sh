#!/bin/sh
# tests/sim/test-turbo.sh -- vpower-sim --turbo runs vpower with
# vpowerd.conf's 'turbo yes'.  On a host with idle time left it changes
# nothing (turbo never pays for race to idle on the shipped server
# model); on a saturated host (every core busy at its top non-turbo
# point, vCPUs waiting) vpower takes the turbo points: less work is left
# undone, for more energy.  The report says when vpower ran with turbo.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }

run() {   # run REPEAT [--turbo] -> "energy_j unmet_pct turbo"
    r=$1
    shift
    timeout 120 "$sim" --model "$src/config/models/xeon-r640-2s.model" \
        --trace "$src/tests/sim/data/pl-ok" --repeat "$r" --hours 1 \
        --json "$@" > "$tmp/out.json" 2> "$tmp/err" \
        || { cat "$tmp/err"; fail "vpower-sim --repeat $r $*"; }
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = r["policies"]["vpower"]
print(v["energy_j"], v["unmet_pct"], r.get("turbo", False))
' "$tmp/out.json"
}

# 120 VMs, demand 56 of the host's 70 nominal cores: not saturated.
a=$(run 40)
b=$(run 40 --turbo)
[ "${a% *}" = "${b% *}" ] \
    || fail "--turbo changed a host with idle time: $a / $b"
# 144 VMs, demand up to 73 cores: saturated at times.
set -- $(run 48)
e0=$1 u0=$2 t0=$3
set -- $(run 48 --turbo)
e1=$1 u1=$2
[ "$3" = True ] || fail "the --turbo report does not say turbo (turbo: $3)"
[ "$t0" = False ] || fail "the default report says turbo (turbo: $t0)"
python3 -c "import sys; sys.exit(0 if $u1 < $u0 / 2 else 1)" \
    || fail "--turbo left $u1 % unmet on a saturated host (without: $u0 %)"
python3 -c "import sys; sys.exit(0 if $e1 > $e0 else 1)" \
    || fail "--turbo used no more energy ($e1 J, without: $e0 J)"
echo "PASS: idle time left: same result; saturated: unmet $u0 -> $u1 %," \
     "energy $e0 -> $e1 J"
