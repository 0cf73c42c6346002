#!/bin/sh
# tests/lint/include-rules.sh -- which room may use what.
#
# The house rules of the source tree, checked on every `make check`:
#   - policy/ includes only the C library (and its own headers): it is the
#     pure core that vpowerd, vpower-sim and the unit tests share;
#   - agent/ runs inside guests: it includes nothing of manager/, policy/
#     or sim/;
#   - only the libvirt driver's files include libvirt, so every other file
#     reaches the hypervisor through the driver table (manager/drv.h);
#   - only the host drivers and inputs name kernel files (/sys, /proc,
#     /dev/cpu): the rest of the daemon reaches the host through them;
#   - the cycle, which vpowerd and vpower-sim share, does no I/O and reads
#     no clock of its own.
# A hit prints the file, the line and the rule it breaks.
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
cd "$srcdir" 2>/dev/null || { echo "no source tree at $srcdir"; exit 99; }
[ -d policy ] && [ -d manager ] || { echo "no policy/ or manager/ in $srcdir"; exit 99; }
status=0

# The files allowed to break a rule, as extended regexes on the path.
LIBVIRT_FILES='^manager/drivers/(drv_libvirt|virtloop|domxml)[a-z_]*\.[ch]$'
HOST_FILES='^manager/(drivers|inputs|calibrate)/|^manager/conf\.c$|^manager/vpowerd\.c$'
CYCLE_FILES='^manager/cycle\.[ch]$'

report() {  # report RULE HITS
    if [ -n "$2" ]; then
        echo "include-rules: $1:"
        printf '%s\n' "$2"
        status=1
    fi
}

sources() {  # sources DIR...: every C source and header below DIR
    find "$@" -name '*.[ch]' -type f 2>/dev/null | sed 's|^\./||' | sort
}

# 1. policy/ includes only libc, libm and policy/ headers.
LIBC='assert|ctype|errno|float|inttypes|limits|math|stdarg|stdbool|stddef|stdint|stdio|stdlib|string'
hits=$(for f in $(sources policy); do
    grep -nE '^[[:space:]]*#[[:space:]]*include' "$f" |
        grep -vE "<($LIBC)\.h>|<config\.h>|\"policy/[a-z_0-9]+\.h\"" |
        sed "s|^|$f:|"
done)
report "policy/ includes something beyond the C library" "$hits"

# 2. agent/ links no host code.
hits=$(for f in $(sources agent); do
    grep -nE '#[[:space:]]*include[[:space:]]*"(manager|policy|sim)/' "$f" |
        sed "s|^|$f:|"
done)
report "agent/ includes host code" "$hits"

# 3. Only the libvirt driver includes libvirt.
hits=$(for f in $(sources manager sim policy agent); do
    printf '%s\n' "$f" | grep -qE "$LIBVIRT_FILES" && continue
    grep -nE '#[[:space:]]*include[[:space:]]*<libvirt/' "$f" | sed "s|^|$f:|"
done)
report "libvirt included outside the libvirt driver" "$hits"

# 4. Only the host drivers and inputs name kernel files.
hits=$(for f in $(sources manager sim policy); do
    printf '%s\n' "$f" | grep -qE "$HOST_FILES" && continue
    grep -nE '"/(sys|proc|dev/cpu)/' "$f" | sed "s|^|$f:|"
done)
report "kernel files named outside the host drivers" "$hits"

# 5. The cycle does no I/O and keeps no clock.
hits=$(for f in $(sources manager); do
    printf '%s\n' "$f" | grep -qE "$CYCLE_FILES" || continue
    grep -nE '\b(fopen|opendir|clock_gettime|gettimeofday|vir[A-Z][A-Za-z]*|util_read_file)\s*\(|(^|[^a-z_.>])(open|read|write)\s*\(' "$f" |
        sed "s|^|$f:|"
done)
report "the cycle does I/O or reads a clock" "$hits"

exit $status
