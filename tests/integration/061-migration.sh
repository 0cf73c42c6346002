#!/bin/bash
# 061-migration.sh -- a real live migration of a TCG guest between two
# libvirtds on this one machine, and what each end then reports: the
# signals vpowerd's libvirt driver follows (manager/drivers/drv_libvirt.h) and
# the pins and policy metadata the domain arrives with.
#
# The second libvirtd ("dst") runs in a private mount namespace: its own
# /run/libvirt, /var/lib/libvirt, /etc/libvirt (a copy without autostart
# networks or domains), /var/cache/libvirt and /var/log/libvirt, its own
# socket directory under $VP_TMPDIR and its own host_uuid (libvirt
# refuses to migrate to the same host uuid).  QEMU's console output goes
# to files (stdio_handler, no second virtlogd).  The migration stream
# uses a TCP port on 127.0.0.1 only (--migrateuri, --listen-address).
#
# Checks, host "src" = the system libvirtd:
#   - the two daemons have different host uuids;
#   - while `virsh migrate --live` runs, src reports an outgoing
#     migration job (domjobinfo "Operation") and dst refuses job
#     statistics for the incoming one ("available only on the source
#     host"), which is how drv_libvirt's migr_job recognises it;
#   - src raised migration-iteration, SUSPENDED_MIGRATED and
#     STOPPED_MIGRATED; dst raised STARTED_MIGRATED and RESUMED_MIGRATED;
#   - vpowerd's libvirt driver (migr-watch) reported, in order, on src:
#     migration out begins, job "outgoing", gone, stopped; on dst:
#     migration in begins, started, job "incoming", resumed, listed with
#     migrated_in;
#   - the guest runs on dst only, "running (migrated)" (drv_dom's
#     migrated_in); its live vCPU pin made on src (as vpowerd's would
#     be) and its vpower metadata arrived with it;
#   - it migrates back the same way;
#   - then once more out and back with a vpowerd beside each libvirtd
#     (each on its own sysfs fixture): the leaving end logs the frozen
#     pins and the departure, forgets the domain's journal entries and
#     stops listing it; the arriving end reads the policy from the
#     metadata that came along, lists the domain and journals it; both
#     exit 0 on SIGTERM and the guest keeps running.
# $VP_MIGR_VCPUS sets the guest's vCPUs (default 1).  Skips (77) with the
# reason where a second libvirtd cannot run (no mount namespaces, no
# unshare, it fails to start).
set -eu
. "$(dirname "$0")/lib.sh"

NS=http://vpower.org/xmlns/policy/1
DST_DIR=$VP_TMPDIR/dst
DST_URI="qemu+unix:///system?socket=$DST_DIR/sock/libvirt-sock"
DST_PID=
WATCH=$VPOWER_BUILDDIR/tests/integration/migr-watch
WATCH_PIDS=()
MIG_PID=
VPD_PIDS=()

dst_virsh() { virsh -q -c "$DST_URI" "$@"; }

cleanup_061() {
    local p dom f
    if [ "${rc:-0}" != 0 ]; then
        for f in "$VP_TMPDIR"/vpd-*/vpowerd.log; do
            [ -f "$f" ] || continue
            echo "----- $f -----" >&2
            tail -n 25 "$f" >&2
        done
    fi
    for p in "${WATCH_PIDS[@]}" $MIG_PID "${VPD_PIDS[@]}"; do
        kill "$p" 2>/dev/null
    done
    if [ -n "$DST_PID" ]; then
        for dom in $(dst_virsh list --all --name 2>/dev/null |
                     grep "^$VP_PREFIX"); do
            dst_virsh destroy "$dom" >/dev/null 2>&1
            dst_virsh undefine "$dom" >/dev/null 2>&1
        done
        kill -TERM "$DST_PID" 2>/dev/null
        for _ in $(seq 50); do
            [ -d "/proc/$DST_PID" ] || break
            sleep 0.2
        done
        kill -KILL "$DST_PID" 2>/dev/null
    fi
}
# set +e: under set -e a failing command in the trap would end it before
# vp_cleanup destroys the guests.
trap 'rc=$?; set +e; cleanup_061; (exit $rc); vp_cleanup' EXIT

[ -x "$WATCH" ] || vp_error "$WATCH not built (make check builds it)"
command -v unshare >/dev/null || vp_skip "unshare not installed (util-linux)"
unshare -m --propagation private true 2>/dev/null ||
    vp_skip "cannot create a mount namespace for the second libvirtd"

vp_services_up
vp_build_guest

# ---------------------------------------------------------------- dst

# start_dst: the second libvirtd, in the background; sets DST_PID.
start_dst() {
    local d=$DST_DIR
    mkdir -p "$d"/{run,lib/qemu,etc,cache,log,sock}
    cp -a /etc/libvirt/. "$d/etc/"
    rm -rf "$d/etc/qemu/networks/autostart" "$d/etc/qemu/autostart"
    rm -f "$d"/etc/qemu/*.xml
    cp -a /var/cache/libvirt/. "$d/cache/" 2>/dev/null || true
    cat > "$d/etc/libvirtd.conf" <<EOF
unix_sock_dir = "$d/sock"
unix_sock_group = "root"
auth_unix_rw = "none"
auth_unix_ro = "none"
host_uuid = "$(cat /proc/sys/kernel/random/uuid)"
log_outputs = "3:file:$d/libvirtd.log"
EOF
    echo 'stdio_handler = "file"' >> "$d/etc/qemu.conf"
    unshare -m --propagation private bash -c '
        d=$1
        mount --bind "$d/run" /run/libvirt &&
        mount --bind "$d/lib" /var/lib/libvirt &&
        mount --bind "$d/etc" /etc/libvirt &&
        mount --bind "$d/cache" /var/cache/libvirt &&
        mount --bind "$d/log" /var/log/libvirt || exit 1
        exec /usr/sbin/libvirtd --config "$d/etc/libvirtd.conf" \
            --pid-file "$d/libvirtd.pid"' _ "$d" \
        > "$d/stdout.log" 2>&1 &
    DST_PID=$!
}

start_dst
for _ in $(seq 150); do
    dst_virsh version >/dev/null 2>&1 && break
    [ -d "/proc/$DST_PID" ] || break
    sleep 0.2
done
if ! dst_virsh version >/dev/null 2>&1; then
    tail -5 "$DST_DIR/stdout.log" "$DST_DIR/libvirtd.log" >&2 2>/dev/null
    vp_skip "a second libvirtd could not start here (log above)"
fi
src_uuid=$(vp_virsh capabilities | grep -m1 -o '<uuid>[^<]*' | cut -c7-)
dst_uuid=$(dst_virsh capabilities | grep -m1 -o '<uuid>[^<]*' | cut -c7-)
vp_log "src host uuid $src_uuid, dst host uuid $dst_uuid"
[ -n "$dst_uuid" ] && [ "$src_uuid" != "$dst_uuid" ] ||
    vp_fail "the two libvirtds share host uuid '$src_uuid'"

# ---------------------------------------------------------------- guest

# Without the agent channel: both QEMUs would bind its socket path.
# One vCPU: a 2-vCPU TCG guest (QEMU 7.2) panicked right after arriving
# in 2 of 8 migrations here ("Fatal exception in interrupt"), 1 vCPU in
# none of 5.
G=mig
D=$(vp_dom $G)
vp_guest_xml $G light "${VP_MIGR_VCPUS:-1}" "" |
    sed '/<channel /,/<\/channel>/d' > "$VP_TMPDIR/$G.xml"
: > "$(vp_console_log $G)"
VP_CREATED+=("$D")
vp_virsh create "$VP_TMPDIR/$G.xml" >/dev/null ||
    vp_error "virsh create $D failed"
eval "VP_START_$(vp_var $G)=\$(date +%s.%N)"
vp_guest_wait_ready $G "$VP_BOOT_TIMEOUT"

# What vpowerd would have done on src: a live pin and its metadata.
vp_virsh vcpupin "$D" 0 1 --live >/dev/null || vp_error "vcpupin failed"
vp_virsh metadata "$D" "$NS" --key vpower --live \
    --set '<policy kind="performance"/>' >/dev/null ||
    vp_error "virsh metadata --set failed"

# migrate FROM_URI TO_URI TAG: live migration with both event streams
# and the job of both ends recorded under $VP_TMPDIR/TAG.*.
migrate() {
    local from=$1 to=$2 tag=$3 t0 jf jt uuid
    uuid=$(virsh -q -c "$from" domuuid "$D")
    WATCH_PIDS=()
    "$WATCH" "$from" "$uuid" 300 > "$VP_TMPDIR/$tag.from-drv" 2>&1 &
    WATCH_PIDS+=($!)
    "$WATCH" "$to" "$uuid" 300 > "$VP_TMPDIR/$tag.to-drv" 2>&1 &
    WATCH_PIDS+=($!)
    virsh -c "$from" event --domain "$D" --all --loop \
        > "$VP_TMPDIR/$tag.from-events" 2>&1 &
    WATCH_PIDS+=($!)
    virsh -c "$to" event --all --loop \
        > "$VP_TMPDIR/$tag.to-events" 2>&1 &
    WATCH_PIDS+=($!)
    sleep 1
    : > "$VP_TMPDIR/$tag.from-job"
    : > "$VP_TMPDIR/$tag.to-job"
    : > "$VP_TMPDIR/$tag.to-state"
    t0=$SECONDS
    # 20 MiB/s: a few seconds of copy, time to see both jobs.
    virsh -c "$from" migrate --live "$D" "$to" \
        --migrateuri tcp://127.0.0.1 --listen-address 127.0.0.1 \
        --bandwidth 20 > "$VP_TMPDIR/$tag.migrate" 2>&1 &
    MIG_PID=$!
    while [ -d "/proc/$MIG_PID" ]; do
        virsh -q -c "$from" domjobinfo "$D" 2>/dev/null |
            grep -i '^Operation' >> "$VP_TMPDIR/$tag.from-job" || true
        # libvirt gives no statistics on the destination: its refusal
        # names the incoming migration.
        virsh -q -c "$to" domjobinfo "$D" 2>&1 |
            grep -i -e '^Operation' -e 'only on the source host' \
            >> "$VP_TMPDIR/$tag.to-job" || true
        virsh -q -c "$to" domstate --reason "$D" \
            >> "$VP_TMPDIR/$tag.to-state" 2>/dev/null || true
        sleep 0.2
    done
    wait "$MIG_PID" ||
        vp_fail "$tag: virsh migrate failed: $(cat "$VP_TMPDIR/$tag.migrate")"
    MIG_PID=
    vp_log "$tag: migrated in $((SECONDS - t0)) s"
    sleep 1
    kill "${WATCH_PIDS[@]}" 2>/dev/null
    wait "${WATCH_PIDS[@]}" 2>/dev/null || true
    WATCH_PIDS=()
    jf=$(sort -u "$VP_TMPDIR/$tag.from-job" | tr -s ' ' | tr '\n' ';')
    jt=$(sort -u "$VP_TMPDIR/$tag.to-job" | tr -s ' ' | tr '\n' ';')
    vp_log "$tag: source job: $jf destination job: $jt"
    grep -qi 'Outgoing migration' "$VP_TMPDIR/$tag.from-job" ||
        vp_fail "$tag: the source never reported an outgoing migration job"
    vp_log "$tag: destination states: $(sort -u "$VP_TMPDIR/$tag.to-state" |
                                        tr '\n' ';')"
    grep -qi -e 'Incoming migration' -e 'only on the source host' \
        "$VP_TMPDIR/$tag.to-job" ||
        vp_fail "$tag: the destination never showed an incoming job"
    check_events "$tag.from-events" 'migration-iteration' \
        'Suspended Migrated' 'Stopped Migrated'
    check_events "$tag.to-events" 'Started Migrated' 'Resumed Migrated'
    vp_log "$tag: driver at the source:" \
        "$(tr '\n' ';' < "$VP_TMPDIR/$tag.from-drv")"
    vp_log "$tag: driver at the destination:" \
        "$(tr '\n' ';' < "$VP_TMPDIR/$tag.to-drv")"
    # Job and listing are polled: they may show before or after events.
    check_order "$tag.from-drv" 'job migr_out'
    check_order "$tag.from-drv" 'migr out_begin' 'migr gone' 'ev stopped'
    check_order "$tag.to-drv" 'job migr_in'
    check_order "$tag.to-drv" 'listed migrated_in=1'
    check_order "$tag.to-drv" 'migr in_begin' 'ev started' 'migr resumed'
}

# check_order FILE LINE...: each LINE occurs in FILE, the first
# occurrences in this order.
check_order() {
    local name=$1 f=$VP_TMPDIR/$1 l prev=0 at
    shift
    for l in "$@"; do
        at=$(grep -n -m1 -x -F "$l" "$f" | cut -d: -f1)
        [ -n "$at" ] || vp_fail "the driver never reported '$l' ($name)"
        [ "$at" -gt "$prev" ] ||
            vp_fail "the driver reported '$l' out of order ($name)"
        prev=$at
    done
}

# check_events FILE PATTERN...: each pattern occurs in FILE.
check_events() {
    local f=$VP_TMPDIR/$1 p
    shift
    for p in "$@"; do
        grep -q "$p" "$f" || {
            cat "$f" >&2
            vp_fail "no '$p' event in $1"
        }
    done
}

# arrived URI: the guest runs there with its pin and metadata.
arrived() {
    local uri=$1 pin md st
    st=$(virsh -q -c "$uri" domstate --reason "$D")
    [ "$st" = "running (migrated)" ] ||
        vp_fail "$D on $uri is '$st', not 'running (migrated)'"
    pin=$(virsh -q -c "$uri" vcpupin "$D" --vcpu 0 --live |
          awk 'NF { print $NF }')
    [ "$pin" = 1 ] || vp_fail "$D vcpu0 pin on $uri is '$pin', not 1"
    md=$(virsh -q -c "$uri" metadata "$D" "$NS" --live 2>&1)
    case "$md" in
        *'kind="performance"'*) ;;
        *) vp_fail "$D metadata on $uri is '$md'" ;;
    esac
    vp_log "$D runs on $uri with vcpu0 pinned to $pin and its metadata"
}

migrate qemu:///system "$DST_URI" out
arrived "$DST_URI"
! vp_virsh domstate "$D" >/dev/null 2>&1 ||
    vp_fail "$D still exists on the source after migrating"
migrate "$DST_URI" qemu:///system back
arrived qemu:///system
dst_virsh domstate "$D" >/dev/null 2>&1 &&
    vp_fail "$D still exists on dst after migrating back"

# ------------------------------------------------- with vpowerd on both ends

VPD_TMP=$VP_TMPDIR
. "$(dirname "$0")/vpowerd-lib.sh"
CTL=$VPD_BUILDDIR/manager/vpowerctl
export VPOWER_ONLY_DOMAINS=$VP_PREFIX
uuid=$(vp_virsh domuuid "$D")

# start_vpd END URI: a vpowerd for one end, files under $VP_TMPDIR/vpd-END.
start_vpd() {
    local e=$VP_TMPDIR/vpd-$1
    mkdir -p "$e"
    vpd_fixture "$e/sys" 2 1000000 1500000 2000000
    cat > "$e/vpowerd.conf" <<EOD
managed_cpus 0-1
period_ms 200
max_period_ms 500
pack_dwell_ms 400
journal $e/journal
control_socket $e/vpowerd.sock
EOD
    vpd_start "$e/vpowerd.log" --config "$e/vpowerd.conf" \
        --sysfs-root "$e/sys" --connect "$2"
    VPD_PIDS+=("$VPD_PID")
    eval "VPD_PID_$1=\$VPD_PID"
}
# listed END: vpowerctl list of that end names the guest.
listed() {
    "$CTL" --socket "$VP_TMPDIR/vpd-$1/vpowerd.sock" list 2>/dev/null |
        grep -q "$D"
}
# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s.
wait_until() {
    local n=$(($1 * 5)) i
    shift
    for ((i = 0; i < n; i++)); do
        "$@" && return 0
        sleep 0.2
    done
    return 1
}
journalled() { grep -q "$uuid" "$VP_TMPDIR/vpd-$1/journal" 2>/dev/null; }
not_journalled() { ! journalled "$1"; }
not_listed() { ! listed "$1"; }
vpd_log_has() { grep -Eq -- "$2" "$VP_TMPDIR/vpd-$1/vpowerd.log"; }
arrivals() { grep -c "domain $D arrived by migration" "$VP_TMPDIR/vpd-$1/vpowerd.log" || true; }

# handover FROM TO FROM_URI TO_URI TAG: migrate with both vpowerds running.
handover() {
    local from=$1 to=$2 tag=$5 n0 n1
    wait_until 20 journalled "$from" ||
        vp_fail "$tag: vpowerd at $from never journalled $D's originals"
    n0=$(arrivals "$to")
    migrate "$3" "$4" "$tag"
    wait_until 10 not_journalled "$from" ||
        vp_fail "$tag: vpowerd at $from kept $D's journal entries after it left"
    wait_until 10 not_listed "$from" ||
        vp_fail "$tag: vpowerd at $from still lists $D after it left"
    # By name, or by uuid when a listing dropped it before the event.
    vpd_log_has "$from" "domain ($D|$uuid) migrated away: originals forgotten" ||
        vp_fail "$tag: vpowerd at $from did not log the departure"
    vpd_log_has "$from" "domain $D: migration runs: pins frozen" ||
        vp_fail "$tag: vpowerd at $from never froze $D's pins during the job"
    wait_until 10 listed "$to" ||
        vp_fail "$tag: vpowerd at $to does not list the arrived $D"
    vpd_log_has "$to" "domain $D arrived by migration: policy performance" ||
        vp_fail "$tag: vpowerd at $to did not take the policy from the metadata"
    wait_until 20 journalled "$to" ||
        vp_fail "$tag: vpowerd at $to never journalled the arrived $D"
    # Taken as arrived once: the job's end and the resume event that
    # follows it are one arrival.
    sleep 2
    n1=$(arrivals "$to")
    [ "$n1" = $((n0 + 1)) ] ||
        vp_fail "$tag: vpowerd at $to took $D as arrived $((n1 - n0)) times"
    vp_log "$tag with vpowerd: $from froze the pins during the job, forgot" \
        "$D at departure; $to read policy performance and manages it"
}

start_vpd src qemu:///system
start_vpd dst "$DST_URI"
handover src dst qemu:///system "$DST_URI" vpd-out
handover dst src "$DST_URI" qemu:///system vpd-back
for e in src dst; do
    eval "VPD_PID=\$VPD_PID_$e"
    vpd_stop
    [ "$VPD_RC" = 0 ] || vp_fail "vpowerd at $e exited $VPD_RC after SIGTERM"
    [ ! -e "$VP_TMPDIR/vpd-$e/journal" ] ||
        vp_fail "vpowerd at $e left its journal after a clean exit"
done
VPD_PIDS=()
[ "$(vp_virsh domstate "$D")" = running ] ||
    vp_fail "$D is '$(vp_virsh domstate "$D")' after both vpowerds stopped"
vp_log "both vpowerds exited 0, journals gone, $D still running"
vp_log "PASS"
