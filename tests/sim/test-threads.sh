#!/bin/sh
# tests/sim/test-threads.sh -- vpower-sim's results do not depend on
# --threads.  The threads take the hosts of each interval in turn and
# make each host's bursts themselves; every host runs whole on one
# thread and every sum runs in host order, so the whole report (every
# policy, the lower bound, the per-VM table) must be byte for byte the
# same on 1, 2 and 3 threads.  Five hosts of uneven size (12 VMs) make
# the threads finish hosts at different times.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
fail() { echo "FAIL: $*"; exit 1; }

for t in 1 2 3; do
    timeout 120 "$sim" --model "$src/config/models/xeon-r640-2s.model" \
        --trace "$src/tests/sim/data/pl-ok" --repeat 4 --hosts 5 \
        --hours 1 --compare --per-vm --json --threads "$t" \
        > "$tmp/out.$t" 2> "$tmp/err.$t" \
        || { cat "$tmp/err.$t"; fail "vpower-sim --threads $t"; }
done
grep -q '"per_vm":\[' "$tmp/out.1" || fail "the report has no per-VM rows"
for t in 2 3; do
    cmp -s "$tmp/out.1" "$tmp/out.$t" || {
        diff "$tmp/out.1" "$tmp/out.$t" | head -20
        fail "--threads $t reports other results than --threads 1"
    }
done
echo "PASS: 5 hosts, --compare --per-vm: identical on 1, 2 and 3 threads"
