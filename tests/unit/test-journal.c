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
#include <unistd.h>

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
    assert_int_equal(jnl_record_sysfs(j, "x", "1\n\n"), -EINVAL);
    assert_int_equal(jnl_record_sysfs(j, "x", "\x01"), -EINVAL);
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
                                      "2400000\n"), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_min_freq",
                                      "800000"), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu3/cpuidle/state2/disable",
                                      "0\n"), 0);
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
    /* The bytes recorded go back, newline or not; online states in the
     * kernel's form. */
    {
        static const char *const want[][2] = {
            { "cpu1/cpufreq/scaling_max_freq", "2400000\n" },
            { "cpu1/cpufreq/scaling_min_freq", "800000" },
            { "cpu3/cpuidle/state2/disable", "0\n" },
            { "cpu2/online", "1\n" },
            { "cpu3/online", "0\n" },
        };

        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            char *raw = fx_get_raw(root, want[i][0]);

            assert_string_equal(raw, want[i][1]);
            free(raw);
        }
    }
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

static int
no_uuid1_cb(void *aux, const struct jnl_entry *e)
{
    struct counts *c = aux;

    c->n[e->kind]++;
    c->n[JNL_N_KINDS]++;
    if ((e->kind == JNL_VCPU_PIN || e->kind == JNL_EMULATOR_PIN)
        && !strcmp(e->uuid, UUID1)) {
        cpuset_format(&e->cpus, c->last_list, sizeof c->last_list);
        strcpy(c->last_uuid, e->uuid);
    }
    return 0;
}

/* A domain that migrated away: its pin entries go without a restore,
 * on disk too; other domains' pins and host entries stay; forgetting an
 * unknown domain does not rewrite the file; a domain that comes back
 * later is journalled afresh (its new originals, not the old ones). */
static void
test_forget_migrated(void **state)
{
    char *dir = fx_tmpdir(), *path;
    struct cpuset two = set_of("2"), three = set_of("3"), five = set_of("5");
    struct counts c;
    struct jnl *j;
    struct stat before, after;
    char err[256];

    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &two), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 1, &three), 0);
    assert_int_equal(jnl_record_emulator_pin(j, UUID1, &two), 0);
    assert_int_equal(jnl_record_vcpu_pin(j, UUID2, 0, &three), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu1/cpufreq/scaling_max_freq",
                                      "2400000"), 0);
    assert_int_equal(jnl_record_cgroup(j, "machine.slice/cpuset.cpus",
                                       "0-3"), 0);
    assert_int_equal(jnl_forget_domain(j, UUID1), 0);
    jnl_close(j);

    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(jnl_foreach(j, JNL_N_KINDS, no_uuid1_cb, &c), 0);
    assert_int_equal(c.n[JNL_N_KINDS], 3);
    assert_string_equal(c.last_uuid, "");
    assert_int_equal(c.n[JNL_VCPU_PIN], 1);
    assert_int_equal(c.n[JNL_SYSFS], 1);
    assert_int_equal(c.n[JNL_CGROUP], 1);

    assert_int_equal(stat(path, &before), 0);
    assert_int_equal(jnl_forget_domain(j, UUID1), 0);
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);

    assert_int_equal(jnl_record_vcpu_pin(j, UUID1, 0, &five), 0);
    memset(&c, 0, sizeof c);
    assert_int_equal(jnl_foreach(j, JNL_VCPU_PIN, no_uuid1_cb, &c), 0);
    assert_string_equal(c.last_list, "5");
    assert_int_equal(jnl_remove(j), 0);
    jnl_close(j);
    free(path);
    fx_rmtree(dir);
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
            { "vpower-journal 4\nend 0\n", ":1: not a vpower journal" },
            { "vpower-journal 3\nwrote x 1\nend 0\n",
              ":2: wrote: not right after" },
            { "vpower-journal 3\nsysfs x 1\nwrote y 1\nend 1\n",
              ":3: wrote: not right after" },
            { "vpower-journal 3\nsysfs x 1\nwrote x 1\nwrote x 2\nend 1\n",
              ":4: wrote: not right after" },
            { "vpower-journal 3\nsysfs x 1\nwrote x 1\\q\nend 1\n",
              ":3: wrote: bad value" },
            { "vpower-journal 3\nonline 1 1\nwrote-online 2 0\nend 1\n",
              ":3: wrote-online: not right after" },
            { "vpower-journal 3\nonline 1 1\nwrote-online 1 7\nend 1\n",
              ":3: wrote-online: expected" },
            { "vpower-journal 3\nsysfs x 1\nwrotex x 1\nend 1\n",
              ":3: unknown entry" },
            { "vpower-journal 3\nsysfs x 1\nwrote-prev x 1\nend 1\n",
              ":3: wrote-prev: not right after" },
            { "vpower-journal 3\nonline 1 1\nwrote-online 1 0 2\nend 1\n",
              ":3: wrote-online: expected" },
            { "vpower-journal 2\nsysfs x 1\nwrote x 2\nend 1\n",
              ":3: unknown entry" },
            { "vpower-journal 2\nsysfs x 1\\q\nend 1\n",
              ":2: sysfs: bad escape" },
            { "vpower-journal 2\nsysfs x 1\\n2\nend 1\n",
              ":2: sysfs: bad value" },
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

/* The value vpowerd last wrote goes through the file with the original,
 * and a replay restores only what still holds one of them: another
 * writer's newer value stays.  Keys recorded without one (and journals
 * of version 2) are restored as before. */
static int
last_cb(void *aux, const struct jnl_entry *e)
{
    unsigned *n = aux;

    if (e->has_last) {
        (*n)++;
    }
    return 0;
}

static void
test_last_written(void **state)
{
    char *root = fx_mksysfs("--cpus 4");
    char *path, err[256] = "", text[4096];
    struct jnl *j;
    unsigned failed = 9, foreign = 9, n_last = 0;
    FILE *f;
    size_t n;

    assert_true(asprintf(&path, "%s/journal", root) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu1/cpufreq/scaling_max_freq",
                                          "2400000\n", "1600000"), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu1/cpufreq/scaling_max_freq",
                                          "1600000\n", "1200000"), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu2/cpufreq/scaling_max_freq",
                                          "2400000\n", "1600000"), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu2/cpufreq/scaling_governor",
                                          "schedutil\n", "performance"), 0);
    assert_int_equal(jnl_record_sysfs(j, "cpu3/cpufreq/scaling_max_freq",
                                      "2400000\n"), 0);
    assert_int_equal(jnl_record_online(j, 3, true), 0);
    assert_int_equal(jnl_note_online_write(j, 3, false, false), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu1/x", "a\n", "b\\n"), 0);
    /* Killed between recording a write and making it: the file holds
     * the value written before, still vpowerd's. */
    assert_int_equal(jnl_note_sysfs_write(j, "cpu0/cpufreq/scaling_max_freq",
                                          "2400000\n", "1600000"), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu0/cpufreq/scaling_max_freq",
                                          "1600000\n", "1000000"), 0);
    assert_int_equal(jnl_note_online_write(j, 2, true, false), 0);
    assert_int_equal(jnl_note_online_write(j, 2, false, true), 0);
    assert_int_equal(jnl_note_sysfs_write(j, "cpu1/x", "a", "b\n\n"),
                     -EINVAL);
    assert_int_equal(jnl_note_online_write(j, POL_MAX_CPUS, true, false),
                     -EINVAL);
    assert_int_equal(jnl_count(j), 8);
    jnl_close(j);

    f = fopen(path, "r");
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* First value wins for the original, the last one for 'wrote'. */
    assert_non_null(strstr(text, "sysfs cpu1/cpufreq/scaling_max_freq "
                           "2400000\\n\nwrote cpu1/cpufreq/scaling_max_freq "
                           "1200000\n"));
    assert_non_null(strstr(text, "online 3 1\nwrote-online 3 0\n"));
    assert_non_null(strstr(text, "wrote cpu1/x b\\\\n\n"));
    assert_non_null(strstr(text, "wrote cpu0/cpufreq/scaling_max_freq "
                           "1000000\nwrote-prev cpu0/cpufreq/scaling_max_freq"
                           " 1600000\n"));
    assert_non_null(strstr(text, "online 2 1\nwrote-online 2 1 0\n"));

    /* vpowerd's values on the fixture, then another writer on cpu2. */
    fx_put(root, "cpu1/cpufreq/scaling_max_freq", "1200000\n");
    fx_put(root, "cpu2/cpufreq/scaling_max_freq", "2000000\n");
    fx_put(root, "cpu2/cpufreq/scaling_governor", "performance\n");
    fx_put(root, "cpu3/cpufreq/scaling_max_freq", "1000000\n");
    fx_put(root, "cpu3/online", "0\n");
    fx_put(root, "cpu1/x", "b\\n");
    fx_put(root, "cpu0/cpufreq/scaling_max_freq", "1600000\n");
    fx_put(root, "cpu2/online", "0\n");

    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_int_equal(jnl_foreach(j, JNL_N_KINDS, last_cb, &n_last), 0);
    assert_int_equal(n_last, 7);
    assert_int_equal(jnl_restore_sysfs_counted(j, root, &failed, &foreign),
                     0);
    assert_int_equal(failed, 0);
    assert_int_equal(foreign, 1);
    assert_string_equal(fx_get(root, "cpu1/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(root, "cpu2/cpufreq/scaling_max_freq"),
                        "2000000");
    assert_string_equal(fx_get(root, "cpu2/cpufreq/scaling_governor"),
                        "schedutil");
    assert_string_equal(fx_get(root, "cpu3/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(root, "cpu3/online"), "1");
    assert_string_equal(fx_get(root, "cpu1/x"), "a");
    assert_string_equal(fx_get(root, "cpu0/cpufreq/scaling_max_freq"),
                        "2400000");
    assert_string_equal(fx_get(root, "cpu2/online"), "1");
    jnl_close(j);

    /* A version 2 journal has no last values: restored as before. */
    f = fopen(path, "w");
    fputs("vpower-journal 2\nsysfs cpu2/cpufreq/scaling_max_freq "
          "2400000\\n\nend 1\n", f);
    fclose(f);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_int_equal(jnl_restore_sysfs_counted(j, root, &failed, &foreign),
                     0);
    assert_int_equal(foreign, 0);
    assert_string_equal(fx_get(root, "cpu2/cpufreq/scaling_max_freq"),
                        "2400000");
    jnl_close(j);
    free(path);
    fx_rmtree(root);
}

/* Values keep their trailing newline and backslashes through the file;
 * a version 1 journal (older vpowerd) still loads, literally. */
static void
test_value_bytes(void **state)
{
    char *dir = fx_tmpdir(), *path, err[256] = "";
    struct jnl *j;
    const char *v;
    FILE *f;

    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_sysfs(j, "a", "2400000\n"), 0);
    assert_int_equal(jnl_record_sysfs(j, "b", "x\\n y\\"), 0);
    assert_int_equal(jnl_record_sysfs(j, "c", "0"), 0);
    jnl_close(j);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_true(jnl_has_sysfs(j, "a", &v));
    assert_string_equal(v, "2400000\n");
    assert_true(jnl_has_sysfs(j, "b", &v));
    assert_string_equal(v, "x\\n y\\");
    assert_true(jnl_has_sysfs(j, "c", &v));
    assert_string_equal(v, "0");
    jnl_close(j);

    f = fopen(path, "w");
    fputs("vpower-journal 1\nsysfs a 2400000\nsysfs b x\\n\nend 2\n", f);
    fclose(f);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    assert_true(jnl_has_sysfs(j, "a", &v));
    assert_string_equal(v, "2400000");
    assert_true(jnl_has_sysfs(j, "b", &v));
    assert_string_equal(v, "x\\n");
    jnl_close(j);
    free(path);
    fx_rmtree(dir);
}

/* Writes a valid journal with one online entry at 'path'. */
static void
put_journal(const char *path)
{
    struct jnl *j;

    assert_int_equal(jnl_create(path, &j), 0);
    assert_int_equal(jnl_record_online(j, 1, true), 0);
    jnl_close(j);
}

/* Loads 'path' expecting 'want' and an error containing 'msg'. */
static void
expect_refused(const char *path, int want, const char *msg)
{
    char err[512] = "";
    struct jnl *j = NULL;
    int r = jnl_load(path, &j, err, sizeof err);

    if (r != want || !strstr(err, msg)) {
        fail_msg("%s: got %d \"%s\", want %d with \"%s\"", path, r, err,
                 want, msg);
    }
    assert_null(j);
}

/* The journal is replayed as root: a file or directory another user can
 * write is refused, saying how to fix it. */
static void
test_untrusted_mode(void **state)
{
    char *dir = fx_tmpdir(), *path, *sub, *link;
    char err[256] = "";
    struct jnl *j;

    assert_true(asprintf(&path, "%s/journal", dir) > 0);
    put_journal(path);

    assert_int_equal(chmod(path, 0666), 0);
    expect_refused(path, -EPERM, "writable by every user");
    expect_refused(path, -EPERM, "chmod go-w");
    assert_int_equal(chmod(path, 0620), 0);
    expect_refused(path, -EPERM, "writable by group");
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    jnl_close(j);

    /* The directory: world-writable (sticky or not) or group-writable,
     * also when no journal is there yet (vpowerd would write one). */
    assert_int_equal(chmod(dir, 0777), 0);
    expect_refused(path, -EPERM, "journal directory");
    expect_refused(path, -EPERM, "chmod 755");
    assert_int_equal(chmod(dir, 01777), 0);
    expect_refused(path, -EPERM, "writable by every user");
    assert_int_equal(chmod(dir, 0770), 0);
    expect_refused(path, -EPERM, "writable by group");
    assert_int_equal(unlink(path), 0);
    expect_refused(path, -EPERM, "writable by group");
    assert_int_equal(chmod(dir, 0700), 0);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), -ENOENT);

    /* A symlinked directory, a symlinked journal, a FIFO (SIGALRM if the
     * open blocks). */
    assert_true(asprintf(&sub, "%s/real", dir) > 0);
    assert_true(asprintf(&link, "%s/link", dir) > 0);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(symlink(sub, link), 0);
    free(path);
    assert_true(asprintf(&path, "%s/journal", link) > 0);
    expect_refused(path, -ENOTDIR, "not a directory");
    free(path);
    assert_true(asprintf(&path, "%s/journal", sub) > 0);
    put_journal(path);
    free(link);
    assert_true(asprintf(&link, "%s/journal", dir) > 0);
    assert_int_equal(symlink(path, link), 0);
    expect_refused(link, -ELOOP, "symlink");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(10);
    expect_refused(path, -EINVAL, "not a regular file");
    alarm(0);
    free(sub);
    free(link);
    free(path);
    fx_rmtree(dir);
}

/* Another user's journal or directory is refused (root only: chown). */
static void
test_untrusted_owner(void **state)
{
    char *dir = fx_tmpdir(), *sub, *path;
    char err[256] = "";
    struct jnl *j;

    if (geteuid() != 0) {
        fprintf(stderr, "skipped: chown to another uid needs root\n");
        fx_rmtree(dir);
        skip();
    }
    assert_true(asprintf(&sub, "%s/d", dir) > 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_true(asprintf(&path, "%s/journal", sub) > 0);
    put_journal(path);

    /* Mode 0600, but owned by nobody: that user wrote it. */
    assert_int_equal(chown(path, 65534, 65534), 0);
    expect_refused(path, -EPERM, "is owned by uid 65534");
    expect_refused(path, -EPERM, "chown 0");
    assert_int_equal(chown(path, 0, 0), 0);
    assert_int_equal(jnl_load(path, &j, err, sizeof err), 0);
    jnl_close(j);

    /* A directory owned by nobody: they could swap the journal. */
    assert_int_equal(chown(sub, 65534, 65534), 0);
    expect_refused(path, -EPERM, "journal directory");
    expect_refused(path, -EPERM, "owned by uid 65534");
    assert_int_equal(unlink(path), 0);
    expect_refused(path, -EPERM, "owned by uid 65534");
    free(path);
    free(sub);
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
        cmocka_unit_test(test_forget_migrated),
        cmocka_unit_test(test_value_bytes),
        cmocka_unit_test(test_last_written),
        cmocka_unit_test(test_untrusted_mode),
        cmocka_unit_test(test_untrusted_owner),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
