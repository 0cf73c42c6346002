/* tests/unit/test-journal.c -- The crash-safe journal of original state.
 *
 * A "crash" is simulated by closing the journal object without removing
 * its file, as a killed vpowerd would leave it; the next run loads it.
 * Restores go into fixture trees from tests/fixtures/mksysfs.sh. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "manager/journal.h"
#include "policy/cpuset.h"
#include "tests/unit/hostdrv-fixture.h"

#define UUID1 "8f5a3c1e-0b2d-4c7e-9a61-3d2f4b5c6d7e"
#define UUID2 "00000000-1111-2222-3333-444444444444"

static struct cpuset
set_of(const char *list)
{
    struct cpuset s;

    if (cpuset_parse(&s, list)) {
        exit(99);
    }
    return s;
}

struct counts {
    unsigned n[JNL_N_KINDS + 1];
    char last_uuid[DRV_UUID_LEN];
    char last_list[64];
};

static int
count_cb(void *aux, const struct jnl_entry *e)
{
    struct counts *c = aux;

    c->n[e->kind]++;
    c->n[JNL_N_KINDS]++;
    if (e->kind == JNL_VCPU_PIN || e->kind == JNL_EMULATOR_PIN) {
        strcpy(c->last_uuid, e->uuid);
        cpuset_format(&e->cpus, c->last_list, sizeof c->last_list);
    }
    return e->kind == JNL_EMULATOR_PIN ? -EIO : 0;
}

static void
test_record_and_mode(void **state)
{
    char *dir = fx_tmpdir(), *path;
    struct cpuset s = set_of("0-3");
    struct jnl *j;
    struct stat st;
    mode_t old = umask(0);

    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_string_equal(jnl_path(j), path);
    assert_int_equal(jnl_count(j), 0);
    assert_int_equal(stat(path, &st), -1);          /* Nothing yet. */

    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &s), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);     /* Even with umask 0. */
    umask(old);

    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 1, &s), 0);
    assert_int_equal(jnl_record_emulator_pin(j, UUID1, &s), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_max_freq",
                                      "2400000"), 0);
    assert_int_equal(jnl_record_online(j, 3, true), 0);
    assert_int_equal(jnl_count(j), 5);

    /* First value wins, for every kind of key. */
    s = set_of("2");
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &s), 0);
    assert_int_equal(jnl_record_emulator_pin(j, UUID1, &s), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_max_freq",
                                      "800000"), 0);
    assert_int_equal(jnl_record_online(j, 3, false), 0);
    assert_int_equal(jnl_count(j), 5);
    {
        const char *v;

        assert_true(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_max_freq", &v));
        assert_string_equal(v, "2400000");
        assert_false(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_min_freq",
                                   NULL));
    }
    jnl_close(j);

    /* The file says the same after a reload. */
    assert_int_equal(jnl_load(path, &j, (char[128]) { 0 }, 128), 0);
    {
        struct counts c;
        const char *v;

        memset(&c, 0, sizeof c);
        assert_int_equal(jnl_foreach(j, JNL_VCPU_PIN, count_cb, &c), 0);
        assert_int_equal(c.n[JNL_VCPU_PIN], 2);
        assert_int_equal(c.n[JNL_N_KINDS], 2);
        assert_string_equal(c.last_list, "0-3");
        assert_true(jnl_has_sysfs(j, "cpu1/cpufreq/scaling_max_freq", &v));
        assert_string_equal(v, "2400000");
    }
    jnl_remove(j);
    jnl_close(j);
    free(path);
    fx_rmtree(dir);
}

static void
test_bad_input(void **state)
{
    char *dir = fx_tmpdir(), *path;
    struct cpuset s = set_of("1"), empty;
    struct jnl *j;
    char longv[JNL_VALUE_LEN + 1];

    cpuset_zero(&empty);
    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, "not-a-uuid", 0, &s), -EINVAL);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1 "0", 0, &s), -EINVAL);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &empty), -EINVAL);
    assert_int_equal(jnl_record_emulator_pin(j, "", &s), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "/abs/path", "1"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/../../etc/x", "1"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "..", "1"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "a b", "1"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "", "1"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "x", "1\n2"), -EINVAL);
    memset(longv, '7', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    assert_int_equal(jnl_record_sysfs(j, "x", longv), -EINVAL);
    assert_int_equal(jnl_record_online(j, POL_MAX_CPUS, true), -EINVAL);
    assert_int_equal(jnl_count(j), 0);
    /* Spaces inside a value are kept (cpuidle names have them). */
    assert_int_equal(jnl_record_sysfs(j, "x..y/name", "haltpoll idle"), 0);
    jnl_close(j);
    assert_int_equal(jnl_load(path, &j, (char[128]) { 0 }, 128), 0);
    {
        const char *v;

        assert_true(jnl_has_sysfs(j, "x..y/name", &v));
        assert_string_equal(v, "haltpoll idle");
    }
    jnl_close(j);

    /* An unwritable location: the record fails and is not kept. */
    assert_int_equal(jnl_create("/nonexistent/vpower/journal", &j), 0);
    assert_true(jnl_record_online(j, 1, true) < 0);
    assert_int_equal(jnl_count(j), 0);
    jnl_close(j);
    free(path);
    fx_rmtree(dir);
}

static void
test_crash_and_restore(void **state)
{
    char *root = fx_mksysfs("--cpus 4");
    char *path, err[256] = "";
    struct cpuset s = set_of("0,2");
    struct jnl *j;
    struct counts c;
    unsigned failed = 99;

    assert_true(asprintf(&path, "%s/journal", root) > 0);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), -ENOENT);

    /* Run 1 records originals, changes things, then "crashes". */
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &s), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID2, 3, &s), 0);
    assert_int_equal(jnl_record_emulator_pin(j, UUID2, &s), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_max_freq",
                                      "2400000"), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_min_freq",
                                      "800000"), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu3/cpuidle/state2/disable",
                                      "0"), 0);
    assert_int_equal(jnl_record_online(j, 2, true), 0);
    assert_int_equal(jnl_record_online(j, 3, false), 0);
    fx_put(root, "cpu1/cpufreq/scaling_max_freq", "1600000\n");
    fx_put(root, "cpu1/cpufreq/scaling_min_freq", "1600000\n");
    fx_put(root, "cpu3/cpuidle/state2/disable", "1\n");
    fx_put(root, "cpu2/online", "0\n");
    fx_put(root, "cpu3/online", "1\n");
    jnl_close(j);                            /* Killed: file stays. */

    /* Run 2 finds it. */
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_int_equal(jnl_count(j), 8);
    memset(&c, 0, sizeof c);
    /* Callback errors do not stop the walk; the first is returned. */
    assert_int_equal(jnl_foreach(j, JNL_N_KINDS, count_cb, &c), -EIO);
    assert_int_equal(c.n[JNL_N_KINDS], 8);
    assert_int_equal(c.n[JNL_VCPU_PIN], 2);
    assert_int_equal(c.n[JNL_EMULATOR_PIN], 1);
    assert_int_equal(c.n[JNL_SYSFS], 3);
    assert_int_equal(c.n[JNL_ONLINE], 2);
    assert_string_equal(c.last_uuid, UUID2);
    assert_string_equal(c.last_list, "0,2");

    assert_int_equal(jnl_restore_sysfs(j, root, &failed), 0);
    assert_int_equal(failed, 0);
    assert_string_equal(fx_get(root, "cpu1/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(root, "cpu1/cpufreq/scaling_min_freq"),
                        "800000");
    assert_string_equal(fx_get(root, "cpu3/cpuidle/state2/disable"), "0");
    assert_string_equal(fx_get(root, "cpu2/online"), "1");
    assert_string_equal(fx_get(root, "cpu3/online"), "0");

    /* A domain that is gone loses its pins, and the file follows. */
    assert_int_equal(jnl_forget_domain(j, UUID2), 0);
    assert_int_equal(jnl_count(j), 6);
    jnl_close(j);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_int_equal(jnl_count(j), 6);

    /* Restoring into a tree where a file vanished counts the failure and
     * restores the rest. */
    fx_put(root, "cpu1/cpufreq/scaling_max_freq", "1\n");
    {
        char gone[1024];

        snprintf(gone, sizeof gone, "%s/cpu3/cpuidle/state2/disable", root);
        assert_int_equal(unlink(gone), 0);
    }
    assert_int_equal(jnl_restore_sysfs(j, root, &failed), -ENOENT);
    assert_int_equal(failed, 1);
    assert_string_equal(fx_get(root, "cpu1/cpufreq/scaling_max_freq"),
                        "2400000");

    assert_int_equal(jnl_remove(j), 0);
    assert_int_equal(jnl_count(j), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(jnl_remove(j), 0);      /* Missing file is fine. */
    jnl_close(j);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), -ENOENT);
    free(path);
    fx_rmtree(root);
}

static void
test_atomic(void **state)
{
    char *dir = fx_tmpdir(), *path, *tmp, err[256] = "";
    struct jnl *j;
    FILE *f;
    char text[4096];
    size_t n;

    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    assert_true(asprintf(&tmp, "%s/journal.tmp", dir) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/online", "1"), 0);
    assert_int_equal(jnl_record_online(j, 2, true), 0);
    jnl_close(j);

    /* A crash in the middle of a later rewrite leaves a truncated temp
     * file: the journal itself is untouched and still loads. */
    f = fopen(tmp, "w");
    fputs("vpower-journal 1\nsysfs cpu1/onl", f);
    fclose(f);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_int_equal(jnl_count(j), 2);
    /* The next record replaces the stale temp file and renames it. */
    assert_int_equal(jnl_record_online(j, 3, true), 0);
    assert_int_equal(access(tmp, F_OK), -1);
    jnl_close(j);

    /* The journal itself cut short (not by us): refused, named, kept. */
    f = fopen(path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "end 3\n"));
    for (size_t cut = 1; cut < n; cut++) {
        f = fopen(path, "w");
        fwrite(text, 1, cut, f);
        fclose(f);
        assert_int_equal(jnl_load(path, &j, err, sizeof err), -EINVAL);
        assert_int_equal(strncmp(err, path, strlen(path)), 0);
    }
    assert_int_equal(access(path, F_OK), 0);

    /* Malformed lines name their line. */
    {
        static const char *const bad[][2] = {
            { "vpower-journal 2\nend 0\n", ":1: not a vpower journal" },
            { "vpower-journal 1\nfrob 1\nend 1\n", ":2: unknown entry" },
            { "vpower-journal 1\nvcpu x 0 1\nend 1\n", ":2: vcpu: bad UUID" },
            { "vpower-journal 1\nonline 1 2\nend 1\n", ":2: online" },
            { "vpower-journal 1\nsysfs ../x 1\nend 1\n", ":2: sysfs: bad" },
            { "vpower-journal 1\nonline 1 1\nend 2\n", ":3: entry count" },
            { "vpower-journal 1\nonline 1 1\nonline 1 0\nend 2\n",
              ":3: duplicate" },
            { "vpower-journal 1\nend 0\nonline 1 1\n", ":3: data after" },
            { "vpower-journal 1\nemulator " UUID1 " 9-1\nend 1\n",
              ":2: emulator: bad CPU list" },
        };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            f = fopen(path, "w");
            fputs(bad[i][0], f);
            fclose(f);
            assert_int_equal(jnl_load(path, &j, err, sizeof err), -EINVAL);
            if (!strstr(err, bad[i][1])) {
                fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err,
                         bad[i][1]);
            }
        }
    }
    free(tmp);
    free(path);
    fx_rmtree(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_mode),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_crash_and_restore),
        cmocka_unit_test(test_atomic),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
