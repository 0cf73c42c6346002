/* tests/sim/test-equal.c -- equal_compare() on hand-made results: which
 * rivals serve, which one vpower is set against, what late work costs,
 * and that a replay at more headroom replaces vpower's row. */

#include <config.h>

#include <math.h>
#include <string.h>

#include "sim/equal.h"
#include "tests/sim/check.h"

#define RATE 7.0          /* J per nominal-core second of late work. */

static void
row(struct sim_result *res, int p, double energy_j, double unmet_pct,
    double late_core_s)
{
    struct sim_row *r = &res->rows[p];

    r->ran = true;
    r->energy_j = energy_j;
    r->unmet_pct = unmet_pct;
    r->late_core_s = late_core_s;
}

static bool
near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

/* A rival that leaves more than 1 % unmet or is refused is never the
 * one vpower is set against, however cheap. */
static void
test_serving_rule(void)
{
    struct sim_result res;
    struct equal_cmp c;

    memset(&res, 0, sizeof res);
    res.late_j_per_core_s = RATE;
    row(&res, SIM_P_VPOWER, 800, 0.5, 0);
    row(&res, SIM_P_POWERSAVE, 500, 1.5, 0);     /* Serves less. */
    row(&res, SIM_P_NOVA, 600, 0.0, 0);
    res.rows[SIM_P_NOVA].refused = true;         /* Would refuse. */
    CHECK(!equal_compare(&res, NULL, &c));
    CHECK(c.rival == -1);
    CHECK(!equal_serves(&res, SIM_P_POWERSAVE));
    CHECK(!equal_serves(&res, SIM_P_NOVA));
    row(&res, SIM_P_SCHED_NOTURBO, 1000, 1.0, 0); /* 1 % still serves. */
    CHECK(equal_compare(&res, NULL, &c));
    CHECK(c.rival == SIM_P_SCHED_NOTURBO);
    CHECK(near(c.vpower_j, 800) && near(c.rival_j, 1000));
    CHECK(isnan(c.breakeven_j_per_core_s));
}

/* The side that ran more work late pays for the difference; the rival
 * chosen is the one against which vpower fares worst, not the
 * cheapest. */
static void
test_late_charge(void)
{
    struct sim_result res;
    struct equal_cmp c;

    memset(&res, 0, sizeof res);
    res.late_j_per_core_s = RATE;
    row(&res, SIM_P_VPOWER, 800, 0.5, 40);
    res.rows[SIM_P_VPOWER].left_finish_j = 10;
    row(&res, SIM_P_DPDK, 900, 0.2, 30);         /* 880 / 900. */
    row(&res, SIM_P_SCHED_NOTURBO, 1000, 0, 0);  /* 1090 / 1000. */
    CHECK(equal_compare(&res, NULL, &c));
    CHECK(c.rival == SIM_P_SCHED_NOTURBO);       /* Not the cheapest. */
    CHECK(near(c.vpower_late_j, 40 * RATE));
    CHECK(near(c.vpower_j, 810 + 40 * RATE) && near(c.rival_j, 1000));
    CHECK(near(c.rival_late_j, 0));
    CHECK(near(c.breakeven_j_per_core_s, (1000 - 810) / 40.0));

    /* The rival runs more late: it pays. */
    row(&res, SIM_P_DPDK, 700, 0.2, 50);
    CHECK(equal_compare(&res, NULL, &c));
    CHECK(c.rival == SIM_P_SCHED_NOTURBO);       /* 1090 / 1000 above
                                                  * 810 / 770. */
    row(&res, SIM_P_SCHED_NOTURBO, 2000, 0, 0);
    CHECK(equal_compare(&res, NULL, &c));
    CHECK(c.rival == SIM_P_DPDK);
    CHECK(near(c.rival_late_j, 10 * RATE) && near(c.vpower_late_j, 0));
    CHECK(near(c.rival_j, 700 + 10 * RATE));
    CHECK(isnan(c.breakeven_j_per_core_s));
}

/* A replay at more headroom stands for vpower; without one (or when it
 * did not run) the run's own row does. */
static void
test_served_row(void)
{
    struct sim_result res, served;
    struct equal_cmp c;

    memset(&res, 0, sizeof res);
    memset(&served, 0, sizeof served);
    res.late_j_per_core_s = RATE;
    row(&res, SIM_P_VPOWER, 800, 0.5, 40);
    row(&res, SIM_P_SCHED_NOTURBO, 1000, 0, 0);
    CHECK(equal_vpower_row(&res, &served) == &res.rows[SIM_P_VPOWER]);
    CHECK(equal_vpower_row(&res, NULL) == &res.rows[SIM_P_VPOWER]);
    row(&served, SIM_P_VPOWER, 950, 0, 0);
    CHECK(equal_vpower_row(&res, &served) == &served.rows[SIM_P_VPOWER]);
    CHECK(equal_compare(&res, &served, &c));
    CHECK(near(c.vpower_j, 950) && near(c.vpower_late_j, 0));
    CHECK(near(c.rival_j, 1000));
}

int
main(void)
{
    test_serving_rule();
    test_late_charge();
    test_served_row();
    return fail_count ? 1 : 0;
}
