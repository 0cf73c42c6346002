#!/bin/sh
# tests/lint/function-length.sh -- no function of policy/, manager/ or
# sim/ is longer than 150 lines, except a program's main(), which parses
# its options.
#
# A function is what the project's style writes: its name at the start
# of a line, its body from a '{' at the start of a line to the next '}'
# at the start of a line; its length counts both braces.  A longer
# function is printed as FILE:LINE: NAME: N lines.  The limit keeps each
# function one idea a reader can hold: a longer one is several named
# steps waiting to be split out.
limit=150
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
cd "$srcdir" 2>/dev/null || { echo "no source tree at $srcdir"; exit 99; }
[ -d policy ] && [ -d manager ] && [ -d sim ] ||
    { echo "no policy/, manager/ or sim/ in $srcdir"; exit 99; }

files=$(find policy manager sim -name '*.c' -type f | sort)
[ -n "$files" ] || { echo "no C sources found"; exit 99; }

# shellcheck disable=SC2086
long=$(awk -v limit="$limit" '
    FNR == 1 { name = ""; start = 0 }
    /^[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(/ {
        name = $0; sub(/[[:space:]]*\(.*/, "", name); line = FNR
    }
    /^\{/ { start = FNR }
    /^\}/ && start {
        n = FNR - start + 1
        if (n > limit && name != "main") {
            printf "%s:%d: %s: %d lines\n", FILENAME, line, name, n
        }
        start = 0
    }
' $files)

n=$(echo "$files" | wc -l)
if [ -n "$long" ]; then
    echo "functions over $limit lines (split them into named steps):"
    echo "$long"
    exit 1
fi
echo "no function over $limit lines in $n files of policy/, manager/, sim/ (main() excepted)"
