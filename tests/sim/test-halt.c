/* tests/sim/test-halt.c -- The KVM halt-poll model and the halt-stats
 * signal comparison.
 *
 *  1. halt_expect(): no window or no halted time polls nothing; polled
 *     time <= halted time and <= halts x window; success + fail = polled;
 *     more window polls more; the two limits (gaps far below / far above
 *     the window).
 *  2. Execution model, synthetic steps on the server model, two hosts
 *     under the same plan, one with polling: guest service (busy, ready,
 *     backlog, unmet) is identical, polling only adds CPU busy time and
 *     energy, the extra energy is bounded by polled time x the highest
 *     busy power of a core; a core whose only thread is full polls
 *     nothing (polling yields to runnable work).
 *  3. sim_run on 20 PlanetLab VMs x 2 h (skipped without the traces):
 *     with polling, vpower without halt stats is fed more load than with
 *     them; vpower with halt stats decides exactly as on a host without
 *     polling (so its extra energy is the polling alone, > 0 and bounded);
 *     with --halt-poll-ns 0 the on and off rows are identical; running the
 *     variants leaves the baselines' rows unchanged.
 * No result numbers of a particular trace are hard-coded. */

#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/model.h"
#include "sim/baseline.h"
#include "sim/exec.h"
#include "sim/halt.h"
#include "sim/simrun.h"
#include "sim/trace.h"
#include "tests/sim/check.h"
#include "tests/sim/server-model.h"

static struct pol_model model;

/* Highest busy power of one core (any domain, any OPP), W. */
static double
max_core_busy_w(void)
{
    double w = 0;

    for (unsigned d = 0; d < model.n_domains; d++) {
        for (unsigned o = 0; o < model.domains[d].n_opps; o++) {
            double x = model.domains[d].opps[o].busy_mw / 1000.0;
            w = x > w ? x : w;
        }
    }
    return w;
}

static void
test_expect(void)
{
    struct halt_expect e, e2;
    const double hs[] = { 0.01, 0.2, 0.5, 1.0 };
    const double ws[] = { 1, 10, 130, 250 };

    halt_expect(0.5, 100, 0, &e);
    CHECK(e.poll_s == 0 && e.halts == 0);
    halt_expect(0, 250, 200e-6, &e);
    CHECK(e.poll_s == 0 && e.halts == 0);
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++) {
        for (size_t j = 0; j < sizeof ws / sizeof ws[0]; j++) {
            halt_expect(hs[i], ws[j], 200e-6, &e);
            halt_expect(hs[i], ws[j], 2e-3, &e2);
            CHECK(e.poll_s > 0);
            CHECK(e.poll_s <= hs[i] + 1e-12);
            CHECK(e.poll_s <= ws[j] * 200e-6 + 1e-12);
            CHECK(fabs(e.ok_s + e.fail_s - e.poll_s) < 1e-12);
            CHECK(e.ok_s >= 0 && e.fail_s >= 0);
            CHECK(e.halts == ws[j]);
            CHECK(e.halts_ok >= 0 && e.halts_ok <= e.halts);
            CHECK(e2.poll_s > e.poll_s);
            CHECK(e2.halts_ok > e.halts_ok);
        }
    }
    /* Gaps far below the window: nearly all halted time is polled and
     * nearly every poll succeeds. */
    halt_expect(0.001, 250, 200e-6, &e);        /* Gap 4 us. */
    CHECK(e.poll_s > 0.999 * 0.001);
    CHECK(e.halts_ok > 0.999 * 250);
    /* Far above: every halt polls the whole window in vain. */
    halt_expect(1.0, 10, 200e-6, &e);           /* Gap 100 ms. */
    CHECK(e.poll_s > 0.99 * 10 * 200e-6);
    CHECK(e.fail_s > 0.99 * e.poll_s);
    CHECK(e.halts_ok < 0.01 * 10);
}

static double
sum_busy_ppm(const struct exec_host *h)
{
    double s = 0;

    for (unsigned c = 0; c < model.n_cpus; c++) {
        s += h->busy_ppm[c];
    }
    return s;
}

static void
test_exec(void)
{
    enum { NV = 16, STEPS = 60 };
    struct exec_host *h0 = exec_host_create(&model, NV, NV);
    struct exec_host *h1 = exec_host_create(&model, NV, NV);
    struct pol_plan *plan = pol_plan_create(NV, NV);
    float demand[NV];
    bool more_busy = false;
    double de;

    halt_enable(h1, 200000);
    CHECK(h0->halt == NULL && h1->halt != NULL);
    baseline_plan(BL_PERFORMANCE, h0, plan);
    exec_apply(h0, plan);
    exec_apply(h1, plan);
    for (unsigned s = 0; s < STEPS; s++) {
        for (unsigned v = 0; v < NV; v++) {
            demand[v] = (float) (((v * 7 + s * 3) % 11) / 10.0);
        }
        exec_step(h0, demand);
        exec_step(h1, demand);
        more_busy |= sum_busy_ppm(h1) > sum_busy_ppm(h0);
        CHECK(sum_busy_ppm(h1) >= sum_busy_ppm(h0));
    }
    CHECK(more_busy);
    for (unsigned v = 0; v < NV; v++) {
        CHECK(h0->busy_s[v] == h1->busy_s[v]);
        CHECK(h0->ready_s[v] == h1->ready_s[v]);
        CHECK(h0->backlog[v] == h1->backlog[v]);
        CHECK(halt_period_poll_s(h0, v) == 0);
        CHECK(halt_period_poll_s(h1, v) >= 0);
    }
    CHECK(h0->demand_work == h1->demand_work);
    CHECK(h0->unmet_work == h1->unmet_work);
    CHECK(h1->halt->poll_s > 0);
    CHECK(fabs(h1->halt->poll_ok_s + h1->halt->poll_fail_s
               - h1->halt->poll_s) < 1e-9);
    CHECK(h1->halt->halts_ok > 0 && h1->halt->halts_ok < h1->halt->halts);
    de = h1->energy_j - h0->energy_j;
    printf("exec: polled %.3f CPU-s, extra energy %.3f J (%.3f W per "
           "polling CPU; core busy power up to %.3f W)\n",
           h1->halt->poll_s, de, de / h1->halt->poll_s, max_core_busy_w());
    CHECK(de > 0);
    CHECK(de <= h1->halt->poll_s * max_core_busy_w());
    /* A new decision starts a new period of polled time. */
    exec_apply(h1, plan);
    for (unsigned v = 0; v < NV; v++) {
        CHECK(halt_period_poll_s(h1, v) == 0);
    }

    /* Every vCPU on CPU 0, its sibling offline: one thread, which the
     * work fills, so nothing may poll although every vCPU halts. */
    for (unsigned v = 0; v < NV; v++) {
        cpuset_zero(&plan->vcpu_allowed[v]);
        cpuset_set(&plan->vcpu_allowed[v], 0);
    }
    for (unsigned c = 1; c < model.n_cpus; c++) {
        if (model.cpu_core[c] == model.cpu_core[0]) {
            cpuset_set(&plan->offline, c);
            cpuset_clr(&plan->active, c);
        }
    }
    exec_apply(h0, plan);
    exec_apply(h1, plan);
    {
        double p0 = h1->halt->poll_s, e0 = h0->energy_j, e1 = h1->energy_j;

        for (unsigned v = 0; v < NV; v++) {
            demand[v] = 1.0f / NV;     /* Sum = one nominal CPU: full. */
        }
        exec_step(h0, demand);
        exec_step(h1, demand);
        CHECK(h1->halt->poll_s == p0);
        CHECK(h0->busy_ppm[0] == h1->busy_ppm[0]);
        CHECK(h1->energy_j - e1 == h0->energy_j - e0);
        /* Half full: polling fills at most the idle half. */
        for (unsigned v = 0; v < NV; v++) {
            demand[v] = 0.5f / NV;
        }
        exec_step(h0, demand);
        exec_step(h1, demand);
        CHECK(h1->halt->poll_s > p0);
        CHECK(h1->halt->poll_s - p0 <= 0.5 + 1e-9);
        CHECK(h1->busy_ppm[0] > h0->busy_ppm[0]);
        CHECK(h1->busy_ppm[0] <= 1000000);
    }
    pol_plan_destroy(plan);
    exec_host_destroy(h0);
    exec_host_destroy(h1);
}

static int
run(const struct trace_set *ts, uint32_t halt_ns, uint32_t mask,
    struct sim_result *res)
{
    struct sim_opts so;
    char err[512];
    int rc;

    memset(&so, 0, sizeof so);
    so.m = &model;
    so.ts = ts;
    so.hosts = 1;
    so.seed = 1;
    so.on_mean_s = 2.0;
    so.mask = mask;
    so.halt_poll_ns = halt_ns;
    rc = sim_run(&so, res, err, sizeof err);
    if (rc) {
        fprintf(stderr, "sim_run: %s\n", err);
        fail_count++;
    }
    return rc;
}

/* Every reported number of two rows is the same. */
static bool
rows_equal(const struct sim_row *a, const struct sim_row *b)
{
    return a->energy_j == b->energy_j && a->unmet_pct == b->unmet_pct
           && a->ready_p50_pct == b->ready_p50_pct
           && a->ready_p99_pct == b->ready_p99_pct
           && a->pin_changes_h == b->pin_changes_h
           && a->freq_changes_h == b->freq_changes_h
           && a->avg_active_cpus == b->avg_active_cpus
           && a->poll_cpu_s == b->poll_cpu_s
           && a->fed_load_s == b->fed_load_s;
}

static void
test_scenario(const char *dir)
{
    struct trace_opts to = { 20, 24, 1 };
    struct trace_set ts;
    struct sim_result on, off, plain;
    const uint32_t base = (1u << SIM_P_VPOWER) | (1u << SIM_P_PERFORMANCE)
                          | (1u << SIM_P_SCHEDUTIL);
    const uint32_t var = (1u << SIM_P_VPOWER_NOHALT)
                         | (1u << SIM_P_VPOWER_NOCAP);
    char err[512];
    const struct sim_row *v1, *n1, *v0, *n0;

    if (trace_planetlab.load(dir, &to, &ts, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        fail_count++;
        return;
    }
    if (run(&ts, 200000, base | var, &on) || run(&ts, 0, base | var, &off)
        || run(&ts, 200000, base, &plain)) {
        goto out;
    }
    v1 = &on.rows[SIM_P_VPOWER];
    n1 = &on.rows[SIM_P_VPOWER_NOHALT];
    v0 = &off.rows[SIM_P_VPOWER];
    n0 = &off.rows[SIM_P_VPOWER_NOHALT];
    printf("scenario: fed load on %.4f off %.4f vCPUs; polling %.4f CPUs; "
           "vpower energy %.0f J, without polling %.0f J; polls caught "
           "%.2f %% of halts\n", v1->fed_load_s / 7200, n1->fed_load_s / 7200,
           v1->poll_cpu_s / 7200, v1->energy_j, v0->energy_j,
           v1->poll_ok_pct);

    /* Without halt stats the policy is fed the polled time too. */
    CHECK(n1->fed_load_s > v1->fed_load_s);
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (on.rows[p].ran) {
            CHECK(on.rows[p].poll_cpu_s > 0);
            CHECK(on.rows[p].poll_ok_pct > 0
                  && on.rows[p].poll_ok_pct < 100);
            CHECK(off.rows[p].poll_cpu_s == 0);
        }
    }
    /* With halt stats vpower's vCPU loads are what they are without
     * polling.  The per-CPU busy share is corrected only approximately
     * (vpowerd subtracts a vCPU's polling on the CPU it reports, not on
     * the core that polled), so decisions may differ a little; its
     * extra energy is still the polling's.  Plans that differ a little
     * also move vCPUs a different number of times, and each move costs
     * run time (--migration-cost), so the fed load matches to 1e-4, a
     * hundredth of what feeding the polled time adds (about 1 %). */
    CHECK(fabs(v1->fed_load_s - v0->fed_load_s) <= 1e-4 * v0->fed_load_s);
    CHECK(fabs(v1->unmet_pct - v0->unmet_pct) <= 0.05);
    CHECK(fabs(v1->pin_changes_h - v0->pin_changes_h)
          <= 0.1 * v0->pin_changes_h + 1);
    CHECK(fabs(v1->freq_changes_h - v0->freq_changes_h)
          <= 0.1 * v0->freq_changes_h + 1);
    CHECK(fabs(v1->avg_active_cpus - v0->avg_active_cpus)
          <= 0.1 * v0->avg_active_cpus);
    CHECK(v1->energy_j > v0->energy_j);
    CHECK(v1->energy_j - v0->energy_j
          <= v1->poll_cpu_s * max_core_busy_w());
    /* The performance governor's plan never changes: same bound. */
    CHECK(on.rows[SIM_P_PERFORMANCE].energy_j
          > off.rows[SIM_P_PERFORMANCE].energy_j);
    CHECK(on.rows[SIM_P_PERFORMANCE].energy_j
          - off.rows[SIM_P_PERFORMANCE].energy_j
          <= on.rows[SIM_P_PERFORMANCE].poll_cpu_s * max_core_busy_w());
    /* No polling: the signal changes nothing. */
    CHECK(rows_equal(v0, n0));
    /* No thermal cap: being told of none changes nothing. */
    CHECK(rows_equal(v1, &on.rows[SIM_P_VPOWER_NOCAP]));
    CHECK(rows_equal(v0, &off.rows[SIM_P_VPOWER_NOCAP]));
    /* The variants do not move the baselines (nor vpower). */
    CHECK(!plain.rows[SIM_P_VPOWER_NOHALT].ran);
    for (int p = SIM_P_VPOWER; p <= SIM_P_SCHEDUTIL; p++) {
        CHECK(rows_equal(&on.rows[p], &plain.rows[p]));
    }
out:
    sim_result_free(&on);
    sim_result_free(&off);
    sim_result_free(&plain);
    trace_set_free(&ts);
}

int
main(void)
{
    char dirbuf[4096];
    const char *dir = test_trace_day(dirbuf, sizeof dirbuf);

    if (load_server_model(&model)) {
        return 99;
    }

    test_expect();
    test_exec();
    if (access(dir, R_OK)) {
        printf("note: %s not available: sim_run part skipped\n", dir);
    } else {
        test_scenario(dir);
    }
    return fail_count ? 1 : 0;
}
