/* manager/drivers/selfpin.h -- The power manager keeps itself off the
 * CPUs it frees.
 *
 * vpowerd's own work (sampling, deciding, the control socket) wakes
 * whatever CPU the scheduler picks, and an idle freed CPU is the one it
 * likes best for a waking thread.  The host driver (sysfs.c) follows the
 * set host work may use with these calls.  Only the calling process's
 * threads change, and they keep a subset of the CPUs the process was
 * started on (an operator's CPUAffinity= or taskset stays the outer
 * bound): nothing to journal, nothing to restore. */

#ifndef VPOWER_SELFPIN_H
#define VPOWER_SELFPIN_H 1

#include <stdbool.h>

#include "policy/cpuset.h"

/* The CPUs the process may use now, read once when a driver opens. */
struct selfpin {
    struct cpuset orig;
    bool known;                 /* sched_getaffinity() answered. */
};

/* Reads the process's current CPUs into 'sp'.  Returns 0 or -errno. */
int selfpin_init(struct selfpin *sp);

/* Restricts every thread of the process to 'set' intersected with
 * sp->orig, or to sp->orig when they do not meet.  Threads that exit
 * meanwhile are skipped.  Returns 0 or the first -errno. */
int selfpin_apply(const struct selfpin *sp, const struct cpuset *set);

#endif /* manager/drivers/selfpin.h */
