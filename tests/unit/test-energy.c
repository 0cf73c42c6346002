/* tests/unit/test-energy.c -- the shared energy estimate.
 *
 * Checks the shipped Xeon model against the SPECpower curve it was
 * derived from (docs/energy-model.md): ssj load spread over all CPUs,
 * every domain at the lowest non-turbo point schedutil would pick
 * (capacity >= 1.25 x utilisation, so nominal at 100 %), idle time in
 * the state the utilisation allows.  Also checks the idle-state rules. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "tests/unit/shipped-model.h"

static struct pol_model *m;

static const double spec_w[11] = {
    55, 125, 151, 176, 202, 232, 261, 301, 357, 421, 469,
};

/* Host power at SPEC load 'pct' (0..100), see the file comment. */
static double
spec_power_w(struct pol_plan *p, int pct, int nominal_only)
{
    static uint32_t busy[POL_MAX_CPUS];

    cpuset_zero(&p->active);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&p->active, c);
        p->idle_limit[c] = -1;
    }
    for (unsigned d = 0; d < m->n_domains; d++) {
        const struct pol_domain *dom = &m->domains[d];
        uint32_t need = (uint32_t) (1.25 * pct / 100.0 * 1024);
        unsigned i = 0;

        while (!nominal_only && i < dom->nominal_opp
               && dom->opps[i].capacity < need) {
            i++;
        }
        if (nominal_only) {
            i = dom->nominal_opp;
        }
        p->dom_freq_khz[d] = dom->opps[i].freq_khz;
        CPUSET_FOREACH (c, &dom->cpus) {
            double u = pct / 100.0 * 1024 / dom->opps[i].capacity;

            busy[c] = (uint32_t) (u > 1 ? 1000000 : u * 1e6);
        }
    }
    return pol_energy_power_mw(m, p, busy) / 1000.0;
}

static void
test_specpower(void **state)
{
    struct pol_plan *p = pol_plan_create(0, 0);

    (void) state;
    load_shipped_model(m, "xeon-r640-2s.model");
    for (int pct = 0; pct <= 100; pct += 10) {
        double w = spec_power_w(p, pct, 0);
        double wn = spec_power_w(p, pct, 1);

        print_message("load %3d%%: SPEC %5.0f W, model %6.1f W (%+5.1f%%),"
                      " all at nominal %6.1f W (%+5.1f%%)\n", pct,
                      spec_w[pct / 10], w,
                      100 * (w - spec_w[pct / 10]) / spec_w[pct / 10], wn,
                      100 * (wn - spec_w[pct / 10]) / spec_w[pct / 10]);
        if (pct == 0 || pct == 50 || pct == 100) {
            double err = (w - spec_w[pct / 10]) / spec_w[pct / 10];

            if (err > 0.10 || err < -0.10) {
                fail_msg("load %d%%: model %.1f W vs SPEC %.0f W", pct, w,
                         spec_w[pct / 10]);
            }
        }
    }
    pol_plan_destroy(p);
}

static void
test_idle_rules(void **state)
{
    struct pol_plan *p = pol_plan_create(0, 0);
    static uint32_t busy[POL_MAX_CPUS];
    uint32_t parked, active_idle, shallow, off;

    (void) state;
    load_shipped_model(m, "xeon-r640-2s.model");
    memset(busy, 0, sizeof busy);
    for (unsigned d = 0; d < m->n_domains; d++) {
        p->dom_freq_khz[d] = 2500000;
    }
    parked = pol_energy_power_mw(m, p, busy);
    assert_int_equal(parked, 55000);
    /* An awake but idle core with no limit also reaches C6. */
    cpuset_set(&p->active, 0);
    active_idle = pol_energy_power_mw(m, p, busy);
    assert_int_equal(active_idle, parked);
    /* Limited to C1: core in C1 and its package cannot sleep. */
    p->idle_limit[0] = 0;
    shallow = pol_energy_power_mw(m, p, busy);
    assert_int_equal(shallow, parked - 100 + 1500 + 5000);
    /* An offline core waits in the deepest C-state (mwait_play_dead):
     * it costs what a parked core costs, and so does its package. */
    p->idle_limit[0] = -1;
    cpuset_zero(&p->active);
    cpuset_set(&p->offline, 5);
    cpuset_set(&p->offline, 61);
    off = pol_energy_power_mw(m, p, busy);
    assert_int_equal(off, parked);
    /* ... even when an awake core of its package is held shallow. */
    cpuset_set(&p->active, 0);
    p->idle_limit[0] = 0;
    assert_int_equal(pol_energy_power_mw(m, p, busy), shallow);
    p->idle_limit[0] = -1;
    cpuset_zero(&p->active);
    /* A busier core gets no deeper state: power rises with busy. */
    cpuset_zero(&p->offline);
    cpuset_set(&p->active, 0);
    {
        uint32_t prev = 0;

        for (uint32_t b = 0; b <= 1000000; b += 50000) {
            uint32_t w;

            busy[0] = b;
            w = pol_energy_power_mw(m, p, busy);
            assert_true(w >= prev);
            prev = w;
        }
    }
    pol_plan_destroy(p);
}

static void
test_juno_cluster(void **state)
{
    struct pol_plan *p = pol_plan_create(0, 0);
    static uint32_t busy[POL_MAX_CPUS];
    uint32_t w;

    (void) state;
    load_shipped_model(m, "juno-r0.model");
    memset(busy, 0, sizeof busy);
    /* Everything asleep: both clusters in cluster-sleep. */
    w = pol_energy_power_mw(m, p, busy);
    assert_int_equal(w, 24 + 17);
    /* One A57 100 % busy at the top OPP: core 616 + cluster 64, the
     * other A57 in cluster... no: in cpu-sleep (0), LITTLE asleep. */
    cpuset_set(&p->active, 1);
    busy[1] = 1000000;
    p->dom_freq_khz[m->cpu_domain[1]] = 1100000;
    w = pol_energy_power_mw(m, p, busy);
    assert_int_equal(w, 616 + 64 + 17);
    pol_plan_destroy(p);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specpower),
        cmocka_unit_test(test_idle_rules),
        cmocka_unit_test(test_juno_cluster),
    };
    int r;

    m = calloc(1, sizeof *m);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    free(m);
    return r;
}
