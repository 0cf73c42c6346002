# shellcheck shell=bash
# lib.sh -- helpers for vpower's real-guest integration tests.
#
# Source it from a test script (bash, `set -eu`):
#
#   . "$(dirname "$0")/lib.sh"
#   vp_services_up
#   vp_build_guest
#   vp_guest_start busy busy 2
#   vp_guest_wait_ready busy 60
#
# Sourcing creates a private temp dir ($VP_TMPDIR), a unique domain-name
# prefix ($VP_PREFIX = vptest-PID-) and installs vp_cleanup as EXIT trap
# (plus INT/TERM/HUP), so every domain the test created is destroyed and
# the temp dir removed however the test ends.
#
# Environment:
#   VPOWER_SRCDIR    source tree (default: derived from this file)
#   VPOWER_BUILDDIR  build tree (default: current directory)
#   VP_GUEST_DIR     guest image cache
#                    (default: $VPOWER_BUILDDIR/tests/integration/guest)
#   VP_AGENT_GUEST=1 set by a test before sourcing: its guests carry the
#                    agent tools (vp_agent_guest_files), in their own
#                    image cache, VP_AGENT_GUEST_DIR (default:
#                    $VPOWER_BUILDDIR/tests/integration/guest-agent),
#                    which replaces VP_GUEST_DIR
#   VP_KEEP_TMP=1    keep $VP_TMPDIR (console logs) after the test
#   VP_BOOT_TIMEOUT  seconds to wait for a guest to boot (default 180)
#   EXTRA_BIN        extra static binaries for the guest's /bin
#                    (see build-guest.sh)
#
# Exit codes (style guide 9.9): 0 pass, 1 fail, 77 skip, 99 hard error.
# Functions that cannot do their job print a message naming themselves and
# exit 99 via vp_error; checks in tests call vp_fail (exit 1).

VP_LIBDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${VPOWER_SRCDIR:=$(cd "$VP_LIBDIR/../.." && pwd)}"
: "${VPOWER_BUILDDIR:=$PWD}"
VPOWER_BUILDDIR=$(cd "$VPOWER_BUILDDIR" && pwd)
export VPOWER_SRCDIR VPOWER_BUILDDIR
if [ "${VP_AGENT_GUEST:-0}" = 1 ]; then
    VP_GUEST_DIR=${VP_AGENT_GUEST_DIR:-$VPOWER_BUILDDIR/tests/integration/guest-agent}
fi
: "${VP_GUEST_DIR:=$VPOWER_BUILDDIR/tests/integration/guest}"
VP_URI=qemu:///system
# Boot timeout for vp_guest_wait_ready (s).  A guest is ready in ~5-15 s
# on a quiet 2-core host; a host loaded by other work can take minutes.
: "${VP_BOOT_TIMEOUT:=180}"
VP_PREFIX=vptest-$$-
VP_TEST=$(basename "$0" .sh)
VP_TMPDIR=
VP_CREATED=()

# ---------------------------------------------------------------- messages

vp_log() { echo "[$VP_TEST] $*" >&2; }

# vp_fail MSG: a test check failed (exit 1).
vp_fail() { echo "[$VP_TEST] FAIL: $*" >&2; exit 1; }

# vp_skip MSG: a prerequisite cannot exist here (exit 77).
vp_skip() { echo "[$VP_TEST] SKIP: $*" >&2; exit 77; }

# vp_error MSG: the harness itself broke (exit 99).
vp_error() { echo "[$VP_TEST] ERROR: $*" >&2; exit 99; }

vp_virsh() { virsh -q -c "$VP_URI" "$@"; }

# ---------------------------------------------------------------- setup

# vp_require_prereqs: skip when the machine cannot host real guests.
vp_require_prereqs() {
    # Booting TCG guests takes minutes; `make distcheck-fast`, package
    # builds and .ci/sanitize set VPOWER_FAST_TESTS=1 to leave them out.
    [ -z "${VPOWER_FAST_TESTS:-}" ] ||
        vp_skip "VPOWER_FAST_TESTS=1 leaves out the tests that boot guests"
    [ "$(id -u)" = 0 ] || vp_skip "needs root (system libvirtd, pinning QEMU threads)"
    [ "$(uname -m)" = x86_64 ] || vp_skip "guest image is x86_64 only, host is $(uname -m)"
    command -v qemu-system-x86_64 >/dev/null 2>&1 ||
        vp_skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
    [ -x /usr/sbin/libvirtd ] ||
        vp_skip "libvirtd not installed (apt-get install libvirt-daemon-system)"
    command -v virsh >/dev/null 2>&1 ||
        vp_skip "virsh not installed (apt-get install libvirt-clients)"
    [ "$(nproc)" -ge 2 ] || vp_skip "needs at least 2 host CPUs, have $(nproc)"
}

# vp_lock: one guest test at a time on this machine, whatever the build
# directory: guests share the host's CPUs, and the tests measure idle and
# ready time and pin vCPUs.  CI runs `make check` serially; this is for
# developers running -j2.  The same lock (fd 9) as vpowerd-lib.sh's
# vpd_lock; taken once per test.
vp_lock() {
    local f=${VPD_LOCK:-/run/lock/vpower-guest-tests.lock}
    [ "${VP_GUEST_LOCKED:-0}" = 1 ] && return 0
    exec 9> "$f" || vp_error "vp_lock: cannot open $f"
    if ! flock -n 9; then
        echo "[$VP_TEST] waiting for another guest test (lock $f)" >&2
        flock -w "${VP_LOCK_WAIT:-3600}" 9 ||
            vp_error "vp_lock: another guest test held $f for ${VP_LOCK_WAIT:-3600} s"
    fi
    VP_GUEST_LOCKED=1
}

vp_init() {
    vp_require_prereqs
    vp_lock
    VP_TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$VP_TEST.XXXXXX") ||
        vp_error "vp_init: mktemp failed"
    trap vp_cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
}

# vp_services_up: make sure virtlogd and libvirtd run (they are left
# running; `services.sh stop` stops what services.sh started).
vp_services_up() {
    bash "$VP_LIBDIR/services.sh" start ||
        vp_error "vp_services_up: services.sh start failed"
}

# vp_build_guest: build (or reuse) the guest kernel + initramfs.
vp_build_guest() {
    local t0=$SECONDS
    bash "$VP_LIBDIR/build-guest.sh" "$VP_GUEST_DIR" ||
        vp_error "vp_build_guest: build-guest.sh $VP_GUEST_DIR failed"
    vp_log "guest image ready in $((SECONDS - t0)) s: $VP_GUEST_DIR"
}

# vp_agent_guest_files: before vp_build_guest, puts the guest-agent tools
# (the agent's test wrapper, vpower-agent, vpower-hint, gch-hostile, from
# the build tree) into $VP_GUEST_DIR/extra, and hard-links the packages the
# plain guest image already downloaded, so the agent image does not fetch
# them again (build-guest.sh's find does not follow a symlinked debs/).
vp_agent_guest_files() {
    local shared=$VPOWER_BUILDDIR/tests/integration/guest/debs deb f
    for f in agent/vpower-agent agent/vpower-hint agent/gch-hostile; do
        [ -x "$VPOWER_BUILDDIR/$f" ] ||
            vp_error "$VPOWER_BUILDDIR/$f not built (make check builds it)"
    done
    mkdir -p "$VP_GUEST_DIR/extra"
    if [ -d "$shared" ]; then
        [ -L "$VP_GUEST_DIR/debs" ] && rm -f "$VP_GUEST_DIR/debs"
        mkdir -p "$VP_GUEST_DIR/debs"
        for deb in "$shared"/*.deb; do
            [ -e "$deb" ] || continue
            [ -e "$VP_GUEST_DIR/debs/${deb##*/}" ] ||
                cp -l "$deb" "$VP_GUEST_DIR/debs/" 2>/dev/null ||
                cp "$deb" "$VP_GUEST_DIR/debs/"
        done
    fi
    cp "$VPOWER_SRCDIR/agent/guest-agent-test.sh" \
        "$VP_GUEST_DIR/extra/vpower-agent"
    cp "$VPOWER_BUILDDIR/agent/vpower-agent" "$VP_GUEST_DIR/extra/vpower-agent-bin"
    cp "$VPOWER_BUILDDIR/agent/vpower-hint" "$VP_GUEST_DIR/extra/vpower-hint"
    cp "$VPOWER_BUILDDIR/agent/gch-hostile" \
        "$VP_GUEST_DIR/extra/vpower-gch-hostile"
}

# ---------------------------------------------------------------- guests

# vp_dom NAME: the libvirt domain name of test guest NAME.
vp_dom() { echo "$VP_PREFIX$1"; }

vp_console_log() { echo "$VP_TMPDIR/$1.console.log"; }
vp_agent_sock() { echo "$VP_TMPDIR/$1.agent.sock"; }
# Host end of the second port (org.vpower.echo.0) a guest gets when
# VP_GUEST_ECHO_PORT is set: a host end that only acknowledges, to
# measure the channel alone.
vp_echo_sock() { echo "$VP_TMPDIR/$1.echo.sock"; }

# vp_xml_escape STRING
vp_xml_escape() {
    local s=$1
    s=${s//&/&amp;}; s=${s//</&lt;}; s=${s//>/&gt;}; s=${s//\'/&apos;}
    echo "$s"
}

# vp_guest_xml NAME LOAD VCPUS EXTRA_CMDLINE: print the domain XML.
#
# TCG (type='qemu'), direct kernel boot, no disk, no network, no USB,
# no balloon, serial console to a file, one virtio-serial channel (two
# with VP_GUEST_ECHO_PORT set).
# QEMU runs as root:root through a static DAC seclabel with relabel='no',
# so no qemu.conf change is needed and libvirt chowns none of our files
# (the default user, libvirt-qemu, may not be able to reach the build dir).
vp_guest_xml() {
    local name=$1 load=$2 vcpus=$3 extra=$4 cmdline
    # no_timer_check: under TCG on a loaded host the kernel's IO-APIC
    # timer check can miss ticks and panic ("IO-APIC + timer doesn't work").
    cmdline="console=ttyS0 quiet panic=-1 no_timer_check vpower.load=$load${extra:+ $extra}"
    cat <<EOF
<domain type='qemu'>
  <name>$(vp_dom "$name")</name>
  <memory unit='MiB'>${VP_GUEST_MEM_MIB:-96}</memory>
  <vcpu placement='static'>$vcpus</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$(vp_xml_escape "$VP_GUEST_DIR/vmlinuz")</kernel>
    <initrd>$(vp_xml_escape "$VP_GUEST_DIR/initramfs.cpio.gz")</initrd>
    <cmdline>$(vp_xml_escape "$cmdline")</cmdline>
  </os>
  <features><acpi/></features>
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <controller type='usb' model='none'/>
    <serial type='file'>
      <source path='$(vp_xml_escape "$(vp_console_log "$name")")'/>
      <target port='0'/>
    </serial>
    <console type='file'>
      <source path='$(vp_xml_escape "$(vp_console_log "$name")")'/>
      <target type='serial' port='0'/>
    </console>
    <channel type='unix'>
      <source mode='bind' path='$(vp_xml_escape "$(vp_agent_sock "$name")")'/>
      <target type='virtio' name='org.vpower.agent.0'/>
    </channel>$([ -z "${VP_GUEST_ECHO_PORT:-}" ] || cat <<EOC

    <channel type='unix'>
      <source mode='bind' path='$(vp_xml_escape "$(vp_echo_sock "$name")")'/>
      <target type='virtio' name='org.vpower.echo.0'/>
    </channel>
EOC
)
    <memballoon model='none'/>
  </devices>
  <seclabel type='static' model='dac' relabel='no'>
    <label>+0:+0</label>
  </seclabel>
</domain>
EOF
}

# vp_guest_start NAME LOAD [VCPUS] [EXTRA_CMDLINE]
#   LOAD: busy | light | idle (see guest-init.sh); VCPUS default 1.
vp_guest_start() {
    [ $# -ge 2 ] || vp_error "vp_guest_start: usage: NAME LOAD [VCPUS] [EXTRA_CMDLINE]"
    local name=$1 load=$2 vcpus=${3:-1} extra=${4:-} xml dom
    case "$load" in busy | light | idle) ;; *) vp_error "vp_guest_start: bad load '$load'" ;; esac
    case "$vcpus" in '' | *[!0-9]*) vp_error "vp_guest_start: bad vcpu count '$vcpus'" ;; esac
    [ -s "$VP_GUEST_DIR/vmlinuz" ] || vp_error "vp_guest_start: no guest image; call vp_build_guest"
    dom=$(vp_dom "$name")
    xml=$VP_TMPDIR/$name.xml
    vp_guest_xml "$name" "$load" "$vcpus" "$extra" > "$xml"
    : > "$(vp_console_log "$name")"
    VP_CREATED+=("$dom")
    vp_virsh create "$xml" >/dev/null ||
        vp_error "vp_guest_start: virsh create $xml failed (domain $dom)"
    eval "VP_START_$(vp_var "$name")=\$(date +%s.%N)"
    vp_log "started $dom (load=$load vcpus=$vcpus)"
}

# vp_var NAME: NAME made safe for a variable name.
vp_var() { printf '%s' "$1" | tr -c 'A-Za-z0-9_' '_'; }

# vp_guest_running NAME: true if the domain exists and runs.
vp_guest_running() {
    [ "$(vp_virsh domstate "$(vp_dom "$1")" 2>/dev/null)" = running ]
}

# vp_guest_wait_ready NAME [TIMEOUT]: wait for VPOWER-GUEST-READY on the
# guest's console (default $VP_BOOT_TIMEOUT s) and log the boot time.
#
# A guest whose kernel reports an RCU stall before it is ready is
# restarted once, from the same XML: under TCG on a loaded host a vCPU's
# timer wake-up is sometimes lost during boot ("rcu_preempt kthread timer
# wakeup didn't happen"), and that guest never comes up.  The stalled
# console is kept beside the new one (.stalled) and the restart is logged.
vp_guest_wait_ready() {
    [ $# -ge 1 ] || vp_error "vp_guest_wait_ready: usage: NAME [TIMEOUT]"
    local name=$1 timeout=${2:-$VP_BOOT_TIMEOUT} log start now var dom
    local restarted=0
    log=$(vp_console_log "$name")
    var=VP_START_$(vp_var "$name")
    start=${!var:-$(date +%s.%N)}
    dom=$(vp_dom "$name")
    while :; do
        if grep -q VPOWER-GUEST-READY "$log" 2>/dev/null; then
            now=$(date +%s.%N)
            vp_log "$dom ready after $(vp_elapsed "$start" "$now") s: $(grep -a -m1 VPOWER-GUEST-READY "$log" | tr -d '\r')"
            return 0
        fi
        if [ "$restarted" = 0 ] && grep -aq 'rcu: INFO: rcu_.* detected stalls' "$log" 2>/dev/null; then
            restarted=1
            vp_log "$dom: the guest kernel stalled in boot (RCU stall, $(grep -ac 'detected stalls' "$log") report(s) on its console); restarting it once"
            vp_guest_dump_console "$name"
            cp "$log" "$log.stalled" 2>/dev/null || true
            vp_virsh destroy "$dom" >/dev/null 2>&1 ||
                vp_error "vp_guest_wait_ready: virsh destroy $dom failed"
            : > "$log"
            vp_virsh create "$VP_TMPDIR/$name.xml" >/dev/null ||
                vp_error "vp_guest_wait_ready: restarting $dom failed"
            start=$(date +%s.%N)
            eval "$var=\$start"
            continue
        fi
        if ! vp_guest_running "$name"; then
            vp_guest_dump_console "$name"
            vp_error "vp_guest_wait_ready: $dom is not running (crashed or panicked?)"
        fi
        now=$(date +%s.%N)
        if [ "$(vp_elapsed "$start" "$now" 0)" -ge "$timeout" ]; then
            vp_guest_dump_console "$name"
            vp_error "vp_guest_wait_ready: $dom not ready after ${timeout}s"
        fi
        sleep 0.2
    done
}

# vp_elapsed START END [DECIMALS]: END - START (seconds, default 1 decimal).
vp_elapsed() {
    awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { printf "%.*f\n", d, b - a }'
}

vp_guest_dump_console() {
    local log
    log=$(vp_console_log "$1")
    echo "----- console of $(vp_dom "$1") (last 40 lines of $log) -----" >&2
    tail -n 40 "$log" 2>/dev/null | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' >&2 || true
    echo "----- end of console -----" >&2
}

# vp_guest_destroy NAME
vp_guest_destroy() {
    local dom
    dom=$(vp_dom "$1")
    if vp_virsh domstate "$dom" >/dev/null 2>&1; then
        vp_virsh destroy "$dom" >/dev/null 2>&1 ||
            vp_error "vp_guest_destroy: virsh destroy $dom failed"
    fi
}

# vp_cleanup: EXIT trap.  Destroys (and undefines, should one have become
# persistent) every domain with this test's prefix, removes temp files.
vp_cleanup() {
    local rc=$? dom left
    trap - EXIT INT TERM HUP
    set +e
    if command -v virsh >/dev/null 2>&1 && [ -n "$VP_TMPDIR" ]; then
        for dom in $(vp_virsh list --all --name 2>/dev/null | grep "^$VP_PREFIX"); do
            vp_virsh destroy "$dom" >/dev/null 2>&1
            vp_virsh undefine "$dom" >/dev/null 2>&1
        done
        left=$(vp_virsh list --all --name 2>/dev/null | grep "^$VP_PREFIX")
        if [ -n "$left" ]; then
            echo "[$VP_TEST] ERROR: domains left behind: $left" >&2
            [ "$rc" = 0 ] && rc=99
        fi
    fi
    if [ -n "$VP_TMPDIR" ] && [ -d "$VP_TMPDIR" ]; then
        if [ "${VP_KEEP_TMP:-0}" = 1 ]; then
            echo "[$VP_TEST] keeping $VP_TMPDIR" >&2
        else
            rm -rf "$VP_TMPDIR"
        fi
    fi
    exit "$rc"
}

# ---------------------------------------------------------------- inspection

# vp_vcpu_count NAME: number of vCPUs of the running domain.
vp_vcpu_count() {
    local n
    n=$(vp_virsh vcpucount "$(vp_dom "$1")" --live --active 2>/dev/null) ||
        vp_error "vp_vcpu_count: virsh vcpucount $(vp_dom "$1") failed"
    echo "$n"
}

# vp_vcpu_time NAME VCPU: cumulative vCPU time in ns (virsh domstats --vcpu).
vp_vcpu_time() {
    local t
    t=$(vp_virsh domstats --vcpu "$(vp_dom "$1")" 2>/dev/null |
        sed -n "s/^ *vcpu\.$2\.time=\([0-9]*\)$/\1/p")
    [ -n "$t" ] || vp_error "vp_vcpu_time: no vcpu.$2.time for $(vp_dom "$1")"
    echo "$t"
}

# vp_emulator_pid NAME: pid of the domain's QEMU process.
vp_emulator_pid() {
    local dom p
    dom=$(vp_dom "$1")
    p=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null || true)
    if [ -z "$p" ] || [ ! -d "/proc/$p" ]; then
        vp_error "vp_emulator_pid: no QEMU process for $dom"
    fi
    echo "$p"
}

# vp_vcpu_threads NAME: "VCPU TID" lines.  libvirt starts QEMU with
# debug-threads=on, so vCPU threads are named "CPU N/TCG" (or /KVM); the
# HMP `info cpus` fallback ("* CPU #0: thread_id=1234") taints the domain
# with custom-monitor, so it is only used when no thread has such a name.
vp_vcpu_threads() {
    local dom p t comm out=
    dom=$(vp_dom "$1")
    p=$(vp_emulator_pid "$1")
    for t in /proc/"$p"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        case "$comm" in
            "CPU "[0-9]*/*) comm=${comm#CPU }; out="$out${comm%%/*} ${t##*/}
" ;;
        esac
    done
    if [ -z "$out" ]; then
        out=$(vp_virsh qemu-monitor-command "$dom" --hmp 'info cpus' 2>/dev/null) ||
            vp_error "vp_vcpu_threads: 'info cpus' on $dom failed"
        out=$(echo "$out" | tr -d '\r' | sed -n 's/^[* ]*CPU #\([0-9]*\):.*thread_id=\([0-9]*\).*/\1 \2/p')
    fi
    [ -n "$out" ] || vp_error "vp_vcpu_threads: no vCPU threads found for $dom"
    printf '%s\n' "$out" | sed '/^$/d' | sort -n
}

# vp_threads NAME: every thread id of the domain's QEMU process.
vp_threads() {
    local p
    p=$(vp_emulator_pid "$1")
    ls "/proc/$p/task"
}

# vp_thread_affinity TID: the thread's allowed CPU list (e.g. "0" or "0-1").
vp_thread_affinity() {
    sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null
}

# vp_pin_guest NAME CPULIST: pin every vCPU and the emulator threads of the
# running guest onto CPULIST, live only (transient domains: nothing to undo).
vp_pin_guest() {
    local name=$1 cpus=$2 dom n v
    dom=$(vp_dom "$name")
    n=$(vp_vcpu_count "$name")
    for ((v = 0; v < n; v++)); do
        vp_virsh vcpupin "$dom" "$v" "$cpus" --live >/dev/null ||
            vp_error "vp_pin_guest: virsh vcpupin $dom $v $cpus --live failed"
    done
    vp_virsh emulatorpin "$dom" "$cpus" --live >/dev/null ||
        vp_error "vp_pin_guest: virsh emulatorpin $dom $cpus --live failed"
}

# ---------------------------------------------------------------- host CPU

# vp_cpu_idle_us CPU: cumulative idle time of host CPU in µs.  Uses the
# cpuidle residency counters (Σ state*/time) when the CPU has them,
# otherwise /proc/stat idle+iowait (USER_HZ ticks).
vp_cpu_idle_us() {
    local cpu=$1 dir=/sys/devices/system/cpu/cpu$1/cpuidle
    if [ "${VP_IDLE_SOURCE:-cpuidle}" = cpuidle ] && [ -r "$dir/state0/time" ]; then
        cat "$dir"/state*/time | awk '{ s += $1 } END { printf "%.0f\n", s }'
    else
        awk -v c="cpu$cpu" -v hz="$(getconf CLK_TCK)" \
            '$1 == c { printf "%.0f\n", ($5 + $6) * 1000000 / hz }' /proc/stat
    fi
}

# vp_now_us: monotonic-enough wall clock in µs.
vp_now_us() { echo $(($(date +%s%N) / 1000)); }

# vp_cpu_nonidle_pct CPU SECONDS: non-idle % of host CPU over SECONDS:
#   100 - Σ idle-residency delta / wall delta * 100 (two decimals).
vp_cpu_nonidle_pct() {
    [ $# -eq 2 ] || vp_error "vp_cpu_nonidle_pct: usage: CPU SECONDS"
    local cpu=$1 secs=$2 i0 i1 t0 t1
    [ -d "/sys/devices/system/cpu/cpu$cpu" ] || vp_error "vp_cpu_nonidle_pct: no cpu$cpu"
    t0=$(vp_now_us); i0=$(vp_cpu_idle_us "$cpu")
    sleep "$secs"
    t1=$(vp_now_us); i1=$(vp_cpu_idle_us "$cpu")
    if [ -z "$i0" ] || [ -z "$i1" ]; then
        vp_error "vp_cpu_nonidle_pct: cannot read idle time of cpu$cpu"
    fi
    awk -v i="$((i1 - i0))" -v t="$((t1 - t0))" 'BEGIN {
        p = 100 - i * 100 / t; if (p < 0) p = 0; if (p > 100) p = 100
        printf "%.2f\n", p }'
}

# vp_guest_cpu_ticks NAME: user+system CPU time of the guest's whole QEMU
# process (every thread, exited ones included), in USER_HZ ticks.
vp_guest_cpu_ticks() {
    local p
    p=$(vp_emulator_pid "$1")
    # Field 2 (comm) has no spaces for QEMU ("qemu-system-x86"); 14+15.
    awk '{ print $14 + $15 }' "/proc/$p/stat" ||
        vp_error "vp_guest_cpu_ticks: cannot read /proc/$p/stat"
}

# vp_measure CPU SECONDS NAME...: one measurement window.  Prints
#   "CPU_PCT HOST_PCT GUESTS_PCT FOREIGN_PCT"
# CPU_PCT: non-idle % of host CPU (as vp_cpu_nonidle_pct); HOST_PCT: the
# sum over all online host CPUs (% of one CPU); GUESTS_PCT: CPU time of
# the named guests' QEMU processes (% of one CPU); FOREIGN_PCT:
# HOST_PCT - GUESTS_PCT, i.e. everything else the host did meanwhile
# (other processes, kernel work not charged to QEMU).
vp_measure() {
    [ $# -ge 2 ] || vp_error "vp_measure: usage: CPU SECONDS NAME..."
    local cpu=$1 secs=$2 c t0 t1 g0=0 g1=0 n hz
    shift 2
    local cpus=() i0=() i1=()
    for c in /sys/devices/system/cpu/cpu[0-9]*; do
        c=${c##*cpu}
        [ "$(cat "/sys/devices/system/cpu/cpu$c/online" 2>/dev/null || echo 1)" = 1 ] || continue
        cpus+=("$c")
    done
    hz=$(getconf CLK_TCK)
    t0=$(vp_now_us)
    for c in "${cpus[@]}"; do i0[c]=$(vp_cpu_idle_us "$c"); done
    for n in "$@"; do g0=$((g0 + $(vp_guest_cpu_ticks "$n"))); done
    sleep "$secs"
    t1=$(vp_now_us)
    for c in "${cpus[@]}"; do i1[c]=$(vp_cpu_idle_us "$c"); done
    for n in "$@"; do g1=$((g1 + $(vp_guest_cpu_ticks "$n"))); done
    {
        echo "$((t1 - t0)) $cpu $((g1 - g0)) $hz"
        for c in "${cpus[@]}"; do echo "$c $((i1[c] - i0[c]))"; done
    } | awk '
        NR == 1 { wall = $1; cpu = $2; guests = $3 * 1e6 / $4; next }
        { p = 100 - $2 * 100 / wall; if (p < 0) p = 0; if (p > 100) p = 100
          host += p; if ($1 == cpu) mine = p }
        END { g = guests * 100 / wall; f = host - g; if (f < 0) f = 0
              printf "%.2f %.2f %.2f %.2f\n", mine, host, g, f }'
}

# vp_lt A B: true if number A < number B.
vp_lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

vp_init
