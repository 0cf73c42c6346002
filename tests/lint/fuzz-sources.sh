#!/bin/sh
# tests/lint/fuzz-sources.sh -- the fuzz targets compile the whole policy
# core from an explicit list (clang builds them outside automake's
# objects, tests/fuzz/reliability.mk); a policy step file missing from
# that list breaks only .ci/fuzz, long after make check passed.  Fails
# when the list and policy/automake.mk's sources differ.
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
cd "$srcdir" 2>/dev/null || { echo "no source tree at $srcdir"; exit 99; }
lib=$(grep -o 'policy/[a-z_0-9]*\.c' policy/automake.mk | sort -u)
fuzz=$(grep -o 'policy/[a-z_0-9]*\.c' tests/fuzz/reliability.mk | sort -u)
if [ "$lib" != "$fuzz" ]; then
    echo "fuzz-sources: FUZZ_POLICY_SRC in tests/fuzz/reliability.mk differs from policy/automake.mk:"
    printf '%s\n' "$lib" > "${TMPDIR:-/tmp}/fuzz-sources.$$.a"
    printf '%s\n' "$fuzz" > "${TMPDIR:-/tmp}/fuzz-sources.$$.b"
    diff "${TMPDIR:-/tmp}/fuzz-sources.$$.a" "${TMPDIR:-/tmp}/fuzz-sources.$$.b"
    rm -f "${TMPDIR:-/tmp}/fuzz-sources.$$.a" "${TMPDIR:-/tmp}/fuzz-sources.$$.b"
    exit 1
fi
exit 0
