#!/bin/bash
# docs/img/make-plots.sh -- regenerate the README's "Power over a day"
# plots (docs/img/*.svg) with vpower-sim --compare --plot and gnuplot.
#
# Usage, from the top of the source tree, after `make`:
#   docs/img/make-plots.sh [PATH-TO-vpower-sim]    (default ./sim/vpower-sim)
# The traces are read from $VPOWER_TRACES (default ../shared/data/traces,
# the shared data next to the checkout).  Same inputs and seed give the
# same plots; both take about 30 s on one core.
set -euo pipefail

sim=${1:-./sim/vpower-sim}
traces=${VPOWER_TRACES:-../shared/data/traces}
model=config/models/xeon-r640-2s.model

die() { echo "make-plots.sh: $*" >&2; exit 2; }
[ -f "$model" ] || die "run from the top of the source tree"
[ -d docs/img ] || die "run from the top of the source tree"
[ -x "$sim" ] || die "$sim: not executable (run make first?)"
command -v gnuplot > /dev/null || die "gnuplot not found"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpower-plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# plot NAME TRACE [vpower-sim options...]: docs/img/NAME.svg
plot() {
    local name=$1 trace=$2
    shift 2
    [ -e "$trace" ] || die "$trace: not found (set VPOWER_TRACES)"
    echo "== $name" >&2
    "$sim" --model "$model" --trace "$trace" --compare "$@" \
        --plot "$tmp/$name"
    gnuplot "$tmp/$name"
    mv "$tmp/$name.svg" "docs/img/$name.svg"
    echo "wrote docs/img/$name.svg ($(wc -c < "docs/img/$name.svg") bytes)" >&2
}

plot planetlab-20110303-xeon "$traces/planetlab-cloudsim/20110303" --vms 100
plot bitbrains-xeon "$traces/bitbrains-gwa-t-12-rnd-2013-7"
