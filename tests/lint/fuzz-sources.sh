#!/bin/sh
# tests/lint/fuzz-sources.sh -- the fuzz targets compile their sources
# with clang from lists in tests/fuzz/*.mk, outside automake's objects; a
# source missing from a list, or a list naming a file that was renamed,
# breaks only .ci/fuzz, long after make check passed.  Fails when
# FUZZ_POLICY_SRC (tests/fuzz/reliability.mk) differs from
# policy/automake.mk's sources, or when a .c file a fuzz rule names does
# not exist.  (The trace target takes sim/'s sources from
# sim/automake.mk's own list, which needs no check.)
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
missing=
named='\(agent\|manager\|policy\|sim\|tests\)/[A-Za-z_0-9/-]*\.c'
for f in $(grep -oh "$named" tests/fuzz/*.mk | sort -u); do
    [ -f "$f" ] || missing="$missing $f"
done
if [ -n "$missing" ]; then
    echo "fuzz-sources: tests/fuzz/*.mk names missing files:$missing"
    exit 1
fi
exit 0
