#!/bin/sh
# tests/sim/test-plot.sh -- vpower-sim --plot writes a gnuplot script that
# gnuplot renders without complaint, with one power and one active-CPU
# line per policy (the README's figures come from it).  The signal
# variants (vpower-nohalt) are in the data but not drawn.  Skips (77)
# only when gnuplot is not installed (CI installs gnuplot-nox).
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"

"$sim" --model "$src/config/models/xeon-r640-2s.model" \
    --trace "$src/tests/sim/data/bb-ok" --hours 2 --compare \
    --plot "$tmp/p" > "$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
[ -s "$tmp/p" ] || { echo "FAIL: no plot script"; exit 1; }
fails=0
for pol in vpower performance schedutil powersave dpdk-vmpm nova-offline \
           hwp-balperf hwp-balpower tuned-vhost sched-noturbo \
           lower-bound; do
    grep -q "title '$pol'" "$tmp/p" || { echo "FAIL: $pol not drawn"; fails=1; }
done
if grep -q "title 'vpower-nohalt'" "$tmp/p"; then
    echo "FAIL: a signal variant is drawn"; fails=1
fi
if grep -q "(null)" "$tmp/p"; then
    echo "FAIL: a line without a style: $(grep -o '[^,]*(null)[^,]*' "$tmp/p")"
    fails=1
fi
if ! command -v gnuplot > /dev/null; then
    echo "SKIP: gnuplot not installed, the script was not rendered"
    [ "$fails" = 0 ] || exit 1
    exit 77
fi
(cd "$tmp" && gnuplot p) > "$tmp/gp.err" 2>&1 || {
    cat "$tmp/gp.err"; echo "FAIL: gnuplot rejected the script"; exit 1; }
if [ -s "$tmp/gp.err" ]; then
    cat "$tmp/gp.err"; echo "FAIL: gnuplot warned"; fails=1
fi
[ -s "$tmp/p.svg" ] || { echo "FAIL: no SVG"; exit 1; }
echo "plot: $(wc -c < "$tmp/p.svg") bytes of SVG, $(grep -o "title '" "$tmp/p" | wc -l) lines drawn"
exit "$fails"
