#!/bin/bash
# 016-vpowerd-startup-checks.sh -- vpowerd refuses bad files and settings
# before it changes anything (dummy hypervisor, sysfs fixture, no libvirt).
#
# A run is SIGKILLed so that a journal is left and the fixture is
# changed.  Then every bad start below must exit 1 at once with a message
# that says what is wrong (FILE:LINE for a directive), leave that journal
# unreplayed and the fixture as the crash left it: a configuration that
# is a FIFO (used to block forever), a directory or /dev/zero (used to
# say "FILE:0: Invalid argument"), writable by everyone; an admin_group
# that does not exist and an over-long control_socket or --socket
# (refused with FILE:LINE, before the journal replay); managed_cpus
# naming CPUs the host lacks; an energy model that is a FIFO; a journal
# planted in a world-writable directory or (as root) owned by another
# user (refused, never replayed as root).  Finally a good
# start replays the journal and SIGTERM leaves the fixture byte for byte
# as it was, trailing newlines included.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin

fx=$VPD_TMP/sys
vpd_fixture "$fx" 2 1000000 1500000 2000000
# Exact bytes of every file (vpd_snapshot shows values, not newlines).
bytes() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum); }
bytes "$fx" > "$VPD_TMP/before"
cat > "$VPD_TMP/doms" <<EOD
busy  1 95 kind=performance
light 1 10
idle  1 1
EOD
conf=$VPD_TMP/vpowerd.conf
base="period_ms 200
max_period_ms 500
pack_dwell_ms 0
journal $VPD_TMP/journal
control_socket $VPD_TMP/vpowerd.sock"
printf '%s\n' "$base" > "$conf"
export VPOWER_DUMMY_STATE=$VPD_TMP/pins
args=(--driver=dummy --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx")

# 1. A crash leaves a journal and a changed fixture.
vpd_start "$VPD_TMP/vpowerd.log" --config "$conf" "${args[@]}"
for ((i = 0; i < 100; i++)); do
    grep -q '^sysfs ' "$VPD_TMP/journal" 2>/dev/null && break
    kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
    sleep 0.1
done
grep -q '^sysfs ' "$VPD_TMP/journal" || fail "nothing journalled in 10 s"
kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null || true; VPD_PID=
cp "$VPD_TMP/journal" "$VPD_TMP/journal.crash"
bytes "$fx" > "$VPD_TMP/crashed"
cmp -s "$VPD_TMP/before" "$VPD_TMP/crashed" &&
    fail "fixture unchanged at the crash: the test proves nothing"
log "crash left $(grep -c . "$VPD_TMP/journal") journal lines"

# refused NAME WANT ARGS...: vpowerd must exit 1 within 10 s, say WANT
# (a fixed string), not replay the journal and not touch the fixture.
refused() {
    local name=$1 want=$2 rc out=$VPD_TMP/$1.log
    shift 2
    set +e
    # -k: a vpowerd blocked after it set up its signalfd ignores TERM.
    timeout -k 2 10 "$VPD_BIN" --foreground "$@" > "$out" 2>&1 9>&-
    rc=$?
    set -e
    [ "$rc" != 124 ] && [ "$rc" != 137 ] ||
        fail "$name: vpowerd still running after 10 s (blocked or started)"
    [ "$rc" = 1 ] || fail "$name: exit $rc: $(cat "$out")"
    grep -qF -- "$want" "$out" || fail "$name: no \"$want\" in: $(cat "$out")"
    cmp -s "$VPD_TMP/journal" "$VPD_TMP/journal.crash" ||
        fail "$name: the leftover journal was replayed or changed"
    bytes "$fx" | cmp -s "$VPD_TMP/crashed" - ||
        fail "$name: the fixture changed"
    ! grep -q "managing cpus" "$out" || fail "$name: refused only after starting"
    log "$name: exit 1, $(head -n1 "$out")"
}

# 2. The configuration file itself.
mkfifo "$VPD_TMP/fifo.conf"
refused conf-fifo "$VPD_TMP/fifo.conf: is not a regular file" \
    --config "$VPD_TMP/fifo.conf" "${args[@]}"
mkdir "$VPD_TMP/dir.conf"
refused conf-dir "$VPD_TMP/dir.conf: is a directory" \
    --config "$VPD_TMP/dir.conf" "${args[@]}"
refused conf-zero "/dev/zero: is not a regular file" \
    --config /dev/zero "${args[@]}"
printf '%s\n' "$base" > "$VPD_TMP/open.conf"
chmod 666 "$VPD_TMP/open.conf"
refused conf-mode "is writable by every user" \
    --config "$VPD_TMP/open.conf" "${args[@]}"

# 3. Directives checked against the system, with their FILE:LINE.
printf '%s\nadmin_group no-such-group-%s\n' "$base" "$$" > "$VPD_TMP/grp.conf"
refused admin-group "$VPD_TMP/grp.conf:6: admin_group: 'no-such-group-$$' is not a group" \
    --config "$VPD_TMP/grp.conf" "${args[@]}"
long=$VPD_TMP/$(printf 's%.0s' $(seq 110)).sock
printf 'control_socket %s\n%s\n' "$long" "period_ms 200" > "$VPD_TMP/sock.conf"
refused socket-conf "$VPD_TMP/sock.conf:1: control_socket: path longer than 107 bytes" \
    --config "$VPD_TMP/sock.conf" "${args[@]}"
refused socket-opt "--socket too long (max 107 bytes)" \
    --config "$conf" "${args[@]}" --socket "$long"
printf '%s\n\nmanaged_cpus 0-5\n' "$base" > "$VPD_TMP/cpus.conf"
refused managed-cpus "$VPD_TMP/cpus.conf:7: managed_cpus: CPUs 2-5 do not exist on this host, which has CPUs 0-1" \
    --config "$VPD_TMP/cpus.conf" "${args[@]}"
printf '%s\nmanaged_cpus 1,3\n' "$base" > "$VPD_TMP/cpus.conf"
refused managed-cpu "$VPD_TMP/cpus.conf:6: managed_cpus: CPU 3 does not exist" \
    --config "$VPD_TMP/cpus.conf" "${args[@]}"
mkfifo "$VPD_TMP/fifo.model"
refused model-fifo "energy model $VPD_TMP/fifo.model: is not a regular file" \
    --config "$conf" "${args[@]}" --model "$VPD_TMP/fifo.model"

# 4. A journal another user could have planted: never replayed.
mkdir -m 777 "$VPD_TMP/open"
chmod 777 "$VPD_TMP/open"
printf 'vpower-journal 1\nsysfs cpu1/cpufreq/scaling_max_freq 1234567\nend 1\n' \
    > "$VPD_TMP/open/journal"
chmod 600 "$VPD_TMP/open/journal"
refused journal-dir "journal directory $VPD_TMP/open is writable by every user" \
    --config "$conf" "${args[@]}" --journal "$VPD_TMP/open/journal"
if [ "$(id -u)" = 0 ]; then
    mkdir "$VPD_TMP/own"
    cp "$VPD_TMP/open/journal" "$VPD_TMP/own/journal"
    chown 65534:65534 "$VPD_TMP/own/journal"
    refused journal-owner "journal $VPD_TMP/own/journal is owned by uid 65534" \
        --config "$conf" "${args[@]}" --journal "$VPD_TMP/own/journal"
else
    log "journal-owner: skipped (chown to another uid needs root)"
fi

# 5. A good start replays the crash's journal; SIGTERM restores the
# fixture byte for byte.
vpd_start "$VPD_TMP/vpowerd2.log" --config "$conf" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd2.log" "crashed run: restoring" 10 ||
    fail "leftover journal not replayed"
vpd_wait_log "$VPD_TMP/vpowerd2.log" "managing cpus" 10 || fail "did not start"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
bytes "$fx" | diff -u "$VPD_TMP/before" - >&2 ||
    fail "fixture not byte-identical after replay + SIGTERM"
log "replayed and restored: fixture byte-identical"
exit 0
