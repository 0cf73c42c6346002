#!/bin/sh
# tests/lint/include-cycles.sh -- no include cycles between modules.
#
# A module of manager/ is a pair foo.c + foo.h (either may be missing),
# with its private header foo_int.h if it has one.
# Module A uses module B when foo.c or foo.h of A includes B's header.
# Uses must form no cycle: a module can then be read, tested and linked
# with only the modules below it, and a change to a module touches only
# the modules above it.  A cycle prints its modules and the include lines
# that close it.
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
cd "$srcdir" 2>/dev/null || { echo "no source tree at $srcdir"; exit 99; }
[ -d manager ] || { echo "no manager/ in $srcdir"; exit 99; }

INCLUDE='^[[:space:]]*#[[:space:]]*include[[:space:]]*"manager/[^"]+\.h"'

# One line per use: "file:line: fromModule toModule".
uses=$(find manager -name '*.[ch]' -type f | sed 's|^\./||' | sort |
    while read -r f; do
        grep -nE "$INCLUDE" "$f" |
            sed -E "s|^([0-9]+):[^\"]*\"([^\"]+)\\.h\".*|$f:\\1: ${f%.[ch]} \\2|"
    done | sed -E 's/_int( |$)/\1/g')

printf '%s\n' "$uses" | awk '
    NF == 3 && $2 != $3 {
        n[$2] = 1; n[$3] = 1
        w = (($2, $3) in e) ? e[$2, $3] " " $1 : $1
        e[$2, $3] = w
        r[$2, $3] = 1
    }
    END {
        # Transitive closure (Warshall) over at most a few hundred modules.
        for (k in n) for (i in n) if ((i, k) in r) for (j in n)
            if ((k, j) in r) r[i, j] = 1
        status = 0
        for (i in n) {
            if (i in done || !((i, i) in r)) continue
            members = ""
            for (j in n) if (j == i || ((i, j) in r && (j, i) in r)) {
                done[j] = 1; members = members " " j; m[j] = 1
            }
            print "include-cycles: these modules include each other:" members
            for (a in m) for (b in m) if ((a, b) in e)
                print "  " e[a, b] " " a " -> " b
            delete m
            status = 1
        }
        exit status
    }'
