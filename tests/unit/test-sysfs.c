/* tests/unit/test-sysfs.c -- The sysfs and dummy host drivers.
 *
 * drv_host_sysfs runs against trees made by tests/fixtures/mksysfs.sh.
 * Regular files accept any write, so the order of writes is observed by
 * wrapping write(2) (the program links with -Wl,--wrap=write): the wrapper
 * logs which file each write went to and can inject an errno or a short
 * write, which is how EBUSY pass-through and short-write detection are
 * tested without a kernel. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "manager/drivers/drv.h"
#include "manager/drivers/drv_dummy_host.h"
#include "manager/journal.h"
#include "manager/drivers/sysfs.h"
#include "tests/unit/hostdrv-fixture.h"

/* ---- write(2) wrapper ------------------------------------------------ */

ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __wrap_write(int fd, const void *buf, size_t len);

static char wlog[16][256];      /* Basenames + value of logged writes. */
static unsigned n_wlog;
static int inject_errno;        /* Next write fails with it. */
static bool inject_short;       /* Next write is one byte short. */

ssize_t
__wrap_write(int fd, const void *buf, size_t len)
{
    char link[64], path[512];
    ssize_t n;

    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    n = readlink(link, path, sizeof path - 1);
    if (n > 0 && strstr(path, "/vpower-test-")) {
        const char *base;

        path[n] = '\0';
        base = strrchr(path, '/') + 1;
        if (inject_errno) {
            errno = inject_errno;
            inject_errno = 0;
            return -1;
        }
        if (inject_short && len > 1) {
            inject_short = false;
            return __real_write(fd, buf, len - 1);
        }
        if (n_wlog < 16) {
            snprintf(wlog[n_wlog++], sizeof wlog[0], "%s=%.*s", base,
                     (int) len, (const char *) buf);
        }
    }
    return __real_write(fd, buf, len);
}

/* ---- Helpers ------------------------------------------------------------ */

struct fx {
    char *root;
    struct drv_host *h;
};

static struct fx *
fx_open(const char *args)
{
    struct fx *f = calloc(1, sizeof *f);
    char err[256] = "";

    f->root = fx_mksysfs(args);
    f->h = drv_host_sysfs.open(f->root, err, sizeof err);
    if (!f->h) {
        fprintf(stderr, "open: %s\n", err);
        exit(99);
    }
    n_wlog = 0;
    return f;
}

static void
fx_close(struct fx *f)
{
    drv_host_sysfs.close(f->h);
    fx_rmtree(f->root);
    free(f);
}

/* ---- Parsing ------------------------------------------------------------ */

static void
test_parse_strict(void **state)
{
    uint32_t v;
    uint64_t w;

    assert_int_equal(sysfs_parse_u32("123", &v), 0);
    assert_int_equal(v, 123);
    assert_int_equal(sysfs_parse_u32("2400000\n", &v), 0);
    assert_int_equal(v, 2400000);
    assert_int_equal(sysfs_parse_u32("4294967295", &v), 0);
    assert_int_equal(v, UINT32_MAX);
    assert_int_equal(sysfs_parse_u32("4294967296", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("\n", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("-1", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("+1", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32(" 1", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("12a", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("abc", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u32("1 2", &v), -EINVAL);
    assert_int_equal(sysfs_parse_u64("18446744073709551615", &w), 0);
    assert_true(w == UINT64_MAX);
    assert_int_equal(sysfs_parse_u64("18446744073709551616", &w), -EINVAL);
    assert_true(sysfs_governor_valid("schedutil"));
    assert_true(sysfs_governor_valid("performance"));
    assert_false(sysfs_governor_valid("Performance"));
    assert_false(sysfs_governor_valid("performance\n"));
    assert_false(sysfs_governor_valid("../../x"));
    assert_false(sysfs_governor_valid(""));
}

static void
test_read_bounded(void **state)
{
    char *root = fx_mksysfs("--cpus 1");
    char buf[8], big[6000];

    fx_put(root, "big", "");
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    fx_put(root, "big", big);
    assert_int_equal(sysfs_read(root, "big", buf, sizeof buf), -EOVERFLOW);
    /* The newline counts: 7 bytes fit in 8 with the NUL. */
    fx_put(root, "seven", "123456\n");
    assert_int_equal(sysfs_read(root, "seven", buf, sizeof buf), 6);
    assert_string_equal(buf, "123456");
    fx_put(root, "seven", "1234567");
    assert_int_equal(sysfs_read(root, "seven", buf, sizeof buf), 7);
    fx_put(root, "eight", "12345678");
    assert_int_equal(sysfs_read(root, "eight", buf, sizeof buf),
                     -EOVERFLOW);
    assert_int_equal(sysfs_read(root, "nope", buf, sizeof buf), -ENOENT);
    memset(big, 'a', sizeof big - 1);
    assert_int_equal(sysfs_read(root, big, buf, sizeof buf), -ENAMETOOLONG);
    assert_int_equal(sysfs_write(root, "nope", "1"), -ENOENT);
    /* The whole-path form (used for /proc, /sys/class and /run files)
     * has the same bounds. */
    {
        char path[4096];

        snprintf(path, sizeof path, "%s/seven", root);
        assert_int_equal(sysfs_read_file(path, buf, sizeof buf), 7);
        assert_string_equal(buf, "1234567");
        snprintf(path, sizeof path, "%s/eight", root);
        assert_int_equal(sysfs_read_file(path, buf, sizeof buf),
                         -EOVERFLOW);
        snprintf(path, sizeof path, "%s/nope", root);
        assert_int_equal(sysfs_read_file(path, buf, sizeof buf), -ENOENT);
        assert_int_equal(sysfs_read_file(path, buf, 1), -EINVAL);
    }
    fx_rmtree(root);
}

/* A FIFO where a sysfs file should be (a fixture root is configurable)
 * must fail the read or write at once, not hang the daemon; SIGALRM
 * ends the test if a call blocks. */
static void
test_fifo_does_not_block(void **state)
{
    struct fx *f = fx_open("--cpus 2");
    char path[1024], buf[64];
    struct drv_freq fr;

    snprintf(path, sizeof path, "%s/cpu1/cpufreq/scaling_max_freq",
             f->root);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(10);
    assert_true(sysfs_read(f->root, "cpu1/cpufreq/scaling_max_freq", buf,
                           sizeof buf) <= 0);
    assert_true(drv_host_sysfs.get_freq(f->h, 1, &fr) < 0);
    assert_int_equal(sysfs_write(f->root, "cpu1/cpufreq/scaling_max_freq",
                                 "800000"), -ENXIO);
    assert_true(drv_host_sysfs.set_freq_range(f->h, 1, 800000, 800000)
                < 0);
    alarm(0);
    fx_close(f);
}

/* ---- Open --------------------------------------------------------------- */

static void
test_open(void **state)
{
    char err[256] = "", longroot[400];
    struct fx *f = fx_open("--cpus 6");
    unsigned n = 0;

    assert_int_equal(drv_host_sysfs.n_cpus(f->h, &n), 0);
    assert_int_equal(n, 6);
    assert_string_equal(sysfs_root(f->h), f->root);

    assert_null(drv_host_sysfs.open("/nonexistent/vpower", err,
                                    sizeof err));
    assert_non_null(strstr(err, "/nonexistent/vpower/possible"));
    memset(longroot, 'a', sizeof longroot - 1);
    longroot[0] = '/';
    longroot[sizeof longroot - 1] = '\0';
    assert_null(drv_host_sysfs.open(longroot, err, sizeof err));
    assert_non_null(strstr(err, "too long"));
    fx_put(f->root, "possible", "0-x\n");
    assert_null(drv_host_sysfs.open(f->root, err, sizeof err));
    assert_non_null(strstr(err, "not a CPU list"));
    fx_close(f);
}

/* ---- Frequency ---------------------------------------------------------- */

static void
test_get_freq(void **state)
{
    struct fx *f = fx_open("--cpus 2");
    struct drv_freq fr;

    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fr), 0);
    assert_int_equal(fr.min_khz, 800000);
    assert_int_equal(fr.max_khz, 2400000);
    assert_int_equal(fr.cur_khz, 2400000);
    assert_int_equal(fr.hw_min_khz, 800000);
    assert_int_equal(fr.hw_max_khz, 2400000);
    assert_string_equal(fr.governor, "schedutil");
    assert_true(fr.has_setspeed);
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 2, &fr), -EINVAL);
    fx_close(f);
}

static void
test_set_freq_order(void **state)
{
    struct fx *f = fx_open("--cpus 2");
    struct drv_freq fr;

    /* Start low: [800000, 800000]. */
    fx_put(f->root, "cpu1/cpufreq/scaling_max_freq", "800000\n");
    n_wlog = 0;

    /* Raising: max must be written before min. */
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 2400000,
                                                   2400000), 0);
    assert_int_equal(n_wlog, 2);
    assert_string_equal(wlog[0], "scaling_max_freq=2400000");
    assert_string_equal(wlog[1], "scaling_min_freq=2400000");
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_min_freq"),
                        "2400000");

    /* Lowering: min first. */
    n_wlog = 0;
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   1600000), 0);
    assert_int_equal(n_wlog, 2);
    assert_string_equal(wlog[0], "scaling_min_freq=800000");
    assert_string_equal(wlog[1], "scaling_max_freq=1600000");

    /* Clamped to the cpuinfo range. */
    n_wlog = 0;
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 1, 9999999), 0);
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fr), 0);
    assert_int_equal(fr.min_khz, 800000);
    assert_int_equal(fr.max_khz, 2400000);
    assert_int_equal(n_wlog, 1);            /* min was already 800000. */
    assert_string_equal(wlog[0], "scaling_max_freq=2400000");

    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 2000000,
                                                   1000000), -EINVAL);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 7, 1, 2), -EINVAL);
    fx_close(f);
}

static void
test_governor(void **state)
{
    struct fx *f = fx_open("--cpus 2 --governors 'performance powersave "
                           "schedutil'");

    assert_int_equal(drv_host_sysfs.set_governor(f->h, 0, "performance"),
                     0);
    assert_string_equal(fx_get(f->root, "cpu0/cpufreq/scaling_governor"),
                        "performance");
    /* Valid kernel name but not offered by this CPU. */
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 0, "ondemand"),
                     -EINVAL);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 0, "bogus"),
                     -EINVAL);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 0, "performance\n"),
                     -EINVAL);
    assert_string_equal(fx_get(f->root, "cpu0/cpufreq/scaling_governor"),
                        "performance");
    fx_close(f);
}

static void
test_no_cpufreq(void **state)
{
    struct fx *f = fx_open("--cpus 2 --no-cpufreq");
    struct drv_freq fr;
    struct drv_idle idle;

    assert_int_equal(drv_host_sysfs.get_freq(f->h, 0, &fr), -ENOTSUP);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 0, 1, 2),
                     -ENOTSUP);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 1, "performance"),
                     -ENOTSUP);
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), 0);
    assert_int_equal(idle.n_states, 3);
    fx_close(f);
}

/* ---- Malformed contents ---------------------------------------------- */

static void
test_malformed(void **state)
{
    static const char *const bad[] = {
        "abc\n", "", "\n", "-800000\n", "99999999999\n", "8e5\n",
        "800000 900000\n", "0x10\n",
    };
    struct fx *f = fx_open("--cpus 2");
    struct drv_freq fr;
    struct drv_idle idle;
    bool on;
    char big[5000];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fx_put(f->root, "cpu1/cpufreq/scaling_max_freq", bad[i]);
        assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fr), -EINVAL);
        assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 1, 2),
                         -EINVAL);
        /* The other CPU is unaffected. */
        assert_int_equal(drv_host_sysfs.get_freq(f->h, 0, &fr), 0);
    }
    /* min above max is inconsistent, not silently used. */
    fx_put(f->root, "cpu1/cpufreq/scaling_max_freq", "800000\n");
    fx_put(f->root, "cpu1/cpufreq/scaling_min_freq", "1600000\n");
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fr), -EINVAL);

    fx_put(f->root, "cpu1/online", "2\n");
    assert_int_equal(drv_host_sysfs.is_online(f->h, 1, &on), -EINVAL);
    fx_put(f->root, "cpu1/online", "");
    assert_int_equal(drv_host_sysfs.is_online(f->h, 1, &on), -EINVAL);

    fx_put(f->root, "cpu1/cpuidle/state2/latency", "lots\n");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), -EINVAL);
    fx_put(f->root, "cpu1/cpuidle/state2/latency", "133\n");
    fx_put(f->root, "cpu1/cpuidle/state2/disable", "7\n");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), -EINVAL);
    fx_put(f->root, "cpu1/cpuidle/state2/disable", "0\n");
    fx_put(f->root, "cpu1/cpuidle/state2/time", "-1\n");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), -EINVAL);
    fx_put(f->root, "cpu1/cpuidle/state2/time", "3000\n");
    memset(big, 'N', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    fx_put(f->root, "cpu1/cpuidle/state0/name", big);
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), -EINVAL);
    fx_put(f->root, "cpu1/cpuidle/state0/name", "PO\tLL\n");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), -EINVAL);
    fx_put(f->root, "cpu1/cpuidle/state0/name", "POLL\n");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), 0);
    fx_close(f);
}

/* ---- Idle and online --------------------------------------------------- */

static void
test_idle(void **state)
{
    struct fx *f = fx_open("--cpus 2 --idle 'POLL:0:0 C1:2:2 C6:133:600'");
    struct drv_idle idle;

    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), 0);
    assert_int_equal(idle.n_states, 3);
    assert_string_equal(idle.name[0], "POLL");
    assert_string_equal(idle.name[2], "C6");
    assert_int_equal(idle.latency_us[2], 133);
    assert_int_equal(idle.residency_us[2], 600);
    assert_true(idle.time_us[1] == 2000);
    assert_false(idle.disabled[2]);

    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, true), 0);
    assert_string_equal(fx_get(f->root, "cpu1/cpuidle/state2/disable"),
                        "1");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 1, &idle), 0);
    assert_true(idle.disabled[2]);
    assert_false(idle.disabled[1]);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, false), 0);
    assert_string_equal(fx_get(f->root, "cpu1/cpuidle/state2/disable"),
                        "0");
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 3, true),
                     -EINVAL);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 99, true),
                     -EINVAL);
    fx_close(f);

    f = fx_open("--cpus 1 --no-cpuidle");
    assert_int_equal(drv_host_sysfs.get_idle(f->h, 0, &idle), -ENOTSUP);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 0, 0, true),
                     -ENOTSUP);
    fx_close(f);
}

static void
test_online(void **state)
{
    struct fx *f = fx_open("--cpus 4");
    bool on = false;

    assert_int_equal(drv_host_sysfs.is_online(f->h, 0, &on), 0);
    assert_true(on);                    /* No cpu0/online file. */
    assert_int_equal(drv_host_sysfs.set_online(f->h, 0, false), -EPERM);
    assert_int_equal(drv_host_sysfs.set_online(f->h, 0, true), 0);

    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, false), 0);
    assert_string_equal(fx_get(f->root, "cpu2/online"), "0");
    assert_int_equal(drv_host_sysfs.is_online(f->h, 2, &on), 0);
    assert_false(on);
    n_wlog = 0;
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, false), 0);
    assert_int_equal(n_wlog, 0);        /* Already offline: no write. */

    /* The kernel's EBUSY comes back as is, so the daemon can retry. */
    inject_errno = EBUSY;
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, true), -EBUSY);
    /* A kernel leaves the attribute as it was; the fixture's regular file
     * was truncated by O_TRUNC, so put the value back. */
    fx_put(f->root, "cpu2/online", "0\n");
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, true), 0);
    assert_string_equal(fx_get(f->root, "cpu2/online"), "1");
    assert_int_equal(drv_host_sysfs.set_online(f->h, 4, true), -EINVAL);
    fx_close(f);
}

static void
test_short_write(void **state)
{
    struct fx *f = fx_open("--cpus 2");

    inject_short = true;
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 1, "performance"),
                     -EIO);
    inject_errno = EACCES;
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 1, true),
                     -EACCES);
    fx_close(f);
}

/* ---- Journal integration ------------------------------------------------ */

static void
test_journalled_writes(void **state)
{
    static const char *const files[] = {
        "cpu1/cpufreq/scaling_max_freq", "cpu1/cpufreq/scaling_min_freq",
        "cpu1/cpufreq/scaling_governor", "cpu3/cpuidle/state2/disable",
        "cpu2/online",
    };
    struct fx *f = fx_open("--cpus 4");
    char *jpath, *before[5];
    struct jnl *j;
    const char *orig;
    unsigned failed = 9;

    for (size_t i = 0; i < 5; i++) {
        before[i] = fx_get_raw(f->root, files[i]);
    }
    assert_true(asprintf(&jpath, "%s/journal", f->root) > 0);
    assert_int_equal(jnl_create(jpath, &j), 0);
    sysfs_set_journal(f->h, j);

    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   800000), 0);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 1600000,
                                                   1600000), 0);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 1, "performance"),
                     0);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 3, 2, true), 0);
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, false), 0);

    /* Originals as read, newline included; the first value wins. */
    assert_true(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_max_freq", &orig));
    assert_string_equal(orig, "2400000\n");
    assert_true(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_min_freq", &orig));
    assert_string_equal(orig, "800000\n");
    assert_true(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_governor", &orig));
    assert_string_equal(orig, "schedutil\n");
    assert_true(jnl_has_sysfs(j, "cpu3/cpuidle/state2/disable", &orig));
    assert_string_equal(orig, "0\n");
    assert_int_equal(jnl_count(j), 5);

    /* A journal that cannot be written stops the change. */
    {
        struct jnl *bad;

        assert_int_equal(jnl_create("/nonexistent/dir/journal", &bad), 0);
        sysfs_set_journal(f->h, bad);
        assert_true(drv_host_sysfs.set_governor(f->h, 0, "performance")
                    < 0);
        assert_string_equal(fx_get(f->root,
                                   "cpu0/cpufreq/scaling_governor"),
                            "schedutil");
        jnl_close(bad);
        sysfs_set_journal(f->h, j);
    }

    assert_int_equal(jnl_restore_sysfs(j, f->root, &failed), 0);
    assert_int_equal(failed, 0);
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_min_freq"),
                        "800000");
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_governor"),
                        "schedutil");
    assert_string_equal(fx_get(f->root, "cpu3/cpuidle/state2/disable"),
                        "0");
    assert_string_equal(fx_get(f->root, "cpu2/online"), "1");
    /* Byte-identical, trailing newlines included. */
    for (size_t i = 0; i < 5; i++) {
        char *after = fx_get_raw(f->root, files[i]);

        if (strcmp(before[i], after)) {
            fail_msg("%s: \"%s\" restored as \"%s\"", files[i], before[i],
                     after);
        }
        free(after);
        free(before[i]);
    }
    sysfs_set_journal(f->h, NULL);
    jnl_close(j);
    free(jpath);
    fx_close(f);
}

/* ---- Other writers ------------------------------------------------------ */

/* Sends stderr (where the log goes in tests) to a temporary file until
 * log_end(), which returns what was logged (caller frees). */
static int saved_stderr = -1;
static FILE *log_file;

static void
log_begin(void)
{
    fflush(stderr);
    log_file = tmpfile();
    assert_non_null(log_file);
    saved_stderr = dup(2);
    assert_true(dup2(fileno(log_file), 2) == 2);
}

static char *
log_end(void)
{
    char *text = calloc(1, 8192);

    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    rewind(log_file);
    if (fread(text, 1, 8191, log_file) == 0) {
        text[0] = '\0';
    }
    fclose(log_file);
    fputs(text, stderr);          /* Still visible in the test log. */
    return text;
}

static const struct drv_foreign *
find_foreign(const struct drv_foreign *l, size_t n, unsigned cpu,
             const char *knob)
{
    for (size_t i = 0; i < n; i++) {
        if (l[i].cpu == cpu && !strcmp(l[i].knob, knob)) {
            return &l[i];
        }
    }
    fail_msg("cpu%u/%s not reported foreign", cpu, knob);
    return NULL;
}

/* While vpowerd runs: a second writer changes a frequency limit and an
 * idle state vpowerd wrote, and an online state.  vpowerd's next writes
 * skip them, they are reported and logged, and neither the restore at
 * stop (through the driver, then the journal, as vpd_stop does) nor the
 * journal puts vpowerd's values or the originals over them. */
static void
test_other_writer_running(void **state)
{
    struct fx *f = fx_open("--cpus 4");
    struct drv_foreign list[8];
    const struct drv_foreign *fr;
    struct drv_freq fq;
    struct jnl *j;
    char *jpath, *log;
    unsigned failed = 9, n_foreign = 9;
    int64_t t0 = (int64_t) time(NULL);

    assert_true(asprintf(&jpath, "%s/journal", f->root) > 0);
    assert_int_equal(jnl_create(jpath, &j), 0);
    sysfs_set_journal(f->h, j);
    assert_int_equal(drv_host_sysfs.foreign(f->h, NULL, 0), 0);

    /* vpowerd manages cpu1 and cpu2. */
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fq), 0);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   1600000), 0);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, true), 0);
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, false), 0);
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "1600000");

    /* The second writer (tuned, an administrator). */
    fx_put(f->root, "cpu1/cpufreq/scaling_max_freq", "2000000\n");
    fx_put(f->root, "cpu1/cpuidle/state2/disable", "0\n");
    fx_put(f->root, "cpu2/online", "1\n");

    /* vpowerd's next period: the changed knobs are not written. */
    log_begin();
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 1000000,
                                                   1200000), 0);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, true), 0);
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, false), -EPERM);
    assert_int_equal(drv_host_sysfs.set_online(f->h, 2, true), 0);
    log = log_end();
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "2000000");
    assert_string_equal(fx_get(f->root, "cpu1/cpuidle/state2/disable"),
                        "0");
    assert_string_equal(fx_get(f->root, "cpu2/online"), "1");
    /* The limit vpowerd still owns is still managed. */
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_min_freq"),
                        "1000000");
    assert_non_null(strstr(log, "cpu1/cpufreq/scaling_max_freq changed by "
                           "another writer"));
    assert_non_null(strstr(log, "expected \"1600000\" (written by "
                           "vpowerd), found \"2000000\""));
    assert_non_null(strstr(log, "cpu1/cpuidle/state2/disable changed by "
                           "another writer"));
    assert_non_null(strstr(log, "the writer is unknown"));
    assert_non_null(strstr(log, " UTC"));
    free(log);

    /* Reported: the count and who-what-when. */
    assert_int_equal(drv_host_sysfs.foreign(f->h, list, 8), 3);
    fr = find_foreign(list, 3, 1, "cpufreq/scaling_max_freq");
    assert_string_equal(fr->expected, "1600000");
    assert_string_equal(fr->found, "2000000");
    assert_true(fr->written);
    assert_true(fr->since_s >= t0 && fr->when_s >= fr->since_s);
    fr = find_foreign(list, 3, 1, "cpuidle/state2/disable");
    assert_string_equal(fr->expected, "1");
    assert_string_equal(fr->found, "0");
    fr = find_foreign(list, 3, 2, "online");
    assert_string_equal(fr->expected, "0");
    assert_string_equal(fr->found, "1");
    assert_int_equal(drv_host_sysfs.foreign(f->h, list, 1), 3);

    /* Later writes stay skipped even when the value would match. */
    fx_put(f->root, "cpu1/cpufreq/scaling_max_freq", "1900000\n");
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   2400000), 0);
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "1900000");
    assert_int_equal(drv_host_sysfs.foreign(f->h, NULL, 0), 3);

    /* Stop: originals through the driver, then the journal's own pass. */
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, false),
                     0);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   2400000), 0);
    assert_int_equal(jnl_restore_sysfs_counted(j, f->root, &failed,
                                               &n_foreign), 0);
    assert_int_equal(failed, 0);
    assert_int_equal(n_foreign, 1);     /* scaling_max_freq. */
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "1900000");
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_min_freq"),
                        "800000");
    assert_string_equal(fx_get(f->root, "cpu1/cpuidle/state2/disable"),
                        "0");
    assert_string_equal(fx_get(f->root, "cpu2/online"), "1");
    sysfs_set_journal(f->h, NULL);
    jnl_close(j);
    free(jpath);
    fx_close(f);
}

/* CPUs of one cpufreq policy share its files (the kernel links their
 * cpufreq directories to one policyX): vpowerd's write through one CPU
 * is not another writer's change seen through the other. */
static void
test_other_writer_shared_policy(void **state)
{
    struct fx *f = fx_open("--cpus 2");
    struct drv_freq fq;
    char *cmd;

    /* cpu1 links to cpu0's policy and is read first. */
    assert_true(asprintf(&cmd, "rm -rf '%s/cpu1/cpufreq' && ln -s "
                         "../cpu0/cpufreq '%s/cpu1/cpufreq'", f->root,
                         f->root) > 0);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fq), 0);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 0, 800000,
                                                   1600000), 0);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 0, "performance"),
                     0);
    assert_int_equal(drv_host_sysfs.get_freq(f->h, 1, &fq), 0);
    assert_int_equal(fq.max_khz, 1600000);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   1200000), 0);
    assert_string_equal(fx_get(f->root, "cpu0/cpufreq/scaling_max_freq"),
                        "1200000");
    assert_int_equal(drv_host_sysfs.foreign(f->h, NULL, 0), 0);
    fx_close(f);
}

/* After vpowerd stopped (a crash): the next start replays the journal;
 * a value another writer changed after the crash stays, the ones still
 * holding vpowerd's value get their originals back. */
static void
test_other_writer_after_crash(void **state)
{
    struct fx *f = fx_open("--cpus 4");
    struct jnl *j;
    char *jpath, err[256] = "";
    unsigned failed = 9, n_foreign = 9;

    assert_true(asprintf(&jpath, "%s/journal", f->root) > 0);
    assert_int_equal(jnl_create(jpath, &j), 0);
    sysfs_set_journal(f->h, j);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 1, 800000,
                                                   1600000), 0);
    assert_int_equal(drv_host_sysfs.set_freq_range(f->h, 2, 800000,
                                                   1600000), 0);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 1, 2, true), 0);
    assert_int_equal(drv_host_sysfs.set_idle_disable(f->h, 2, 2, true), 0);
    assert_int_equal(drv_host_sysfs.set_governor(f->h, 2, "performance"),
                     0);
    sysfs_set_journal(f->h, NULL);
    jnl_close(j);                       /* Killed: the journal stays. */

    /* After the crash, another writer. */
    fx_put(f->root, "cpu2/cpufreq/scaling_max_freq", "2000000\n");
    fx_put(f->root, "cpu2/cpufreq/scaling_governor", "powersave\n");

    assert_int_equal(jnl_load(jpath, &j, err, sizeof err), 0);
    assert_int_equal(jnl_restore_sysfs_counted(j, f->root, &failed,
                                               &n_foreign), 0);
    assert_int_equal(failed, 0);
    assert_int_equal(n_foreign, 2);
    assert_string_equal(fx_get(f->root, "cpu2/cpufreq/scaling_max_freq"),
                        "2000000");
    assert_string_equal(fx_get(f->root, "cpu2/cpufreq/scaling_governor"),
                        "powersave");
    assert_string_equal(fx_get(f->root, "cpu1/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(f->root, "cpu1/cpuidle/state2/disable"),
                        "0");
    assert_string_equal(fx_get(f->root, "cpu2/cpuidle/state2/disable"),
                        "0");
    jnl_close(j);
    free(jpath);
    fx_close(f);
}

/* ---- The process's own CPUs -------------------------------------------- */

/* Every thread of this process may run on exactly 'want'. */
static void
all_threads_on(const cpu_set_t *want)
{
    DIR *dp = opendir("/proc/self/task");
    struct dirent *e;
    unsigned n = 0;

    assert_non_null(dp);
    while ((e = readdir(dp))) {
        cpu_set_t got;

        if (e->d_name[0] == '.') {
            continue;
        }
        assert_int_equal(sched_getaffinity(atoi(e->d_name), sizeof got,
                                           &got), 0);
        assert_true(CPU_EQUAL(&got, want));
        n++;
    }
    closedir(dp);
    assert_true(n >= 2);
}

static void *
idle_thread(void *arg)
{
    pthread_barrier_t *b = arg;

    pthread_barrier_wait(b);    /* Started: the test moves it. */
    pthread_barrier_wait(b);    /* Checked: it may end. */
    return NULL;
}

/* confine_self keeps every thread of vpowerd (here: this test, with a
 * second thread) on the set within the CPUs it was started on, widens
 * again, and falls back to those CPUs when the set misses them all;
 * the original affinity is put back at the end. */
static void
test_confine_self(void **state)
{
    struct fx *f = fx_open("--cpus 2");
    struct drv_host *h = f->h;
    cpu_set_t orig, want;
    struct cpuset set, none;
    pthread_barrier_t b;
    pthread_t t;
    int first = -1;

    assert_int_equal(sched_getaffinity(0, sizeof orig, &orig), 0);
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++) {
        if (CPU_ISSET(c, &orig)) {
            first = c;
        }
    }
    pthread_barrier_init(&b, NULL, 2);
    assert_int_equal(pthread_create(&t, NULL, idle_thread, &b), 0);
    pthread_barrier_wait(&b);

    cpuset_zero(&set);
    cpuset_set(&set, (unsigned) first);
    cpuset_set(&set, POL_MAX_CPUS - 1);         /* not the process's */
    assert_int_equal(drv_host_sysfs.confine_self(h, &set), 0);
    CPU_ZERO(&want);
    CPU_SET(first, &want);
    all_threads_on(&want);

    cpuset_zero(&none);
    cpuset_set(&none, POL_MAX_CPUS - 1);
    assert_int_equal(drv_host_sysfs.confine_self(h, &none), 0);
    all_threads_on(&orig);

    pthread_barrier_wait(&b);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&b);
    fx_close(f);
    (void) sched_setaffinity(0, sizeof orig, &orig);
    (void) state;
}

/* ---- Dummy host --------------------------------------------------------- */

static void
test_dummy(void **state)
{
    char err[128] = "";
    struct drv_host *h = drv_host_dummy.open("cpus=3,freqs=1000:2000",
                                             err, sizeof err);
    struct drv_freq fr;
    struct drv_idle idle;
    unsigned n;
    bool on;

    assert_non_null(h);
    assert_int_equal(drv_host_dummy.n_cpus(h, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(drv_host_dummy.get_freq(h, 2, &fr), 0);
    assert_int_equal(fr.hw_max_khz, 2000);
    assert_int_equal(drv_host_dummy.set_freq_range(h, 2, 1, 1500), 0);
    assert_int_equal(drv_host_dummy.get_freq(h, 2, &fr), 0);
    assert_int_equal(fr.min_khz, 1000);
    assert_int_equal(fr.max_khz, 1500);
    assert_int_equal(drv_host_dummy.set_online(h, 0, false), -EPERM);
    assert_int_equal(drv_host_dummy.set_governor(h, 0, "nope"), -EINVAL);

    dummy_host_inject(h, DUMMY_OP_SET_ONLINE, 1, -EBUSY, 1);
    assert_int_equal(drv_host_dummy.set_online(h, 2, false), 0);
    assert_int_equal(drv_host_dummy.set_online(h, 1, false), -EBUSY);
    assert_int_equal(drv_host_dummy.set_online(h, 1, false), 0);
    assert_int_equal(drv_host_dummy.is_online(h, 1, &on), 0);
    assert_false(on);
    dummy_host_inject(h, DUMMY_OP_GET_IDLE, -1, -ENOENT, 2);
    assert_int_equal(drv_host_dummy.get_idle(h, 0, &idle), -ENOENT);
    assert_int_equal(drv_host_dummy.get_idle(h, 1, &idle), -ENOENT);
    assert_int_equal(drv_host_dummy.get_idle(h, 1, &idle), 0);
    dummy_host_inject(h, DUMMY_OP_SET_FREQ, -1, -EACCES, 5);
    dummy_host_inject(h, DUMMY_OP_SET_FREQ, -1, 0, 0);
    assert_int_equal(drv_host_dummy.set_freq_range(h, 0, 1000, 1000), 0);

    assert_int_equal(idle.n_states, 3);
    assert_int_equal(dummy_host_advance_idle(h, 1, 2, 500), 0);
    assert_int_equal(dummy_host_advance_idle(h, 1, 3, 500), -EINVAL);
    assert_int_equal(drv_host_dummy.get_idle(h, 1, &idle), 0);
    assert_true(idle.time_us[2] == 500);
    assert_int_equal(drv_host_dummy.set_idle_disable(h, 1, 2, true), 0);
    assert_int_equal(drv_host_dummy.get_idle(h, 1, &idle), 0);
    assert_true(idle.disabled[2]);
    assert_true(dummy_host_writes(h) == 5);
    drv_host_dummy.close(h);

    h = drv_host_dummy.open("freqs=none", err, sizeof err);
    assert_non_null(h);
    assert_int_equal(drv_host_dummy.get_freq(h, 0, &fr), -ENOTSUP);
    drv_host_dummy.close(h);
    h = drv_host_dummy.open("/sys/devices/system/cpu", err, sizeof err);
    assert_non_null(h);
    drv_host_dummy.close(h);
    assert_null(drv_host_dummy.open("cpus=0", err, sizeof err));
    assert_non_null(strstr(err, "cpus=0"));
    assert_null(drv_host_dummy.open("freqs=2000:1000", err, sizeof err));
    assert_null(drv_host_dummy.open("idle=C1:x:2", err, sizeof err));
    assert_null(drv_host_dummy.open("bogus=1", err, sizeof err));
}

/* The dummy host plays another agent for daemon-level tests: the knob it
 * changes is listed and no longer written. */
static void
test_dummy_other_writer(void **state)
{
    char err[256] = "";
    struct drv_host *h = drv_host_dummy.open("cpus=2", err, sizeof err);
    struct drv_foreign list[4];
    struct drv_freq f;
    struct drv_idle idle;

    assert_non_null(h);
    assert_int_equal(drv_host_dummy.foreign(h, NULL, 0), 0);
    assert_int_equal(drv_host_dummy.set_freq_range(h, 1, 800000, 1600000),
                     0);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpufreq/scaling_max_freq",
                                            "2400000\n"), 0);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpuidle/state2/disable",
                                            "1"), 0);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpuidle/state1/disable",
                                            "0"), 0);   /* Unchanged. */
    assert_int_equal(dummy_host_agent_write(h, 1, "online", "0"), 0);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpuidle/state9/disable",
                                            "1"), -EINVAL);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpufreq/scaling_max_freq",
                                            "1"), -EINVAL);
    assert_int_equal(dummy_host_agent_write(h, 1, "cpufreq/scaling_governor",
                                            "turbo"), -EINVAL);
    assert_int_equal(drv_host_dummy.foreign(h, list, 4), 3);
    assert_string_equal(list[0].knob, "cpufreq/scaling_max_freq");
    assert_string_equal(list[0].expected, "1600000");
    assert_string_equal(list[0].found, "2400000");
    assert_true(list[0].written);
    assert_string_equal(list[1].knob, "cpuidle/state2/disable");
    assert_false(list[1].written);

    assert_int_equal(drv_host_dummy.set_freq_range(h, 1, 1000000, 1200000),
                     0);
    assert_int_equal(drv_host_dummy.get_freq(h, 1, &f), 0);
    assert_int_equal(f.max_khz, 2400000);
    assert_int_equal(f.min_khz, 1000000);
    assert_int_equal(drv_host_dummy.set_idle_disable(h, 1, 2, false), 0);
    assert_int_equal(drv_host_dummy.get_idle(h, 1, &idle), 0);
    assert_true(idle.disabled[2]);
    assert_int_equal(drv_host_dummy.set_online(h, 1, true), -EPERM);
    assert_int_equal(drv_host_dummy.set_online(h, 1, false), 0);
    assert_int_equal(drv_host_dummy.foreign(h, NULL, 0), 3);
    drv_host_dummy.close(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_strict),
        cmocka_unit_test(test_read_bounded),
        cmocka_unit_test(test_fifo_does_not_block),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_get_freq),
        cmocka_unit_test(test_set_freq_order),
        cmocka_unit_test(test_governor),
        cmocka_unit_test(test_no_cpufreq),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_idle),
        cmocka_unit_test(test_online),
        cmocka_unit_test(test_short_write),
        cmocka_unit_test(test_journalled_writes),
        cmocka_unit_test(test_other_writer_running),
        cmocka_unit_test(test_other_writer_after_crash),
        cmocka_unit_test(test_other_writer_shared_policy),
        cmocka_unit_test(test_confine_self),
        cmocka_unit_test(test_dummy),
        cmocka_unit_test(test_dummy_other_writer),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
