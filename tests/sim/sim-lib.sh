# tests/sim/sim-lib.sh -- the set-up every vpower-sim shell test shares;
# sourced after 'src' (the source tree) is set.  Sets 'build' and 'sim'
# (the binary under test; exit 99 if it is missing) and 'tmp', a
# scratch directory removed when the test exits.
build=${VPOWER_BUILDDIR:-.}
sim=$build/sim/vpower-sim
[ -x "$sim" ] || { echo "no $sim" >&2; exit 99; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
