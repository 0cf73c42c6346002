#!/bin/bash
# build-guest.sh OUTDIR -- build the tiny integration-test guest.
#
# Produces OUTDIR/vmlinuz and OUTDIR/initramfs.cpio.gz from Debian's
# distribution kernel (the package behind linux-image-amd64) and
# busybox-static.  Packages are fetched with `apt-get download` and unpacked
# with `dpkg-deb -x` into OUTDIR: nothing is installed on the host.
#
# The initramfs holds busybox (plus applet symlinks), the virtio modules the
# guest needs for its virtio-serial channel, guest-init.sh as /init, and
# optionally extra static binaries in /bin:
#   - every regular file in OUTDIR/extra/
#   - every path in $EXTRA_BIN (separated by spaces or colons)
#
# The result is cached: if OUTDIR/stamp matches the hash of every input
# (package versions, this script, guest-init.sh, extra binaries), nothing
# is rebuilt.  Exit status: 0 on success, 1 on any failure (with a message).
set -eu

prog=build-guest.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
log() { echo "$prog: $*" >&2; }

[ $# -eq 1 ] || die "usage: $prog OUTDIR"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1" || die "cannot create $1"
outdir=$(cd "$1" && pwd)

for tool in apt-get apt-cache dpkg-deb cpio gzip sha256sum find; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "required tool '$tool' not found (apt-get install cpio gzip dpkg apt)"
done

# Modules to load, in this order.  Missing ones (built in, or renamed) are
# skipped; each module's own dependencies (modinfo -F depends) are added
# before it when modinfo is available.
modules="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_console"

debdir=$outdir/debs
mkdir -p "$debdir"

apt_updated=0
apt_update() {
    [ "$apt_updated" = 0 ] || return 0
    log "running apt-get update"
    apt-get update -qq >&2 || die "apt-get update failed"
    apt_updated=1
}

# resolve_kernel: print the real kernel package behind linux-image-amd64.
resolve_kernel() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}

# pkg_version PKG: candidate version of PKG, empty when unknown.
pkg_version() {
    apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)' || true
}

kpkg=$(resolve_kernel)
if [ -z "$kpkg" ]; then
    apt_update
    kpkg=$(resolve_kernel)
    [ -n "$kpkg" ] || die "cannot resolve linux-image-amd64 to a kernel package"
fi
kver=$(pkg_version "$kpkg")
bver=$(pkg_version busybox-static)
{ [ -n "$kver" ] && [ -n "$bver" ]; } || die "no candidate version for $kpkg or busybox-static"

# fetch PKG VERSION: make sure debs/PKG_VERSION*.deb exists; print its path.
fetch() {
    local pkg=$1 ver=$2 f
    f=$(find "$debdir" -maxdepth 1 -name "${pkg}_*.deb" | while read -r d; do
            [ "$(dpkg-deb -f "$d" Version)" = "$ver" ] && echo "$d"
        done | head -n 1)
    if [ -z "$f" ]; then
        log "downloading $pkg=$ver"
        if ! (cd "$debdir" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >&2); then
            apt_update
            ver=$(pkg_version "$pkg")
            (cd "$debdir" && apt-get download -q -o APT::Sandbox::User=root "$pkg=$ver" >&2) ||
                die "apt-get download $pkg failed"
        fi
        f=$(find "$debdir" -maxdepth 1 -name "${pkg}_*.deb" | while read -r d; do
                [ "$(dpkg-deb -f "$d" Version)" = "$ver" ] && echo "$d"
            done | head -n 1)
        [ -n "$f" ] || die "downloaded $pkg but cannot find the .deb in $debdir"
    fi
    echo "$f"
}

kdeb=$(fetch "$kpkg" "$kver")
bdeb=$(fetch busybox-static "$bver")

# Extra binaries.
extras=()
if [ -d "$outdir/extra" ]; then
    while IFS= read -r f; do extras+=("$f"); done \
        < <(find "$outdir/extra" -maxdepth 1 \( -type f -o -type l \) | sort)
fi
for f in $(printf '%s' "${EXTRA_BIN:-}" | tr ':' ' '); do
    [ -f "$f" ] || die "EXTRA_BIN entry '$f' is not a file"
    extras+=("$f")
done

# Cache key: everything that goes into the image.
stamp=$(
    {
        echo "kernel $kpkg $kver $(basename "$kdeb")"
        echo "busybox $bver $(basename "$bdeb")"
        echo "modules $modules"
        sha256sum "$here/build-guest.sh" "$here/guest-init.sh" | cut -d' ' -f1
        for f in ${extras[@]+"${extras[@]}"}; do
            echo "extra $(basename "$f") $(sha256sum < "$f" | cut -d' ' -f1)"
        done
    } | sha256sum | cut -d' ' -f1
)
if [ -f "$outdir/stamp" ] && [ "$(cat "$outdir/stamp")" = "$stamp" ] &&
   [ -s "$outdir/vmlinuz" ] && [ -s "$outdir/initramfs.cpio.gz" ]; then
    log "guest up to date in $outdir"
    exit 0
fi
rm -f "$outdir/stamp"

log "building guest ($kpkg $kver, busybox $bver) in $outdir"
work=$outdir/work
rm -rf "$work"
mkdir -p "$work/kernel" "$work/busybox" "$work/root"
dpkg-deb -x "$kdeb" "$work/kernel" || die "dpkg-deb -x $kdeb failed"
dpkg-deb -x "$bdeb" "$work/busybox" || die "dpkg-deb -x $bdeb failed"

vmlinuz=$(find "$work/kernel/boot" -maxdepth 1 -name 'vmlinuz-*' | head -n 1)
[ -n "$vmlinuz" ] || die "no /boot/vmlinuz-* in $kdeb"
uname_r=${vmlinuz##*/vmlinuz-}
moddir=$work/kernel/lib/modules/$uname_r
[ -d "$moddir" ] || die "no lib/modules/$uname_r in $kdeb"

root=$work/root
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,lib/modules,usr/bin,usr/sbin}
bb=$work/busybox/bin/busybox
[ -x "$bb" ] || die "no bin/busybox in $bdeb"
cp "$bb" "$root/bin/busybox"
# Applet symlinks: `busybox --list-full` gives e.g. "usr/bin/awk".
"$root/bin/busybox" --list-full > "$work/applets" || die "busybox --list-full failed"
while read -r applet; do
    [ -n "$applet" ] || continue
    [ -e "$root/$applet" ] && continue
    mkdir -p "$root/$(dirname "$applet")"
    ln -s /bin/busybox "$root/$applet"
done < "$work/applets"
[ -e "$root/bin/sh" ] || ln -s busybox "$root/bin/sh"

# Find a module file by name (dash/underscore insensitive), any compression.
find_module() {
    local alt=${1//_/-}
    find "$moddir" \( -name "$1.ko" -o -name "$1.ko.*" -o -name "$alt.ko" -o -name "$alt.ko.*" \) |
        head -n 1
}

# Order: each module after its dependencies.
ordered=""
add_module() {
    local m=$1 f dep
    case " $ordered " in *" $m "*) return 0 ;; esac
    f=$(find_module "$m")
    if [ -z "$f" ]; then
        if grep -Eq "/($m|${m//_/-})\.ko" "$moddir/modules.builtin" 2>/dev/null; then
            log "module $m is built into the kernel"
        else
            log "module $m not found, skipping"
        fi
        return 0
    fi
    if command -v modinfo >/dev/null 2>&1; then
        for dep in $(modinfo -F depends "$f" 2>/dev/null | tr ',' ' '); do
            add_module "$dep"
        done
    fi
    ordered="$ordered $m"
}
for m in $modules; do add_module "$m"; done

: > "$root/lib/modules/load-order"
for m in $ordered; do
    f=$(find_module "$m")
    dst=$root/lib/modules/$m.ko
    # busybox insmod passes the file to init_module(); compressed modules
    # only load through finit_module() on kernels built with in-kernel
    # decompression, so always store them decompressed.
    case "$f" in
        *.ko) cp "$f" "$dst" ;;
        *.ko.xz) xz -dc "$f" > "$dst" || die "cannot decompress $f (need xz-utils)" ;;
        *.ko.zst) zstd -qdc "$f" > "$dst" || die "cannot decompress $f (need zstd)" ;;
        *.ko.gz) gzip -dc "$f" > "$dst" || die "cannot decompress $f" ;;
        *) die "unknown module format: $f" ;;
    esac
    echo "$m" >> "$root/lib/modules/load-order"
done
log "modules:${ordered:- (none)}"

cp "$here/guest-init.sh" "$root/init"
chmod 755 "$root/init"

for f in ${extras[@]+"${extras[@]}"}; do
    name=$(basename "$f")
    if command -v readelf >/dev/null 2>&1 && readelf -l "$f" 2>/dev/null | grep -q 'INTERP'; then
        log "warning: $f is dynamically linked; it will not run in the guest"
    fi
    cp -L "$f" "$root/bin/$name"
    chmod 755 "$root/bin/$name"
    log "extra binary: /bin/$name"
done

echo "vpower-test-guest" > "$root/etc/hostname"

(cd "$root" && find . -print0 | LC_ALL=C sort -z |
    cpio --null -o -H newc --owner=0:0 --quiet) | gzip -9 > "$outdir/initramfs.cpio.gz.tmp" ||
    die "creating the initramfs failed"
cp "$vmlinuz" "$outdir/vmlinuz.tmp"
mv "$outdir/vmlinuz.tmp" "$outdir/vmlinuz"
mv "$outdir/initramfs.cpio.gz.tmp" "$outdir/initramfs.cpio.gz"
echo "$uname_r" > "$outdir/kernel-release"
rm -rf "$work"
echo "$stamp" > "$outdir/stamp"
log "done: $outdir/vmlinuz ($uname_r), $outdir/initramfs.cpio.gz ($(du -k "$outdir/initramfs.cpio.gz" | cut -f1) KiB)"
