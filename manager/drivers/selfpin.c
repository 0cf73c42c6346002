/* manager/drivers/selfpin.c -- The power manager keeps itself off the
 * CPUs it frees (selfpin.h). */

#include <config.h>

#include "manager/drivers/selfpin.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/types.h>

static void
to_cpu_set(const struct cpuset *in, cpu_set_t *out)
{
    CPU_ZERO(out);
    CPUSET_FOREACH (c, in) {
        if (c < CPU_SETSIZE) {
            CPU_SET(c, out);
        }
    }
}

int
selfpin_init(struct selfpin *sp)
{
    cpu_set_t now;

    cpuset_zero(&sp->orig);
    sp->known = false;
    if (sched_getaffinity(0, sizeof now, &now) < 0) {
        return -errno;
    }
    for (unsigned c = 0; c < CPU_SETSIZE && c < POL_MAX_CPUS; c++) {
        if (CPU_ISSET(c, &now)) {
            cpuset_set(&sp->orig, c);
        }
    }
    sp->known = !cpuset_empty(&sp->orig);
    return sp->known ? 0 : -EINVAL;
}

int
selfpin_apply(const struct selfpin *sp, const struct cpuset *set)
{
    struct cpuset want;
    struct dirent *e;
    cpu_set_t mask;
    DIR *dp;
    int error = 0;

    if (!sp->known) {
        return -ENODATA;
    }
    cpuset_and(&want, set, &sp->orig);
    to_cpu_set(cpuset_empty(&want) ? &sp->orig : &want, &mask);
    dp = opendir("/proc/self/task");
    if (!dp) {
        return -errno;
    }
    while ((e = readdir(dp))) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);

        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end) {
            continue;
        }
        if (sched_setaffinity((pid_t) tid, sizeof mask, &mask) < 0
            && errno != ESRCH && !error) {
            error = -errno;
        }
    }
    closedir(dp);
    return error;
}
