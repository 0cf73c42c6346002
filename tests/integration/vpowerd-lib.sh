# shellcheck shell=bash
# vpowerd-lib.sh -- helpers shared by the vpowerd tests (01x-*.sh).
#
# Sourced after setting VPD_TMP (a private temp dir).  Provides a sysfs
# fixture maker (tests/fixtures/mksysfs.sh where present), the dummy
# world most of these tests start from, vpowerd start/stop with cleanup,
# and readers of the fixture, the dummy pins and vpowerd's log.

VPD_SRCDIR=${VPOWER_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
VPD_BUILDDIR=${VPOWER_BUILDDIR:-$PWD}
VPD_BIN=$VPD_BUILDDIR/manager/vpowerd
VPD_PID=

# vpd_fixture DIR NCPUS FREQS_KHZ...: a cpufreq+cpuidle sysfs tree under DIR
# (all CPUs online, governor schedutil, range = full, idle states POLL,
# C1, C6 enabled), like /sys/devices/system/cpu.
vpd_fixture() {
    local root=$1 n=$2 c s
    shift 2
    local freqs="$*" lo hi
    lo=$1
    hi=${!#}
    mkdir -p "$root"
    echo "0-$((n - 1))" > "$root/possible"
    echo "0-$((n - 1))" > "$root/present"
    echo "0-$((n - 1))" > "$root/online"
    for ((c = 0; c < n; c++)); do
        local d=$root/cpu$c
        mkdir -p "$d/cpufreq" "$d/topology"
        [ "$c" = 0 ] || echo 1 > "$d/online"
        echo "$c" > "$d/topology/core_id"
        echo 0 > "$d/topology/physical_package_id"
        echo "$c" > "$d/topology/thread_siblings_list"
        echo "$c" > "$d/cpufreq/related_cpus"
        echo "$c" > "$d/cpufreq/affected_cpus"
        echo "$lo" > "$d/cpufreq/cpuinfo_min_freq"
        echo "$hi" > "$d/cpufreq/cpuinfo_max_freq"
        echo "$lo" > "$d/cpufreq/scaling_min_freq"
        echo "$hi" > "$d/cpufreq/scaling_max_freq"
        echo "$hi" > "$d/cpufreq/scaling_cur_freq"
        echo "$freqs " > "$d/cpufreq/scaling_available_frequencies"
        echo schedutil > "$d/cpufreq/scaling_governor"
        echo "performance schedutil powersave" > "$d/cpufreq/scaling_available_governors"
        s=0
        for st in POLL:0:0 C1:2:2 C6:133:600; do
            local sd=$d/cpuidle/state$s
            mkdir -p "$sd"
            echo "${st%%:*}" > "$sd/name"
            st=${st#*:}
            echo "${st%%:*}" > "$sd/latency"
            echo "${st#*:}" > "$sd/residency"
            echo 0 > "$sd/disable"
            echo 1000 > "$sd/time"
            echo 10 > "$sd/usage"
            s=$((s + 1))
        done
    done
}

# vpd_test_begin: the start shared by the dummy-driver tests (012-014),
# called right after sourcing this file with T and VPD_TMP set.  Defines
# fail and log, exits 99 if vpowerd is not built, and sets an EXIT trap
# that kills the vpowerd the test started, calls vpd_test_hook if the
# test defines one (its own processes), shows on failure the tail of
# vpowerd.log (pin lines left out: they drown the decisions) and every
# file in the array VPD_FAIL_LOGS, and removes VPD_TMP.
vpd_test_begin() {
    fail() { echo "[$T] FAIL: $*" >&2; exit 1; }
    log() { echo "[$T] $*" >&2; }
    trap vpd_test_end EXIT
    [ -x "$VPD_BIN" ] || { echo "[$T] ERROR: $VPD_BIN not built" >&2; exit 99; }
}

vpd_test_end() {
    local rc=$? f
    set +e
    [ -z "$VPD_PID" ] || kill -KILL "$VPD_PID" 2>/dev/null
    ! declare -F vpd_test_hook >/dev/null || vpd_test_hook
    if [ "$rc" != 0 ] && [ -f "$VPD_TMP/vpowerd.log" ]; then
        echo "----- vpowerd.log -----" >&2
        grep -v 'dummy-hv: pin' "$VPD_TMP/vpowerd.log" | tail -n 30 >&2
        for f in ${VPD_FAIL_LOGS[@]+"${VPD_FAIL_LOGS[@]}"}; do
            echo "----- ${f##*/} -----" >&2; cat "$f" >&2
        done
    fi
    if [ "${VP_KEEP_TMP:-0}" = 1 ]; then
        echo "[$T] kept $VPD_TMP (VP_KEEP_TMP=1)" >&2
    else
        rm -rf "$VPD_TMP"
    fi
    exit "$rc"
}

# vpd_snapshot ROOT: every writable fixture value, "path=value" sorted
# (compare before/after to prove the tree is back as found).
vpd_snapshot() {
    (cd "$1" && find . -type f \( -name 'scaling_m*_freq' -o -name disable \
        -o -name online -o -name scaling_governor \) -print0 |
        sort -z | xargs -0 grep -H '' )
}

# vpd_base_conf [CONF-LINE]...: writes $VPD_TMP/vpowerd.conf, the config
# these tests start from: deciding every 200 to 500 ms with a 400 ms
# packing dwell, its journal and control socket in $VPD_TMP; then each
# CONF-LINE.
vpd_base_conf() {
    local line
    cat > "$VPD_TMP/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 500
pack_dwell_ms 400
journal $VPD_TMP/journal
control_socket $VPD_TMP/vpowerd.sock
EOD
    for line in "$@"; do
        printf '%s\n' "$line" >> "$VPD_TMP/vpowerd.conf"
    done
}

# vpd_dummy_world NCPUS: the dummy world the tests start from.  A fixture
# $VPD_TMP/sys of NCPUS CPUs (1.0, 1.5, 2.0 GHz); three dummy domains
# (busy: a performance VM at 95 %, light: 10 %, idle: 1 %); the base
# config (vpd_base_conf); the dummy driver's pin file.  Sets fx (the
# fixture root) and args (config, drivers, domains, sysfs root) for
# vpd_start.
vpd_dummy_world() {
    fx=$VPD_TMP/sys
    vpd_fixture "$fx" "$1" 1000000 1500000 2000000
    cat > "$VPD_TMP/doms" <<EOD
busy  1 95 kind=performance
light 1 10
idle  1 1
EOD
    vpd_base_conf
    export VPOWER_DUMMY_STATE=$VPD_TMP/pins
    args=(--config "$VPD_TMP/vpowerd.conf" --driver=dummy
          --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx")
}

# vpd_pin DOMAIN WHAT: the CPU list the dummy driver last pinned WHAT
# (vcpuN or emulator) of DOMAIN to; empty when never pinned.
vpd_pin() {
    awk -v d="$1" -v w="$2" '$1 == d && $2 == w { print $3 }' \
        "$VPOWER_DUMMY_STATE" 2>/dev/null
}

# vpd_start LOG ARGS...: start vpowerd in the foreground (background job),
# logging to LOG.  Sets VPD_PID.
vpd_start() {
    local log=$1
    shift
    local i
    # A shared checkout: another engineer's make may be relinking it.
    for ((i = 0; i < 100; i++)); do
        [ -x "$VPD_BIN" ] && break
        sleep 0.1
    done
    [ -x "$VPD_BIN" ] || { echo "vpowerd not built: $VPD_BIN" >&2; exit 99; }
    # Emptied here, not by the job's own redirection: that runs in the
    # child whenever it is scheduled, so a vpd_wait_log right after this
    # could still match the previous run's lines in a reused log.
    : > "$log"
    # 9>&-: a vpowerd that outlives its test must not hold the guest lock.
    "$VPD_BIN" --foreground "$@" >> "$log" 2>&1 9>&- &
    VPD_PID=$!
}

# vpd_stop: SIGTERM and wait (not in a $(...) subshell: only this shell
# can wait for its job).  Sets VPD_RC to vpowerd's exit status (124 if it
# had to be killed after 10 s).
vpd_stop() {
    local i
    VPD_RC=0
    [ -n "$VPD_PID" ] || return 0
    kill -TERM "$VPD_PID" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        kill -0 "$VPD_PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$VPD_PID" 2>/dev/null; then
        kill -KILL "$VPD_PID" 2>/dev/null || true
        wait "$VPD_PID" 2>/dev/null || true
        VPD_RC=124
    else
        wait "$VPD_PID" 2>/dev/null || VPD_RC=$?
    fi
    VPD_PID=
}

# vpd_wait_log LOG REGEX SECONDS: wait until LOG matches REGEX.
vpd_wait_log() {
    local i
    for ((i = 0; i < $3 * 5; i++)); do
        grep -Eq "$2" "$1" 2>/dev/null && return 0
        [ -z "$VPD_PID" ] || kill -0 "$VPD_PID" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

# vpd_cpu_seconds PID: utime+stime of PID in seconds (2 decimals).
vpd_cpu_seconds() {
    awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$1/stat"
}

# vpd_wait_quiet SECONDS: wait until no running domain other than this
# test's (prefix $VP_PREFIX) shares the host.  Returns 1 if other
# domains are still running after SECONDS.  Measurements of idle time and
# ready time, and the policy's own choice (it spreads when vCPUs wait for
# CPU), depend on that.
vpd_wait_quiet() {
    local i n
    for ((i = 0; i <= $1; i += 5)); do
        n=$(virsh -q -c "${VP_URI:-qemu:///system}" list --name 2>/dev/null |
            grep -v "^${VP_PREFIX:-//}" | grep -c . || true)
        [ "$n" = 0 ] && return 0
        [ "$i" = 0 ] && echo "[vpowerd-lib] waiting up to $1 s for $n other running domains to stop" >&2
        sleep 5
    done
    return 1
}

# vpd_lock: one vpowerd guest test at a time on this machine (whatever the
# build dir): they measure and pin the same CPUs.  Other guest tests may
# take the same lock (/run/lock/vpower-guest-tests.lock) to stay out.
vpd_lock() {
    [ "${VP_GUEST_LOCKED:-0}" = 1 ] && return 0   # lib.sh's vp_init took it.
    exec 9> "${VPD_LOCK:-/run/lock/vpower-guest-tests.lock}"
    flock 9
    VP_GUEST_LOCKED=1
}

# vpd_verify_replay REC OUT: replays vpowerd's recording REC in
# vpower-sim with --verify-plans (output in OUT) and succeeds only if it
# compared at least one plan and every plan came out identical.  Prints
# the "plans: N identical, 0 different" line; on failure prints nothing
# and leaves the whole output in OUT for the caller to show.
vpd_verify_replay() {
    local rec=$1 out=$2 sim=$VPD_BUILDDIR/sim/vpower-sim
    if [ ! -x "$sim" ]; then
        echo "$sim not built" > "$out"
        return 1
    fi
    "$sim" --trace "$rec" --trace-format record --verify-plans \
        > "$out" 2>&1 || return 1
    grep -E 'plans: [1-9][0-9]* identical, 0 different' "$out"
}

# vpd_vcpu_pin NAME VCPU: libvirt's live pin of vCPU VCPU of guest NAME.
vpd_vcpu_pin() {
    vp_virsh vcpupin "$(vp_dom "$1")" --vcpu "$2" --live | awk '{ print $NF }'
}

# vpd_field LINE NAME: the number after " NAME=" in LINE.
vpd_field() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }

# vpd_wait_marker NAME REGEX SECONDS: waits for a line matching REGEX on
# guest NAME's console and prints the time it was seen; fails the test
# if vpowerd ($VPD_PID, logging to $VPD_TMP/vpowerd.log) dies meanwhile
# or the line does not come within SECONDS.
vpd_wait_marker() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        if grep -aEq "$2" "$(vp_console_log "$1")"; then
            date +%s.%N
            return 0
        fi
        kill -0 "$VPD_PID" 2>/dev/null || { tail -n 20 "$VPD_TMP/vpowerd.log" >&2; vp_fail "vpowerd died"; }
        sleep 0.1
    done
    vp_guest_dump_console "$1"
    tail -n 20 "$VPD_TMP/vpowerd.log" >&2
    vp_fail "no '$2' on $1's console within $3 s"
}

# vpd_mem_dir: sets VPD_MEM to a new directory on tmpfs (/dev/shm) for
# the sysfs fixture and the journal of a hint-timing test, or to $VPD_TMP
# where there is none.  Real sysfs is in memory, and the shipped unit's
# journal is in /run/vpower, which systemd mounts as tmpfs; on a disk
# filesystem each fixture or journal write costs about 0.2 ms more here
# (ext4 allocates blocks when a file is truncated and rewritten, or
# renamed over another), which a host running vpowerd does not pay.
# vpd_mem_cleanup removes it (copied into $VPD_TMP/mem with
# VP_KEEP_TMP=1).
vpd_mem_dir() {
    if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
        VPD_MEM=$(mktemp -d "/dev/shm/vpower-$VP_TEST.XXXXXX")
    else
        VPD_MEM=$VPD_TMP
    fi
}
vpd_mem_cleanup() {
    if [ -n "${VPD_MEM:-}" ] && [ "$VPD_MEM" != "$VPD_TMP" ]; then
        [ "${VP_KEEP_TMP:-0}" = 1 ] && cp -a "$VPD_MEM" "$VPD_TMP/mem"
        rm -rf "$VPD_MEM"
    fi
    VPD_MEM=
}

# vpd_guest_trap: the EXIT trap of a vpowerd test with guests.  It stops
# the test's helpers ($POLL_PID, $ECHO_PID, $GO_PID where set), then
# vpowerd (SIGTERM, SIGKILL 2 s later, so the restore runs before
# lib.sh's vp_cleanup destroys the guests), removes $VPD_MEM, and runs
# vp_cleanup with the test's exit status.
vpd_guest_stop() {
    local p
    for p in "${POLL_PID:-}" "${ECHO_PID:-}" "${GO_PID:-}"; do
        [ -n "$p" ] || continue
        kill -TERM "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    if [ -n "$VPD_PID" ]; then
        kill -TERM "$VPD_PID" 2>/dev/null || true
        sleep 2
        kill -KILL "$VPD_PID" 2>/dev/null || true
    fi
    vpd_mem_cleanup
}
vpd_guest_trap() {
    trap 'rc=$?; set +e; vpd_guest_stop; (exit $rc); vp_cleanup' EXIT
}

# vpd_pin_floor NAME: the floor under a hint's host side, before vpowerd
# runs: tests/integration/pin-floor moves vCPU 0 of guest NAME between
# CPU 0 and CPU 1 400 times through libvirt alone, 400 times through
# vpowerd's libvirt driver, and puts it back.  Prints pin-floor's "n=
# p50_us= p99_us= max_us= libvirt_p50_us= ..." line; fails the test if it
# fails or leaves the pin moved.
vpd_pin_floor() {
    local pin0 floor
    pin0=$(vpd_vcpu_pin "$1" 0)
    floor=$("$VPD_BUILDDIR/tests/integration/pin-floor" "$VP_URI" \
            "$(vp_virsh domuuid "$(vp_dom "$1")")" 400) ||
        vp_fail "pin-floor failed: $floor"
    [ "$(vpd_vcpu_pin "$1" 0)" = "$pin0" ] ||
        vp_fail "pin-floor left $1's vCPU 0 on $(vpd_vcpu_pin "$1" 0), found on $pin0"
    echo "$floor"
}
