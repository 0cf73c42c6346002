/* manager/drivers/cgpin.c -- Pins of a local QEMU's threads through the
 * cpuset cgroups libvirt made for them (cgpin.h). */

#define _GNU_SOURCE
#include <config.h>

#include "manager/drivers/cgpin.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/sysfs_io.h"

#define TASKS_MAX 4096          /* Bytes of a group's thread list read. */

/* Whether the space-separated option list 'opts' holds 'word'
 * (comma-separated). */
static bool
has_option(const char *opts, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = opts; p && *p; ) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t) (end - p) : strlen(p);

        if (len == n && !strncmp(p, word, n)) {
            return true;
        }
        p = end ? end + 1 : NULL;
    }
    return false;
}

int
cgpin_init(struct cgpin *cp, const char *proc_root, const char *mountinfo)
{
    char line[1024], v2[sizeof cp->mount] = "";
    FILE *f;

    memset(cp, 0, sizeof *cp);
    snprintf(cp->proc, sizeof cp->proc, "%s", proc_root ? proc_root
                                                        : "/proc");
    f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
    if (!f) {
        return -errno;
    }
    /* "id parent maj:min root mountpoint options [optional...] - fstype
     * source superoptions". */
    while (fgets(line, sizeof line, f)) {
        char root[256], mnt[256], type[32], super[512];
        const char *dash = strstr(line, " - ");

        if (!dash || sscanf(line, "%*s %*s %*s %255s %255s", root, mnt) != 2
            || sscanf(dash + 3, "%31s %*s %511s", type, super) != 2
            || strcmp(root, "/")) {
            continue;
        }
        if (!strcmp(type, "cgroup") && has_option(super, "cpuset")) {
            snprintf(cp->mount, sizeof cp->mount, "%s", mnt);
            break;
        }
        if (!strcmp(type, "cgroup2") && !v2[0]) {
            snprintf(v2, sizeof v2, "%s", mnt);
        }
    }
    fclose(f);
    if (!cp->mount[0]) {
        snprintf(cp->mount, sizeof cp->mount, "%s", v2);
    }
    return cp->mount[0] ? 0 : -ENOENT;
}

int
cgpin_domain(const struct cgpin *cp, pid_t qpid, char *dir, size_t len)
{
    char path[CGPIN_PATH_MAX], grp[CGPIN_PATH_MAX];
    char *slash;
    int r;

    if (!cp->mount[0] || qpid <= 0) {
        return -ENOENT;
    }
    snprintf(path, sizeof path, "%s/%d/cpuset", cp->proc, (int) qpid);
    r = sysfs_read_file(path, grp, sizeof grp);
    if (r < 0) {
        return r;
    }
    /* The kernel writes a clean absolute path; a fixture might not. */
    slash = strrchr(grp, '/');
    if (grp[0] != '/' || !slash || strcmp(slash, "/emulator")
        || strstr(grp, "/../") || strstr(grp, "/./") || strstr(grp, "//")) {
        return -EINVAL;
    }
    *slash = '\0';
    if ((size_t) snprintf(dir, len, "%s%s", cp->mount, grp) >= len) {
        return -ENAMETOOLONG;
    }
    return 0;
}

/* The thread ids of group 'grp' (v1 "tasks", v2 "cgroup.threads") into
 * 'buf', as listed there. */
static int
group_threads(const char *grp, char *buf, size_t len)
{
    int r = sysfs_read(grp, "tasks", buf, len);

    return r == -ENOENT ? sysfs_read(grp, "cgroup.threads", buf, len) : r;
}

/* Writes 's' into grp/cpuset.cpus, then sets the affinity of each thread
 * listed in 'tids'.  A thread that exited meanwhile (ESRCH) or one whose
 * affinity is the kernel's (EINVAL: a vhost worker in the emulator's
 * group) is passed over unless 'strict'. */
static int
set_group(const char *grp, const char *tids, const struct cpuset *s,
          bool strict)
{
    char list[1024];
    cpu_set_t mask;
    int r;

    if (cpuset_empty(s)
        || (size_t) cpuset_format(s, list, sizeof list) >= sizeof list) {
        return -EINVAL;
    }
    r = sysfs_write(grp, "cpuset.cpus", list);
    if (r < 0) {
        return r;
    }
    CPU_ZERO(&mask);
    CPUSET_FOREACH (cpu, s) {
        if (cpu < CPU_SETSIZE) {
            CPU_SET((unsigned) cpu, &mask);
        }
    }
    /* The kernel keeps a thread's own affinity request across cpuset
     * changes (intersecting the two), so a widened group alone leaves a
     * thread libvirt pinned before on its old CPUs. */
    for (const char *p = tids; *p; ) {
        char *end;
        long tid = strtol(p, &end, 10);

        if (end == p || tid <= 0 || tid > INT_MAX) {
            return -EINVAL;
        }
        if (sched_setaffinity((pid_t) tid, sizeof mask, &mask) < 0
            && (strict || (errno != ESRCH && errno != EINVAL))) {
            return -errno;
        }
        p = end + strspn(end, " \n");
    }
    return 0;
}

int
cgpin_vcpu(const struct cgpin *cp, const char *dir, unsigned vcpu,
           const struct cpuset *s)
{
    char grp[CGPIN_PATH_MAX], tids[64], *end;
    int r;

    if (!cp->mount[0]) {
        return -ENOENT;
    }
    if ((size_t) snprintf(grp, sizeof grp, "%s/vcpu%u", dir, vcpu)
        >= sizeof grp) {
        return -ENAMETOOLONG;
    }
    r = group_threads(grp, tids, sizeof tids);
    if (r == -EOVERFLOW) {
        return -EINVAL;
    }
    if (r < 0) {
        return r;
    }
    /* Exactly one thread: a group shared with others is not a vCPU's. */
    if (strtol(tids, &end, 10) <= 0 || end == tids
        || end[strspn(end, " \n")]) {
        return -EINVAL;
    }
    return set_group(grp, tids, s, true);
}

int
cgpin_emulator(const struct cgpin *cp, const char *dir,
               const struct cpuset *s)
{
    char grp[CGPIN_PATH_MAX], tids[TASKS_MAX];
    struct dirent *de;
    DIR *d;
    int r = 0;

    if (!cp->mount[0]) {
        return -ENOENT;
    }
    d = opendir(dir);
    if (!d) {
        return -errno;
    }
    /* IOThreads follow the emulator, as in drv_libvirt.c. */
    while (r == 0 && (de = readdir(d))) {
        unsigned n;
        char c;

        if (strcmp(de->d_name, "emulator")
            && sscanf(de->d_name, "iothread%u%c", &n, &c) != 1) {
            continue;
        }
        if ((size_t) snprintf(grp, sizeof grp, "%s/%s", dir, de->d_name)
            >= sizeof grp) {
            r = -ENAMETOOLONG;
            break;
        }
        r = group_threads(grp, tids, sizeof tids);
        if (r >= 0) {
            r = set_group(grp, tids, s, false);
        }
    }
    closedir(d);
    return r;
}
