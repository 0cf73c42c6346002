#!/bin/bash
# 021-vpowerd-housekeeping.sh -- host work follows the active set: the
# real vpowerd with the dummy hypervisor, a sysfs fixture and fixture
# cgroup (v1), /proc and workqueue trees (housekeeping_*_root): no
# libvirt, never the host's own cgroups, interrupts or workqueue mask.
#
# Checks: the confined cgroups, interrupt affinities and the workqueue
# mask follow the plan's active CPUs (plus CPU0); the override releases
# them at once; SIGTERM puts every fixture file back byte for byte;
# after a SIGKILL the next start (with housekeeping off) replays the
# journal; --dry-run writes nothing; each housekeeping directive
# changes what happens; host CPU pressure keeps the VMs spread.
set -eu

T=$(basename "$0" .sh)
VPD_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
. "$(dirname "$0")/vpowerd-lib.sh"
vpd_test_begin

fx=$VPD_TMP/sys
hk=$VPD_TMP/hk
cg=$hk/cgroup
pr=$hk/proc
wq=$hk/wq/cpumask
vpd_fixture "$fx" 4 1000000 1500000 2000000

# put REL TEXT: a fixture file below $hk.
put() { mkdir -p "$(dirname "$hk/$1")"; printf '%s\n' "$2" > "$hk/$1"; }
# A cgroup v1 host with a cpuset hierarchy, like this machine's.
mk_hk() {
    rm -rf "$hk"
    put cgroup/cpuset/cpuset.cpus 0-3
    put cgroup/cpuset/cpuset.mems 0
    put cgroup/cpuset/system.slice/cpuset.cpus 0-3
    put cgroup/cpuset/system.slice/a.service/cpuset.cpus 2-3
    put cgroup/cpuset/user.slice/cpuset.cpus 1-3
    put cgroup/cpuset/machine/cpuset.cpus 0-3
    put cgroup/cpuacct/system.slice/cpuacct.usage 1000
    put proc/irq/0/smp_affinity_list 0
    put proc/irq/1/smp_affinity_list 0-3
    put proc/irq/24/smp_affinity_list 2
    put proc/irq/25/smp_affinity_list 3
    put proc/irq/default_smp_affinity f
    put proc/interrupts "$(printf '%s\n' \
        '           CPU0       CPU1       CPU2       CPU3' \
        '  0:         44          0          0          0   IO-APIC   2-edge      timer' \
        ' 25:          0          0          7      70000   PCI-MSI 512000-edge      virtio1-req.0')"
    put proc/1/comm init
    put proc/pressure/cpu "some avg10=${1:-0.00} avg60=0.00 avg300=0.00 total=1
full avg10=0.00 avg60=0.00 avg300=0.00 total=0"
    put wq/cpumask f
}
# Every file of the housekeeping fixture with its checksum.
hk_snapshot() { (cd "$hk" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }
rd() { cat "$hk/$1"; }

cat > "$VPD_TMP/doms" <<EOD
busy  1 95 kind=performance
light 1 10
idle  1 1
EOD
# conf [DIRECTIVE VALUE]...: the base config plus extra lines.
conf() {
    vpd_base_conf "housekeeping yes" "housekeeping_cgroup_root $cg" \
        "housekeeping_proc_root $pr" "housekeeping_workqueue_mask $wq" \
        "housekeeping_run_root $hk/run"
    while [ $# -ge 2 ]; do echo "$1 $2" >> "$VPD_TMP/vpowerd.conf"; shift 2; done
}
export VPOWER_DUMMY_STATE=$VPD_TMP/pins
args=(--config "$VPD_TMP/vpowerd.conf" --driver=dummy
      --dummy-domains "$VPD_TMP/doms" --sysfs-root "$fx")

packed() {
    [ "$(vpd_pin light vcpu0)" = 1 ] && [ "$(vpd_pin idle vcpu0)" = 1 ] &&
        [ "$(vpd_pin busy vcpu0)" = 0 ]
}
# wait_for CMD...: up to 10 s for CMD to succeed.
wait_for() {
    local i
    for ((i = 0; i < 100; i++)); do
        "$@" && return 0
        kill -0 "$VPD_PID" 2>/dev/null || fail "vpowerd died"
        sleep 0.1
    done
    return 1
}
confined() { [ "$(rd cgroup/cpuset/system.slice/cpuset.cpus)" = 0-1 ]; }
released() { [ "$(rd cgroup/cpuset/system.slice/cpuset.cpus)" = 0-3 ]; }
irq_moved() { [ "$(rd proc/irq/25/smp_affinity_list)" = 0-1 ]; }
user_confined() { [ "$(rd cgroup/cpuset/user.slice/cpuset.cpus)" = 1 ]; }
# run_packed LOG: start, wait until the VMs are packed and one more
# period has passed (the housekeeping set follows within the cycle).
run_packed() {
    rm -f "$VPOWER_DUMMY_STATE"
    vpd_start "$1" "${args[@]}"
    wait_for packed || fail "not packed after 10 s: $(tr '\n' ' ' < "$VPOWER_DUMMY_STATE")"
    sleep 0.5
}
same_tree() { hk_snapshot | diff -u "$VPD_TMP/hk-before" - >&2; }

mk_hk
hk_snapshot > "$VPD_TMP/hk-before"

# 1. Confinement follows the active set: busy on cpu0, light and idle
# packed on cpu1, cpu2-3 freed, so host work goes to 0-1.
conf
run_packed "$VPD_TMP/vpowerd.log"
wait_for confined || fail "system.slice not confined: $(rd cgroup/cpuset/system.slice/cpuset.cpus)"
[ "$(rd cgroup/cpuset/user.slice/cpuset.cpus)" = 1 ] || fail "user.slice: $(rd cgroup/cpuset/user.slice/cpuset.cpus)"
[ "$(rd cgroup/cpuset/system.slice/a.service/cpuset.cpus)" = 0-1 ] || fail "a.service: $(rd cgroup/cpuset/system.slice/a.service/cpuset.cpus)"
[ "$(rd cgroup/cpuset/machine/cpuset.cpus)" = 0-3 ] || fail "machine (not listed) changed"
[ "$(rd proc/irq/25/smp_affinity_list)" = 0-1 ] || fail "irq 25: $(rd proc/irq/25/smp_affinity_list)"
[ "$(rd proc/irq/0/smp_affinity_list)" = 0 ] || fail "irq 0 moved off CPU0"
[ "$(rd wq/cpumask)" = 3 ] || fail "workqueue mask: $(rd wq/cpumask)"
grep -q "housekeeping: host work on 0-1" "$VPD_TMP/vpowerd.log" || fail "no housekeeping log line"
grep -q 'cgroup' "$VPD_TMP/journal" 2>/dev/null || grep -qa 'system.slice' "$VPD_TMP/journal" ||
    fail "the journal does not hold the cgroup originals"
ctl=$VPD_BUILDDIR/manager/vpowerctl
st=$("$ctl" --socket "$VPD_TMP/vpowerd.sock" status)
echo "$st" | grep -q "Housekeeping: *confined on 0-1 (cgroup-v1)" ||
    fail "vpowerctl status does not show the housekeeping set: $st"
echo "$st" | grep -q "3 cgroups moved" || fail "status: no report: $st"
"$ctl" --socket "$VPD_TMP/vpowerd.sock" --json status |
    grep -q '"interrupts_total": *70000' || fail "status: no interrupts_total for cpu3"
log "status: $(echo "$st" | grep -A1 Housekeeping: | tr -s ' ' | tr '\n' ' ')"
log "confined: system.slice $(rd cgroup/cpuset/system.slice/cpuset.cpus), user.slice $(rd cgroup/cpuset/user.slice/cpuset.cpus), irq25 $(rd proc/irq/25/smp_affinity_list), wq $(rd wq/cpumask)"

# 1b. What still ran on the freed CPUs (2-3), as explain tells it:
# interrupts every period, threads once an explain asked.  The fixture's
# counts grow under a running vpowerd, and are put back as found.
# put_new REL TEXT: as put, but replaced in one rename, as the kernel's
# files never read half written.
put_new() { put "$1.new" "$2"; mv "$hk/$1.new" "$hk/$1"; }
irqs_at() {   # irqs_at N: IRQ 25 has taken N interrupts on CPU3
    put_new proc/interrupts "$(printf '%s\n' \
        '           CPU0       CPU1       CPU2       CPU3' \
        '  0:         44          0          0          0   IO-APIC   2-edge      timer' \
        " 25:          0          0          7      $1   PCI-MSI 512000-edge      virtio1-req.0")"
}
thread_at() { # thread_at RUNS: tid 501, last ran on CPU3
    put_new proc/500/task/501/stat "501 (fx (worker)) S $(seq -s ' ' 4 38) 3 0 0"
    put_new proc/500/task/501/schedstat "100 200 $1"
}
grow() {      # grow SECONDS: both counts grow every 0.1 s
    local i
    for ((i = 0; i < $1 * 10; i++)); do
        k=$((k + 1)); irqs_at $((70000 + 24 * k)); thread_at $((5 * k)); sleep 0.1
    done
}
k=0
grow 2
why=$("$ctl" --socket "$VPD_TMP/vpowerd.sock" --json explain light |
      python3 -c 'import json, re, sys; print(re.search("(Freed CPUs|No CPU was freed).*", json.load(sys.stdin)["text"]).group(0))')
log "explain, first: $why"
case $why in "Freed CPUs 2-3, "*"IRQ 25 (PCI-MSI 512000-edge virtio1-req.0) x"*"ask again"*) ;;
    *) fail "explain does not name IRQ 25 on the freed CPUs (or says threads are read): $why" ;; esac
case $why in *"fx (worker)"*) fail "threads named before anyone asked: $why" ;; esac
grow 2
why=$("$ctl" --socket "$VPD_TMP/vpowerd.sock" --json explain light |
      python3 -c 'import json, re, sys; print(re.search("(Freed CPUs|No CPU was freed).*", json.load(sys.stdin)["text"]).group(0))')
log "explain, second: $why"
case $why in *"thread fx (worker) (tid 501) x"*) ;;
    *) fail "explain does not name thread 501 after it was asked: $why" ;; esac
# The human form reads as prose: wrapped, no escaped control characters.
human=$("$ctl" --socket "$VPD_TMP/vpowerd.sock" explain light)
case $human in *"Freed CPUs 2-3,"*) ;; *) fail "vpowerctl explain: no freed CPUs: $human" ;; esac
case $human in *'\'*) fail "vpowerctl explain shows an escape: $human" ;; esac
grow 2 & grower=$!
sleep 1.2
"$ctl" --socket "$VPD_TMP/vpowerd.sock" --json status | python3 -c '
import json, sys
f = json.load(sys.stdin)["housekeeping"]["freed_last_period"]
assert f["cpus"] == "2-3" and f["threads_read"] and f["interrupts"] > 0, f
assert {"interrupt", "thread"} <= {t["kind"] for t in f["top"]}, f' ||
    fail "status: housekeeping.freed_last_period does not show both"
wait "$grower"
irqs_at 70000
rm -rf "${pr:?}/500"

# 2. The override releases host work at once, and confines it again.
kill -USR1 "$VPD_PID"
wait_for released || fail "override did not release system.slice"
[ "$(rd proc/irq/25/smp_affinity_list)" = 3 ] || fail "override: irq 25 $(rd proc/irq/25/smp_affinity_list)"
kill -USR1 "$VPD_PID"
wait_for confined || fail "not confined again after the override"
log "override: released at once, confined again after it"

# 3. SIGTERM puts every file back byte for byte.
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC after SIGTERM"
same_tree || fail "housekeeping fixture not restored after SIGTERM"
[ ! -e "$VPD_TMP/journal" ] || fail "journal left after a clean exit"
log "SIGTERM: every cgroup, IRQ and workqueue file byte-identical"

# 4. SIGKILL while confined; the next start, with housekeeping off,
# replays the journal.
run_packed "$VPD_TMP/vpowerd.log"
wait_for confined || fail "second run did not confine"
kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null || true; VPD_PID=
same_tree 2>/dev/null && fail "fixture unchanged before the crash: the test proves nothing"
conf housekeeping no
vpd_start "$VPD_TMP/vpowerd3.log" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd3.log" "housekeeping: [0-9]+ journalled originals restored" 10 ||
    fail "leftover housekeeping journal not replayed"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC"
same_tree || fail "housekeeping fixture not restored after SIGKILL + restart"
log "SIGKILL + restart: journal replayed, every file byte-identical"

# 4b. SIGKILL at random points while the set changes (the override
# flips it between 0-1 and every CPU), then one restart: every file back.
for ((k = 0; k < 5; k++)); do
    conf
    rm -f "$VPOWER_DUMMY_STATE"
    vpd_start "$VPD_TMP/vpowerd-k.log" "${args[@]}"
    wait_for packed || fail "kill round $k: not packed"
    for ((u = 0; u < RANDOM % 4; u++)); do
        kill -USR1 "$VPD_PID"; sleep 0.0$((RANDOM % 10))
    done
    sleep 0.$((RANDOM % 10))
    kill -KILL "$VPD_PID"; wait "$VPD_PID" 2>/dev/null || true; VPD_PID=
done
conf housekeeping no
vpd_start "$VPD_TMP/vpowerd3.log" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd3.log" "managing cpus" 10 || fail "restart after kills failed"
vpd_stop
[ "$VPD_RC" = 0 ] || fail "vpowerd exited $VPD_RC after the kill rounds"
same_tree || fail "housekeeping fixture not restored after 5 random kills + restart"
log "5 SIGKILLs at random points during changes + restart: every file byte-identical"

# 5. --dry-run says what would move and writes nothing.
conf
rm -f "$VPOWER_DUMMY_STATE"
vpd_start "$VPD_TMP/vpowerd4.log" "${args[@]}" --dry-run
vpd_wait_log "$VPD_TMP/vpowerd4.log" "dry-run housekeeping: host work on 0-1" 10 ||
    fail "dry run did not say what would move"
vpd_stop
same_tree || fail "--dry-run wrote to the housekeeping fixture"
log "dry run: $(grep -m1 'dry-run housekeeping: host work on 0-1' "$VPD_TMP/vpowerd4.log" | sed 's/.*dry-run //')"

# 6. Each switch matters.
conf housekeeping no
run_packed "$VPD_TMP/vpowerd5.log"
vpd_stop
same_tree || fail "housekeeping no: the fixture changed"
conf housekeeping_cpusets no
run_packed "$VPD_TMP/vpowerd5.log"
wait_for irq_moved || fail "cpusets off: irqs not moved"
released || fail "housekeeping_cpusets no: cgroups changed"
vpd_stop
conf housekeeping_irqs no
run_packed "$VPD_TMP/vpowerd5.log"
wait_for confined || fail "irqs off: cgroups not confined"
[ "$(rd proc/irq/25/smp_affinity_list)" = 3 ] || fail "housekeeping_irqs no: irq moved"
vpd_stop
conf housekeeping_workqueues no
run_packed "$VPD_TMP/vpowerd5.log"
wait_for confined || fail "workqueues off: cgroups not confined"
[ "$(rd wq/cpumask)" = f ] || fail "housekeeping_workqueues no: mask changed"
vpd_stop
conf housekeeping_groups user.slice
run_packed "$VPD_TMP/vpowerd5.log"
wait_for user_confined || fail "groups: user.slice not confined"
released || fail "housekeeping_groups user.slice: system.slice changed"
vpd_stop
# A CPU vpowerd does not manage is never taken from host work.
conf managed_cpus 0-2
run_packed "$VPD_TMP/vpowerd5.log"
unmanaged_kept() { [ "$(rd cgroup/cpuset/system.slice/cpuset.cpus)" = 0-1,3 ]; }
wait_for unmanaged_kept || fail "managed_cpus 0-2: system.slice $(rd cgroup/cpuset/system.slice/cpuset.cpus), want 0-1,3"
vpd_stop
same_tree || fail "switch runs left the fixture changed"
log "switches: housekeeping, _cpusets, _irqs, _workqueues, _groups each change what moves; unmanaged cpu3 stays with host work"

# 7. housekeeping_run_root: systemd is PID 1 where RUN/systemd/system
# exists (cgroup v2 through its D-Bus API); a dry run only names it.
mk_hk
put cgroup/cgroup.controllers "cpuset cpu"
put cgroup/cgroup.subtree_control cpu
put cgroup/system.slice/cgroup.subtree_control ""
rm -rf "$cg/cpuset" "$cg/cpuacct"
mkdir -p "$VPD_TMP/run-sd/systemd/system" "$hk/run"
for rr in "$hk/run:cgroup-v2" "$VPD_TMP/run-sd:systemd"; do
    conf housekeeping_run_root "${rr%%:*}"
    vpd_start "$VPD_TMP/vpowerd6.log" "${args[@]}" --dry-run
    vpd_wait_log "$VPD_TMP/vpowerd6.log" "housekeeping: cpusets on \(${rr#*:}\)" 10 ||
        fail "run root ${rr%%:*}: not ${rr#*:}: $(grep -m1 'housekeeping: cpusets' "$VPD_TMP/vpowerd6.log")"
    vpd_stop
done
log "run root: cgroup-v2 files without systemd, systemd's API with it"

# 8. Host CPU pressure at or above housekeeping_spread_pressure_pct
# keeps the VMs spread; below it they pack.  On cgroup v1 the pressure
# is the confined groups' own waiting (run_delay of their threads), never
# the system's /proc/pressure/cpu, which counts the packed guests too:
# a system at 50 % with groups that do not wait still packs.
mk_hk 50.00
put cgroup/cpuset/system.slice/a.service/tasks 4242
put proc/4242/schedstat "1 0 1"
conf housekeeping_spread_pressure_pct 40
run_packed "$VPD_TMP/vpowerd7.log"
vpd_stop
# A thread of a.service waits for a CPU half of the wall time.
waiter() {
    local t0 now
    t0=$(date +%s%N)
    while :; do
        now=$(date +%s%N)
        printf '1 %s 1\n' $(((now - t0) / 2)) > "$hk/proc/4242/schedstat.tmp"
        mv "$hk/proc/4242/schedstat.tmp" "$hk/proc/4242/schedstat"
        sleep 0.05
    done
}
waiter & WAITER=$!
vpd_test_hook() { kill "$WAITER" 2>/dev/null; }
conf housekeeping_spread_pressure_pct 90
run_packed "$VPD_TMP/vpowerd8.log"
vpd_stop
conf housekeeping_spread_pressure_pct 20
rm -f "$VPOWER_DUMMY_STATE"
vpd_start "$VPD_TMP/vpowerd9.log" "${args[@]}"
vpd_wait_log "$VPD_TMP/vpowerd9.log" "host CPU pressure [0-9.]+ % .* spreading" 10 ||
    fail "a group waiting half the time (threshold 20 %) did not spread"
sleep 3
packed && fail "packed although a confined group waits half the time"
vpd_stop
kill "$WAITER"; wait "$WAITER" 2>/dev/null || true
log "pressure: the system's 50 % ignored on v1; a group waiting 50 % packs with threshold 90 %, stays spread with 20 %"
exit 0
