#!/bin/sh
# tests/lint/policy-pure.sh -- fails if policy/ does I/O, reads a clock,
# uses randomness or the environment, or has // comments.  The policy
# core must stay a pure function of its inputs (style guide 9.1, 9.4).
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
cd "$srcdir/policy" 2>/dev/null || { echo "no policy/ in $srcdir"; exit 99; }
status=0
check() {
    # $1 = description, $2 = extended regex
    hits=$(grep -nE "$2" ./*.c ./*.h 2>/dev/null)
    if [ -n "$hits" ]; then
        echo "policy-pure: $1:"
        echo "$hits"
        status=1
    fi
}
check "libvirt include" '#include <libvirt'
check "file I/O" '\b(fopen|fdopen|freopen|fread|fwrite|fgets|fputs|fprintf|fscanf|opendir|popen)\s*\(|(^|[^a-z_])open\s*\(|(^|[^a-z_])(read|write|close)\s*\('
check "clock" 'clock_gettime|gettimeofday|(^|[^a-z_])time\s*\('
check "randomness" '(^|[^a-z_])(rand|random|srand|drand48)\s*\('
check "environment" 'getenv'
check "// comment" '(^|[^:"])//'
exit $status
