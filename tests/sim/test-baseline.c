/* tests/sim/test-baseline.c -- The baselines' frequency rules, the
 * execution model's per-thread booking and the placement costs, pinned
 * to cases worked by hand.
 *
 * Model: 2 cores with 2 SMT threads each (CPUs 0-1 core 0, 2-3 core 1;
 * SMT throughput 125 %), points 1.0 / 2.0 / 2.5 GHz (nominal) and a
 * 3.0 GHz turbo point, capacity linear in frequency (400, 800, 1024,
 * 1229).  "percore" gives each core its own clock, "shared" one clock
 * for both.  Halt polling is off, so a thread's utilisation is its
 * guest work alone.  A third model, one big and one LITTLE CPU, tests
 * the energy-aware placement of schedutil's rows.  exec_apply_changes()
 * must end where exec_apply() does. */

#include <config.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "sim/baseline.h"
#include "sim/exec.h"
#include "tests/sim/check.h"

#define MODEL_HEAD \
    "name test\ncpus 4\nsmt 0,2 1,3\nsmt-capacity 125\nplatform 0\n" \
    "package 0 0-3 0 0\n"
#define OPPS \
    "    opp 1000000  400  1000\n    opp 2000000  800  3000\n" \
    "    opp 2500000 1024  5000\n    opp 3000000 1229  8000 turbo\n" \
    "    idle C1 1 1 500\n    idle C6 100 300 50\n"

static const char percore_text[] =
    MODEL_HEAD "domain 0-1\n" OPPS "domain 2-3\n" OPPS;
static const char shared_text[] = MODEL_HEAD "domain 0-3\n" OPPS;

/* Juno-like: CPU 0 big (1024 at 1.1 GHz), CPU 1 LITTLE (447 at its
 * highest point), each its own domain. */
static const char biglittle_text[] =
    "name bl\ncpus 2\nplatform 0\npackage 0 0-1 0 0\n"
    "domain 0\n    opp  450000  417 168\n    opp 1100000 1024 616\n"
    "    idle WFI 1 1 15\n"
    "domain 1\n    opp  450000  235  33\n    opp  850000  447  93\n"
    "    idle WFI 1 1 6\n";

static struct pol_model percore, shared, biglittle;

static int
parse(struct pol_model *m, const char *text)
{
    char err[256];

    if (pol_model_parse(m, text, err, sizeof err)) {
        fprintf(stderr, "model: %s\n", err);
        return -1;
    }
    return 0;
}

static bool
near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

/* A host of 'n' one-vCPU VMs, vCPU v allowed only on CPU cpus[v]. */
static struct exec_host *
pinned_host(const struct pol_model *m, size_t n, const unsigned *cpus,
            struct pol_plan **planp)
{
    struct exec_host *h = exec_host_create(m, n, n);
    struct pol_plan *p = pol_plan_create(n, n);

    pol_plan_copy(p, h->plan);
    p->n_vms = n;
    p->n_vcpus = n;
    for (size_t v = 0; v < n; v++) {
        cpuset_zero(&p->vcpu_allowed[v]);
        cpuset_set(&p->vcpu_allowed[v], cpus[v]);
    }
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        p->idle_limit[c] = -1;
    }
    exec_apply(h, p);
    *planp = p;
    return h;
}

/* The rules at one utilisation, worked out:
 * schedutil: next = 1.25 * 3.0 GHz * util / 1229, lowest point >= it;
 * sched-noturbo: 1.25 * 2.5 GHz * util / 1024, never above 2.5 GHz;
 * HWP: lowest point whose capacity * EPP/255 >= util. */
static void
test_rules(void)
{
    const struct pol_model *m = &percore;

    /* A thread 50 % busy at nominal: util 512. */
    CHECK(baseline_rule_khz(BL_SCHEDUTIL, m, 0, 512) == 2000000);
    CHECK(baseline_rule_khz(BL_SCHED_NOTURBO, m, 0, 512) == 2000000);
    /* 128/255 of 1024 = 514 >= 512: nominal; of 800 = 402 < 512. */
    CHECK(baseline_rule_khz(BL_HWP_BALPERF, m, 0, 512) == 2500000);
    /* 192/255 of 800 = 602 >= 512. */
    CHECK(baseline_rule_khz(BL_HWP_BALPOWER, m, 0, 512) == 2000000);
    CHECK(baseline_rule_khz(BL_TUNED_VHOST, m, 0, 0) == 3000000);
    /* 90 % at nominal (922): 1.25 * 3.0 * 922 / 1229 = 2.81 GHz ->
     * turbo; without turbo 2.88 GHz is capped at nominal. */
    CHECK(baseline_rule_khz(BL_SCHEDUTIL, m, 0, 922) == 3000000);
    CHECK(baseline_rule_khz(BL_SCHED_NOTURBO, m, 0, 922) == 2500000);
    /* Idle: the lowest point, except tuned's. */
    CHECK(baseline_rule_khz(BL_SCHEDUTIL, m, 0, 0) == 1000000);
    CHECK(baseline_rule_khz(BL_HWP_BALPERF, m, 0, 0) == 1000000);
}

/* Two threads of one core, each with half a nominal thread's work:
 * both busy independently, each at 1.25/2 of a thread while the other
 * runs: b = 0.5 / (1 - 0.375 b), so b = 2/3 each. */
static void
test_split(void)
{
    double a, b;

    exec_split_threads(512, 512, 1024, 1.25, &a, &b);
    CHECK(near(a, 2.0 / 3.0, 1e-6) && near(b, 2.0 / 3.0, 1e-6));
    exec_split_threads(512, 0, 1024, 1.25, &a, &b);
    CHECK(near(a, 0.5, 1e-9) && b == 0);
    /* A full core (1.25 threads of work) keeps both threads busy. */
    exec_split_threads(640, 640, 1024, 1.25, &a, &b);
    CHECK(near(a, 1.0, 1e-6) && near(b, 1.0, 1e-6));
    /* More than one thread can do moves to the idle sibling. */
    exec_split_threads(1100, 0, 1024, 1.25, &a, &b);
    CHECK(a > 0.99 && b > 0.1 && b < 1.0);
    /* smt = 1: two threads do one thread's work.  Half a thread each
     * fills the pair exactly (a (1 - a / 2) = 1/2, a = 1); more than
     * one thread's work in all keeps both busy; one alone is as solo. */
    exec_split_threads(512, 512, 1024, 1.0, &a, &b);
    CHECK(near(a, 1.0, 1e-6) && near(b, 1.0, 1e-6));
    exec_split_threads(820, 410, 1024, 1.0, &a, &b);
    CHECK(a == 1.0 && b == 1.0);
    exec_split_threads(512, 0, 1024, 1.0, &a, &b);
    CHECK(near(a, 0.5, 1e-9) && b == 0);
}

/* The defining rule, iterated to its fixed point: each thread's rate is
 * cap * (1 - k * sibling's busy fraction); work a thread cannot fit
 * moves to its sibling. */
static void
split_by_iteration(double wa, double wb, double cap, double smt, double *ba,
                   double *bb)
{
    double k = 1.0 - smt / 2.0, a = 0, b = 0;

    for (int i = 0; i < 100000; i++) {
        double ra = cap * (1.0 - k * b), rb = cap * (1.0 - k * a);
        double xa = wa, xb = wb, na, nb;

        if (xa > ra) {
            xb += xa - ra;
            xa = ra;
        }
        if (xb > rb) {
            xa += xb - rb;
            xb = rb;
            xa = xa > ra ? ra : xa;
        }
        na = fmin(1.0, xa / ra);
        nb = fmin(1.0, xb / rb);
        if (fabs(na - a) < 1e-13 && fabs(nb - b) < 1e-13) {
            break;
        }
        a = na;
        b = nb;
    }
    *ba = a;
    *bb = b;
}

/* exec_split_threads() solves that fixed point in closed form: the
 * same answer for each thread idle to overcommitted, at SMT capacities
 * up to the model's 400 % (from 110 %: nearer 100 % the iteration
 * creeps, and test_split() checks smt = 1 on its own). */
static void
test_split_matches_rule(void)
{
    static const double smt[] = { 1.1, 1.25, 1.5, 2.0, 3.0, 4.0 };
    double worst = 0;

    for (size_t s = 0; s < sizeof smt / sizeof smt[0]; s++) {
        for (int i = 0; i <= 120; i++) {
            for (int j = 0; j <= 120; j++) {
                double wa = i * 25.6, wb = j * 25.6, a, b, ra, rb;

                exec_split_threads(wa, wb, 1024, smt[s], &a, &b);
                split_by_iteration(wa, wb, 1024, smt[s], &ra, &rb);
                worst = fmax(worst, fmax(fabs(a - ra), fabs(b - rb)));
            }
        }
    }
    CHECK(worst < 1e-9);
}

/* One busy thread: a vCPU wanting half a nominal thread, alone on
 * CPU 0.  In the step, schedutil settles on 2.0 GHz (1.25 * 3.0 * 512
 * / 1229 = 1.56 GHz -> 2.0), where the thread is 64 % busy. */
static void
test_single_thread(void)
{
    unsigned cpus[1] = { 0 };
    struct pol_plan *p;
    struct exec_host *h = pinned_host(&percore, 1, cpus, &p);
    float dem[1] = { 0.5f };
    uint32_t khz[POL_MAX_DOMAINS];
    double util[POL_MAX_CPUS];

    exec_probe_util(h, dem, NULL, util);
    CHECK(near(util[0], 512, 1e-6) && util[1] == 0);
    baseline_step_freqs(BL_SCHEDUTIL, h, dem, khz);
    CHECK(khz[0] == 2000000);
    CHECK(khz[1] == 1000000);          /* Idle core: lowest point. */
    baseline_step_freqs(BL_HWP_BALPERF, h, dem, khz);
    CHECK(khz[0] == 2500000);
    exec_apply_freqs(h, (uint32_t[]) { 2000000, 1000000 });
    exec_step(h, dem);
    CHECK(near(h->busy_ppm[0] / 1e6, 512.0 / 800.0, 1e-5));
    CHECK(h->busy_ppm[1] == 0);
    exec_host_destroy(h);
    pol_plan_destroy(p);
}

/* Two siblings (CPUs 0 and 1 of core 0), half a nominal thread each:
 * each thread is 2/3 busy at nominal, util 683, so schedutil asks for
 * 1.25 * 3.0 * 683 / 1229 = 2.08 GHz -> 2.5 GHz; the core's sum (1024)
 * would have asked for the turbo point. */
static void
test_siblings(void)
{
    unsigned cpus[2] = { 0, 1 };
    struct pol_plan *p;
    struct exec_host *h = pinned_host(&percore, 2, cpus, &p);
    float dem[2] = { 0.5f, 0.5f };
    uint32_t khz[POL_MAX_DOMAINS];
    double util[POL_MAX_CPUS];

    exec_step(h, dem);
    CHECK(near(h->busy_ppm[0] / 1e6, 2.0 / 3.0, 1e-5));
    CHECK(near(h->busy_ppm[1] / 1e6, 2.0 / 3.0, 1e-5));
    CHECK(near(h->cpu_work_last[0], 1024 * 2.0 / 3.0, 0.01));
    exec_probe_util(h, dem, NULL, util);
    CHECK(near(util[0], util[1], 1e-6) && util[0] < 700);
    baseline_step_freqs(BL_SCHEDUTIL, h, dem, khz);
    CHECK(khz[0] == 2500000);
    exec_host_destroy(h);
    pol_plan_destroy(p);
}

/* A shared domain: two cores on one clock, 35 % of a nominal thread on
 * each.  The busiest CPU (util 358) sets it: 1.25 * 3.0 * 358 / 1229 =
 * 1.09 GHz -> 2.0 GHz; the sum (717) would give 2.19 -> 2.5 GHz. */
static void
test_shared_domain(void)
{
    unsigned cpus[2] = { 0, 2 };
    struct pol_plan *p;
    struct exec_host *h = pinned_host(&shared, 2, cpus, &p);
    float dem[2] = { 0.35f, 0.35f };
    uint32_t khz[POL_MAX_DOMAINS];

    baseline_step_freqs(BL_SCHEDUTIL, h, dem, khz);
    CHECK(khz[0] == 2000000);
    /* One core at 0.9 of nominal and one idle: the idle one does not
     * pull the domain down. */
    dem[0] = 0.9f;
    dem[1] = 0.0f;
    baseline_step_freqs(BL_SCHEDUTIL, h, dem, khz);
    CHECK(khz[0] == 3000000);
    exec_host_destroy(h);
    pol_plan_destroy(p);
}

/* Moving a vCPU from core 0 to core 1 costs mig_cost_s of run time at
 * its new thread's rate, changing its set pin_cost_s; both land in its
 * backlog and in the demand.  A move within the core costs the pin
 * change only. */
static void
test_moves(void)
{
    unsigned cpus[1] = { 0 };
    struct pol_plan *p;
    struct exec_host *h = pinned_host(&percore, 1, cpus, &p);
    float dem[1] = { 0.0f };
    double d0;

    h->mig_cost_s = 0.001;
    h->pin_cost_s = 0.0001;
    exec_step(h, dem);
    d0 = h->demand_work;
    cpuset_zero(&p->vcpu_allowed[0]);
    cpuset_set(&p->vcpu_allowed[0], 2);
    exec_apply(h, p);
    CHECK(h->migrations == 1);
    CHECK(near(h->backlog[0], 0.0011 * 1024, 1e-9));
    CHECK(near(h->demand_work - d0, 0.0011 * 1024, 1e-9));
    CHECK(near(h->overhead_work, 0.0011 * 1024, 1e-9));
    exec_step(h, dem);
    CHECK(h->backlog[0] == 0);         /* Runs at once: not unmet. */
    /* To the sibling of the same core: a pin change, no migration. */
    cpuset_zero(&p->vcpu_allowed[0]);
    cpuset_set(&p->vcpu_allowed[0], 3);
    exec_apply(h, p);
    CHECK(h->migrations == 1);
    CHECK(near(h->overhead_work, 0.0012 * 1024, 1e-9));
    /* Free moves charge nothing. */
    h->mig_cost_s = h->pin_cost_s = 0;
    cpuset_zero(&p->vcpu_allowed[0]);
    cpuset_set(&p->vcpu_allowed[0], 0);
    exec_apply(h, p);
    CHECK(h->migrations == 2);
    CHECK(near(h->overhead_work, 0.0012 * 1024, 1e-9));
    exec_host_destroy(h);
    pol_plan_destroy(p);
}

/* exec_apply_changes() told which sets may have changed ends where
 * exec_apply() of the same plan does: the same pin changes, migrations
 * and charges, homes, groups' service and sets, through a plan that
 * moves one vCPU, pins one back to the set it had (listed, unchanged),
 * changes an emulator set and a frequency. */
static void
test_apply_changes(void)
{
    unsigned cpus[3] = { 0, 2, 3 };
    struct pol_plan *p0, *p1;
    struct exec_host *h0 = pinned_host(&percore, 3, cpus, &p0);
    struct exec_host *h1 = pinned_host(&percore, 3, cpus, &p1);
    const uint32_t vcpus[3] = { 0, 2, 0 }, vms[1] = { 1 };
    float dem[3] = { 0.5f, 0.25f, 1.0f };

    h0->mig_cost_s = h1->mig_cost_s = 0.001;
    h0->pin_cost_s = h1->pin_cost_s = 0.0001;
    exec_step(h0, dem);
    exec_step(h1, dem);
    cpuset_zero(&p0->vcpu_allowed[0]);
    cpuset_set(&p0->vcpu_allowed[0], 1);
    cpuset_set(&p0->vcpu_allowed[0], 2);
    cpuset_zero(&p0->vm_emulator[1]);
    cpuset_set(&p0->vm_emulator[1], 3);
    p0->dom_freq_khz[1] = 1000000;
    exec_apply(h0, p0);
    exec_apply_changes(h1, p0, vcpus, 3, vms, 1);
    CHECK(h0->pin_changes == 1 && h1->pin_changes == 1);
    CHECK(h0->freq_changes == 1 && h1->freq_changes == 1);
    CHECK(h0->migrations == h1->migrations);
    CHECK(h0->overhead_work == h1->overhead_work);
    CHECK(h0->n_awake == h1->n_awake);
    for (size_t v = 0; v < 3; v++) {
        CHECK(cpuset_equal(&h0->plan->vcpu_allowed[v],
                           &h1->plan->vcpu_allowed[v]));
        CHECK(cpuset_equal(&h0->plan->vm_emulator[v],
                           &h1->plan->vm_emulator[v]));
        CHECK(h0->vcpu_home[v] == h1->vcpu_home[v]);
        CHECK(h0->vcpu_cpu[v] == h1->vcpu_cpu[v]);
        CHECK(h0->vcpu_rate[v] == h1->vcpu_rate[v]);
        CHECK(h0->backlog[v] == h1->backlog[v]);
    }
    for (unsigned c = 0; c < percore.n_cpus; c++) {
        CHECK(h0->cpu_cap[c] == h1->cpu_cap[c]);
    }
    exec_step(h0, dem);
    exec_step(h1, dem);
    CHECK(h0->energy_j == h1->energy_j);
    for (size_t v = 0; v < 3; v++) {
        CHECK(h0->served[v] == h1->served[v]);
    }
    /* Nothing listed: nothing compared, the plan's other fields kept. */
    p0->idle_limit[2] = 0;
    exec_apply(h0, p0);
    exec_apply_changes(h1, p0, NULL, 0, NULL, 0);
    CHECK(h1->pin_changes == 1 && h1->pol_idle_limit[2] == 0);
    exec_host_destroy(h0);
    exec_host_destroy(h1);
    pol_plan_destroy(p0);
    pol_plan_destroy(p1);
}

/* EAS between a big and a LITTLE core: a floating vCPU starts on the
 * big CPU 0 (least loaded, lowest id).  With 100 units of work the
 * estimate is 168/417 * 100 = 40.3 on the big core's lowest point and
 * 33/235 * 100 = 14.0 on the LITTLE's: it moves (and the move is
 * charged).  With 500 units it does not fit the LITTLE core (500 * 1.25
 * > 447) and stays. */
static void
test_eas(void)
{
    for (int big = 0; big < 2; big++) {
        struct exec_host *h = exec_host_create(&biglittle, 1, 1);
        struct pol_plan *p = pol_plan_create(1, 1);
        float dem[1] = { (big ? 500.0f : 100.0f) / 1024.0f };
        uint32_t khz[POL_MAX_DOMAINS];

        pol_plan_copy(p, h->plan);
        p->n_vms = 1;
        p->n_vcpus = 1;
        cpuset_zero(&p->vcpu_allowed[0]);
        cpuset_set(&p->vcpu_allowed[0], 0);
        cpuset_set(&p->vcpu_allowed[0], 1);
        for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
            p->idle_limit[c] = -1;
        }
        exec_apply(h, p);
        h->mig_cost_s = 0.001;
        exec_step(h, dem);
        CHECK(h->vcpu_home[0] == 0);
        CHECK(near(h->served[0], big ? 500 : 100, 1e-6));
        baseline_step_freqs(BL_SCHEDUTIL, h, dem, khz);
        CHECK(h->vcpu_home[0] == (big ? 0 : 1));
        CHECK(h->migrations == (big ? 0u : 1u));
        /* The performance rows do not place. */
        baseline_step_freqs(BL_HWP_BALPERF, h, dem, khz);
        CHECK(h->vcpu_home[0] == (big ? 0 : 1));
        exec_host_destroy(h);
        pol_plan_destroy(p);
    }
}

int
main(void)
{
    if (parse(&percore, percore_text) || parse(&shared, shared_text)
        || parse(&biglittle, biglittle_text)) {
        return 99;
    }
    test_rules();
    test_split();
    test_split_matches_rule();
    test_single_thread();
    test_siblings();
    test_shared_domain();
    test_moves();
    test_apply_changes();
    test_eas();
    return fail_count ? 1 : 0;
}
