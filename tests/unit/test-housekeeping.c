/* tests/unit/test-housekeeping.c -- The housekeeping driver on fixture
 * trees.
 *
 * Each test builds a cgroup root, a /proc root and a workqueue mask file
 * in a fresh temporary directory and points the driver at them.  Plain
 * files accept any write, so the kernel's rules are put back by the test's
 * operation table (struct hk_ops), which wraps the real file operations:
 *  - cgroup v1: a cpuset.cpus write that would leave a child outside its
 *    parent fails (EINVAL/EBUSY), as in the kernel, so a wrong write
 *    order fails the test;
 *  - cgroup v2: "+cpuset"/"-cpuset" written to cgroup.subtree_control
 *    edits the controller list and creates/removes the children's
 *    cpuset.cpus;
 *  - kernel-managed interrupts: writes to chosen IRQs fail with EIO
 *    (injected through the table: a fixture file cannot refuse);
 *  - systemd units live in a table; SetUnitProperties calls are logged.
 * "Byte-identical" is checked on an od -c dump of the whole tree. */

#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/drivers/housekeeping.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "tests/unit/hostdrv-fixture.h"

/* ---- Fixture tree ------------------------------------------------------- */

static char *tdir;              /* The temporary directory. */
static char cg[600], pr[600], wq[600], run[600];

static void
mkdirs(const char *root, const char *rel)
{
    char *cmd;

    if (asprintf(&cmd, "mkdir -p '%s/%s'", root, rel) < 0
        || system(cmd) != 0) {
        exit(99);
    }
    free(cmd);
}

static void
put(const char *root, const char *rel, const char *text)
{
    char dir[1024];
    const char *slash = strrchr(rel, '/');

    if (slash) {
        snprintf(dir, sizeof dir, "%.*s", (int) (slash - rel), rel);
        mkdirs(root, dir);
    }
    fx_put(root, rel, text);
}

/* An exact dump (names and bytes) of everything below the tree. */
static char *
snapshot(void)
{
    char *cmd, *out = NULL;
    size_t len = 0;
    FILE *p;

    if (asprintf(&cmd, "cd '%s' && find . -type f | LC_ALL=C sort | "
                 "while read f; do echo \"== $f\"; od -c \"$f\"; done",
                 tdir) < 0) {
        exit(99);
    }
    p = popen(cmd, "r");
    free(cmd);
    if (!p) {
        exit(99);
    }
    for (;;) {
        out = realloc(out, len + 4097);
        size_t n = fread(out + len, 1, 4096, p);

        len += n;
        if (!n) {
            break;
        }
    }
    out[len] = '\0';
    pclose(p);
    return out;
}

/* Equal snapshots, or a diff of them on stderr and a failure. */
static void
same_tree(const char *before, const char *after)
{
    char *cmd, b[700], a[700];
    FILE *f;

    if (!strcmp(before, after)) {
        return;
    }
    snprintf(b, sizeof b, "%s.before", tdir);
    snprintf(a, sizeof a, "%s.after", tdir);
    f = fopen(b, "w");
    fputs(before, f);
    fclose(f);
    f = fopen(a, "w");
    fputs(after, f);
    fclose(f);
    if (asprintf(&cmd, "diff '%s' '%s' >&2; rm -f '%s' '%s'", b, a, b, a)
        >= 0) {
        if (system(cmd)) {
            fprintf(stderr, "(trees differ)\n");
        }
        free(cmd);
    }
    fail_msg("the tree is not byte-identical to the original");
}

static void
base_proc(void)
{
    put(pr, "irq/0/smp_affinity_list", "0\n");
    put(pr, "irq/1/smp_affinity_list", "0-3\n");
    put(pr, "irq/24/smp_affinity_list", "2\n");
    put(pr, "irq/25/smp_affinity_list", "3\n");
    put(pr, "irq/default_smp_affinity", "f\n");
    put(pr, "interrupts",
        "           CPU0       CPU1       CPU2       CPU3       \n"
        "  0:         44          0          0          0   IO-APIC   "
        "2-edge      timer\n"
        "  1:          9          1          0          0   IO-APIC   "
        "1-edge      i8042\n"
        " 24:          0          0        500          0   PCI-MSI "
        "65536-edge      virtio0-config\n"
        " 25:          0          0          0      70000   PCI-MSI "
        "512000-edge      virtio1-req.0\n"
        "NMI:          1          2          3          4   "
        "Non-maskable interrupts\n"
        "ERR:          7\n"
        "MIS:          0\n");
    put(pr, "1/comm", "init\n");
    put(pr, "77/comm", "sshd\n");
    put(pr, "pressure/cpu", "some avg10=1.50 avg60=0.20 avg300=0.10 "
        "total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
}

static void
base_v1(void)
{
    put(cg, "cpuset/cpuset.cpus", "0-3\n");
    put(cg, "cpuset/cpuset.mems", "0\n");
    put(cg, "cpuset/system.slice/cpuset.cpus", "0-3\n");
    put(cg, "cpuset/system.slice/a/cpuset.cpus", "2-3\n");
    put(cg, "cpuset/system.slice/b/cpuset.cpus", "0,2\n");
    put(cg, "cpuset/system.slice/libvirtd.service/cpuset.cpus", "1-3\n");
    put(cg, "cpuset/user.slice/cpuset.cpus", "1-3\n");
    put(cg, "cpuset/machine/cpuset.cpus", "0-3\n");
    put(cg, "cpuacct/system.slice/cpuacct.usage", "1000\n");
    put(cg, "cpuacct/system.slice/libvirtd.service/cpuacct.usage", "400\n");
    put(cg, "cpuacct/user.slice/cpuacct.usage", "20\n");
}

static void
base_v2(void)
{
    put(cg, "cgroup.controllers", "cpuset cpu io memory pids\n");
    put(cg, "cgroup.subtree_control", "cpu memory\n");
    put(cg, "system.slice/cgroup.subtree_control", "\n");
    put(cg, "system.slice/cpu.stat", "usage_usec 1500\nuser_usec 1000\n");
    put(cg, "system.slice/cpu.pressure", "some avg10=2.00 avg60=0.00 "
        "avg300=0.00 total=100\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
        "total=0\n");
    put(cg, "system.slice/libvirtd.service/cgroup.subtree_control", "\n");
    put(cg, "user.slice/cgroup.subtree_control", "\n");
    put(cg, "user.slice/cpu.stat", "usage_usec 25\n");
    put(cg, "user.slice/cpu.pressure", "some avg10=4.50 avg60=0.00 "
        "avg300=0.00 total=50\nfull avg10=0.00 avg60=0.00 avg300=0.00 "
        "total=0\n");
    put(cg, "machine.slice/cgroup.subtree_control", "\n");
}

static int
setup(void **state)
{
    (void) state;
    tdir = fx_tmpdir();
    snprintf(cg, sizeof cg, "%s/cgroup", tdir);
    snprintf(pr, sizeof pr, "%s/proc", tdir);
    snprintf(run, sizeof run, "%s/run", tdir);
    snprintf(wq, sizeof wq, "%s/wq/cpumask", tdir);
    mkdirs(tdir, "cgroup");
    mkdirs(tdir, "run");
    put(tdir, "wq/cpumask", "f\n");
    base_proc();
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    fx_rmtree(tdir);
    tdir = NULL;
    return 0;
}

/* ---- Test operations ------------------------------------------------ */

struct unit {
    const char *name;
    char cpus[64];
    bool loaded;
};

static struct fake {
    bool v1_rules;
    const char *eio[4];         /* IRQ numbers whose writes fail EIO */
    int refuse_errno;           /* ... or this errno if non-zero */
    unsigned n_writes, n_cg_writes, n_irq_writes, n_eio_tries;
    struct unit units[8];
    char calls[16][96];         /* "unit=list" per SetUnitProperties */
    unsigned n_calls;
} fk;

static int
fk_read(void *aux, const char *path, char *buf, size_t len)
{
    return hk_ops_real.read(aux, path, buf, len);
}

static bool
ends(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);

    return a >= b && !strcmp(s + a - b, suf);
}

/* The kernel's v1 rule: a cpuset within its parent, children within it. */
static int
v1_check(const char *path, const char *value)
{
    char dir[1024], other[1400], buf[256];
    struct cpuset want, s;
    struct dirent *de;
    DIR *d;

    if (cpuset_parse(&want, value)) {
        return -EINVAL;
    }
    snprintf(dir, sizeof dir, "%.*s", (int) (strrchr(path, '/') - path),
             path);
    snprintf(other, sizeof other, "%.*s/cpuset.cpus",
             (int) (strrchr(dir, '/') - dir), dir);
    if (hk_ops_real.read(NULL, other, buf, sizeof buf) >= 0
        && (cpuset_parse(&s, buf) || !cpuset_subset(&want, &s))) {
        return -EINVAL;
    }
    d = opendir(dir);
    while (d && (de = readdir(d))) {
        snprintf(other, sizeof other, "%s/%s/cpuset.cpus", dir, de->d_name);
        if (de->d_name[0] != '.'
            && hk_ops_real.read(NULL, other, buf, sizeof buf) >= 0
            && (cpuset_parse(&s, buf) || !cpuset_subset(&s, &want))) {
            closedir(d);
            return -EBUSY;
        }
    }
    if (d) {
        closedir(d);
    }
    return 0;
}

/* The kernel's v2 subtree_control: +c/-c edit the list; cpuset creates
 * or removes the children's cpuset.cpus. */
static int
v2_subtree(const char *path, const char *value)
{
    char cur[256], out[256] = "", tok[64], dir[1024], f[1400];
    struct dirent *de;
    bool add = value[0] == '+';
    DIR *d;

    if ((value[0] != '+' && value[0] != '-')
        || hk_ops_real.read(NULL, path, cur, sizeof cur) < 0) {
        return -EINVAL;
    }
    for (const char *p = cur; sscanf(p, " %63s", tok) == 1;) {
        p = strstr(p, tok) + strlen(tok);
        if (strcmp(tok, value + 1)) {
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s",
                     *out ? " " : "", tok);
        }
    }
    if (add) {
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s",
                 *out ? " " : "", value + 1);
    }
    hk_ops_real.write(NULL, path, out);
    if (strcmp(value + 1, "cpuset")) {
        return 0;
    }
    snprintf(dir, sizeof dir, "%.*s", (int) (strrchr(path, '/') - path),
             path);
    d = opendir(dir);
    while (d && (de = readdir(d))) {
        struct stat st;

        snprintf(f, sizeof f, "%s/%s", dir, de->d_name);
        if (de->d_name[0] == '.' || stat(f, &st) || !S_ISDIR(st.st_mode)) {
            continue;
        }
        strcat(f, "/cpuset.cpus");
        if (add) {
            FILE *fp = fopen(f, "w");

            fputs("\n", fp);
            fclose(fp);
        } else {
            unlink(f);
        }
    }
    if (d) {
        closedir(d);
    }
    return 0;
}

static int
fk_write(void *aux, const char *path, const char *value)
{
    fk.n_writes++;
    if (strstr(path, "/cgroup/")) {
        fk.n_cg_writes++;
    }
    if (strstr(path, "/proc/irq/")) {
        fk.n_irq_writes++;
        for (int i = 0; i < 4 && fk.eio[i]; i++) {
            char want[64];

            snprintf(want, sizeof want, "/irq/%s/smp_affinity_list",
                     fk.eio[i]);
            if (ends(path, want)) {
                fk.n_eio_tries++;
                return -(fk.refuse_errno ? fk.refuse_errno : EIO);
            }
        }
    }
    if (ends(path, "cgroup.subtree_control")) {
        return v2_subtree(path, value);
    }
    if (fk.v1_rules && ends(path, "cpuset.cpus")) {
        int error = v1_check(path, value);

        if (error) {
            return error;
        }
    }
    return hk_ops_real.write(aux, path, value);
}

static struct unit *
fk_unit(const char *name)
{
    for (int i = 0; i < 8 && fk.units[i].name; i++) {
        if (!strcmp(fk.units[i].name, name) && fk.units[i].loaded) {
            return &fk.units[i];
        }
    }
    return NULL;
}

static int
fk_unit_get(void *aux, const char *name, struct cpuset *cpus, char *err,
            size_t errlen)
{
    struct unit *u = fk_unit(name);

    (void) aux;
    if (!u) {
        snprintf(err, errlen, "%s not loaded", name);
        return -ENOENT;
    }
    return cpuset_parse(cpus, u->cpus);
}

static int
fk_unit_set(void *aux, const char *name, const struct cpuset *cpus,
            char *err, size_t errlen)
{
    struct unit *u = fk_unit(name);

    (void) aux;
    if (!u) {
        snprintf(err, errlen, "%s not loaded", name);
        return -ENOENT;
    }
    cpuset_format(cpus, u->cpus, sizeof u->cpus);
    if (fk.n_calls < 16) {
        char list[64];

        cpuset_format(cpus, list, sizeof list);
        snprintf(fk.calls[fk.n_calls++], sizeof fk.calls[0], "%s=%s", name,
                 list);
    }
    return 0;
}

static const struct hk_ops fk_ops = {
    fk_read, fk_write, fk_unit_get, fk_unit_set
};

static struct hk *
open_hk(bool dry_run)
{
    struct hk_conf c;
    struct hk *hk = NULL;
    char err[256];

    hk_conf_init(&c);
    c.cgroup_root = cg;
    c.proc_root = pr;
    c.wq_path = wq;
    c.run_root = run;
    c.dry_run = dry_run;
    assert_int_equal(hk_open(&c, &fk_ops, NULL, &hk, err, sizeof err), 0);
    return hk;
}

static struct cpuset
set_of(const char *list)
{
    struct cpuset s;

    assert_int_equal(cpuset_parse(&s, list), 0);
    return s;
}

static int n_recorded;

static int
count_rec(void *aux, const struct hk_record *r)
{
    (void) aux;
    (void) r;
    n_recorded++;
    return 0;
}

static void
reset_fake(void)
{
    memset(&fk, 0, sizeof fk);
    n_recorded = 0;
}

/* ---- cgroup v1 ---------------------------------------------------------- */

static void
test_v1(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;
    char *before, *after;
    unsigned failed = 9;
    size_t n;

    (void) state;
    reset_fake();
    fk.v1_rules = true;
    base_v1();
    before = snapshot();
    hk = open_hk(false);
    hk_set_recorder(hk, count_rec, NULL);
    assert_int_equal(hk_mode(hk), HK_MODE_V1);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);

    assert_string_equal(fx_get(cg, "cpuset/system.slice/cpuset.cpus"),
                        "0-1");
    /* No CPU in the set: the parent's new CPUs. */
    assert_string_equal(fx_get(cg, "cpuset/system.slice/a/cpuset.cpus"),
                        "0-1");
    assert_string_equal(fx_get(cg, "cpuset/system.slice/b/cpuset.cpus"),
                        "0");
    assert_string_equal(
        fx_get(cg, "cpuset/system.slice/libvirtd.service/cpuset.cpus"), "1");
    assert_string_equal(fx_get(cg, "cpuset/user.slice/cpuset.cpus"), "1");
    assert_string_equal(fx_get(cg, "cpuset/machine/cpuset.cpus"), "0-3");
    assert_int_equal(rep.n_cgroups, 5);
    /* init.scope and virtqemud.service are not there. */
    assert_int_equal(rep.n_absent, 2);
    hk_records(hk, &n);
    assert_int_equal(n, 5 + 3 + 1);     /* cpusets, IRQs 1/24/25, wq */
    assert_int_equal(n_recorded, (int) n);

    /* Widening again keeps the v1 rule (top-down). */
    set = set_of("0-2");
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_string_equal(fx_get(cg, "cpuset/system.slice/a/cpuset.cpus"),
                        "2");
    assert_string_equal(fx_get(cg, "cpuset/system.slice/cpuset.cpus"),
                        "0-2");

    assert_int_equal(hk_restore(hk, NULL, 0, &failed), 0);
    assert_int_equal(failed, 0);
    after = snapshot();
    same_tree(before, after);
    hk_records(hk, &n);
    assert_int_equal(n, 0);
    free(before);
    free(after);
    hk_close(hk);
}

/* ---- cgroup v2 ---------------------------------------------------------- */

static void
test_v2(void **state)
{
    struct cpuset set = set_of("0");
    struct hk_report rep;
    struct hk *hk;
    char *before, *after;
    unsigned failed = 9;

    (void) state;
    reset_fake();
    base_v2();
    before = snapshot();
    hk = open_hk(false);
    assert_int_equal(hk_mode(hk), HK_MODE_V2);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_string_equal(fx_get(cg, "cgroup.subtree_control"),
                        "cpu memory cpuset");
    assert_string_equal(fx_get(cg, "system.slice/cgroup.subtree_control"),
                        "cpuset");
    assert_string_equal(fx_get(cg, "system.slice/cpuset.cpus"), "0");
    assert_string_equal(fx_get(cg, "user.slice/cpuset.cpus"), "0");
    assert_string_equal(
        fx_get(cg, "system.slice/libvirtd.service/cpuset.cpus"), "0");
    /* A sibling gets the controller's file but keeps "all CPUs". */
    assert_string_equal(fx_get(cg, "machine.slice/cpuset.cpus"), "");
    assert_int_equal(rep.n_controllers, 2);
    assert_int_equal(rep.n_cgroups, 3);
    assert_int_equal(rep.n_absent, 2);

    assert_int_equal(hk_restore(hk, NULL, 0, &failed), 0);
    assert_int_equal(failed, 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

/* ---- systemd ------------------------------------------------------------ */

static void
test_systemd(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;
    char *before;

    (void) state;
    reset_fake();
    base_v2();
    mkdirs(run, "systemd/system");
    fk.units[0] = (struct unit) { "system.slice", "", true };
    fk.units[1] = (struct unit) { "user.slice", "", true };
    fk.units[2] = (struct unit) { "init.scope", "0-1", true };
    fk.units[3] = (struct unit) { "libvirtd.service", "1-3", true };
    fk.units[4] = (struct unit) { "virtqemud.service", "", false };
    before = snapshot();
    hk = open_hk(true);             /* A dry run asks, never sets. */
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(rep.n_cgroups, 3);
    assert_int_equal(fk.n_calls, 0);
    hk_close(hk);
    hk = open_hk(false);
    assert_int_equal(hk_mode(hk), HK_MODE_SYSTEMD);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(fk.n_calls, 3);
    assert_string_equal(fk.calls[0], "system.slice=0-1");
    assert_string_equal(fk.calls[1], "user.slice=0-1");
    assert_string_equal(fk.calls[2], "libvirtd.service=1");
    assert_int_equal(rep.n_cgroups, 3);
    assert_int_equal(rep.n_absent, 1);
    assert_int_equal(fk.n_cg_writes, 0);        /* Not behind its back. */

    assert_int_equal(hk_restore(hk, NULL, 0, NULL), 0);
    assert_string_equal(fk.units[0].cpus, "");
    assert_string_equal(fk.units[1].cpus, "");
    assert_string_equal(fk.units[2].cpus, "0-1");
    assert_string_equal(fk.units[3].cpus, "1-3");
    assert_int_equal(fk.n_cg_writes, 0);
    free(before);
    hk_close(hk);
}

/* The real sd-bus code with no system bus fails cleanly. */
static void
test_sdbus_no_bus(void **state)
{
    struct hk_sdbus *b = hk_sdbus_new();
    struct cpuset cpus;
    struct hk_conf c;
    struct hk *hk;
    char err[256] = "", addr[700];
    struct cpuset set = set_of("0");

    (void) state;
    snprintf(addr, sizeof addr, "unix:path=%s/no-such-bus", tdir);
    setenv("DBUS_SYSTEM_BUS_ADDRESS", addr, 1);
    assert_true(hk_ops_real.unit_get_cpus(b, "system.slice", &cpus, err,
                                          sizeof err) < 0);
#ifdef HAVE_LIBSYSTEMD
    assert_non_null(strstr(err, "system bus"));
#else
    assert_non_null(strstr(err, "libsystemd"));
#endif
    hk_sdbus_free(b);

    /* Through the driver with its own real operations. */
    base_v2();
    mkdirs(run, "systemd/system");
    hk_conf_init(&c);
    c.cgroup_root = cg;
    c.proc_root = pr;
    c.wq_path = wq;
    c.run_root = run;
    c.irqs = c.workqueues = false;
    assert_int_equal(hk_open(&c, NULL, NULL, &hk, err, sizeof err), 0);
    assert_int_equal(hk_mode(hk), HK_MODE_SYSTEMD);
    assert_true(hk_apply(hk, &set, NULL) < 0);
#ifdef HAVE_LIBSYSTEMD
    assert_non_null(strstr(hk_error(hk), "system bus"));
#endif
    assert_non_null(strstr(hk_error(hk), "unit "));
    hk_close(hk);
    unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
}

/* ---- Interrupts --------------------------------------------------------- */

static void
test_irqs_refused(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;
    char *before, *after;

    (void) state;
    reset_fake();
    fk.eio[0] = "25";
    before = snapshot();
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_string_equal(fx_get(pr, "irq/0/smp_affinity_list"), "0");
    assert_string_equal(fx_get(pr, "irq/1/smp_affinity_list"), "0-1");
    assert_string_equal(fx_get(pr, "irq/24/smp_affinity_list"), "0-1");
    assert_string_equal(fx_get(pr, "irq/25/smp_affinity_list"), "3");
    assert_int_equal(rep.n_irqs, 2);
    assert_int_equal(rep.n_irqs_refused, 1);
    assert_int_equal(rep.refused[0], 25);
    assert_int_equal(rep.irqbalance_pid, 0);
    assert_int_equal(fk.n_eio_tries, 1);

    /* Not tried again, still reported. */
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(fk.n_eio_tries, 1);
    assert_int_equal(rep.n_irqs_refused, 1);
    assert_int_equal(rep.n_irqs, 0);

    /* Restore does not write the refused one (it would fail again). */
    fk.eio[1] = "0";
    assert_int_equal(hk_restore(hk, NULL, 0, NULL), 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

/* Some kernels refuse a kernel-managed interrupt with EPERM instead of
 * EIO (root with CAP_SYS_ADMIN writing /proc/irq): refused the same. */
static void
test_irqs_refused_eperm(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;

    (void) state;
    reset_fake();
    fk.eio[0] = "25";
    fk.refuse_errno = EPERM;
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_string_equal(fx_get(pr, "irq/25/smp_affinity_list"), "3");
    assert_int_equal(rep.n_irqs, 2);
    assert_int_equal(rep.n_irqs_refused, 1);
    assert_int_equal(rep.refused[0], 25);
    assert_int_equal(hk_restore(hk, NULL, 0, NULL), 0);
    hk_close(hk);
}

static void
test_irqbalance(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;
    char *before, *after;

    (void) state;
    reset_fake();
    put(pr, "4242/comm", "irqbalance\n");
    before = snapshot();
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(rep.irqbalance_pid, 4242);
    assert_int_equal(rep.n_irqs, 0);
    assert_int_equal(fk.n_irq_writes, 0);
    assert_true(rep.wq_moved);              /* The other parts still act. */
    assert_int_equal(hk_restore(hk, NULL, 0, NULL), 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

/* ---- Workqueues ------------------------------------------------------- */

static void
test_wqmask(void **state)
{
    struct cpuset s;
    struct cpuset set = set_of("0");
    char buf[256];
    struct hk *hk;

    (void) state;
    reset_fake();
    assert_int_equal(hk_mask_parse("ff,ffffffff", &s), 0);
    assert_int_equal(cpuset_count(&s), 40);
    assert_int_equal(hk_mask_parse("1,00000000\n", &s), 0);
    assert_true(cpuset_has(&s, 32) && cpuset_count(&s) == 1);
    assert_int_equal(hk_mask_parse("xyz", &s), -EINVAL);
    assert_int_equal(hk_mask_parse(",ff", &s), -EINVAL);
    assert_int_equal(hk_mask_parse("1,ff", &s), -EINVAL);
    assert_int_equal(hk_mask_parse("123456789", &s), -EINVAL);
    assert_int_equal(hk_mask_parse("", &s), -EINVAL);
    s = set_of("0,33");
    assert_int_equal(hk_mask_format(&s, "ff,ffffffff", buf, sizeof buf), 0);
    assert_string_equal(buf, "02,00000001");
    s = set_of("40");
    assert_int_equal(hk_mask_format(&s, "ff,ffffffff", buf, sizeof buf),
                     -ERANGE);

    put(tdir, "wq/cpumask", "ff,ffffffff\n");
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, NULL), 0);
    assert_string_equal(fx_get(tdir, "wq/cpumask"), "00,00000001");
    assert_int_equal(hk_restore(hk, NULL, 0, NULL), 0);
    assert_string_equal(fx_get(tdir, "wq/cpumask"), "ff,ffffffff");

    /* 512 CPUs: the original (143 bytes) cannot be recorded, so the
     * mask is left as it is. */
    buf[0] = '\0';
    for (int g = 0; g < 16; g++) {
        strcat(buf, g ? ",ffffffff" : "ffffffff");
    }
    strcat(buf, "\n");
    put(tdir, "wq/cpumask", buf);
    assert_int_equal(hk_apply(hk, &set, NULL), -ENAMETOOLONG);
    assert_non_null(strstr(hk_error(hk), "too long"));
    assert_int_equal(strlen(fx_get(tdir, "wq/cpumask")), 16 * 9 - 1);
    assert_null(strchr(fx_get(tdir, "wq/cpumask"), '0'));
    hk_close(hk);
}

/* ---- Modes and rules --------------------------------------------------- */

static void
test_dry_run(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_report rep;
    struct hk *hk;
    char *before, *after;
    size_t n;

    (void) state;
    reset_fake();
    base_v1();
    before = snapshot();
    hk = open_hk(true);
    hk_set_recorder(hk, count_rec, NULL);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(rep.n_cgroups, 5);
    assert_int_equal(rep.n_irqs, 3);        /* 25 would be tried too. */
    assert_true(rep.wq_moved);
    assert_int_equal(fk.n_writes, 0);
    assert_int_equal(n_recorded, 0);
    hk_records(hk, &n);
    assert_int_equal(n, 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);

    /* v2: the controller is not enabled either. */
    teardown(state);
    setup(state);
    reset_fake();
    base_v2();
    before = snapshot();
    hk = open_hk(true);
    assert_int_equal(hk_apply(hk, &set, &rep), 0);
    assert_int_equal(rep.n_controllers, 2);
    assert_int_equal(rep.n_cgroups, 3);
    assert_int_equal(fk.n_writes, 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

static void
test_set_rules(void **state)
{
    struct cpuset empty, no0 = set_of("1-3");
    struct hk *hk;
    char *before, *after;

    (void) state;
    reset_fake();
    base_v1();
    before = snapshot();
    cpuset_zero(&empty);
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &empty, NULL), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "empty"));
    assert_int_equal(hk_apply(hk, &no0, NULL), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "CPU0"));
    assert_int_equal(fk.n_writes, 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

static void
test_parts_off(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_conf c;
    struct hk *hk;
    char err[256];

    (void) state;
    reset_fake();
    base_v1();
    for (int part = 0; part < 3; part++) {
        teardown(state);
        setup(state);
        base_v1();
        hk_conf_init(&c);
        c.cgroup_root = cg;
        c.proc_root = pr;
        c.wq_path = wq;
        c.run_root = run;
        c.cpusets = part != 0;
        c.irqs = part != 1;
        c.workqueues = part != 2;
        assert_int_equal(hk_open(&c, &fk_ops, NULL, &hk, err, sizeof err),
                         0);
        assert_int_equal(hk_apply(hk, &set, NULL), 0);
        assert_string_equal(fx_get(cg, "cpuset/user.slice/cpuset.cpus"),
                            part == 0 ? "1-3" : "1");
        assert_string_equal(fx_get(pr, "irq/24/smp_affinity_list"),
                            part == 1 ? "2" : "0-1");
        assert_string_equal(fx_get(tdir, "wq/cpumask"),
                            part == 2 ? "f" : "3");
        hk_close(hk);
    }
}

static void
test_bad_conf(void **state)
{
    const char *bad[] = { "", "/abs", "a/../b", "..", "a b", "a//b", "a/",
                          "./a" };
    struct hk_conf c;
    struct hk *hk = NULL;
    char err[256];

    (void) state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hk_conf_init(&c);
        c.cgroup_root = cg;
        c.groups[0] = bad[i];
        c.n_groups = 1;
        assert_int_equal(hk_open(&c, &fk_ops, NULL, &hk, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "bad group name"));
    }
    hk_conf_init(&c);
    c.proc_root = "relative";
    assert_int_equal(hk_open(&c, &fk_ops, NULL, &hk, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "relative"));
}

/* ---- Garbage ------------------------------------------------------------ */

static void
test_garbage(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk_pressure p;
    uint64_t counts[8], ns;
    struct hk *hk;

    (void) state;
    reset_fake();
    base_v1();
    put(cg, "cpuset/user.slice/cpuset.cpus", "one-two\n");
    put(pr, "irq/24/smp_affinity_list", "zz\n");
    put(tdir, "wq/cpumask", "not-hex\n");
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, NULL), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "user.slice/cpuset.cpus"));
    /* The other parts still act on what is readable. */
    assert_string_equal(fx_get(pr, "irq/1/smp_affinity_list"), "0-1");
    assert_string_equal(fx_get(pr, "irq/24/smp_affinity_list"), "zz");
    assert_string_equal(fx_get(tdir, "wq/cpumask"), "not-hex");
    hk_close(hk);

    put(cg, "cpuset/user.slice/cpuset.cpus", "1-3\n");
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, NULL), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "irq/24/smp_affinity_list"));
    assert_string_equal(fx_get(cg, "cpuset/user.slice/cpuset.cpus"), "1");
    hk_close(hk);

    put(pr, "irq/24/smp_affinity_list", "2\n");
    hk = open_hk(false);
    assert_int_equal(hk_apply(hk, &set, NULL), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "wq/cpumask"));

    put(pr, "interrupts", "garbage\n 0: 1 2\n");
    assert_int_equal(hk_irq_counts(hk, counts, 8), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "interrupts"));
    put(pr, "interrupts", "  CPU0 CPU1\nno colon here\n");
    assert_int_equal(hk_irq_counts(hk, counts, 8), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "interrupts:2"));
    put(cg, "cpuset/system.slice/tasks", "1\n2 3\n");
    assert_int_equal(hk_cpu_pressure(hk, &p), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "system.slice/tasks"));
    put(cg, "cpuacct/user.slice/cpuacct.usage", "12ab\n");
    assert_int_equal(hk_cpu_time(hk, &ns), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "cpuacct.usage"));
    hk_close(hk);
}

/* ---- Recording and the journal ------------------------------------------ */

static int
refuse_rec(void *aux, const struct hk_record *r)
{
    (void) aux;
    (void) r;
    return -ENOSPC;
}

static void
test_recorder_fails(void **state)
{
    struct cpuset set = set_of("0-1");
    struct hk *hk;
    char *before, *after;

    (void) state;
    reset_fake();
    base_v1();
    before = snapshot();
    hk = open_hk(false);
    hk_set_recorder(hk, refuse_rec, NULL);
    assert_int_equal(hk_apply(hk, &set, NULL), -ENOSPC);
    assert_non_null(strstr(hk_error(hk), "cannot record"));
    assert_int_equal(fk.n_writes, 0);
    after = snapshot();
    same_tree(before, after);
    free(before);
    free(after);
    hk_close(hk);
}

struct collect {
    struct hk_record r[64];
    size_t n;
};

static int
collect_cb(void *aux, const struct jnl_entry *e)
{
    struct collect *c = aux;

    if (c->n < 64 && hk_record_from_jnl(e, &c->r[c->n])) {
        c->n++;
    }
    return 0;
}

/* A crash after confining: the next start restores from the journal. */
static void
test_journal_crash(void **state)
{
    struct cpuset set = set_of("0");
    struct collect col = { .n = 0 };
    struct jnl *j, *j2;
    struct hk *hk, *hk2;
    char *before, *after, *jdir, jpath[700], err[256];
    size_t n;

    (void) state;
    reset_fake();
    fk.v1_rules = true;
    base_v1();
    before = snapshot();
    /* The journal's directory must be private (jnl_load checks). */
    jdir = fx_tmpdir();
    snprintf(jpath, sizeof jpath, "%s/journal", jdir);
    assert_int_equal(jnl_create(jpath, &j), 0);
    hk = open_hk(false);
    hk_set_recorder(hk, hk_jnl_record, j);
    assert_int_equal(hk_apply(hk, &set, NULL), 0);
    hk_records(hk, &n);
    assert_int_equal(jnl_count(j), n);
    hk_close(hk);               /* "Crash": nothing restored. */
    jnl_close(j);
    after = snapshot();
    assert_string_not_equal(before, after);
    free(after);

    if (jnl_load(jpath, &j2, err, sizeof err)) {
        fail_msg("%s", err);
    }
    jnl_foreach(j2, JNL_N_KINDS, collect_cb, &col);
    assert_int_equal(col.n, n);
    hk2 = open_hk(false);
    assert_int_equal(hk_restore(hk2, col.r, col.n, NULL), 0);
    after = snapshot();
    same_tree(before, after);
    jnl_remove(j2);
    jnl_close(j2);
    fx_rmtree(jdir);
    hk_close(hk2);
    free(before);
    free(after);
}

/* Every housekeeping kind survives the journal file; bad lines are
 * refused with their line number. */
static void
test_journal_kinds(void **state)
{
    static const struct hk_record in[] = {
        { HK_REC_CGROUP, "cpuset/system.slice/cpuset.cpus", "0-3" },
        { HK_REC_CGROUP, "user.slice/cpuset.cpus", "" },
        { HK_REC_UNIT, "libvirtd.service", "1-3" },
        { HK_REC_UNIT, "init.scope", "" },
        { HK_REC_IRQ, "25", "3" },
        { HK_REC_WQMASK, "", "ff,ffffffff" },
    };
    static const char *const bad[] = {
        "irq x 3", "irq 25", "unit a/b.service 0", "cgroup ../x 0",
        "wqmask ", "cgroup a\001 0", "irq 25 0\\1",
    };
    const size_t n = sizeof in / sizeof in[0];
    struct hk_record dup = { HK_REC_IRQ, "25", "0-1" };
    struct hk_record nl = { HK_REC_CGROUP, "a/cpuset.cpus", "0\\1" };
    struct collect col = { .n = 0 };
    char *jdir = fx_tmpdir(), jpath[700], err[256], text[512];
    struct jnl *j;

    (void) state;
    snprintf(jpath, sizeof jpath, "%s/journal", jdir);
    assert_int_equal(jnl_create(jpath, &j), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(hk_jnl_record(j, &in[i]), 0);
    }
    assert_int_equal(hk_jnl_record(j, &dup), 0);      /* First wins. */
    assert_int_equal(hk_jnl_record(j, &nl), -EINVAL);
    assert_int_equal(jnl_count(j), n);
    jnl_close(j);
    if (jnl_load(jpath, &j, err, sizeof err)) {
        fail_msg("%s", err);
    }
    jnl_foreach(j, JNL_N_KINDS, collect_cb, &col);
    assert_int_equal(col.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(col.r[i].kind, in[i].kind);
        assert_string_equal(col.r[i].key, in[i].key);
        assert_string_equal(col.r[i].value, in[i].value);
    }
    jnl_close(j);

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "vpower-journal 2\n%s\nend 1\n",
                 bad[i]);
        fx_put(jdir, "journal", text);
        assert_int_equal(jnl_load(jpath, &j, err, sizeof err), -EINVAL);
        assert_non_null(strstr(err, "journal:2:"));
    }
    fx_rmtree(jdir);
}

/* ---- Readers ------------------------------------------------------------ */

static void
test_readers(void **state)
{
    uint64_t counts[8], ns;
    struct hk_pressure p;
    struct hk *hk;

    (void) state;
    reset_fake();
    base_v1();
    hk = open_hk(false);
    assert_int_equal(hk_irq_counts(hk, counts, 8), 4);
    assert_int_equal(counts[0], 44 + 9 + 1);
    assert_int_equal(counts[1], 1 + 2);
    assert_int_equal(counts[2], 500 + 3);
    assert_int_equal(counts[3], 70000 + 4);
    assert_int_equal(counts[4], 0);
    /* Offline CPUs leave gaps in the header. */
    put(pr, "interrupts", "      CPU0  CPU2\n 5:  3  8  x  y\n");
    assert_int_equal(hk_irq_counts(hk, counts, 8), 2);
    assert_int_equal(counts[0], 3);
    assert_int_equal(counts[1], 0);
    assert_int_equal(counts[2], 8);

    /* v1: the groups' threads' run_delay, never the system's pressure
     * (1.50 here), which counts the packed guests' waiting too. */
    put(cg, "cpuset/system.slice/tasks", "100\n");
    put(cg, "cpuset/system.slice/a/tasks", "101\n102\n");
    put(cg, "cpuset/user.slice/tasks", "");
    put(pr, "100/schedstat", "5 2000000 7\n");
    put(pr, "101/schedstat", "5 3000000 7\n");     /* 102 has exited */
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);
    assert_true(p.some_avg10 == 0.0);                 /* first call */
    assert_int_equal(p.some_total_us, 5000);
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);
    assert_true(p.some_avg10 == 0.0);                 /* no waiting */
    put(pr, "101/schedstat", "5 903000000 7\n");   /* +0.9 s waited */
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);
    assert_true(p.some_avg10 > 10.0);
    assert_int_equal(p.some_total_us, 905000);
    /* A thread that exits takes its run_delay along: the sum drops, but
     * neither the total nor the window's waiting goes back. */
    put(pr, "101/schedstat", "");
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);
    assert_int_equal(p.some_total_us, 905000);
    assert_true(p.some_avg10 > 10.0);
    put(pr, "101/schedstat", "5 3000000 7\n");      /* a new thread 101 */
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);
    assert_int_equal(p.some_total_us, 908000);
    put(cg, "cpuset/user.slice/tasks", "12x\n");
    assert_int_equal(hk_cpu_pressure(hk, &p), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "user.slice/tasks"));
    /* libvirtd.service is inside system.slice: not counted twice. */
    assert_int_equal(hk_cpu_time(hk, &ns), 0);
    assert_int_equal(ns, 1000 + 20);
    hk_close(hk);

    teardown(state);
    setup(state);
    base_v2();
    hk = open_hk(false);
    assert_int_equal(hk_cpu_pressure(hk, &p), 0);     /* v2: the groups */
    assert_true(p.some_avg10 > 4.49 && p.some_avg10 < 4.51);
    assert_int_equal(p.some_total_us, 150);
    assert_int_equal(hk_cpu_time(hk, &ns), 0);
    assert_int_equal(ns, (1500 + 25) * 1000);
    hk_close(hk);
}

/* A /proc/PID/task/TID/stat line: name, state, 35 fields, then the CPU
 * the thread last ran on (field 39). */
static void
put_thread(unsigned pid, unsigned tid, const char *name, unsigned cpu,
           unsigned long long slices)
{
    char rel[128], line[512], sched[128];
    size_t o;

    o = (size_t) snprintf(line, sizeof line, "%u (%s) S", tid, name);
    for (unsigned f = 4; f <= 38; f++) {
        o += (size_t) snprintf(line + o, sizeof line - o, " %u", f);
    }
    snprintf(line + o, sizeof line - o, " %u 0 0\n", cpu);
    snprintf(rel, sizeof rel, "%u/task/%u/stat", pid, tid);
    put(pr, rel, line);
    snprintf(sched, sizeof sched, "123 456 %llu\n", slices);
    snprintf(rel, sizeof rel, "%u/task/%u/schedstat", pid, tid);
    put(pr, rel, sched);
}

static const struct hk_waker *
find_waker(const struct hk_waker *w, int n, bool thread, const char *key)
{
    for (int i = 0; i < n; i++) {
        char id[16];

        snprintf(id, sizeof id, "%" PRIu32, w[i].tid);
        if (w[i].thread == thread
            && !strcmp(thread ? id : w[i].label, key)) {
            return &w[i];
        }
    }
    return NULL;
}

/* What ran on a set of CPUs: interrupt rows with counts there (summed
 * over its columns, system-wide rows skipped), and threads with their
 * name (spaces and parentheses kept), run count and whether their last
 * CPU lies in the set. */
static void
test_wakers(void **state)
{
    struct hk_waker *w;
    const struct hk_waker *e;
    struct hk *hk;
    struct cpuset three = set_of("3"), two_three = set_of("2-3");
    int n;

    (void) state;
    reset_fake();
    base_v1();
    put_thread(77, 77, "sshd", 3, 40);
    put_thread(77, 78, "a (b) c)", 1, 9);
    put_thread(90, 91, "kworker/3:1", 3, 7);
    mkdirs(pr, "92/task/93");                   /* exited meanwhile */
    hk = open_hk(false);

    n = hk_wakers(hk, &three, false, &w);
    assert_int_equal(n, 2);                     /* 25 and NMI */
    e = find_waker(w, n, false, "25");
    assert_non_null(e);
    assert_int_equal(e->count, 70000);
    assert_string_equal(e->name, "PCI-MSI 512000-edge virtio1-req.0");
    e = find_waker(w, n, false, "NMI");
    assert_non_null(e);
    assert_int_equal(e->count, 4);
    free(w);
    /* A long description keeps its tail, where the device is named. */
    put(pr, "interrupts",
        "           CPU0       CPU1       CPU2       CPU3       \n"
        " 26:          0          0          0          5   "
        "IR-PCI-MSIX-0000:00:1f.2    524288-edge      "
        "ahci[0000:00:1f.2]\n");
    assert_int_equal(hk_wakers(hk, &three, false, &w), 1);
    assert_string_equal(w[0].name,
                        "...-0000:00:1f.2 524288-edge ahci[0000:00:1f.2]");
    assert_int_equal(strlen(w[0].name), sizeof w[0].name - 1);
    free(w);
    base_proc();

    n = hk_wakers(hk, &two_three, true, &w);
    assert_int_equal(n, 3 + 3);                 /* 24, 25, NMI; threads */
    assert_int_equal(find_waker(w, n, false, "NMI")->count, 3 + 4);
    e = find_waker(w, n, true, "77");
    assert_non_null(e);
    assert_string_equal(e->name, "sshd");
    assert_true(e->on_set);
    assert_int_equal(e->count, 40);
    e = find_waker(w, n, true, "78");
    assert_non_null(e);
    assert_string_equal(e->name, "a (b) c)");
    assert_false(e->on_set);
    assert_true(find_waker(w, n, true, "91")->on_set);
    free(w);

    /* Bad thread files: an error naming the file, nothing returned. */
    put(pr, "77/task/78/stat", "78 no name here\n");
    assert_int_equal(hk_wakers(hk, &three, true, &w), -EINVAL);
    assert_null(w);
    assert_non_null(strstr(hk_error(hk), "78/stat"));
    put(pr, "77/task/78/stat", "78 (x) S 1 2\n");
    assert_int_equal(hk_wakers(hk, &three, true, &w), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "no CPU field"));
    put_thread(77, 78, "x", 1, 9);
    put(pr, "77/task/78/schedstat", "lots\n");
    assert_int_equal(hk_wakers(hk, &three, true, &w), -EINVAL);
    assert_non_null(strstr(hk_error(hk), "78/schedstat"));
    hk_close(hk);
}

/* The same reader on the real /proc: this very thread is there, named,
 * with a run count, on the set of every CPU. */
static void
test_wakers_real_proc(void **state)
{
    struct hk_conf c;
    struct hk_waker *w;
    struct hk *hk = NULL;
    struct cpuset all;
    char err[256], me[16], comm[64];
    const struct hk_waker *e;
    FILE *f;
    int n;

    (void) state;
    hk_conf_init(&c);
    c.cgroup_root = cg;
    c.proc_root = "/proc";
    c.wq_path = wq;
    c.run_root = run;
    c.cpusets = c.irqs = c.workqueues = false;
    assert_int_equal(hk_open(&c, NULL, NULL, &hk, err, sizeof err), 0);
    cpuset_zero(&all);
    for (unsigned k = 0; k < POL_MAX_CPUS; k++) {
        cpuset_set(&all, k);
    }
    n = hk_wakers(hk, &all, true, &w);
    assert_true(n > 1);
    snprintf(me, sizeof me, "%ld", (long) getpid());
    e = find_waker(w, n, true, me);
    assert_non_null(e);
    assert_true(e->on_set);
    assert_true(e->count > 0);
    f = fopen("/proc/self/comm", "r");
    assert_non_null(f);
    assert_non_null(fgets(comm, sizeof comm, f));
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    assert_string_equal(e->name, comm);
    assert_false(w[0].thread);          /* some interrupt ran somewhere */
    free(w);
    hk_close(hk);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_systemd, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sdbus_no_bus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_irqs_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_irqs_refused_eperm, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_irqbalance, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wqmask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parts_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_conf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recorder_fails, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_journal_crash, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_journal_kinds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wakers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wakers_real_proc, setup,
                                        teardown),
    };

    /* HK_TEST_DEBUG=1 shows what the driver moves. */
    log_init("test-housekeeping", false,
             getenv("HK_TEST_DEBUG") ? LOG_LVL_DEBUG : LOG_LVL_WARN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
