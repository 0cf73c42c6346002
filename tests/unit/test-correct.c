/* tests/unit/test-correct.c -- The online model correction's fit and the
 * rescaled model (policy/correct.h).
 *
 * A host whose idle (static) power is twice what the model says and whose
 * busy power is 10 % less: intervals at varied load let the fit recover
 * both factors; intervals at one load ratio leave both at the common
 * scale; the rescaled model estimates what the "true" host draws; the
 * busy-only model is the busy part of the estimate; bad intervals are
 * refused. */

#include <config.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/correct.h"
#include "policy/policy.h"
#include "tests/unit/shipped-model.h"

static struct pol_model *m, *t, *b;

/* A plan with the first 'n_active' CPUs awake at the nominal point, the
 * rest parked, each active CPU busy 'ppm'. */
static void
plan_at(const struct pol_model *mm, struct pol_plan *p, unsigned n_active,
        uint32_t ppm, uint32_t *busy)
{
    cpuset_zero(&p->active);
    cpuset_zero(&p->offline);
    for (unsigned c = 0; c < mm->n_cpus; c++) {
        p->idle_limit[c] = -1;
        busy[c] = c < n_active ? ppm : 0;
        if (c < n_active) {
            cpuset_set(&p->active, c);
        }
    }
    for (unsigned d = 0; d < mm->n_domains; d++) {
        p->dom_freq_khz[d] = mm->domains[d].opps[mm->domains[d]
                                                 .nominal_opp].freq_khz;
    }
}

static int
setup(void **state)
{
    (void) state;
    m = calloc(1, sizeof *m);
    t = calloc(1, sizeof *t);
    b = calloc(1, sizeof *b);
    load_shipped_model(m, "xeon-r640-2s.model");
    return 0;
}

static int
teardown(void **state)
{
    (void) state;
    free(m);
    free(t);
    free(b);
    return 0;
}

/* The fit recovers busy x0.9 and idle x2 from intervals at varied load,
 * and the corrected model then estimates the true host within 1 %. */
static void
test_recovers_both(void **state)
{
    struct pol_plan *p = pol_plan_create(0, 0);
    static uint32_t busy[POL_MAX_CPUS];
    struct pol_correct c;
    double mw_t, mw_c;

    (void) state;
    pol_correct_apply(m, 0.9, 2.0, true, t);
    pol_correct_busy_only(m, b);
    pol_correct_init(&c);
    assert_true(c.busy_scale == 1.0 && c.idle_scale == 1.0);
    for (unsigned i = 0; i < 200; i++) {
        unsigned n = 1 + (i * 7) % m->n_cpus;
        uint32_t ppm = (uint32_t) (50000 + (i * 131071u) % 950000);
        double all, busy_j, meter;

        plan_at(m, p, n, ppm, busy);
        all = pol_energy_power_mw(m, p, busy) / 1000.0;
        busy_j = pol_energy_power_mw(b, p, busy) / 1000.0;
        meter = pol_energy_power_mw(t, p, busy) / 1000.0;
        assert_true(pol_correct_update(&c, busy_j, all - busy_j, meter,
                                       0.99));
    }
    assert_true(fabs(c.busy_scale - 0.9) < 0.01);
    assert_true(fabs(c.idle_scale - 2.0) < 0.02);

    /* The rescaled model is the true one within rounding. */
    pol_correct_apply(m, c.busy_scale, c.idle_scale, true, b);
    plan_at(m, p, m->n_cpus / 2, 300000, busy);
    mw_t = pol_energy_power_mw(t, p, busy);
    mw_c = pol_energy_power_mw(b, p, busy);
    assert_true(fabs(mw_c - mw_t) < 0.01 * mw_t);
    /* Only powers change: topology, points and latencies stay. */
    assert_int_equal(b->n_cpus, m->n_cpus);
    assert_int_equal(b->domains[0].opps[1].freq_khz,
                     m->domains[0].opps[1].freq_khz);
    assert_int_equal(b->domains[0].opps[1].capacity,
                     m->domains[0].opps[1].capacity);
    assert_int_equal(b->domains[0].idle[1].target_residency_us,
                     m->domains[0].idle[1].target_residency_us);
    pol_plan_destroy(p);
}

/* The busy-only model's estimate is the busy part: a plan with no busy
 * time costs nothing in it, and the model's estimate minus it does not
 * change with the busy power. */
static void
test_busy_only(void **state)
{
    struct pol_plan *p = pol_plan_create(0, 0);
    static uint32_t busy[POL_MAX_CPUS];
    double s1, s2;

    (void) state;
    pol_correct_busy_only(m, b);
    plan_at(m, p, m->n_cpus, 0, busy);
    assert_int_equal(pol_energy_power_mw(b, p, busy), 0);
    plan_at(m, p, 4, 600000, busy);
    assert_true(pol_energy_power_mw(b, p, busy) > 0);
    s1 = (double) pol_energy_power_mw(m, p, busy)
         - pol_energy_power_mw(b, p, busy);
    pol_correct_apply(m, 3.0, 1.0, true, t);
    pol_correct_busy_only(t, b);
    s2 = (double) pol_energy_power_mw(t, p, busy)
         - pol_energy_power_mw(b, p, busy);
    assert_true(fabs(s1 - s2) <= 2);
    pol_plan_destroy(p);
}

/* One load ratio all along: both scales settle at meter / model, and
 * the scales stay within their bounds however wild the meter. */
static void
test_collinear_and_bounds(void **state)
{
    struct pol_correct c;

    (void) state;
    pol_correct_init(&c);
    for (unsigned i = 0; i < 50; i++) {
        pol_correct_update(&c, 10, 30, 60, 1);
    }
    assert_true(fabs(c.busy_scale - 1.5) < 0.01);
    assert_true(fabs(c.idle_scale - 1.5) < 0.01);
    pol_correct_init(&c);
    for (unsigned i = 0; i < 50; i++) {
        pol_correct_update(&c, 10 + i, 30, 1e6, 1);
    }
    assert_true(c.busy_scale <= POL_CORRECT_MAX);
    assert_true(c.idle_scale <= POL_CORRECT_MAX);
    assert_true(c.busy_scale >= POL_CORRECT_MIN);
    assert_true(c.idle_scale >= POL_CORRECT_MIN);
}

/* Intervals that cannot be used change nothing. */
static void
test_bad_intervals(void **state)
{
    struct pol_correct c;

    (void) state;
    pol_correct_init(&c);
    assert_false(pol_correct_update(&c, NAN, 1, 1, 1));
    assert_false(pol_correct_update(&c, 1, INFINITY, 1, 1));
    assert_false(pol_correct_update(&c, 1, 1, -1, 1));
    assert_false(pol_correct_update(&c, 0, 0, 5, 1));
    assert_int_equal(c.n, 0);
    assert_true(c.busy_scale == 1.0 && c.idle_scale == 1.0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_both),
        cmocka_unit_test(test_busy_only),
        cmocka_unit_test(test_collinear_and_bounds),
        cmocka_unit_test(test_bad_intervals),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
