/* manager/inputs/haltstats.h -- KVM halt statistics: how idle a vCPU really
 * is.
 *
 * A KVM vCPU thread that executes HLT may spin in the host for up to
 * halt_poll_ns before sleeping ("halt polling"), so it is on a CPU but
 * doing no guest work.  KVM counts it: halt_poll_success_ns (polled until
 * a wakeup came), halt_poll_fail_ns (polled, then slept anyway) and
 * halt_wait_ns (slept).  Poll time is CPU time the host spent spinning
 * for the guest's wakeup latency, not guest work, so it must not make the
 * vCPU look busy: halt_adjusted_busy_ns() subtracts it.
 *
 * Sources, per vCPU where possible:
 *  - libvirt domain stats (VIR_DOMAIN_STATS_VCPU, QEMU query-stats, KVM
 *    binary stats): "vcpu.<N>.halt_wait_ns.sum",
 *    "vcpu.<N>.halt_poll_success_ns.sum", "vcpu.<N>.halt_poll_fail_ns.sum";
 *    the daemon's libvirt driver passes each typed parameter to
 *    halt_stats_field();
 *  - KVM debugfs /sys/kernel/debug/kvm/<qemu pid>-<vm fd>/halt_*: one
 *    integer per file, SUMMED over the VM's vCPUs (KVM puts vCPU stats
 *    in the VM's directory; the vcpuN/ subdirectories hold only
 *    arch state such as tsc-offset) -- per VM, not per vCPU.
 * TCG guests have none of these (nothing polls in the host kernel). */

#ifndef VPOWER_HALTSTATS_H
#define VPOWER_HALTSTATS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct halt_stats {
    uint64_t wait_ns;              /* Slept in halt. */
    uint64_t poll_success_ns;      /* Spun, and the wakeup came. */
    uint64_t poll_fail_ns;         /* Spun, then slept. */
    bool valid;                    /* At least one field was seen. */
};

/* Busy time minus the halt-poll spin of the same interval, never below
 * zero (counters sampled at slightly different instants).  Inline: the
 * cycle adjusts every vCPU's sample. */
static inline uint64_t
halt_adjusted_busy_ns(uint64_t busy_ns, uint64_t poll_success_ns_delta,
                      uint64_t poll_fail_ns_delta)
{
    uint64_t poll = poll_success_ns_delta + poll_fail_ns_delta;

    if (poll < poll_success_ns_delta || poll >= busy_ns) {
        return 0;
    }
    return busy_ns - poll;
}

/* Folds one libvirt typed parameter into 'per_vcpu' ([max], zeroed by
 * the caller).  Returns 1 if 'name' was a halt field (stored), 0 if it is
 * another field (ignored), -ENOSPC if its vCPU number is >= 'max',
 * -EINVAL for a malformed vcpu.<N>. prefix. */
int halt_stats_field(struct halt_stats *per_vcpu, unsigned max,
                     const char *name, uint64_t value);

/* Finds the KVM debugfs directory of 'qemu_pid' under 'debugfs_kvm'
 * (NULL: /sys/kernel/debug/kvm): "<pid>-<fd>".  -ENOENT if none (TCG,
 * debugfs not mounted), -EACCES without permission. */
int halt_debugfs_find(const char *debugfs_kvm, pid_t qemu_pid,
                      char *dir, size_t len);

/* Reads the VM-wide sums from 'dir' (as found above).  -ENOENT if the
 * kernel lacks a file (before 5.8 for the poll times), -EINVAL if a file
 * is not one decimal integer. */
int halt_debugfs_read(const char *dir, struct halt_stats *out);

#endif /* manager/inputs/haltstats.h */
