#!/bin/sh
# tests/sim/test-turbo.sh -- vpower-sim --turbo WHEN runs vpower with
# vpowerd.conf's 'turbo WHEN'.  On a host with idle time left no value
# changes anything (turbo never pays for race to idle on the shipped
# server model); on a host saturated at times (every core busy at its
# top non-turbo point, vCPUs waiting) the default, saturated, takes the
# turbo points where 'no' does not: less work is left undone, for more
# energy.  On a small host whose demand outgrows its nominal capacity
# (tests/sim/data/turbo4.model) the default serves the demand (at most
# 1 % unmet) where 'no' cannot.  The report names --turbo when it was
# given.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
fail() { echo "FAIL: $*"; exit 1; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }

server=$src/config/models/xeon-r640-2s.model
run() {   # run REPEAT [--turbo WHEN] -> "energy_j unmet_pct turbo"
    r=$1
    shift
    timeout 120 "$sim" --model "${model:-$server}" \
        --trace "$src/tests/sim/data/pl-ok" --repeat "$r" \
        --hours "${hours:-1}" --json "$@" > "$tmp/out.json" 2> "$tmp/err" \
        || { cat "$tmp/err"; fail "vpower-sim --repeat $r $*"; }
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = r["policies"]["vpower"]
print(v["energy_j"], v["unmet_pct"], r.get("turbo", "-"))
' "$tmp/out.json"
}

# 120 VMs, demand 56 of the host's 70 nominal cores: not saturated.
a=$(run 40)
for w in no yes; do
    b=$(run 40 --turbo $w)
    [ "${a% *}" = "${b% *}" ] \
        || fail "--turbo $w changed a host with idle time: $a / $b"
done
# 144 VMs, demand up to 73 cores: saturated at times.
set -- $(run 48 --turbo no)
e0=$1 u0=$2 t0=$3
set -- $(run 48)
e1=$1 u1=$2 t1=$3
[ "$t0" = no ] || fail "the --turbo no report does not say so (turbo: $t0)"
[ "$t1" = - ] || fail "the default report names a turbo (turbo: $t1)"
python3 -c "import sys; sys.exit(0 if $u1 < $u0 / 2 else 1)" \
    || fail "turbo saturated left $u1 % unmet on a saturated host" \
            "(turbo no: $u0 %)"
python3 -c "import sys; sys.exit(0 if $e1 > $e0 else 1)" \
    || fail "turbo saturated used no more energy ($e1 J, turbo no: $e0 J)"
"$sim" --model "$server" --trace "$src/tests/sim/data/pl-ok" --turbo maybe \
    > /dev/null 2> "$tmp/err" && fail "--turbo maybe was accepted"
grep -q "bad --turbo 'maybe' (no, saturated or yes)" "$tmp/err" \
    || fail "--turbo maybe: $(cat "$tmp/err")"
# 9 VMs on 4 cores for 6 h.
model=$src/tests/sim/data/turbo4.model hours=6
set -- $(run 3 --turbo no)
u2=$2
set -- $(run 3)
u3=$2
python3 -c "import sys; sys.exit(0 if $u2 > 1 and $u3 <= 1 else 1)" \
    || fail "turbo4: turbo no left $u2 % unmet, saturated $u3 % (want" \
            "> 1 and <= 1)"
echo "PASS: idle time left: same result; saturated: unmet $u0 -> $u1 %," \
     "energy $e0 -> $e1 J; turbo4: unmet $u2 -> $u3 % (turbo no ->" \
     "saturated)"
