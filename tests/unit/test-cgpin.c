/* tests/unit/test-cgpin.c -- manager/drivers/cgpin on a fixture tree: a
 * mountinfo, a /proc with QEMU's group, and libvirt's per-thread cpuset
 * groups.  The threads named in the groups are this test's own, so the
 * affinity calls are real; the test puts its affinity back. */

#define _GNU_SOURCE
#include <config.h>

#include "manager/drivers/cgpin.h"

#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define DOM "/machine/qemu-1-vm.libvirt-qemu"

static char root[256];
static cpu_set_t orig_mask;

static void
put(const char *rel, const char *content)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static const char *
get(const char *rel)
{
    static char buf[256];
    char path[1024];
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static int
setup(void **st)
{
    char line[512], tid[32];

    (void) st;
    snprintf(root, sizeof root, "%s/vpower-cgpin-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(root));
    assert_int_equal(sched_getaffinity(0, sizeof orig_mask, &orig_mask), 0);
    snprintf(line, sizeof line,
             "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup rw\n"
             "31 25 0:27 / %s/cg rw,relatime - cgroup cgroup rw,cpuset\n"
             "32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
             root);
    put("mountinfo", line);
    put("mountinfo-v2",
        "30 25 0:26 /sub /elsewhere rw - cgroup2 cgroup rw\n"
        "31 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup rw\n"
        "32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpuacct\n");
    put("mountinfo-none",
        "32 25 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpuset2\n"
        "33 25 0:29 / /x rw - tmpfs tmpfs rw\n");
    put("proc/100/cpuset", DOM "/emulator\n");
    put("proc/101/cpuset", DOM "/vcpu0\n");
    put("proc/102/cpuset", "/machine/../emulator\n");
    put("proc/103/cpuset", "emulator\n");
    snprintf(tid, sizeof tid, "%d\n", (int) gettid());
    put("cg" DOM "/vcpu0/tasks", tid);
    put("cg" DOM "/vcpu0/cpuset.cpus", "0-1\n");
    put("cg" DOM "/vcpu1/tasks", "1\n2\n");
    put("cg" DOM "/vcpu1/cpuset.cpus", "0-1\n");
    put("cg" DOM "/vcpu2/cgroup.threads", tid);
    put("cg" DOM "/vcpu2/cpuset.cpus", "0-1\n");
    /* 2^22 + 1 is above any default pid_max: a thread that exited. */
    snprintf(line, sizeof line, "%s4194305\n", tid);
    put("cg" DOM "/emulator/tasks", line);
    put("cg" DOM "/emulator/cpuset.cpus", "0-1\n");
    put("cg" DOM "/iothread1/tasks", tid);
    put("cg" DOM "/iothread1/cpuset.cpus", "0-1\n");
    put("cg" DOM "/other/tasks", tid);
    put("cg" DOM "/other/cpuset.cpus", "0-1\n");
    return 0;
}

static int
teardown(void **st)
{
    char cmd[400];

    (void) st;
    sched_setaffinity(0, sizeof orig_mask, &orig_mask);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void
init_at(struct cgpin *cp, const char *mi)
{
    char proc[300], path[300];

    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(path, sizeof path, "%s/%s", root, mi);
    assert_int_equal(cgpin_init(cp, proc, path), 0);
}

/* The v1 cpuset hierarchy wins over cgroup2; a bind mount of a subtree
 * (root not "/") and other controllers are no hierarchy of ours. */
static void
test_mounts(void **st)
{
    struct cgpin cp;
    char path[300], want[300];

    (void) st;
    init_at(&cp, "mountinfo");
    snprintf(want, sizeof want, "%s/cg", root);
    assert_string_equal(cp.mount, want);
    init_at(&cp, "mountinfo-v2");
    assert_string_equal(cp.mount, "/sys/fs/cgroup");
    snprintf(path, sizeof path, "%s/mountinfo-none", root);
    assert_int_equal(cgpin_init(&cp, NULL, path), -ENOENT);
    assert_string_equal(cp.mount, "");
    assert_int_equal(cgpin_domain(&cp, 100, path, sizeof path), -ENOENT);
}

static void
test_domain(void **st)
{
    struct cgpin cp;
    char dir[CGPIN_PATH_MAX], want[300];

    (void) st;
    init_at(&cp, "mountinfo");
    assert_int_equal(cgpin_domain(&cp, 100, dir, sizeof dir), 0);
    snprintf(want, sizeof want, "%s/cg" DOM, root);
    assert_string_equal(dir, want);
    /* QEMU outside an emulator group, a path that climbs, a relative
     * path, no such process, a buffer too small. */
    assert_int_equal(cgpin_domain(&cp, 101, dir, sizeof dir), -EINVAL);
    assert_int_equal(cgpin_domain(&cp, 102, dir, sizeof dir), -EINVAL);
    assert_int_equal(cgpin_domain(&cp, 103, dir, sizeof dir), -EINVAL);
    assert_int_equal(cgpin_domain(&cp, 104, dir, sizeof dir), -ENOENT);
    assert_int_equal(cgpin_domain(&cp, 100, dir, 10), -ENAMETOOLONG);
}

/* The first CPU this test may run on, as a set. */
static void
own_cpu(struct cpuset *s)
{
    cpuset_zero(s);
    for (unsigned c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &orig_mask)) {
            cpuset_set(s, c);
            return;
        }
    }
}

static void
test_vcpu(void **st)
{
    struct cgpin cp;
    struct cpuset s, empty;
    char dir[CGPIN_PATH_MAX], want[32];
    cpu_set_t now;

    (void) st;
    init_at(&cp, "mountinfo");
    assert_int_equal(cgpin_domain(&cp, 100, dir, sizeof dir), 0);
    own_cpu(&s);
    snprintf(want, sizeof want, "%d", cpuset_next(&s, 0));
    assert_int_equal(cgpin_vcpu(&cp, dir, 0, &s), 0);
    assert_string_equal(get("cg" DOM "/vcpu0/cpuset.cpus"), want);
    /* The thread's affinity followed. */
    assert_int_equal(sched_getaffinity(0, sizeof now, &now), 0);
    assert_int_equal(CPU_COUNT(&now), 1);
    assert_true(CPU_ISSET((unsigned) cpuset_next(&s, 0), &now));
    sched_setaffinity(0, sizeof orig_mask, &orig_mask);
    /* cgroup v2 names the threads cgroup.threads. */
    assert_int_equal(cgpin_vcpu(&cp, dir, 2, &s), 0);
    assert_string_equal(get("cg" DOM "/vcpu2/cpuset.cpus"), want);
    sched_setaffinity(0, sizeof orig_mask, &orig_mask);
    /* Two threads: not one vCPU's group, nothing written. */
    assert_int_equal(cgpin_vcpu(&cp, dir, 1, &s), -EINVAL);
    assert_string_equal(get("cg" DOM "/vcpu1/cpuset.cpus"), "0-1\n");
    /* No such group; an empty set. */
    assert_int_equal(cgpin_vcpu(&cp, dir, 7, &s), -ENOENT);
    cpuset_zero(&empty);
    assert_int_equal(cgpin_vcpu(&cp, dir, 0, &empty), -EINVAL);
}

/* The emulator and IOThread groups follow; other groups do not, and a
 * thread that exited is passed over. */
static void
test_emulator(void **st)
{
    struct cgpin cp;
    struct cpuset s;
    char dir[CGPIN_PATH_MAX], want[32];

    (void) st;
    init_at(&cp, "mountinfo");
    assert_int_equal(cgpin_domain(&cp, 100, dir, sizeof dir), 0);
    own_cpu(&s);
    snprintf(want, sizeof want, "%d", cpuset_next(&s, 0));
    assert_int_equal(cgpin_emulator(&cp, dir, &s), 0);
    assert_string_equal(get("cg" DOM "/emulator/cpuset.cpus"), want);
    assert_string_equal(get("cg" DOM "/iothread1/cpuset.cpus"), want);
    assert_string_equal(get("cg" DOM "/other/cpuset.cpus"), "0-1\n");
    assert_string_equal(get("cg" DOM "/vcpu1/cpuset.cpus"), "0-1\n");
    sched_setaffinity(0, sizeof orig_mask, &orig_mask);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mounts),
        cmocka_unit_test(test_domain),
        cmocka_unit_test(test_vcpu),
        cmocka_unit_test(test_emulator),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
