#!/bin/sh
# tests/sim/test-migration-cost.sh -- vpower-sim --migration-cost changes
# what vpower's moves cost: free moves add no overhead; expensive ones
# add run time (placement_overhead_pct > 0) and energy; a bad value is
# refused with exit 2 and a message naming the option.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"

run() {   # run COSTS -> "energy overhead_pct migrations_per_h"
    "$sim" --model "$src/config/models/xeon-r640-2s.model" \
        --trace "$src/tests/sim/data/bb-ok" --hours 2 --json \
        --migration-cost "$1" > "$tmp/out.json" 2> "$tmp/err" \
        || { cat "$tmp/err"; exit 1; }
    python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["policies"]["vpower"]
print(v["energy_j"], v["placement_overhead_pct"], v["migrations_per_h"])
' "$tmp/out.json"
}

command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
set -- $(run 0,0)
e0=$1 o0=$2 m0=$3
set -- $(run 100000,100000)
e1=$1 o1=$2
fails=0
if [ "$o0" != 0 ]; then
    echo "FAIL: free moves added overhead $o0 %"; fails=1
fi
if ! python3 -c "import sys; sys.exit(0 if float('$m0') > 0 else 1)"; then
    echo "FAIL: vpower made no moves on this trace: the test shows nothing"
    fails=1
fi
if ! python3 -c "import sys; sys.exit(0 if float('$o1') > 0 else 1)"; then
    echo "FAIL: 100 ms moves added no overhead"; fails=1
fi
if [ "$e0" = "$e1" ]; then
    echo "FAIL: the energy does not depend on --migration-cost ($e0 J)"
    fails=1
fi
if "$sim" --model "$src/config/models/xeon-r640-2s.model" \
        --trace "$src/tests/sim/data/bb-ok" --migration-cost 5,x \
        > /dev/null 2> "$tmp/err"; then
    echo "FAIL: --migration-cost 5,x accepted"; fails=1
elif ! grep -q "migration-cost" "$tmp/err"; then
    echo "FAIL: error does not name the option: $(cat "$tmp/err")"; fails=1
fi
exit $fails
