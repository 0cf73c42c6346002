#!/bin/sh
# tests/lint/unit-syscalls.sh -- the system calls vpowerd.service lets
# vpowerd make.
#
# systemd merges the SystemCallFilter= lines of a unit in order: the first
# line decides the mode (a list without "~" is an allow list), and each
# later line adds its calls to the allow list (no "~") or takes them out
# ("~").  This test does that merge on config/vpowerd.service.in with
# systemd's own group lists (`systemd-analyze syscall-filter`) and checks
# two things:
#   - the calls vpowerd needs under the unit are allowed:
#     sched_setaffinity (its own threads follow the CPUs host work may
#     use, self_follow() in manager/cycle.c), and a few it makes every
#     cycle (openat, read, write, epoll_wait, sendmsg, recvmsg);
#   - the calls docs/security.md says the unit takes away stay denied:
#     sched_setscheduler and setpriority (sched_priority falls back to
#     normal priority), and @privileged's mount, reboot, init_module,
#     setuid, chroot.
# Skips (77) only where systemd-analyze does not exist.
srcdir=${VPOWER_SRCDIR:-$(dirname "$0")/../..}
unit=$srcdir/config/vpowerd.service.in
[ -r "$unit" ] || { echo "no unit at $unit"; exit 99; }
if ! command -v systemd-analyze > /dev/null 2>&1; then
    echo "SKIP: systemd-analyze not installed (package systemd)"
    exit 77
fi
groups=$(systemd-analyze syscall-filter --no-pager 2>/dev/null)
[ -n "$groups" ] || { echo "systemd-analyze syscall-filter printed nothing"; exit 99; }

# The allowed calls, one per line.
allowed=$( { printf '%s\n' "$groups" | sed 's/^/G /'
             grep '^SystemCallFilter=' "$unit" | sed 's/^/U /'; } | awk '
    # Group lists: a line "@name" opens a group, indented words are its
    # members (calls or other groups), "#" lines are descriptions.
    $1 == "G" && $2 ~ /^@/ && substr($0, 3, 1) == "@" { g = $2; next }
    $1 == "G" && g != "" && $2 != "" && $2 !~ /^#/ { m[g] = m[g] " " $2; next }
    $1 == "U" {
        sub(/^U SystemCallFilter=/, "")
        neg = substr($0, 1, 1) == "~"
        if (neg) { $0 = substr($0, 2) }
        if (!n++ && neg) { print "deny-list mode: not handled" > "/dev/stderr"; exit 2 }
        for (i = 1; i <= NF; i++) { out = ""; expand($i); set(out, !neg) }
    }
    function expand(x,   k, w, c) {
        if (x !~ /^@/) { out = out " " x; return }
        if (seen[x]++) { return }
        k = split(m[x], w, " ")
        for (c = 1; c <= k; c++) { expand(w[c]) }
        delete seen[x]
    }
    function set(list, on,   k, w, c) {
        k = split(list, w, " ")
        for (c = 1; c <= k; c++) { a[w[c]] = on }
    }
    END { for (s in a) { if (a[s]) { print s } } }') || exit 99
[ -n "$allowed" ] || { echo "no SystemCallFilter= allow list in $unit"; exit 1; }

rc=0
for s in sched_setaffinity openat read write epoll_wait sendmsg recvmsg; do
    if printf '%s\n' "$allowed" | grep -qx "$s"; then
        echo "allowed: $s"
    else
        echo "FAIL: vpowerd.service denies $s, which vpowerd needs"; rc=1
    fi
done
for s in sched_setscheduler setpriority mount reboot init_module setuid \
         chroot; do
    if printf '%s\n' "$allowed" | grep -qx "$s"; then
        echo "FAIL: vpowerd.service allows $s (docs/security.md)"; rc=1
    else
        echo "denied: $s"
    fi
done
exit $rc
