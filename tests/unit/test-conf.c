/* tests/unit/test-conf.c -- The vpowerd.conf parser.
 *
 * Feeds text to the pure conf_parse() (chrony CNF_ParseLine style) for
 * every directive and every kind of bad value, and checks that errors
 * name FILE:LINE and the directive.  conf_load() and 'include' are tested
 * with files in a temporary directory; the shipped example
 * config/vpowerd.conf must parse to exactly the defaults. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "manager/conf.h"
#include "tests/unit/hostdrv-fixture.h"

static const char *const all_directives[] = {
    "connect", "sysfs_root", "energy_model", "journal", "control_socket",
    "admin_group", "record", "record_max_bytes", "managed_cpus", "default_policy", "override",
    "manage_static_pinned", "offline_cores", "dry_run", "period_ms",
    "max_period_ms", "headroom_pct", "spread_ready_pct", "pack_dwell_ms",
    "hint_rate", "sched_priority", "turbo", "include",
    "default_share_smt",
    "housekeeping", "housekeeping_cpusets", "housekeeping_irqs",
    "housekeeping_workqueues", "housekeeping_groups",
    "housekeeping_cgroup_root", "housekeeping_proc_root",
    "housekeeping_workqueue_mask", "housekeeping_run_root",
    "housekeeping_spread_pressure_pct",
    "default_share_smt", "model_error_pct", "model_error_periods",
    "model_correction",
};

static void
test_defaults(void **state)
{
    struct vpd_conf c;

    conf_defaults(&c);
    assert_string_equal(c.connect_uri, "qemu:///system");
    assert_string_equal(c.sysfs_root, "/sys/devices/system/cpu");
    assert_string_equal(c.model_file, "");
    assert_string_equal(c.journal_path, "/run/vpower/journal");
    assert_string_equal(c.socket_path, "/run/vpower/vpowerd.sock");
    assert_string_equal(c.admin_group, "");
    assert_string_equal(c.record_path, "");
    assert_false(c.managed_set);
    assert_int_equal(c.default_policy, POL_BALANCED);
    assert_false(c.override_performance);
    assert_false(c.manage_static_pinned);
    assert_false(c.allow_offline);
    assert_false(c.dry_run);
    assert_int_equal(c.period_ms, 1000);
    assert_int_equal(c.max_period_ms, 10000);
    assert_int_equal(c.headroom_pct, 20);
    assert_int_equal(c.spread_ready_pct, 5);
    assert_int_equal(c.pack_dwell_ms, 30000);
    assert_int_equal(c.hint_rate, 20);
    assert_int_equal(c.sched_priority, 0);
    assert_false(c.use_turbo);
    assert_true(c.saturation_turbo);
    assert_true(c.default_share_smt);
    assert_int_equal(c.model_error_pct, 10);
    assert_int_equal(c.model_error_periods, 30);
    assert_false(c.model_correction);
}

/* The model check's directives: parsed, ranges enforced and named. */
static void
test_model_check(void **state)
{
    struct vpd_conf c;
    char err[256] = "";

    (void) state;
    conf_defaults(&c);
    assert_int_equal(conf_parse(&c, "t.conf", "model_error_pct 25\n"
                                "model_error_periods 3\n"
                                "model_correction yes\n", err,
                                sizeof err), 0);
    assert_int_equal(c.model_error_pct, 25);
    assert_int_equal(c.model_error_periods, 3);
    assert_true(c.model_correction);
    assert_int_equal(conf_parse(&c, "t.conf", "model_error_pct 0\n", err,
                                sizeof err), -EINVAL);
    assert_non_null(strstr(err, "t.conf:1"));
    assert_non_null(strstr(err, "model_error_pct"));
    assert_int_equal(conf_parse(&c, "t.conf", "model_error_periods 0\n",
                                err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "model_error_periods"));
    assert_int_equal(conf_parse(&c, "t.conf", "model_correction maybe\n",
                                err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "model_correction"));
}

/* The housekeeping directives: defaults (off, every part on, the
 * driver's default groups and the real roots) and each parsed into its
 * own field. */
static void
test_housekeeping(void **state)
{
    struct vpd_conf c;
    char err[256] = "";

    (void) state;
    conf_defaults(&c);
    assert_false(c.housekeeping);
    assert_true(c.hk_cpusets && c.hk_irqs && c.hk_workqueues);
    assert_string_equal(c.hk_groups, "system.slice,user.slice,init.scope,"
                        "system.slice/libvirtd.service,"
                        "system.slice/virtqemud.service");
    assert_string_equal(c.hk_cgroup_root, "/sys/fs/cgroup");
    assert_string_equal(c.hk_proc_root, "/proc");
    assert_string_equal(c.hk_wq_path,
                        "/sys/devices/virtual/workqueue/cpumask");
    assert_string_equal(c.hk_run_root, "/run");
    assert_int_equal(c.hk_spread_pressure_pct, 10);
    assert_int_equal(conf_parse(&c, "t", "housekeeping yes\n"
                                "housekeeping_cpusets no\n"
                                "housekeeping_irqs no\n"
                                "housekeeping_workqueues no\n"
                                "housekeeping_groups a.slice,b/c.service\n"
                                "housekeeping_cgroup_root /x/cg\n"
                                "housekeeping_proc_root /x/proc\n"
                                "housekeeping_workqueue_mask /x/wq\n"
                                "housekeeping_run_root /x/run\n"
                                "housekeeping_spread_pressure_pct 35\n",
                                err, sizeof err), 0);
    assert_true(c.housekeeping);
    assert_false(c.hk_cpusets || c.hk_irqs || c.hk_workqueues);
    assert_string_equal(c.hk_groups, "a.slice,b/c.service");
    assert_string_equal(c.hk_cgroup_root, "/x/cg");
    assert_string_equal(c.hk_proc_root, "/x/proc");
    assert_string_equal(c.hk_wq_path, "/x/wq");
    assert_string_equal(c.hk_run_root, "/x/run");
    assert_int_equal(c.hk_spread_pressure_pct, 35);
}

/* default_share_smt: yes by default, parsed both ways, bad values named. */
static void
test_default_share_smt(void **state)
{
    struct vpd_conf c;
    char err[256] = "";

    (void) state;
    conf_defaults(&c);
    assert_int_equal(conf_parse(&c, "t.conf", "default_share_smt no\n", err,
                                sizeof err), 0);
    assert_false(c.default_share_smt);
    assert_int_equal(conf_parse(&c, "t.conf", "default_share_smt yes\n",
                                err, sizeof err), 0);
    assert_true(c.default_share_smt);
    assert_int_equal(conf_parse(&c, "t.conf", "default_share_smt maybe\n",
                                err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "t.conf:1: default_share_smt"));
}

static void
test_every_directive(void **state)
{
    static const char text[] =
        "# a comment\n"
        "\n"
        "connect test:///default   # trailing comment\n"
        "sysfs_root /tmp/fixture\n"
        "energy_model /etc/vpower/x.model\n"
        "journal /var/run/j\n"
        "control_socket /var/run/s.sock\n"
        "admin_group vpower-admin\n"
        "record /var/lib/vpower/rec\n"
        "managed_cpus 1-3,8\n"
        "default_policy powersave\n"
        "override performance\n"
        "manage_static_pinned yes\n"
        "offline_cores on\n"
        "\tdry_run   true\n"
        "period_ms 500\n"
        "max_period_ms 60000\n"
        "headroom_pct 35\n"
        "spread_ready_pct 12\n"
        "pack_dwell_ms 0\n"
        "hint_rate 1000\n"
        "sched_priority 99\n"
        "turbo yes\r\n";
    struct vpd_conf c;
    char err[256] = "";

    conf_defaults(&c);
    assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err), 0);
    assert_string_equal(c.connect_uri, "test:///default");
    assert_string_equal(c.sysfs_root, "/tmp/fixture");
    assert_string_equal(c.model_file, "/etc/vpower/x.model");
    assert_string_equal(c.journal_path, "/var/run/j");
    assert_string_equal(c.socket_path, "/var/run/s.sock");
    assert_string_equal(c.admin_group, "vpower-admin");
    assert_string_equal(c.record_path, "/var/lib/vpower/rec");
    assert_true(c.managed_set);
    assert_int_equal(cpuset_count(&c.managed), 4);
    assert_true(cpuset_has(&c.managed, 8));
    assert_false(cpuset_has(&c.managed, 0));
    assert_int_equal(c.default_policy, POL_POWERSAVE);
    assert_true(c.override_performance);
    assert_true(c.manage_static_pinned);
    assert_true(c.allow_offline);
    assert_true(c.dry_run);
    assert_int_equal(c.period_ms, 500);
    assert_int_equal(c.max_period_ms, 60000);
    assert_int_equal(c.headroom_pct, 35);
    assert_int_equal(c.spread_ready_pct, 12);
    assert_int_equal(c.pack_dwell_ms, 0);
    assert_int_equal(c.hint_rate, 1000);
    assert_int_equal(c.sched_priority, 99);
    assert_true(c.use_turbo);
    assert_true(c.saturation_turbo);

    /* Later lines override; "no"/"off"/"false" and "off" override. */
    assert_int_equal(conf_parse(&c, "t.conf", "turbo no\ndry_run false\n"
                                "offline_cores off\noverride off\n"
                                "default_policy performance\n", err,
                                sizeof err), 0);
    assert_false(c.use_turbo);
    assert_false(c.saturation_turbo);
    assert_false(c.dry_run);
    assert_false(c.allow_offline);
    assert_false(c.override_performance);
    assert_int_equal(c.default_policy, POL_PERFORMANCE);
}

static void
test_bad_values(void **state)
{
    static const struct {
        const char *text;
        const char *want;       /* Substring of the error. */
    } bad[] = {
        { "period_ms 99", "t.conf:1: period_ms: expected an integer from "
          "100 to 600000" },
        { "period_ms 600001", "t.conf:1: period_ms:" },
        { "period_ms abc", "t.conf:1: period_ms:" },
        { "period_ms -5", "t.conf:1: period_ms:" },
        { "period_ms 99999999999999", "t.conf:1: period_ms:" },
        { "max_period_ms 99", "t.conf:1: max_period_ms:" },
        { "\n\nmax_period_ms 500", "t.conf:3: max_period_ms: max_period_ms "
          "(500) is below period_ms (1000)" },
        { "headroom_pct 91", "t.conf:1: headroom_pct:" },
        { "spread_ready_pct 0", "t.conf:1: spread_ready_pct:" },
        { "spread_ready_pct 101", "t.conf:1: spread_ready_pct:" },
        { "pack_dwell_ms 3600001", "t.conf:1: pack_dwell_ms:" },
        { "hint_rate 0", "t.conf:1: hint_rate:" },
        { "hint_rate 1001", "t.conf:1: hint_rate:" },
        { "sched_priority 100", "t.conf:1: sched_priority:" },
        { "sched_priority -1", "t.conf:1: sched_priority:" },
        { "turbo maybe", "t.conf:1: turbo: expected no, saturated or yes" },
        { "dry_run 1", "t.conf:1: dry_run:" },
        { "offline_cores YES", "t.conf:1: offline_cores:" },
        { "manage_static_pinned", "t.conf:1: manage_static_pinned: missing "
          "argument" },
        { "override on", "t.conf:1: override: expected performance or off" },
        { "default_policy fast", "t.conf:1: default_policy: unknown policy" },
        { "managed_cpus 3-1", "t.conf:1: managed_cpus: not a CPU list" },
        { "managed_cpus 0-99999", "t.conf:1: managed_cpus:" },
        { "managed_cpus x", "t.conf:1: managed_cpus:" },
        { "journal run/journal", "t.conf:1: journal: expected an absolute" },
        { "sysfs_root sys", "t.conf:1: sysfs_root:" },
        { "control_socket s.sock", "t.conf:1: control_socket:" },
        { "energy_model m", "t.conf:1: energy_model:" },
        { "record r", "t.conf:1: record:" },
        { "admin_group Bad!", "t.conf:1: admin_group: not a valid group" },
        { "admin_group 9x", "t.conf:1: admin_group:" },
        { "connect", "t.conf:1: connect: missing argument" },
        { "dry_run yes no", "t.conf:1: dry_run: too many arguments" },
        { "# ok\nfrobnicate 1", "t.conf:2: unknown directive \"frobnicate\"" },
        { "Period_ms 1000", "t.conf:1: unknown directive" },
        { "turbo yes\x01", "t.conf:1: control character" },
        { "housekeeping maybe", "t.conf:1: housekeeping: expected yes" },
        { "housekeeping_groups /system.slice", "t.conf:1: "
          "housekeeping_groups: item 1: expected a cgroup path relative" },
        { "housekeeping_groups a,,b", "t.conf:1: housekeeping_groups: "
          "item 2:" },
        { "housekeeping_groups a/../b", "t.conf:1: housekeeping_groups: "
          "item 1 (a/../b): empty, \".\" or \"..\" component" },
        { "housekeeping_groups a//b", "t.conf:1: housekeeping_groups:" },
        { "housekeeping_proc_root proc", "t.conf:1: housekeeping_proc_root: "
          "expected an absolute path" },
        { "housekeeping_spread_pressure_pct 0", "t.conf:1: "
          "housekeeping_spread_pressure_pct:" },
        { "housekeeping_spread_pressure_pct 101", "t.conf:1: "
          "housekeeping_spread_pressure_pct:" },
    };
    char err[512];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vpd_conf c;

        conf_defaults(&c);
        err[0] = '\0';
        assert_int_equal(conf_parse(&c, "t.conf", bad[i].text, err,
                                    sizeof err), -EINVAL);
        if (!strstr(err, bad[i].want)) {
            fail_msg("\"%s\": error \"%s\" lacks \"%s\"", bad[i].text, err,
                     bad[i].want);
        }
    }
    /* A too-long value and a too-long line. */
    {
        struct vpd_conf c;
        char *text = malloc(8000);

        conf_defaults(&c);
        strcpy(text, "journal /");
        memset(text + 9, 'j', 300);
        text[309] = '\0';
        assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "t.conf:1: journal: value too long"));
        /* A socket path must fit a sockaddr_un, checked where it is
         * written rather than when the socket is made. */
        strcpy(text, "\ncontrol_socket /");
        memset(text + 17, 's', CONF_SOCKET_MAX);
        text[17 + CONF_SOCKET_MAX] = '\0';
        assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "t.conf:2: control_socket: path longer "
                               "than 107 bytes"));
        text[16 + CONF_SOCKET_MAX] = '\0';
        assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err), 0);
        memset(text, ' ', 7000);
        strcpy(text + 7000, "turbo no");
        assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "t.conf:1: line too long"));
        free(text);
    }
}

static char *
put_file(const char *dir, const char *name, const char *text)
{
    char *path;
    FILE *f;

    if (asprintf(&path, "%s/%s", dir, name) < 0 || !(f = fopen(path, "w"))) {
        exit(99);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

static void
test_load_and_include(void **state)
{
    char *dir = fx_tmpdir(), *main_path, *p;
    char err[512] = "", text[300];
    struct vpd_conf c;

    p = put_file(dir, "inc.conf", "headroom_pct 40\nturbo yes\n");
    free(p);
    main_path = put_file(dir, "main.conf",
                         "headroom_pct 10\ninclude inc.conf\nhint_rate 7\n");
    conf_defaults(&c);
    assert_int_equal(conf_load(&c, main_path, err, sizeof err), 0);
    assert_int_equal(c.headroom_pct, 40);
    assert_true(c.use_turbo);
    assert_int_equal(c.hint_rate, 7);
    free(main_path);

    /* Errors inside an included file name that file. */
    p = put_file(dir, "bad.conf", "\nhint_rate 0\n");
    free(p);
    main_path = put_file(dir, "main2.conf", "include bad.conf\n");
    conf_defaults(&c);
    assert_int_equal(conf_load(&c, main_path, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "bad.conf:2: hint_rate:"));
    free(main_path);

    /* A missing include names the including line. */
    main_path = put_file(dir, "main3.conf", "\n\ninclude nope.conf\n");
    assert_true(conf_load(&c, main_path, err, sizeof err) < 0);
    assert_non_null(strstr(err, "main3.conf:3: include:"));
    assert_non_null(strstr(err, "nope.conf"));
    free(main_path);

    /* An include loop stops at the depth limit. */
    main_path = put_file(dir, "loop.conf", "include loop.conf\n");
    assert_int_equal(conf_load(&c, main_path, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "nested more than"));
    free(main_path);

    /* Missing file, and one over 1 MiB. */
    snprintf(text, sizeof text, "%s/absent.conf", dir);
    assert_int_equal(conf_load(&c, text, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "absent.conf"));
    {
        char *big = malloc(1024 * 1024 + 100);

        memset(big, '#', 1024 * 1024 + 99);
        big[1024 * 1024 + 99] = '\0';
        main_path = put_file(dir, "big.conf", big);
        free(big);
        assert_int_equal(conf_load(&c, main_path, err, sizeof err),
                         -EINVAL);
        assert_non_null(strstr(err, "larger than 1 MiB"));
        free(main_path);
    }
    fx_rmtree(dir);
}

/* Expects conf_load('path') to fail with 'want' and 'msg' in the error,
 * within 10 s (a FIFO used to block forever). */
static void
expect_load_error(const char *path, int want, const char *msg)
{
    struct vpd_conf c;
    char err[512] = "";
    int r;

    conf_defaults(&c);
    alarm(10);
    r = conf_load(&c, path, err, sizeof err);
    alarm(0);
    if (r != want || !strstr(err, msg)) {
        fail_msg("%s: got %d \"%s\", want %d with \"%s\"", path, r, err,
                 want, msg);
    }
}

/* Files that are not regular files, or that another user can write, are
 * refused at once with a message that says so. */
static void
test_load_refusals(void **state)
{
    char *dir = fx_tmpdir(), *p, *inc, path[1024];

    snprintf(path, sizeof path, "%s/fifo.conf", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    expect_load_error(path, -ENODEV, "fifo.conf: is not a regular file");
    p = put_file(dir, "main.conf", "turbo no\n\ninclude fifo.conf\n");
    expect_load_error(p, -ENODEV, "main.conf:3: include: ");
    expect_load_error(p, -ENODEV, "fifo.conf: is not a regular file");
    free(p);
    expect_load_error(dir, -EISDIR, ": is a directory");
    expect_load_error("/dev/zero", -ENODEV,
                      "/dev/zero: is not a regular file");
    expect_load_error("/dev/null", -ENODEV,
                      "/dev/null: is not a regular file");

    p = put_file(dir, "open.conf", "turbo no\n");
    assert_int_equal(chmod(p, 0666), 0);
    expect_load_error(p, -EPERM, "is writable by every user");
    assert_int_equal(chmod(p, 0664), 0);
    expect_load_error(p, -EPERM, "writable by group");
    inc = put_file(dir, "inc.conf", "include open.conf\n");
    expect_load_error(inc, -EPERM, "inc.conf:1: include: configuration "
                      "file");
    free(inc);
    if (geteuid() == 0) {
        assert_int_equal(chmod(p, 0644), 0);
        assert_int_equal(chown(p, 65534, 65534), 0);
        expect_load_error(p, -EPERM, "is owned by uid 65534");
    } else {
        fprintf(stderr, "owner case skipped: chown needs root\n");
    }
    free(p);
    fx_rmtree(dir);
}

/* What needs the running system names the directive's FILE:LINE. */
static void
test_check_system(void **state)
{
    char *dir = fx_tmpdir(), path[1024], text[1200], err[512] = "";
    struct vpd_conf c;

    conf_defaults(&c);
    assert_int_equal(conf_check_system(&c, err, sizeof err), 0);
    assert_int_equal(conf_parse(&c, "t.conf", "\nadmin_group root\n", err,
                                sizeof err), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), 0);
    assert_int_equal(conf_parse(&c, "t.conf", "\n\nadmin_group "
                                "no-such-group-vp\n", err, sizeof err), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "t.conf:3: admin_group: 'no-such-group-vp' "
                           "is not a group"));

    conf_defaults(&c);
    snprintf(path, sizeof path, "%s/fifo.model", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(text, sizeof text, "energy_model %s\n", path);
    assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), -ENODEV);
    assert_non_null(strstr(err, "fifo.model: is not a regular file"));
    snprintf(text, sizeof text, "energy_model %s\n", dir);
    assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), -EISDIR);
    free(put_file(dir, "m.model", "x\n"));
    snprintf(path, sizeof path, "%s/m.model", dir);
    assert_int_equal(chmod(path, 0646), 0);
    snprintf(text, sizeof text, "energy_model %s\n", path);
    assert_int_equal(conf_parse(&c, "t.conf", text, err, sizeof err), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), -EPERM);
    assert_non_null(strstr(err, "writable by every user"));
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(conf_check_system(&c, err, sizeof err), 0);
    fx_rmtree(dir);
}

/* managed_cpus naming CPUs the host lacks is refused, naming them. */
static void
test_check_cpus(void **state)
{
    struct vpd_conf c;
    char err[512] = "";

    conf_defaults(&c);
    assert_int_equal(conf_check_cpus(&c, 2, err, sizeof err), 0);
    assert_int_equal(conf_parse(&c, "t.conf", "\nmanaged_cpus 1-5,9\n", err,
                                sizeof err), 0);
    assert_int_equal(conf_check_cpus(&c, 2, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "t.conf:2: managed_cpus: CPUs 2-5,9 do not "
                           "exist on this host, which has CPUs 0-1"));
    assert_int_equal(conf_check_cpus(&c, 1, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "which has only CPU 0"));
    assert_int_equal(conf_check_cpus(&c, 10, err, sizeof err), 0);
    assert_int_equal(conf_parse(&c, "u.conf", "managed_cpus 3\n", err,
                                sizeof err), 0);
    assert_int_equal(conf_check_cpus(&c, 3, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "u.conf:1: managed_cpus: CPU 3 does not "
                           "exist"));
}

static void
test_example_is_defaults(void **state)
{
    struct vpd_conf c, d;
    char err[512] = "", path[1024], *text;
    FILE *f;
    long n;

    snprintf(path, sizeof path, "%s/config/vpowerd.conf", fx_srcdir());
    conf_defaults(&c);
    conf_defaults(&d);
    if (conf_load(&c, path, err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_memory_equal(&c, &d, sizeof c);

    /* Every directive is documented in the example and the manual. */
    f = fopen(path, "r");
    assert_non_null(f);
    text = calloc(1, 65536);
    n = (long) fread(text, 1, 65535, f);
    fclose(f);
    assert_true(n > 0);
    for (size_t i = 0; i < sizeof all_directives / sizeof *all_directives;
         i++) {
        char want[64];

        snprintf(want, sizeof want, "\n%s ", all_directives[i]);
        if (!strstr(text, want)) {
            snprintf(want, sizeof want, "\n#%s ", all_directives[i]);
            if (!strstr(text, want)) {
                fail_msg("config/vpowerd.conf lacks %s", all_directives[i]);
            }
        }
    }
    snprintf(path, sizeof path, "%s/docs/configuration.md", fx_srcdir());
    f = fopen(path, "r");
    assert_non_null(f);
    memset(text, 0, 65536);
    n = (long) fread(text, 1, 65535, f);
    fclose(f);
    for (size_t i = 0; i < sizeof all_directives / sizeof *all_directives;
         i++) {
        char want[64];

        snprintf(want, sizeof want, "`%s", all_directives[i]);
        if (!strstr(text, want)) {
            fail_msg("docs/configuration.md lacks %s", all_directives[i]);
        }
    }
    free(text);
}

static void
test_to_policy(void **state)
{
    struct vpd_conf c;
    struct pol_config p, d;
    char err[256];

    conf_defaults(&c);
    conf_to_policy(&c, &p);
    pol_config_default(&d);
    assert_int_equal(p.headroom_pct, d.headroom_pct);
    assert_int_equal(p.spread_ready_ppm, d.spread_ready_ppm);
    assert_true(p.pack_dwell_ns == d.pack_dwell_ns);
    assert_true(p.min_interval_ns == d.min_interval_ns);
    assert_true(p.max_interval_ns == d.max_interval_ns);
    assert_int_equal(p.warmup_samples, d.warmup_samples);

    assert_int_equal(conf_parse(&c, "t", "headroom_pct 5\nspread_ready_pct "
                                "12\npack_dwell_ms 1500\nperiod_ms 200\n"
                                "max_period_ms 4000\noffline_cores yes\n"
                                "turbo yes\n", err, sizeof err), 0);
    conf_to_policy(&c, &p);
    assert_int_equal(p.headroom_pct, 5);
    assert_true(p.powersave_headroom_pct <= 5);
    assert_int_equal(p.spread_ready_ppm, 120000);
    assert_true(p.pack_dwell_ns == 1500000000ull);
    assert_true(p.min_interval_ns == 200000000ull);
    assert_true(p.max_interval_ns == 4000000000ull);
    assert_true(p.allow_offline);
    assert_true(p.use_turbo);
    assert_true(p.saturation_turbo);

    /* turbo saturated: only the saturation rule; no: not even that. */
    assert_int_equal(conf_parse(&c, "t", "turbo saturated\n", err,
                                sizeof err), 0);
    conf_to_policy(&c, &p);
    assert_false(p.use_turbo);
    assert_true(p.saturation_turbo);
    assert_int_equal(conf_parse(&c, "t", "turbo no\n", err, sizeof err), 0);
    conf_to_policy(&c, &p);
    assert_false(p.use_turbo);
    assert_false(p.saturation_turbo);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_model_check),
        cmocka_unit_test(test_every_directive),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_load_and_include),
        cmocka_unit_test(test_load_refusals),
        cmocka_unit_test(test_check_system),
        cmocka_unit_test(test_check_cpus),
        cmocka_unit_test(test_example_is_defaults),
        cmocka_unit_test(test_to_policy),
        cmocka_unit_test(test_default_share_smt),
        cmocka_unit_test(test_housekeeping),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
