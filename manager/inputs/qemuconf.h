/* manager/inputs/qemuconf.h -- What libvirt's qemu.conf says about core
 * scheduling.
 *
 * With 'sched_core' other than "none", libvirt puts each domain's QEMU
 * threads (at least its vCPUs) into a core-scheduling group of its own,
 * and the kernel never runs two groups on sibling threads of one core at
 * once.  That keeps different VMs off each other's siblings (what a VM
 * with share_smt false asks for) and takes away the SMT capacity two
 * VMs could otherwise share; the policy models both through
 * pol_input.sched_core. */

#ifndef VPOWER_QEMUCONF_H
#define VPOWER_QEMUCONF_H 1

#include <stdbool.h>
#include <stddef.h>

/* libvirt's values of 'sched_core', in its order. */
enum qemuconf_sched {
    QEMUCONF_SCHED_NONE,      /* libvirt's default */
    QEMUCONF_SCHED_VCPUS,     /* vCPU threads only */
    QEMUCONF_SCHED_EMULATOR,  /* all QEMU threads */
    QEMUCONF_SCHED_FULL,      /* and its helper processes */
};

/* The default path, libvirt's system instance. */
#define QEMUCONF_PATH "/etc/libvirt/qemu.conf"

/* Reads the 'sched_core' setting of the qemu.conf at 'path' into '*out'.
 * A missing file or a file without the setting gives
 * QEMUCONF_SCHED_NONE (libvirt's default) and 0.  Returns 0, or a
 * negative errno with "PATH[:LINE]: reason" in 'err' (unreadable file,
 * a value that is not one of "none", "vcpus", "emulator", "full", a
 * value not in double quotes, an over-long line); '*out' is then
 * QEMUCONF_SCHED_NONE. */
int qemuconf_sched_core(const char *path, enum qemuconf_sched *out,
                        char *err, size_t errlen);

/* Whether 'v' keeps different VMs' vCPUs off sibling threads (every
 * value but QEMUCONF_SCHED_NONE): pol_input.sched_core. */
bool qemuconf_sched_apart(enum qemuconf_sched v);

/* "none", "vcpus", "emulator", "full". */
const char *qemuconf_sched_name(enum qemuconf_sched v);

#endif /* manager/inputs/qemuconf.h */
