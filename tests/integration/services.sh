#!/bin/bash
# services.sh start|stop|status -- virtlogd and libvirtd for integration tests.
#
# The test machines have no systemd as PID 1, so the daemons are started
# directly (`virtlogd -d`, `libvirtd -d`).  `start` starts only what is not
# already running and records the pids it started in a state file;
# `stop` stops only those.  Daemons that were already running are left
# alone.
#
# State lives in $VPOWER_BUILDDIR/tests/integration/services/ (default:
# ./tests/integration/services/): services.state (pids we started) and
# the daemons' warning logs (libvirtd.log, virtlogd.log).
#
# No libvirt configuration is changed: the test domains run QEMU as root
# through a per-domain <seclabel model='dac'> instead (see lib.sh).
#
# One device node may be: a /dev/kvm that libvirt's QEMU user (Debian:
# libvirt-qemu, group kvm) cannot open.  Without udev the node stays
# root-only, and libvirt 9 then throws away its cached QEMU capabilities
# on every lookup ("KVM was enabled when probing ..., but it is not
# available now") and probes QEMU again, several times per domain start:
# about 46 s per `virsh create` instead of under one.  `start` gives the
# node group kvm read-write, as udev's rule would, and `stop` puts back
# the group and mode it found.  The test domains still run under TCG
# (<domain type='qemu'>).
#
# Where systemd is PID 1 each daemon runs in its own unit's cgroup
# (system.slice/libvirtd.service, ...), which is where vpowerd's
# housekeeping finds host work.  Without systemd the daemons are started
# in cgroups of the same names (cgroup v1: in the cpuset and cpuacct
# hierarchies, each new cpuset given its parent's CPUs and memory nodes;
# v2: in the unified tree), so the machine looks like a systemd host to
# vpowerd.  `stop` removes the cgroups it made once they are empty.
#
# Exit status: 0 ok, 1 failure (message on stderr), 2 usage.
set -eu

prog=services.sh
die() { echo "$prog: error: $*" >&2; exit 1; }
log() { echo "$prog: $*" >&2; }

uri=qemu:///system
builddir=${VPOWER_BUILDDIR:-$PWD}
statedir=$builddir/tests/integration/services
state=$statedir/services.state
timeout=${VP_SERVICES_TIMEOUT:-30}

libvirtd_bin=/usr/sbin/libvirtd
virtlogd_bin=/usr/sbin/virtlogd
virtlogd_sock=/run/libvirt/virtlogd-sock

# pid_is PID BINARY: true if PID is alive and runs BINARY.
pid_is() {
    [ -n "$1" ] && [ -d "/proc/$1" ] &&
        [ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$2" ]
}

# pidfile_pid FILE BINARY: the pid in FILE if it is alive and runs BINARY.
pidfile_pid() {
    local p
    p=$(cat "$1" 2>/dev/null || true)
    if pid_is "$p" "$2"; then echo "$p"; fi
}

virtlogd_running() {
    [ -n "$(pidfile_pid /run/virtlogd.pid "$virtlogd_bin")" ] && [ -S "$virtlogd_sock" ]
}

libvirtd_running() {
    virsh -q -c "$uri" version >/dev/null 2>&1
}

# wait_for FUNC WHAT: poll FUNC for up to $timeout seconds.
wait_for() {
    local i=0
    while ! "$1"; do
        i=$((i + 1))
        [ "$i" -le $((timeout * 5)) ] || return 1
        sleep 0.2
    done
}

record() {  # record NAME PID
    echo "$1 $2" >> "$state"
}

# unit_cgroup NAME: makes system.slice/NAME.service where the machine has
# cgroups (recording each directory made) and prints the files a process
# writes its pid to, one per line.
unit_cgroup() {
    local rel=system.slice/$1.service h d parent
    if [ -f /sys/fs/cgroup/cpuset/cpuset.cpus ]; then
        for h in cpuset cpuacct; do
            [ -d "/sys/fs/cgroup/$h" ] || continue
            parent=/sys/fs/cgroup/$h
            for d in system.slice "$rel"; do
                if [ ! -d "/sys/fs/cgroup/$h/$d" ]; then
                    mkdir "/sys/fs/cgroup/$h/$d" || return 0
                    echo "cgroup /sys/fs/cgroup/$h/$d" >> "$state"
                    if [ "$h" = cpuset ]; then
                        cat "$parent/cpuset.cpus" > "/sys/fs/cgroup/$h/$d/cpuset.cpus"
                        cat "$parent/cpuset.mems" > "/sys/fs/cgroup/$h/$d/cpuset.mems"
                    fi
                fi
                parent=/sys/fs/cgroup/$h/$d
            done
            echo "/sys/fs/cgroup/$h/$rel/tasks"
        done
    elif [ -f /sys/fs/cgroup/cgroup.procs ] && [ ! -d /run/systemd/system ]; then
        for d in system.slice "$rel"; do
            if [ ! -d "/sys/fs/cgroup/$d" ]; then
                mkdir "/sys/fs/cgroup/$d" || return 0
                echo "cgroup /sys/fs/cgroup/$d" >> "$state"
            fi
        done
        echo "/sys/fs/cgroup/$rel/cgroup.procs"
    fi
}

# in_unit NAME CMD...: runs CMD in NAME's cgroup (its children, the
# daemon after -d, stay there).
in_unit() {
    local name=$1 f
    shift
    (
        for f in $(unit_cgroup "$name"); do
            echo "$BASHPID" > "$f" || log "could not enter $f"
        done
        exec "$@"
    )
}

# kvm_access: /dev/kvm read-write for group kvm (see the top), recorded
# as "kvm MODE GROUP" for stop.
kvm_access() {
    local mode grp
    [ -c /dev/kvm ] && getent group kvm >/dev/null || return 0
    read -r mode grp < <(stat -c '%a %G' /dev/kvm)
    if [ "$grp" = kvm ] && [ $((8#$mode & 8#060)) = $((8#060)) ]; then
        return 0
    fi
    if chgrp kvm /dev/kvm && chmod g+rw /dev/kvm; then
        record kvm "$mode $grp"
        log "/dev/kvm was mode $mode group $grp: gave group kvm read-write, as udev would (put back by stop)"
    else
        log "could not give group kvm access to /dev/kvm: every domain start will re-probe QEMU"
    fi
}

do_start() {
    [ "$(id -u)" = 0 ] || die "must run as root to start libvirtd"
    [ -x "$libvirtd_bin" ] || die "$libvirtd_bin missing (apt-get install libvirt-daemon-system)"
    [ -x "$virtlogd_bin" ] || die "$virtlogd_bin missing (apt-get install libvirt-daemon-system)"
    command -v virsh >/dev/null 2>&1 || die "virsh missing (apt-get install libvirt-clients)"
    local started=0 p

    kvm_access
    if virtlogd_running; then
        log "virtlogd already running"
    else
        log "starting virtlogd"
        LIBVIRT_LOG_OUTPUTS="3:file:$statedir/virtlogd.log" in_unit virtlogd "$virtlogd_bin" -d 9>&- ||
            die "virtlogd -d failed (see $statedir/virtlogd.log)"
        wait_for virtlogd_running || die "virtlogd did not come up within ${timeout}s"
        record virtlogd "$(pidfile_pid /run/virtlogd.pid "$virtlogd_bin")"
        started=1
    fi

    if libvirtd_running; then
        log "libvirtd already running"
    else
        if [ -n "$(pidfile_pid /run/libvirtd.pid "$libvirtd_bin")" ]; then
            log "libvirtd runs but does not answer yet; waiting"
        else
            log "starting libvirtd"
            LIBVIRT_LOG_OUTPUTS="3:file:$statedir/libvirtd.log" in_unit libvirtd "$libvirtd_bin" -d 9>&- ||
                die "libvirtd -d failed (see $statedir/libvirtd.log)"
        fi
        wait_for libvirtd_running ||
            die "libvirtd does not answer 'virsh -c $uri version' after ${timeout}s (see $statedir/libvirtd.log)"
        p=$(pidfile_pid /run/libvirtd.pid "$libvirtd_bin")
        [ -n "$p" ] && record libvirtd "$p"
        started=1
    fi
    if [ "$started" = 1 ]; then
        virsh -q -c "$uri" version | sed "s/^/$prog: /" >&2
    fi
}

do_stop() {
    [ -f "$state" ] || { log "nothing started by $prog"; return 0; }
    local name pid bin i mode grp
    # Stop in reverse order of starting: libvirtd before virtlogd.
    tac "$state" | while read -r name pid; do
        case "$name" in
            libvirtd) bin=$libvirtd_bin ;;
            virtlogd) bin=$virtlogd_bin ;;
            cgroup) continue ;;
            *) continue ;;
        esac
        if ! pid_is "$pid" "$bin"; then
            log "$name (pid $pid) already gone"
            continue
        fi
        log "stopping $name (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        i=0
        while pid_is "$pid" "$bin" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        if pid_is "$pid" "$bin"; then
            log "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    # The cgroups made for them, deepest first, once empty.
    tac "$state" | while read -r name pid; do
        [ "$name" = cgroup ] || continue
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            rmdir "$pid" 2>/dev/null && break
            sleep 0.2
        done
        [ ! -d "$pid" ] || log "cgroup $pid still in use: left"
    done
    # /dev/kvm's group and mode as start found them.
    while read -r name mode grp; do
        [ "$name" = kvm ] || continue
        if chgrp "$grp" /dev/kvm && chmod "$mode" /dev/kvm; then
            log "/dev/kvm back to mode $mode group $grp"
        else
            log "could not put /dev/kvm back to mode $mode group $grp"
        fi
    done < "$state"
    rm -f "$state"
}

do_status() {
    if virtlogd_running; then echo "virtlogd: running"; else echo "virtlogd: stopped"; fi
    if libvirtd_running; then echo "libvirtd: running"; else echo "libvirtd: stopped"; fi
    [ -f "$state" ] && sed 's/^/started by us: /' "$state"
    return 0
}

[ $# -eq 1 ] || { echo "usage: $prog start|stop|status" >&2; exit 2; }
mkdir -p "$statedir" || die "cannot create $statedir"
# Serialise concurrent start/stop (tests may run in parallel).
exec 9>"$statedir/lock"
flock -w 120 9 || die "cannot lock $statedir/lock"
case "$1" in
    start) do_start ;;
    stop) do_stop ;;
    status) do_status ;;
    *) echo "usage: $prog start|stop|status" >&2; exit 2 ;;
esac
