/* tests/unit/test-migration.c -- manager/migration: the verdict for a
 * domain from the driver's migration events and its job, on both ends of
 * a migration, including missed events and failed migrations. */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "manager/migration.h"

#define A "11111111-2222-4333-8444-555555555555"
#define B "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"

static enum migr_verdict
v(const struct migr *m, const char *uuid, enum drv_job job)
{
    return migr_verdict(m, uuid, job, true);
}

/* Source side, as libvirt reports a successful live migration:
 * iterations, the final pause, the stop. */
static void
test_source_success(void **state)
{
    struct migr *m = migr_create();

    assert_int_equal(v(m, A, DRV_JOB_NONE), MIGR_MANAGE);
    migr_event(m, DRV_MIGR_OUT_BEGIN, A);
    assert_int_equal(v(m, A, DRV_JOB_MIGR_OUT), MIGR_FROZEN);
    /* Another domain is not affected. */
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_MANAGE);
    migr_event(m, DRV_MIGR_OUT_BEGIN, A);         /* Final pause. */
    assert_int_equal(migr_verdict(m, A, DRV_JOB_NONE, false), MIGR_FROZEN);
    migr_event(m, DRV_MIGR_GONE, A);
    assert_int_equal(v(m, A, DRV_JOB_NONE), MIGR_GONE);
    /* A late iteration event does not bring it back. */
    migr_event(m, DRV_MIGR_OUT_BEGIN, A);
    assert_int_equal(v(m, A, DRV_JOB_MIGR_OUT), MIGR_GONE);
    migr_done(m, A);
    assert_int_equal(migr_count(m), 0);
    assert_int_equal(v(m, A, DRV_JOB_NONE), MIGR_MANAGE);
    migr_destroy(m);
}

/* Destination side: started to receive, then resumed. */
static void
test_destination(void **state)
{
    struct migr *m = migr_create();

    migr_event(m, DRV_MIGR_IN_BEGIN, B);
    assert_int_equal(v(m, B, DRV_JOB_MIGR_IN), MIGR_FROZEN);
    /* The job query failed: the events say it is still arriving. */
    assert_int_equal(migr_verdict(m, B, DRV_JOB_NONE, false), MIGR_FROZEN);
    /* Job over before the resume event was handled: it arrived. */
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_ARRIVED);
    /* Taken as arrived once: the resume that follows ends the entry
     * instead of making it arrive again. */
    migr_taken(m, B);
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_MANAGE);
    assert_int_equal(migr_count(m), 1);
    migr_event(m, DRV_MIGR_RESUMED, B);
    assert_int_equal(migr_count(m), 0);
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_MANAGE);

    /* The other order: the resume is handled while the job still runs. */
    migr_event(m, DRV_MIGR_IN_BEGIN, B);
    migr_event(m, DRV_MIGR_RESUMED, B);
    assert_int_equal(v(m, B, DRV_JOB_MIGR_IN), MIGR_FROZEN);
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_ARRIVED);
    assert_int_equal(migr_verdict(m, B, DRV_JOB_NONE, false), MIGR_ARRIVED);
    migr_taken(m, B);
    assert_int_equal(migr_count(m), 0);
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_MANAGE);
    migr_destroy(m);
}

/* A migration that fails before the final pause raises no event: the
 * job answer alone ends the freeze.  One cancelled after the pause
 * resumes on the source and stays managed. */
static void
test_source_failures(void **state)
{
    struct migr *m = migr_create();

    migr_event(m, DRV_MIGR_OUT_BEGIN, A);
    assert_int_equal(v(m, A, DRV_JOB_MIGR_OUT), MIGR_FROZEN);
    assert_int_equal(v(m, A, DRV_JOB_NONE), MIGR_MANAGE);
    assert_int_equal(v(m, A, DRV_JOB_OTHER), MIGR_MANAGE);

    migr_event(m, DRV_MIGR_OUT_BEGIN, A);
    migr_event(m, DRV_MIGR_RESUMED, A);
    assert_int_equal(migr_count(m), 0);
    assert_int_equal(migr_verdict(m, A, DRV_JOB_NONE, false), MIGR_MANAGE);
    migr_destroy(m);
}

/* vpowerd started mid-migration (no events seen): the job freezes it;
 * a resume for a domain it knew nothing about counts as arrived. */
static void
test_missed_events(void **state)
{
    struct migr *m = migr_create();

    assert_int_equal(v(m, A, DRV_JOB_MIGR_OUT), MIGR_FROZEN);
    assert_int_equal(v(m, B, DRV_JOB_MIGR_IN), MIGR_FROZEN);
    assert_int_equal(migr_count(m), 0);
    migr_event(m, DRV_MIGR_RESUMED, B);
    assert_int_equal(v(m, B, DRV_JOB_NONE), MIGR_ARRIVED);
    /* Arrived and leaving again at once: frozen wins. */
    assert_int_equal(v(m, B, DRV_JOB_MIGR_OUT), MIGR_FROZEN);
    migr_event(m, DRV_MIGR_GONE, B);
    assert_int_equal(v(m, B, DRV_JOB_MIGR_OUT), MIGR_GONE);
    migr_event(m, DRV_MIGR_GONE, NULL);
    migr_event(m, DRV_MIGR_GONE,
               "not-a-uuid-but-far-too-long-to-be-one-at-all");
    assert_int_equal(migr_count(m), 1);
    assert_string_equal(migr_verdict_name(MIGR_FROZEN), "frozen");
    migr_destroy(m);
    migr_destroy(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_success),
        cmocka_unit_test(test_destination),
        cmocka_unit_test(test_source_failures),
        cmocka_unit_test(test_missed_events),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
