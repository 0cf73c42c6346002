/* manager/drivers/cgpin.h -- A local QEMU's threads moved by the kernel
 * interfaces libvirt itself uses, without the round trip to libvirtd.
 *
 * libvirt pins a vCPU of a QEMU domain by writing cpuset.cpus of the
 * vCPU's own cpuset cgroup ("vcpuN", beside "emulator" and "iothreadN"
 * in the domain's group) and then calling sched_setaffinity() on the
 * thread; an emulator pin writes "emulator" the same way.  Through
 * libvirtd each pin costs a millisecond or more (an RPC, a domain job,
 * a status file rewrite); the two kernel calls cost microseconds.  The
 * libvirt driver (drv_libvirt.c) puts a pin in force here first and has
 * libvirt record the same pin afterwards, from the loop, so libvirt's
 * view follows within the period.
 *
 * Only groups of the layout libvirt makes are written: the domain's group
 * is the parent of the group QEMU's main thread is in, which must be
 * named "emulator", and a vCPU's group must hold exactly one thread.
 * Anything else (no cpuset controller, a libvirt without per-thread
 * groups, a path that does not fit) is an error and the caller pins
 * through libvirt as before.  Nothing is journalled here: the caller
 * journals the original pins before its first change, and restoring them
 * goes through libvirt, which rewrites both files. */

#ifndef VPOWER_CGPIN_H
#define VPOWER_CGPIN_H 1

#include <stdbool.h>
#include <sys/types.h>

#include "policy/cpuset.h"

#define CGPIN_PATH_MAX 512

struct cgpin {
    char mount[256];     /* The cpuset hierarchy's mount point, "" if the
                          * host has none. */
    char proc[128];      /* /proc, or a fixture tree in tests. */
};

/* Finds the cpuset hierarchy in 'mountinfo' (NULL: /proc/self/mountinfo):
 * a cgroup v1 mount with the cpuset controller, else the cgroup2 mount.
 * 'proc_root' (NULL: /proc) is where cgpin_domain() reads QEMU's group.
 * Returns 0, or -ENOENT when there is no such mount (cp->mount is then
 * "" and every other call fails with -ENOENT). */
int cgpin_init(struct cgpin *cp, const char *proc_root,
               const char *mountinfo);

/* The domain group of the QEMU process 'qpid' into 'dir' (an absolute
 * path below cp->mount): the parent of its "emulator" group.  Returns
 * 0, -ENOENT (no hierarchy, no such process), -ENAMETOOLONG, or -EINVAL
 * when QEMU's group is not an "emulator" group. */
int cgpin_domain(const struct cgpin *cp, pid_t qpid, char *dir, size_t len);

/* Puts vCPU 'vcpu' of the domain group 'dir' on 's': writes
 * dir/vcpuN/cpuset.cpus, then sets its one thread's affinity.  Returns
 * 0, -EINVAL when the group does not hold exactly one thread or 's' is
 * empty, or the errno of the first failing step. */
int cgpin_vcpu(const struct cgpin *cp, const char *dir, unsigned vcpu,
               const struct cpuset *s);

/* Puts the emulator group and every "iothreadN" group of 'dir' on 's',
 * with the affinity of each of their threads.  Returns 0 or the errno of
 * the first failing step (the groups after it are not written). */
int cgpin_emulator(const struct cgpin *cp, const char *dir,
                   const struct cpuset *s);

#endif /* manager/drivers/cgpin.h */
