#!/bin/bash
# tests/install/install.sh -- `make install DESTDIR=<tmp>` lays out what
# docs/install.md promises, the installed programs run, and
# `make uninstall` takes every file away again.
#
# Runs from `make check` (TESTS) and from `make installcheck`.  It needs
# nothing but the build tree: no root, no systemd, no libvirtd.
set -u
T=install
: "${VPOWER_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${VPOWER_BUILDDIR:=$PWD}"
log() { echo "[$T] $*" >&2; }
fail() { echo "[$T] FAIL: $*" >&2; exit 1; }
error() { echo "[$T] ERROR: $*" >&2; exit 99; }

[ -f "$VPOWER_BUILDDIR/Makefile" ] || error "no Makefile in $VPOWER_BUILDDIR"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vpower-install.XXXXXX") ||
    error "mktemp failed"
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

# The test runs inside `make check`: do not inherit its jobserver.
mk() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES \
        "${MAKE:-make}" -s -C "$VPOWER_BUILDDIR" "$@"
}

mk print-install-dirs > "$tmp/dirs" 2>"$tmp/dirs.err" ||
    error "make print-install-dirs failed: $(cat "$tmp/dirs.err")"
# shellcheck disable=SC1091
. "$tmp/dirs"
mk install DESTDIR="$dest" > "$tmp/install.log" 2>&1 || {
    tail -20 "$tmp/install.log" >&2
    fail "make install DESTDIR=$dest failed"
}

n=0
want() {    # want PATH [executable]: PATH exists under DESTDIR
    local p=$dest$1
    n=$((n + 1))
    [ -e "$p" ] || fail "make install did not install $1"
    if [ "${2:-}" = x ]; then
        [ -x "$p" ] || fail "$1 is not executable"
    fi
}

for p in vpowerd vpower-agent; do
    want "$sbindir/$p" x
done
for p in vpowerctl vpower-sim vpower-exporter vpower-hint; do
    want "$bindir/$p" x
done
want "$libdir/libvpowerhint.a"
want "$includedir/vpowerhint.h"
want "$libdir/pkgconfig/vpowerhint.pc"
mans="man8/vpowerd.8 man8/vpowerctl.8 man5/vpowerd.conf.5
      man8/vpower-exporter.8 man1/vpower-sim.1
      man8/vpower-agent.8 man1/vpower-hint.1 man3/vpowerhint.3"
for m in $mans; do
    want "$mandir/$m"
done
want "$vpowerconfdir/vpowerd.conf"
ls "$dest$pkgdatadir"/models/*.model > /dev/null 2>&1 ||
    fail "no energy models in $pkgdatadir/models"
want "$datadir/bash-completion/completions/vpowerctl"
for d in install.md security.md control-protocol.md metrics.md \
         configuration.md LICENSE; do
    want "$docdir/$d"
done
if [ -n "${systemdsystemunitdir:-}" ]; then
    want "$systemdsystemunitdir/vpowerd.service"
    want "$systemdsystemunitdir/vpower-exporter.service"
    grep -qx "ExecStart=$sbindir/vpowerd --foreground" \
        "$dest$systemdsystemunitdir/vpowerd.service" ||
        fail "vpowerd.service does not start $sbindir/vpowerd --foreground"
fi
[ -z "${tmpfilesdir:-}" ] || want "$tmpfilesdir/vpower.conf"
[ -z "${sysusersdir:-}" ] || want "$sysusersdir/vpower.conf"
log "$n expected files installed"

# Every installed man page renders without groff warnings (man-db's man).
if man --version 2>/dev/null | grep -q "^man 2\."; then
    for m in $mans; do
        w=$(MANWIDTH=80 man --warnings -l "$dest$mandir/$m" 2>&1 > /dev/null)
        [ -z "$w" ] || fail "man page $m renders with warnings: $w"
    done
    log "man pages render without warnings"
else
    log "man pages not rendered: no man-db man(1) here"
fi

# The installed programs run; the guest ones are static (a guest image
# has no libvirt or json-c).
v=$("$dest$sbindir/vpowerd" --version 2>&1) || fail "vpowerd --version: $v"
log "vpowerd --version: $v"
"$dest$bindir/vpowerctl" --version > /dev/null 2>&1 ||
    fail "installed vpowerctl --version fails"
# (configure links them dynamically under --enable-sanitizers only,
# because the sanitizer runtimes are shared libraries.)
static=yes
grep -q '^GUEST_LDFLAGS = *$' "${VPOWER_BUILDDIR:-.}/Makefile" 2>/dev/null &&
    static=no && log "guest binaries not checked for static linking: sanitizer build"
for p in "$sbindir/vpower-agent" "$bindir/vpower-hint"; do
    if [ "$static" = yes ] && ldd "$dest$p" > /dev/null 2>&1; then
        fail "$p is dynamically linked (guests need it static)"
    fi
done
grep -q "^Libs:.*-lvpowerhint" "$dest$libdir/pkgconfig/vpowerhint.pc" ||
    fail "vpowerhint.pc has no Libs: -lvpowerhint"
grep -q "^libdir=$libdir\$\|^libdir=\${exec_prefix}\|^libdir=\${prefix}" \
    "$dest$libdir/pkgconfig/vpowerhint.pc" ||
    fail "vpowerhint.pc's libdir is not $libdir"
if [ -r "$dest$datadir/bash-completion/completions/vpowerctl" ]; then
    bash -n "$dest$datadir/bash-completion/completions/vpowerctl" ||
        fail "installed bash completion has a syntax error"
fi

mk uninstall DESTDIR="$dest" > "$tmp/uninstall.log" 2>&1 || {
    tail -20 "$tmp/uninstall.log" >&2
    fail "make uninstall failed"
}
left=$(find "$dest" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left files: $left"
log "make uninstall removed every file"
exit 0
