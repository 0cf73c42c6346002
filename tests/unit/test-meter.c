/* tests/unit/test-meter.c -- manager/meter on fixture powercap and hwmon
 * trees and a faked OpenIPMI device.
 *
 * Each test builds its own tree in a fresh temporary directory, the way
 * the kernel lays out /sys/class/powercap (flat intel-rapl:P[:S] zones)
 * and /sys/class/hwmon (hwmonN with its attributes either in place or in
 * device/).  Files the kernel would refuse to read are made unreadable
 * in ways that also work as root: a directory where a file is expected,
 * a dangling symlink, and chmod 000 only when not root.
 *
 * The machine has no BMC, so the OpenIPMI device is a regular file and
 * ioctl(2) is wrapped (-Wl,--wrap=ioctl): the wrapper checks the request
 * vpowerd sends and queues the reply a BMC would give, so the real
 * send/poll/receive path runs. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/ipmi.h>

#include "manager/log.h"

#define S_NS 1000000000ull

static char root[256];

static void
put(const char *rel, const char *text)
{
    char path[600], cmd[700];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    remove(path);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Replaces file 'rel' by a directory: open() works, read() is EISDIR. */
static void
make_dir(const char *rel)
{
    char path[600];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    remove(path);
    assert_int_equal(mkdir(path, 0755), 0);
}

static void
make_dangling(const char *rel)
{
    char path[600];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    remove(path);
    assert_int_equal(symlink("/nonexistent/vpower-meter", path), 0);
}

static const char *
sub(const char *rel)
{
    static char path[600];

    snprintf(path, sizeof path, "%s/%s", root, rel);
    return path;
}

static int
setup(void **st)
{
    (void) st;
    snprintf(root, sizeof root, "%s/vp-meter-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int
teardown(void **st)
{
    char cmd[300];

    (void) st;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

/* Discovery below the fixture root only (no IPMI unless asked). */
static void
discover(struct meter_list *list, const char *ipmi_dev)
{
    char pc[600], hw[600];
    struct meter_roots roots = { .powercap = pc, .hwmon = hw,
                                 .ipmi_dev = ipmi_dev ? ipmi_dev : "" };

    snprintf(pc, sizeof pc, "%s", sub("powercap"));
    snprintf(hw, sizeof hw, "%s", sub("hwmon"));
    memset(list, 0, sizeof *list);
    meter_discover(&roots, list);
}

/* The problem mentioning both 'a' and 'b', or NULL. */
static const char *
problem(const struct meter_list *list, const char *a, const char *b)
{
    for (size_t i = 0; i < list->n_problems; i++) {
        if (strstr(list->problems[i], a) && strstr(list->problems[i], b)) {
            return list->problems[i];
        }
    }
    return NULL;
}

static void
assert_problem(const struct meter_list *list, const char *a, const char *b)
{
    if (!problem(list, a, b)) {
        for (size_t i = 0; i < list->n_problems; i++) {
            print_message("problem: %s\n", list->problems[i]);
        }
        fail_msg("no problem naming \"%s\" with \"%s\"", a, b);
    }
}

static const struct meter_info *
find(const struct meter_list *list, const char *name)
{
    for (size_t i = 0; i < list->n; i++) {
        if (!strcmp(list->meters[i].name, name)) {
            return &list->meters[i];
        }
    }
    fail_msg("no meter %s", name);
    return NULL;
}

static void
rapl_zone(const char *zone, const char *name, const char *energy,
          const char *max)
{
    char rel[128];

    snprintf(rel, sizeof rel, "powercap/%s/name", zone);
    put(rel, name);
    snprintf(rel, sizeof rel, "powercap/%s/energy_uj", zone);
    put(rel, energy);
    snprintf(rel, sizeof rel, "powercap/%s/max_energy_range_uj", zone);
    put(rel, max);
}

/* Two packages, each with DRAM, package 0 also with core; the control
 * type directory and an MMIO alias of package 0, which must be skipped. */
static void
rapl_two_packages(void)
{
    rapl_zone("intel-rapl:0", "package-0\n", "1000\n", "262143328850\n");
    rapl_zone("intel-rapl:0:0", "dram\n", "2000\n", "65712999613\n");
    rapl_zone("intel-rapl:0:1", "core\n", "3000\n", "262143328850\n");
    rapl_zone("intel-rapl:1", "package-1\n", "4000\n", "262143328850\n");
    rapl_zone("intel-rapl:1:0", "dram\n", "5000\n", "65712999613\n");
    rapl_zone("intel-rapl-mmio:0", "package-0\n", "1000\n",
              "262143328850\n");
    put("powercap/intel-rapl/enabled", "1\n");
}

/* ---- RAPL ------------------------------------------------------------- */

static void
test_rapl_two_packages_dram(void **st)
{
    struct meter_list list;
    const struct meter_info *m;

    (void) st;
    rapl_two_packages();
    discover(&list, NULL);
    assert_int_equal(list.n_problems, 0);
    assert_int_equal(list.n, 5);
    assert_string_equal(list.meters[0].name, "package-0");
    assert_string_equal(list.meters[1].name, "dram-0");
    assert_string_equal(list.meters[2].name, "core-0");
    assert_string_equal(list.meters[3].name, "package-1");
    assert_string_equal(list.meters[4].name, "dram-1");
    m = find(&list, "dram-1");
    assert_int_equal(m->kind, METER_KIND_RAPL);
    assert_int_equal(m->scope, METER_SCOPE_DRAM);
    assert_int_equal(m->package, 1);
    assert_true(m->counter);
    assert_true(m->max_range_uj == 65712999613ull);
    assert_string_equal(m->path, sub("powercap/intel-rapl:1:0/energy_uj"));
    assert_int_equal(find(&list, "package-0")->scope, METER_SCOPE_PACKAGE);
    assert_int_equal(find(&list, "core-0")->scope, METER_SCOPE_CORE);
    meter_list_clear(&list);
    assert_int_equal(list.n, 0);
}

/* A subzone's package is its parent's "package-N", not the zone number,
 * and psys is a top-level zone numbered like a package. */
static void
test_rapl_package_from_name(void **st)
{
    struct meter_list list;

    (void) st;
    rapl_zone("intel-rapl:0", "package-1\n", "1\n", "100\n");
    rapl_zone("intel-rapl:0:0", "dram\n", "1\n", "100\n");
    rapl_zone("intel-rapl:1", "psys\n", "1\n", "100\n");
    rapl_zone("intel-rapl:0:1", "uncore\n", "1\n", "100\n");
    discover(&list, NULL);
    assert_int_equal(list.n_problems, 0);
    assert_int_equal(list.n, 4);
    assert_int_equal(find(&list, "dram-1")->package, 1);
    assert_int_equal(find(&list, "uncore-1")->scope, METER_SCOPE_UNCORE);
    assert_int_equal(find(&list, "psys")->scope, METER_SCOPE_PLATFORM);
    assert_int_equal(find(&list, "psys")->package, -1);
    meter_list_clear(&list);
}

static uint64_t
read_ok(struct meter *m, uint64_t now_ns)
{
    char err[METER_ERR_LEN] = "";
    uint64_t e = 0;
    int r = meter_read_uj(m, now_ns, &e, err, sizeof err);

    if (r) {
        fail_msg("read failed: %d %s", r, err);
    }
    return e;
}

/* The counter wraps between two reads: the delta counts up to the range,
 * one step to 0, then on to the new value. */
static void
test_rapl_wrap(void **st)
{
    struct meter_list list;
    struct meter *m;
    char err[METER_ERR_LEN];
    uint64_t e0, e1, e2, e;

    (void) st;
    rapl_zone("intel-rapl:0", "package-0\n", "999000\n", "1000000\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 1);
    m = meter_open(&list.meters[0], err, sizeof err);
    assert_non_null(m);
    e0 = read_ok(m, 0);
    assert_true(e0 == 999000);
    put("powercap/intel-rapl:0/energy_uj", "500\n");
    e1 = read_ok(m, S_NS);
    assert_true(e1 - e0 == 1000 + 1 + 500);
    put("powercap/intel-rapl:0/energy_uj", "2500\n");
    e2 = read_ok(m, 2 * S_NS);
    assert_true(e2 - e1 == 2000);
    /* Above the range: garbage, not a wrap; state unchanged. */
    put("powercap/intel-rapl:0/energy_uj", "1000001\n");
    assert_int_equal(meter_read_uj(m, 3 * S_NS, &e, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "intel-rapl:0/energy_uj"));
    assert_non_null(strstr(err, "above its range"));
    put("powercap/intel-rapl:0/energy_uj", "3000\n");
    assert_true(read_ok(m, 4 * S_NS) - e2 == 500);
    meter_close(m);
    meter_list_clear(&list);
}

static void
test_rapl_missing(void **st)
{
    struct meter_list list;

    (void) st;
    /* No powercap at all: nothing found, nothing wrong. */
    discover(&list, NULL);
    assert_int_equal(list.n, 0);
    assert_int_equal(list.n_problems, 0);
    meter_list_clear(&list);

    rapl_zone("intel-rapl:0", "package-0\n", "1\n", "100\n");
    put("powercap/intel-rapl:1/name", "package-1\n");
    put("powercap/intel-rapl:1/max_energy_range_uj", "100\n");
    put("powercap/intel-rapl:2/name", "package-2\n");
    put("powercap/intel-rapl:2/energy_uj", "1\n");
    rapl_zone("intel-rapl:3:0", "dram\n", "1\n", "100\n");
    put("powercap/intel-rapl:4/energy_uj", "1\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 1);
    assert_string_equal(list.meters[0].name, "package-0");
    assert_int_equal(list.n_problems, 4);
    assert_problem(&list, "intel-rapl:1/energy_uj",
                   "No such file or directory");
    assert_problem(&list, "intel-rapl:2/max_energy_range_uj",
                   "No such file or directory");
    /* The dram subzone's parent zone is missing. */
    assert_problem(&list, "intel-rapl:3/name", "No such file or directory");
    assert_problem(&list, "intel-rapl:4/name", "No such file or directory");
    meter_list_clear(&list);
}

static void
test_rapl_unreadable(void **st)
{
    struct meter_list list;
    struct meter *m;
    char err[METER_ERR_LEN];
    uint64_t e0, e;

    (void) st;
    rapl_zone("intel-rapl:0", "package-0\n", "1\n", "100\n");
    make_dir("powercap/intel-rapl:0/energy_uj");
    rapl_zone("intel-rapl:1", "package-1\n", "1\n", "100\n");
    make_dangling("powercap/intel-rapl:1/name");
    rapl_zone("intel-rapl:2", "package-2\n", "1\n", "100\n");
    if (geteuid() != 0) {
        chmod(sub("powercap/intel-rapl:2/energy_uj"), 0);
    }
    discover(&list, NULL);
    assert_problem(&list, "intel-rapl:0/energy_uj", "Is a directory");
    assert_problem(&list, "intel-rapl:1/name", "No such file or directory");
    if (geteuid() != 0) {
        assert_problem(&list, "intel-rapl:2/energy_uj", "Permission denied");
        assert_int_equal(list.n, 0);
    } else {
        assert_int_equal(list.n, 1);
        assert_string_equal(list.meters[0].name, "package-2");
    }
    meter_list_clear(&list);

    /* A read that fails leaves the meter as it was: the next good read
     * covers the whole gap. */
    rapl_zone("intel-rapl:0", "package-0\n", "10\n", "100\n");
    rapl_zone("intel-rapl:1", "package-1\n", "1\n", "100\n");
    rapl_zone("intel-rapl:2", "package-2\n", "1\n", "100\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 3);
    m = meter_open(find(&list, "package-0"), err, sizeof err);
    e0 = read_ok(m, 0);
    make_dir("powercap/intel-rapl:0/energy_uj");
    assert_int_equal(meter_read_uj(m, S_NS, &e, err, sizeof err), -EISDIR);
    assert_non_null(strstr(err, sub("powercap/intel-rapl:0/energy_uj")));
    assert_non_null(strstr(err, "Is a directory"));
    rmdir(sub("powercap/intel-rapl:0/energy_uj"));
    make_dangling("powercap/intel-rapl:0/energy_uj");
    assert_int_equal(meter_read_uj(m, S_NS, &e, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "intel-rapl:0/energy_uj"));
    put("powercap/intel-rapl:0/energy_uj", "5\n");
    assert_true(read_ok(m, 2 * S_NS) - e0 == 100 - 10 + 1 + 5);
    meter_close(m);
    meter_list_clear(&list);
}

static void
test_rapl_garbage(void **st)
{
    struct meter_list list;

    (void) st;
    rapl_zone("intel-rapl:0", "package-0\n", "12abc\n", "100\n");
    rapl_zone("intel-rapl:1", "package-1\n", "1\n", "\n");
    rapl_zone("intel-rapl:2", "bogus\n", "1\n", "100\n");
    rapl_zone("intel-rapl:3", "package-3\n", "-5\n", "100\n");
    rapl_zone("intel-rapl:4", "package-4\n", "101\n", "100\n");
    rapl_zone("intel-rapl:5", "package-5\n", "1\n", "0\n");
    rapl_zone("intel-rapl:6", "psys\n", "1\n", "100\n");
    rapl_zone("intel-rapl:6:0", "dram\n", "1\n", "100\n");
    rapl_zone("intel-rapl:7", "package-x\n", "1\n", "100\n");
    rapl_zone("intel-rapl:x", "package-8\n", "1\n", "100\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 1);
    assert_string_equal(list.meters[0].name, "psys");
    assert_problem(&list, "intel-rapl:0/energy_uj",
                   "not an unsigned decimal number: \"12abc\"");
    assert_problem(&list, "intel-rapl:1/max_energy_range_uj",
                   "not an unsigned decimal number");
    assert_problem(&list, "intel-rapl:2/name",
                   "unknown RAPL zone name \"bogus\"");
    assert_problem(&list, "intel-rapl:3/energy_uj", "\"-5\"");
    assert_problem(&list, "intel-rapl:4/energy_uj",
                   "above max_energy_range_uj");
    assert_problem(&list, "intel-rapl:5/max_energy_range_uj", "range 0");
    assert_problem(&list, "intel-rapl:6/name", "\"psys\" is not package-N");
    assert_problem(&list, "intel-rapl:7/name", "unknown RAPL zone name");
    assert_int_equal(list.n_problems, 8);
    meter_list_clear(&list);
}

/* ---- hwmon ------------------------------------------------------------ */

static void
test_hwmon_all_ones(void **st)
{
    static const char *const ones[] = {
        "18446744073709551615\n", "4294967295\n", "4294967295000\n",
    };
    struct meter_list list;
    struct meter *m;
    char rel[128], err[METER_ERR_LEN];
    uint64_t e;

    (void) st;
    for (size_t i = 0; i < 3; i++) {
        snprintf(rel, sizeof rel, "hwmon/hwmon%zu/name", i);
        put(rel, "power_meter\n");
        snprintf(rel, sizeof rel, "hwmon/hwmon%zu/power1_average", i);
        put(rel, ones[i]);
    }
    put("hwmon/hwmon3/name", "power_meter\n");
    put("hwmon/hwmon3/power1_average", "4294967294000\n");
    discover(&list, NULL);
    for (size_t i = 0; i < 3; i++) {
        snprintf(rel, sizeof rel, "hwmon%zu/power1_average", i);
        assert_problem(&list, rel, "all-ones value");
        assert_problem(&list, rel, "no reading");
    }
    assert_int_equal(list.n_problems, 3);
    assert_int_equal(list.n, 1);
    assert_string_equal(list.meters[0].path,
                        sub("hwmon/hwmon3/power1_average"));

    /* The BMC loses its reading after discovery. */
    m = meter_open(&list.meters[0], err, sizeof err);
    read_ok(m, 0);
    put("hwmon/hwmon3/power1_average", "4294967295000\n");
    assert_int_equal(meter_read_uj(m, S_NS, &e, err, sizeof err), -ERANGE);
    assert_non_null(strstr(err, "hwmon3/power1_average"));
    assert_non_null(strstr(err, "all-ones"));
    meter_close(m);
    meter_list_clear(&list);
}

/* Counters may pass through the 32-bit all-ones value; only all 64 bits
 * set means no reading. */
static void
test_all_ones_counter_vs_power(void **st)
{
    char err[METER_ERR_LEN];
    uint64_t v = 0;

    (void) st;
    put("v", "4294967295\n");
    assert_int_equal(meter_read_u64(sub("v"), false, &v, err, sizeof err),
                     0);
    assert_true(v == 4294967295ull);
    assert_int_equal(meter_read_u64(sub("v"), true, &v, err, sizeof err),
                     -ERANGE);
    put("v", "18446744073709551615\n");
    assert_int_equal(meter_read_u64(sub("v"), false, &v, err, sizeof err),
                     -ERANGE);
    put("v", "18446744073709551616\n");
    assert_int_equal(meter_read_u64(sub("v"), false, &v, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, sub("v")));
    put("v", "");
    assert_int_equal(meter_read_u64(sub("v"), true, &v, err, sizeof err),
                     -EINVAL);
    put("v", "123456789012345678901234567890123456789012345678901234567890"
        "1234567890\n");
    assert_int_equal(meter_read_u64(sub("v"), true, &v, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "longer than"));
}

static void
test_hwmon_energy_vs_power(void **st)
{
    struct meter_list list;
    const struct meter_info *pw, *en, *in;
    struct meter *mp, *me;
    char err[METER_ERR_LEN];
    uint64_t p0, e0;

    (void) st;
    /* acpi_power_meter registered the old way: files in device/. */
    put("hwmon/hwmon0/device/name", "power_meter\n");
    put("hwmon/hwmon0/device/power1_average", "250000000\n");
    put("hwmon/hwmon0/device/power1_average_interval", "1000\n");
    put("hwmon/hwmon0/device/power1_input", "1\n");
    /* An energy counter and an instantaneous power sensor. */
    put("hwmon/hwmon1/name", "power_meter\n");
    put("hwmon/hwmon1/energy1_input", "7000000\n");
    put("hwmon/hwmon1/power2_input", "5000000\n");
    put("hwmon/hwmon1/temp1_input", "40000\n");
    put("hwmon/hwmon1/power0_input", "1\n");
    put("hwmon/hwmon1/power02_input", "1\n");
    put("hwmon/hwmon2/name", "amd_energy\n");
    put("hwmon/hwmon2/energy3_input", "1\n");
    discover(&list, NULL);
    assert_int_equal(list.n_problems, 0);
    assert_int_equal(list.n, 4);

    pw = &list.meters[0];
    assert_string_equal(pw->name, "power_meter/power1");
    assert_string_equal(pw->path, sub("hwmon/hwmon0/device/power1_average"));
    assert_false(pw->counter);
    assert_int_equal(pw->scope, METER_SCOPE_PLATFORM);
    assert_int_equal(pw->interval_ms, 1000);
    en = &list.meters[1];
    assert_string_equal(en->name, "power_meter/energy1");
    assert_true(en->counter);
    assert_true(en->max_range_uj == 0);
    in = &list.meters[2];
    assert_string_equal(in->path, sub("hwmon/hwmon1/power2_input"));
    assert_int_equal(in->interval_ms, 0);
    assert_string_equal(list.meters[3].name, "amd_energy/energy3");
    assert_int_equal(list.meters[3].scope, METER_SCOPE_OTHER);

    /* Power is integrated over the time between reads. */
    mp = meter_open(pw, err, sizeof err);
    p0 = read_ok(mp, 10 * S_NS);
    assert_true(p0 == 0);
    assert_true(read_ok(mp, 12 * S_NS) == 500000000ull);
    put("hwmon/hwmon0/device/power1_average", "100000000\n");
    assert_true(read_ok(mp, 12 * S_NS + S_NS / 2) == 550000000ull);
    assert_int_equal(meter_read_uj(mp, S_NS, &p0, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "time went backwards"));

    /* The energy counter is a difference of values. */
    me = meter_open(en, err, sizeof err);
    e0 = read_ok(me, 0);
    put("hwmon/hwmon1/energy1_input", "7500123\n");
    assert_true(read_ok(me, S_NS) - e0 == 500123);
    put("hwmon/hwmon1/energy1_input", "100\n");
    assert_int_equal(meter_read_uj(me, 2 * S_NS, &e0, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "hwmon1/energy1_input"));
    assert_non_null(strstr(err, "went back"));
    meter_close(mp);
    meter_close(me);
    meter_list_clear(&list);
}

static void
test_hwmon_bad(void **st)
{
    struct meter_list list;

    (void) st;
    put("hwmon/hwmon0/power1_average", "1\n");
    put("hwmon/hwmon1/name", "power_meter\n");
    put("hwmon/hwmon1/power1_average", "250 W\n");
    make_dir("hwmon/hwmon1/energy1_input");
    put("hwmon/hwmon2/name", "power_meter\n");
    make_dangling("hwmon/hwmon2/power1_average");
    put("hwmon/hwmon3/name", "\n");
    put("hwmon/hwmon3/power1_average", "1\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 0);
    assert_problem(&list, "hwmon0/name", "No such file or directory");
    assert_problem(&list, "hwmon1/power1_average",
                   "not an unsigned decimal number: \"250 W\"");
    assert_problem(&list, "hwmon1/energy1_input", "Is a directory");
    assert_problem(&list, "hwmon2/power1_average",
                   "No such file or directory");
    assert_problem(&list, "hwmon3/name", "not a device name");
    assert_int_equal(list.n_problems, 5);
    meter_list_clear(&list);
}

/* ---- Choosing the host meter ------------------------------------------ */

static void
add(struct meter_list *list, enum meter_kind kind, enum meter_scope scope,
    int package, bool counter, const char *name)
{
    struct meter_info m = { .ops = &meter_dummy_ops, .kind = kind,
                            .scope = scope, .package = package,
                            .counter = counter };

    snprintf(m.name, sizeof m.name, "%s", name);
    meter_list_add(list, &m);
}

static void
test_choose_host(void **st)
{
    struct meter_list list = { 0 };
    struct meter_choice c;

    (void) st;
    assert_int_equal(meter_choose_host(&list, &c), -ENOENT);
    add(&list, METER_KIND_RAPL, METER_SCOPE_CORE, 0, true, "core-0");
    add(&list, METER_KIND_HWMON, METER_SCOPE_OTHER, -1, true, "x/energy1");
    assert_int_equal(meter_choose_host(&list, &c), -ENOENT);

    /* Package only: DRAM missing for package 1. */
    add(&list, METER_KIND_RAPL, METER_SCOPE_PACKAGE, 0, true, "package-0");
    add(&list, METER_KIND_RAPL, METER_SCOPE_DRAM, 0, true, "dram-0");
    add(&list, METER_KIND_RAPL, METER_SCOPE_PACKAGE, 1, true, "package-1");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.scope, METER_SCOPE_PACKAGE);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.idx[0], 2);
    assert_int_equal(c.idx[1], 4);

    /* Every package has DRAM: sum them all. */
    add(&list, METER_KIND_RAPL, METER_SCOPE_DRAM, 1, true, "dram-1");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.scope, METER_SCOPE_PACKAGE_DRAM);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.idx[1], 3);
    assert_int_equal(c.idx[3], 5);

    /* Platform meters win, in order IPMI < hwmon power < hwmon energy <
     * psys. */
    add(&list, METER_KIND_IPMI, METER_SCOPE_PLATFORM, -1, false, "ipmi");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.scope, METER_SCOPE_PLATFORM);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.idx[0], 6);
    add(&list, METER_KIND_HWMON, METER_SCOPE_PLATFORM, -1, false, "pw");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.idx[0], 7);
    add(&list, METER_KIND_RAPL, METER_SCOPE_PLATFORM, -1, true, "psys");
    add(&list, METER_KIND_HWMON, METER_SCOPE_PLATFORM, -1, true, "en");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.idx[0], 8);
    assert_int_equal(c.n, 1);
    meter_list_clear(&list);

    add(&list, METER_KIND_HWMON, METER_SCOPE_PLATFORM, -1, false, "pw");
    add(&list, METER_KIND_HWMON, METER_SCOPE_PLATFORM, -1, true, "en");
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.idx[0], 1);
    meter_list_clear(&list);

    /* Nine packages: nine zones fit, eighteen with DRAM do not, and a
     * sum that would leave some out is refused, not truncated. */
    for (int p = 0; p < 9; p++) {
        add(&list, METER_KIND_RAPL, METER_SCOPE_PACKAGE, p, true, "pkg");
        if (p) {
            add(&list, METER_KIND_RAPL, METER_SCOPE_DRAM, p, true, "dram");
        }
    }
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.scope, METER_SCOPE_PACKAGE);
    assert_int_equal(c.n, 9);
    add(&list, METER_KIND_RAPL, METER_SCOPE_DRAM, 0, true, "dram");
    assert_int_equal(meter_choose_host(&list, &c), -E2BIG);
    meter_list_clear(&list);
}

/* What vpowerd logs and vpowerctl status shows. */
static void
test_describe_log(void **st)
{
    struct meter_list list;
    char line[METER_ERR_LEN], want[METER_ERR_LEN + 600], log[4096];
    size_t got;
    FILE *f;
    int saved;

    (void) st;
    rapl_two_packages();
    rapl_zone("intel-rapl:2", "bogus\n", "1\n", "100\n");
    put("hwmon/hwmon0/name", "acpi_power_meter\n");
    put("hwmon/hwmon0/power1_average", "1000000\n");
    put("hwmon/hwmon0/power1_average_interval", "500\n");
    discover(&list, NULL);
    assert_int_equal(list.n, 6);
    meter_describe(&list.meters[0], line, sizeof line);
    snprintf(want, sizeof want, "package-0: rapl, package, %s",
             sub("powercap/intel-rapl:0/energy_uj"));
    assert_string_equal(line, want);
    meter_describe(&list.meters[5], line, sizeof line);
    snprintf(want, sizeof want, "acpi_power_meter/power1: hwmon, platform, "
             "%s, power, averaged over 500 ms",
             sub("hwmon/hwmon0/power1_average"));
    assert_string_equal(line, want);

    /* The log: every meter, every problem, the choice. */
    f = tmpfile();
    assert_non_null(f);
    fflush(stderr);
    saved = dup(2);
    assert_true(dup2(fileno(f), 2) == 2);
    log_init("test-meter", false, LOG_LVL_INFO);
    meter_log_list(&list);
    fflush(stderr);
    assert_true(dup2(saved, 2) == 2);
    close(saved);
    rewind(f);
    got = fread(log, 1, sizeof log - 1, f);
    log[got] = '\0';
    fclose(f);
    assert_non_null(strstr(log, "meter package-0: rapl, package, "));
    assert_non_null(strstr(log, "meter dram-1: rapl, dram, "));
    assert_non_null(strstr(log, "meter not usable: "));
    assert_non_null(strstr(log, "unknown RAPL zone name \"bogus\""));
    assert_non_null(strstr(log, "whole-host meter: acpi_power_meter/power1 "
                                "(platform)"));
    meter_list_clear(&list);

    /* Without the platform meter: the RAPL sum. */
    rapl_two_packages();
    memset(&list, 0, sizeof list);
    {
        struct meter_roots roots = { .powercap = want, .hwmon = "",
                                     .ipmi_dev = "" };
        snprintf(want, sizeof want, "%s", sub("powercap"));
        meter_discover(&roots, &list);
    }
    f = tmpfile();
    saved = dup(2);
    assert_true(dup2(fileno(f), 2) == 2);
    meter_log_list(&list);
    fflush(stderr);
    assert_true(dup2(saved, 2) == 2);
    close(saved);
    rewind(f);
    got = fread(log, 1, sizeof log - 1, f);
    log[got] = '\0';
    fclose(f);
    assert_non_null(strstr(log, "whole-host meter: "
                           "package-0+dram-0+package-1+dram-1 "
                           "(package+dram)"));
    meter_list_clear(&list);
}

/* The host meter over two packages and their DRAM sums the four deltas,
 * one of them across a wrap. */
static void
test_host_sum(void **st)
{
    struct meter_list list;
    struct meter_choice c;
    struct meter *h;
    char err[METER_ERR_LEN];
    uint64_t e0, e1;

    (void) st;
    rapl_two_packages();
    put("powercap/intel-rapl:1:0/energy_uj", "65712999000\n");
    discover(&list, NULL);
    assert_int_equal(meter_choose_host(&list, &c), 0);
    assert_int_equal(c.scope, METER_SCOPE_PACKAGE_DRAM);
    h = meter_host_open(&list, &c, err, sizeof err);
    assert_non_null(h);
    assert_string_equal(h->info.name, "package-0+dram-0+package-1+dram-1");
    assert_int_equal(h->info.kind, METER_KIND_SUM);
    assert_int_equal(h->info.scope, METER_SCOPE_PACKAGE_DRAM);
    e0 = read_ok(h, 0);
    put("powercap/intel-rapl:0/energy_uj", "1100\n");
    put("powercap/intel-rapl:0:0/energy_uj", "2020\n");
    put("powercap/intel-rapl:0:1/energy_uj", "999999\n");
    put("powercap/intel-rapl:1/energy_uj", "4003\n");
    put("powercap/intel-rapl:1:0/energy_uj", "386\n");
    e1 = read_ok(h, S_NS);
    assert_true(e1 - e0 == 100 + 20 + 3 + (613 + 1 + 386));

    /* One part failing fails the sum, naming that part's file. */
    make_dir("powercap/intel-rapl:1/energy_uj");
    assert_int_equal(meter_read_uj(h, 2 * S_NS, &e0, err, sizeof err),
                     -EISDIR);
    assert_non_null(strstr(err, "intel-rapl:1/energy_uj"));
    meter_close(h);
    meter_list_clear(&list);
}

/* ---- IPMI ------------------------------------------------------------- */

static const uint8_t good_reply[] = {
    0x00, 0xdc, 0x2c, 0x01, 0x10, 0x01, 0x90, 0x01, 0x20, 0x01,
    0x78, 0x56, 0x34, 0x12, 0xe8, 0x03, 0x00, 0x00, 0x40,
};

static void
test_ipmi_encode_decode(void **st)
{
    uint8_t req[METER_IPMI_REQ_LEN], rsp[sizeof good_reply];
    struct meter_ipmi_reading rd;
    char err[METER_ERR_LEN];

    (void) st;
    assert_int_equal(meter_ipmi_encode(req), 4);
    assert_int_equal(req[0], 0xdc);
    assert_int_equal(req[1], 0x01);
    assert_int_equal(req[2], 0x00);
    assert_int_equal(req[3], 0x00);

    assert_int_equal(meter_ipmi_decode(good_reply, sizeof good_reply, &rd,
                                       err, sizeof err), 0);
    assert_int_equal(rd.current_w, 300);
    assert_int_equal(rd.min_w, 272);
    assert_int_equal(rd.max_w, 400);
    assert_int_equal(rd.avg_w, 288);
    assert_int_equal(rd.timestamp, 0x12345678);
    assert_int_equal(rd.period_ms, 1000);
    assert_true(rd.active);

    memcpy(rsp, good_reply, sizeof rsp);
    rsp[0] = 0xc1;
    assert_int_equal(meter_ipmi_decode(rsp, 1, &rd, err, sizeof err), -EIO);
    assert_non_null(strstr(err, "completion code 0xc1"));
    assert_non_null(strstr(err, "not supported"));
    assert_int_equal(meter_ipmi_decode(good_reply, 18, &rd, err,
                                       sizeof err), -EPROTO);
    assert_non_null(strstr(err, "18 bytes"));
    rsp[0] = 0;
    rsp[1] = 0xdd;
    assert_int_equal(meter_ipmi_decode(rsp, sizeof rsp, &rd, err,
                                       sizeof err), -EPROTO);
    assert_non_null(strstr(err, "group id 0xdd"));
    rsp[1] = 0xdc;
    rsp[18] = 0x00;
    assert_int_equal(meter_ipmi_decode(rsp, sizeof rsp, &rd, err,
                                       sizeof err), -ENODATA);
    assert_non_null(strstr(err, "not active"));
    rsp[18] = 0x40;
    rsp[2] = rsp[3] = 0xff;
    assert_int_equal(meter_ipmi_decode(rsp, sizeof rsp, &rd, err,
                                       sizeof err), -ENODATA);
    assert_non_null(strstr(err, "all-ones"));
}

/* The fake BMC behind the wrapped ioctl. */
static struct {
    bool is_ipmi;                /* false: ENOTTY, like a plain file. */
    uint8_t reply[32];
    size_t reply_len;
    long pending;                /* msgid awaiting its reply, 0 none. */
    unsigned sent;
    bool stale_first;            /* Deliver a reply to another id first. */
} bmc;

int __wrap_ioctl(int fd, unsigned long req, ...);
int __real_ioctl(int fd, unsigned long req, ...);

static int
fake_send(const struct ipmi_req *rq)
{
    const struct ipmi_system_interface_addr *a =
        (const struct ipmi_system_interface_addr *) rq->addr;

    assert_int_equal(rq->addr_len, sizeof *a);
    assert_int_equal(a->addr_type, IPMI_SYSTEM_INTERFACE_ADDR_TYPE);
    assert_int_equal(a->channel, IPMI_BMC_CHANNEL);
    assert_int_equal(rq->msg.netfn, 0x2c);
    assert_int_equal(rq->msg.cmd, 0x02);
    assert_int_equal(rq->msg.data_len, 4);
    assert_memory_equal(rq->msg.data, "\xdc\x01\x00\x00", 4);
    bmc.pending = rq->msgid;
    bmc.sent++;
    return 0;
}

static int
fake_recv(struct ipmi_recv *rv)
{
    if (!bmc.pending) {
        errno = EAGAIN;
        return -1;
    }
    rv->recv_type = IPMI_RESPONSE_RECV_TYPE;
    rv->msgid = bmc.pending;
    if (bmc.stale_first) {
        rv->msgid = bmc.pending + 1000;
        bmc.stale_first = false;
    }
    rv->msg.netfn = 0x2d;
    rv->msg.cmd = 0x02;
    assert_true(rv->msg.data_len >= bmc.reply_len);
    memcpy(rv->msg.data, bmc.reply, bmc.reply_len);
    rv->msg.data_len = (unsigned short) bmc.reply_len;
    if (rv->msgid != bmc.pending && bmc.reply_len > 3) {
        rv->msg.data[2] = 0xe7;  /* 999 W: must not be used. */
        rv->msg.data[3] = 0x03;
    } else {
        bmc.pending = 0;
    }
    return 0;
}

int
__wrap_ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    void *arg;

    va_start(ap, req);
    arg = va_arg(ap, void *);
    va_end(ap);
    if (req != IPMICTL_SEND_COMMAND && req != IPMICTL_RECEIVE_MSG_TRUNC) {
        return __real_ioctl(fd, req, arg);
    }
    if (!bmc.is_ipmi) {
        errno = ENOTTY;
        return -1;
    }
    return req == IPMICTL_SEND_COMMAND ? fake_send(arg) : fake_recv(arg);
}

static void
bmc_reply(const uint8_t *r, size_t len)
{
    memcpy(bmc.reply, r, len);
    bmc.reply_len = len;
}

static void
test_ipmi_device(void **st)
{
    struct meter_list list;
    struct meter *m;
    char dev[600], err[METER_ERR_LEN];
    uint64_t e;

    (void) st;
    memset(&bmc, 0, sizeof bmc);
    snprintf(dev, sizeof dev, "%s", sub("ipmi0"));

    /* No device: no meter and nothing to complain about. */
    discover(&list, dev);
    assert_int_equal(list.n + list.n_problems, 0);
    meter_list_clear(&list);

    /* A file that is not an IPMI device. */
    put("ipmi0", "");
    discover(&list, dev);
    assert_int_equal(list.n, 0);
    assert_problem(&list, dev, "not an IPMI device");
    meter_list_clear(&list);

    /* A BMC without DCMI. */
    bmc.is_ipmi = true;
    bmc_reply((const uint8_t *) "\xc1", 1);
    discover(&list, dev);
    assert_int_equal(list.n, 0);
    assert_problem(&list, dev, "completion code 0xc1");
    meter_list_clear(&list);

    /* A BMC with DCMI: 300 W, then 150 W. */
    bmc_reply(good_reply, sizeof good_reply);
    discover(&list, dev);
    assert_int_equal(list.n_problems, 0);
    assert_int_equal(list.n, 1);
    assert_string_equal(list.meters[0].name, "ipmi-dcmi");
    assert_string_equal(list.meters[0].path, dev);
    assert_int_equal(list.meters[0].kind, METER_KIND_IPMI);
    assert_int_equal(list.meters[0].scope, METER_SCOPE_PLATFORM);
    m = meter_open(&list.meters[0], err, sizeof err);
    assert_non_null(m);
    bmc.sent = 0;
    assert_true(read_ok(m, 5 * S_NS) == 0);
    assert_true(read_ok(m, 7 * S_NS) == 600000000ull);
    bmc.reply[2] = 150;
    bmc.reply[3] = 0;
    bmc.stale_first = true;
    assert_true(read_ok(m, 8 * S_NS) == 750000000ull);
    assert_int_equal(bmc.sent, 3);

    /* Measurement stops: an error naming the device, no energy made up. */
    bmc.reply[18] = 0;
    assert_int_equal(meter_read_uj(m, 9 * S_NS, &e, err, sizeof err),
                     -ENODATA);
    assert_non_null(strstr(err, dev));
    assert_non_null(strstr(err, "not active"));
    bmc.reply[18] = 0x40;
    assert_true(read_ok(m, 10 * S_NS) == 750000000ull + 300000000ull);
    meter_close(m);
    meter_list_clear(&list);
}

/* ---- Dummy ------------------------------------------------------------ */

static void
test_dummy(void **st)
{
    struct meter *c = meter_dummy_create("sim", METER_SCOPE_PLATFORM, true,
                                         999);
    struct meter *p = meter_dummy_create("simw", METER_SCOPE_PACKAGE, false,
                                         0);
    char err[METER_ERR_LEN];
    uint64_t e0, e;

    (void) st;
    assert_int_equal(c->info.kind, METER_KIND_DUMMY);
    assert_int_equal(c->info.scope, METER_SCOPE_PLATFORM);
    assert_string_equal(c->info.name, "sim");
    meter_dummy_set(c, 900);
    e0 = read_ok(c, 0);
    meter_dummy_set(c, 50);
    assert_true(read_ok(c, S_NS) - e0 == 150);
    meter_dummy_fail(c, EIO);
    meter_dummy_set(c, 60);
    assert_int_equal(meter_read_uj(c, 2 * S_NS, &e, err, sizeof err), -EIO);
    assert_non_null(strstr(err, "dummy:sim"));
    assert_true(read_ok(c, 3 * S_NS) - e0 == 160);

    meter_dummy_set(p, 2000000);
    assert_true(read_ok(p, S_NS) == 0);
    assert_true(read_ok(p, 4 * S_NS) == 6000000);
    meter_close(c);
    meter_close(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rapl_two_packages_dram, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rapl_package_from_name, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rapl_wrap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rapl_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rapl_unreadable, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_rapl_garbage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hwmon_all_ones, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_all_ones_counter_vs_power,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hwmon_energy_vs_power, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hwmon_bad, setup, teardown),
        cmocka_unit_test(test_choose_host),
        cmocka_unit_test_setup_teardown(test_describe_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_host_sum, setup, teardown),
        cmocka_unit_test(test_ipmi_encode_decode),
        cmocka_unit_test_setup_teardown(test_ipmi_device, setup, teardown),
        cmocka_unit_test(test_dummy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
