/* tests/unit/test-drv-dummy-hv.c -- drv_hv_dummy: the domains file, pins
 * kept in memory and written to $VPOWER_DUMMY_STATE, synthetic vCPU time,
 * "FILE:LINE: reason" for a bad domains file, and scripted live
 * migrations (migr=): the events in libvirt's order, the job answer,
 * what is listed and whether a paused incoming domain accrues time. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/sched.h"

static char dir[64];

static void
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
test_list_pin_state(void **state)
{
    char doms_path[128], state_path[128], err[256], line[256];
    struct drv_dom *doms = NULL;
    struct drv_vcpu_stat st[4];
    struct drv_hv *hv;
    struct cpuset s, got;
    size_t n = 0;
    FILE *f;
    bool found = false;
    struct timespec ts = { 0, 50000000 };

    snprintf(doms_path, sizeof doms_path, "%s/doms", dir);
    snprintf(state_path, sizeof state_path, "%s/state", dir);
    write_file(doms_path, "# test\nweb 2 80 10\nbatch 1 5 static=0\n\n");
    setenv("VPOWER_DUMMY_STATE", state_path, 1);
    hv = drv_hv_dummy.open(doms_path, NULL, NULL, NULL, err, sizeof err);
    assert_non_null(hv);
    assert_int_equal(drv_hv_dummy.list(hv, &doms, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(doms[0].name, "web");
    assert_int_equal(doms[0].n_vcpus, 2);
    assert_false(doms[0].static_pinning);
    assert_true(doms[1].static_pinning);
    assert_true(cpuset_has(&doms[1].static_cpus, 0));

    cpuset_zero(&s);
    cpuset_set(&s, 0);
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, doms[0].uuid, 1, &s), 0);
    assert_int_equal(drv_hv_dummy.get_vcpu_pin(hv, doms[0].uuid, 1, &got),
                     0);
    assert_true(cpuset_equal(&s, &got));
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, doms[0].uuid, 2, &s),
                     -EINVAL);
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, "nope", 0, &s), -ENOENT);

    f = fopen(state_path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        found |= !strcmp(line, "web vcpu1 0\n");
    }
    fclose(f);
    assert_true(found);

    nanosleep(&ts, NULL);
    assert_int_equal(drv_hv_dummy.vcpu_stats(hv, doms[0].uuid, st, 4, &n),
                     0);
    assert_int_equal(n, 2);
    /* 80% of >= 50 ms of wall time, 10% for the second vCPU. */
    assert_true(st[0].time_ns >= 35000000u);
    assert_true(st[1].time_ns < st[0].time_ns);
    free(doms);
    drv_hv_dummy.close(hv);
    unlink(state_path);
    unlink(doms_path);
    unsetenv("VPOWER_DUMMY_STATE");
}

/* What the driver raised, in order: "m<drv_migr>" and "e<drv_event>",
 * each followed by the domain's first uuid character. */
struct evlog {
    struct sched *s;
    char seq[256];
};

static void
log_ev(struct evlog *l, char kind, int code, const char *uuid)
{
    size_t n = strlen(l->seq);

    snprintf(l->seq + n, sizeof l->seq - n, "%c%d%c ", kind, code,
             uuid ? uuid[0] : '-');
}

static void
plain_cb(void *aux, enum drv_event ev, const char *uuid)
{
    log_ev(aux, 'e', (int) ev, uuid);
}

static void
mig_cb(void *aux, enum drv_migr ev, const char *uuid)
{
    log_ev(aux, 'm', (int) ev, uuid);
}

static void
quit_cb(void *aux)
{
    sched_quit(aux, 0);
}

/* Replaces the domains file atomically, makes the driver look at it and
 * runs the loop until its events are out; returns what it raised. */
static const char *
step(struct evlog *l, struct drv_hv *hv, const char *path, const char *text)
{
    char tmp[160];
    struct drv_dom *doms = NULL;
    size_t n;

    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    write_file(tmp, text);
    assert_int_equal(rename(tmp, path), 0);
    l->seq[0] = '\0';
    assert_int_equal(drv_hv_dummy.list(hv, &doms, &n), 0);
    free(doms);
    sched_add_timer(l->s, 20000000u, quit_cb, l->s);
    assert_int_equal(sched_run(l->s), 0);
    return l->seq;
}

static bool last_migrated_in;

/* The uuid of listed domain 'name' into 'uuid', or false if unlisted;
 * its migrated_in into last_migrated_in. */
static bool
listed(struct drv_hv *hv, const char *name, char *uuid)
{
    struct drv_dom *doms = NULL;
    size_t n = 0;
    bool found = false;

    assert_int_equal(drv_hv_dummy.list(hv, &doms, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(doms[i].name, name)) {
            snprintf(uuid, DRV_UUID_LEN, "%s", doms[i].uuid);
            last_migrated_in = doms[i].migrated_in;
            found = true;
        }
    }
    free(doms);
    return found;
}

static enum drv_job
job_of(struct drv_hv *hv, const char *uuid, int want_rc)
{
    enum drv_job job = DRV_JOB_OTHER;

    assert_int_equal(drv_hv_dummy.migr_job(hv, uuid, &job), want_rc);
    return job;
}

static uint64_t
vcpu0_time(struct drv_hv *hv, const char *uuid)
{
    struct drv_vcpu_stat st[4];
    size_t n = 0;

    assert_int_equal(drv_hv_dummy.vcpu_stats(hv, uuid, st, 4, &n), 0);
    assert_true(n >= 1);
    return st[0].time_ns;
}

static void
test_migration_script(void **state)
{
    char path[128], err[256], mover[DRV_UUID_LEN], guest[DRV_UUID_LEN];
    char want[64];
    struct evlog l = { 0 };
    struct drv_hv *hv;
    struct cpuset s;
    uint64_t t0;
    struct timespec ts = { 0, 30000000 };

    snprintf(path, sizeof path, "%s/migr", dir);
    write_file(path, "web 1 50\nmover 2 20\n");
    l.s = sched_create();
    hv = drv_hv_dummy.open(path, l.s, plain_cb, &l, err, sizeof err);
    assert_non_null(hv);
    drv_hv_dummy.set_migr_cb(hv, mig_cb, &l);
    assert_true(listed(hv, "mover", mover));
    assert_int_equal(job_of(hv, mover, 0), DRV_JOB_NONE);

    /* Source: migrating away, still listed; then gone. */
    snprintf(want, sizeof want, "m%d%c ", DRV_MIGR_OUT_BEGIN, mover[0]);
    assert_string_equal(step(&l, hv, path,
                             "web 1 50\nmover 2 20 migr=out\n"), want);
    assert_true(listed(hv, "mover", mover));
    assert_int_equal(job_of(hv, mover, 0), DRV_JOB_MIGR_OUT);
    snprintf(want, sizeof want, "m%d%c e%d%c ", DRV_MIGR_GONE, mover[0],
             DRV_EV_STOPPED, mover[0]);
    assert_string_equal(step(&l, hv, path,
                             "web 1 50\nmover 2 20 migr=gone\n"), want);
    assert_false(listed(hv, "mover", guest));
    job_of(hv, mover, -ENOENT);
    cpuset_zero(&s);
    cpuset_set(&s, 0);
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, mover, 0, &s), -ENOENT);

    /* Destination: received paused (no CPU time), then arrived. */
    step(&l, hv, path, "web 1 50\nmover 2 20 migr=gone\n"
                       "guest 1 100 migr=in\n");
    assert_true(listed(hv, "guest", guest));
    snprintf(want, sizeof want, "m%d%c e%d%c ", DRV_MIGR_IN_BEGIN,
             guest[0], DRV_EV_STARTED, guest[0]);
    assert_string_equal(l.seq, want);
    assert_int_equal(job_of(hv, guest, 0), DRV_JOB_MIGR_IN);
    assert_false(last_migrated_in);       /* Not arrived yet. */
    t0 = vcpu0_time(hv, guest);
    nanosleep(&ts, NULL);
    assert_int_equal(vcpu0_time(hv, guest), t0);
    snprintf(want, sizeof want, "m%d%c e%d%c ", DRV_MIGR_RESUMED, guest[0],
             DRV_EV_STARTED, guest[0]);
    assert_string_equal(step(&l, hv, path, "web 1 50\nguest 1 100\n"),
                        want);
    assert_int_equal(job_of(hv, guest, 0), DRV_JOB_NONE);
    assert_true(listed(hv, "guest", guest));
    assert_true(last_migrated_in);
    assert_true(listed(hv, "web", want));
    assert_false(last_migrated_in);
    nanosleep(&ts, NULL);
    assert_true(vcpu0_time(hv, guest) > t0);

    /* A migration that fails before its final pause: no event when it
     * ends, as with libvirt; removing a line is a plain stop. */
    step(&l, hv, path, "web 1 50\nguest 1 100 migr=out\n");
    assert_string_equal(step(&l, hv, path, "web 1 50\nguest 1 100\n"), "");
    snprintf(want, sizeof want, "e%d%c ", DRV_EV_STOPPED, guest[0]);
    assert_string_equal(step(&l, hv, path, "web 1 50\n"), want);

    /* A bad state is refused with the domain named. */
    write_file(path, "web 1 50 migr=sideways\n");
    assert_null(drv_hv_dummy.open(path, NULL, NULL, NULL, err, sizeof err));
    assert_non_null(strstr(err, "'web': bad migration state 'sideways'"));
    drv_hv_dummy.close(hv);
    sched_destroy(l.s);
    unlink(path);
}

static void
test_bad_file(void **state)
{
    char path[128], err[256], want[192];
    struct drv_hv *hv;

    snprintf(path, sizeof path, "%s/bad", dir);
    write_file(path, "ok 1 10\nbroken 1 150\n");
    hv = drv_hv_dummy.open(path, NULL, NULL, NULL, err, sizeof err);
    assert_null(hv);
    snprintf(want, sizeof want, "%s:2: ", path);
    assert_non_null(strstr(err, want));
    write_file(path, "zero 0\n");
    hv = drv_hv_dummy.open(path, NULL, NULL, NULL, err, sizeof err);
    assert_null(hv);
    assert_non_null(strstr(err, ":1: "));
    unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_pin_state),
        cmocka_unit_test(test_bad_file),
        cmocka_unit_test(test_migration_script),
    };
    int r;

    snprintf(dir, sizeof dir, "/tmp/test-dummy-hv.XXXXXX");
    if (!mkdtemp(dir)) {
        return 99;
    }
    log_init("test-drv-dummy-hv", false, LOG_LVL_WARN);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return r;
}
