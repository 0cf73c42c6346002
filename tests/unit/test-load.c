/* tests/unit/test-load.c -- frequency-invariant load tracking.
 *
 * The same work done at half the frequency must look like the same
 * capacity load, the average must decay with the documented half-life,
 * the peak must rise at once and fall slowly, and inputs are clamped. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"

static struct pol_model *m;

static const char model_text[] =
    "cpus 2\n"
    "domain 0-1\n"
    "opp 1000000 512 100\n"
    "opp 2000000 1024 400\n"
    "idle C1 1 1 10\n";

#define MS 1000000ull

static void
test_invariance(void **state)
{
    struct pol_load fast, slow;

    (void) state;
    memset(&fast, 0, sizeof fast);
    memset(&slow, 0, sizeof slow);
    /* 25 % busy at 2 GHz is the same work as 50 % busy at 1 GHz. */
    for (int i = 0; i < 20; i++) {
        pol_load_update(&fast, m, 0, 2000000, 25 * MS, 0, 100 * MS);
        pol_load_update(&slow, m, 0, 1000000, 50 * MS, 0, 100 * MS);
    }
    assert_int_equal(fast.last_cap, 256);
    assert_int_equal(slow.last_cap, 256);
    assert_int_equal(fast.avg_cap, slow.avg_cap);
    /* Unknown CPU or frequency: nominal capacity. */
    pol_load_update(&fast, m, -1, 0, 50 * MS, 0, 100 * MS);
    assert_int_equal(fast.last_cap, 512);
    pol_load_update(&fast, m, 0, 0, 50 * MS, 0, 100 * MS);
    assert_int_equal(fast.last_cap, 512);
}

static void
test_decay_and_clamp(void **state)
{
    struct pol_load l;
    int n;

    (void) state;
    memset(&l, 0, sizeof l);
    pol_load_update(&l, m, 0, 2000000, 100 * MS, 100 * MS, 100 * MS);
    assert_int_equal(l.avg_cap, 1024);
    assert_int_equal(l.peak_cap, 1024);
    assert_int_equal(l.ready_ppm, 1000000);
    /* Half-life of the average: 5-6 samples of zero halve it. */
    for (n = 0; l.avg_cap > 512 && n < 100; n++) {
        pol_load_update(&l, m, 0, 2000000, 0, 0, 100 * MS);
    }
    assert_in_range(n, 5, 6);
    /* The peak decays much more slowly than the average. */
    assert_true(l.peak_cap > 800);
    /* Ready time decays fast. */
    assert_true(l.ready_ppm < 300000);
    /* Peak rises at once. */
    pol_load_update(&l, m, 0, 2000000, 90 * MS, 0, 100 * MS);
    assert_int_equal(l.last_cap, 922);
    assert_true(l.peak_cap >= 922);
    /* Clamp: busy above interval. */
    pol_load_update(&l, m, 0, 2000000, 500 * MS, 900 * MS, 100 * MS);
    assert_int_equal(l.last_cap, 1024);
    assert_int_equal(l.last_ready_ppm, 1000000);
    /* Zero interval does nothing. */
    {
        struct pol_load c = l;

        pol_load_update(&l, m, 0, 2000000, 5, 5, 0);
        assert_memory_equal(&c, &l, sizeof c);
    }
    /* Huge times do not overflow. */
    pol_load_update(&l, m, 0, 2000000, UINT64_MAX / 2, 0, UINT64_MAX);
    assert_in_range(l.last_cap, 511, 513);
    /* Converges to a constant input. */
    for (n = 0; n < 200; n++) {
        pol_load_update(&l, m, 0, 2000000, 30 * MS, 0, 100 * MS);
    }
    assert_in_range(l.avg_cap, 306, 308);
    assert_in_range(l.peak_cap, 306, 308);
    assert_int_equal(l.ready_ppm, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invariance),
        cmocka_unit_test(test_decay_and_clamp),
    };
    char err[128];
    int r;

    m = calloc(1, sizeof *m);
    if (pol_model_parse(m, model_text, err, sizeof err)) {
        return 99;
    }
    r = cmocka_run_group_tests(tests, NULL, NULL);
    free(m);
    return r;
}
