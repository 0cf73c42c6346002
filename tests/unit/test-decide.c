/* tests/unit/test-decide.c -- properties of pol_decide().
 *
 * Seeded random topologies (packages, SMT, per-core or per-package
 * domains) and workloads check the contract in policy.h: capacity with
 * headroom, non-empty allowed sets inside managed & online & active,
 * idempotence of decide(apply(decide(x))), exclusive cores for
 * performance VMs, immediate spreading under override.  Deterministic
 * scenarios check hysteresis.  The seed is printed on failure; set
 * VPOWER_SEED to replay one. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"

#define SEC 1000000000ull

static struct pol_model *m;

/* Small deterministic PRNG so results do not depend on libc. */
static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return n ? (uint32_t) ((rng >> 33) % n) : 0;
}

/* Parses TEXT into the shared model, or fails the test naming the
 * parser's complaint and the text. */
static void
model_or_fail(struct pol_model *into, const char *text)
{
    char err[256];

    if (pol_model_parse(into, text, err, sizeof err)) {
        fail_msg("model does not parse: %s\n%s", err, text);
    }
}

/* Builds a random model: 1-2 packages of 1-24 cores, SMT 1 or 2. */
static void
random_model(unsigned *n_cores_out)
{
    static char text[8192];
    unsigned pkgs = 1 + rnd(2), cores = 1 + rnd(24), smt = 1 + rnd(2);
    unsigned ncore = pkgs * cores, ncpu = ncore * smt;
    bool per_core = rnd(2);
    size_t n = 0;

    n += (size_t) snprintf(text + n, sizeof text - n, "cpus %u\n", ncpu);
    if (smt == 2) {
        n += (size_t) snprintf(text + n, sizeof text - n,
                               "smt 0-%u %u-%u\n", ncore - 1, ncore,
                               ncpu - 1);
    }
    for (unsigned p = 0; p < pkgs; p++) {
        unsigned lo = p * cores, hi = lo + cores - 1;

        if (smt == 2) {
            n += (size_t) snprintf(text + n, sizeof text - n,
                                   "package %u %u-%u,%u-%u 9000 3000\n", p,
                                   lo, hi, lo + ncore, hi + ncore);
        } else {
            n += (size_t) snprintf(text + n, sizeof text - n,
                                   "package %u %u-%u 9000 3000\n", p, lo, hi);
        }
        if (!per_core || p == 0) {
            if (per_core) {
                n += (size_t) snprintf(text + n, sizeof text - n,
                                       "domain 0-%u per-core\n", ncpu - 1);
            } else if (smt == 2) {
                n += (size_t) snprintf(text + n, sizeof text - n,
                                       "domain %u-%u,%u-%u\n", lo, hi,
                                       lo + ncore, hi + ncore);
            } else {
                n += (size_t) snprintf(text + n, sizeof text - n,
                                       "domain %u-%u\n", lo, hi);
            }
            n += (size_t) snprintf(text + n, sizeof text - n,
                "opp 1000000 410 1800\nopp 1800000 737 4100\n"
                "opp 2500000 1024 7300\nopp 3200000 1311 11700 turbo\n"
                "idle C1 1 1 1500\nidle C1E 2 4 1000\n"
                "idle C6 290 800 100\n");
        }
    }
    model_or_fail(m, text);
    *n_cores_out = ncore;
}

struct world {
    struct pol_vm vms[64];
    struct pol_vcpu vcpus[512];
    struct pol_input in;
    uint32_t busy[POL_MAX_CPUS], khz[POL_MAX_CPUS];
};

/* Every VM of 'w' may share SMT siblings (vpowerd's default). */
static void
world_share(struct world *w)
{
    for (size_t v = 0; v < sizeof w->vms / sizeof w->vms[0]; v++) {
        w->vms[v].policy.share_smt = true;
    }
}

/* Resets 'w' to 'n_cpus' managed, online CPUs and no VMs. */
static void
world_cpus(struct world *w, unsigned n_cpus)
{
    memset(w, 0, sizeof *w);
    world_share(w);
    for (unsigned c = 0; c < n_cpus; c++) {
        cpuset_set(&w->in.managed, c);
        cpuset_set(&w->in.online, c);
    }
    w->in.vms = w->vms;
    w->in.vcpus = w->vcpus;
}

/* Resets 'w' to 'n_cpus' CPUs and 'n' one-vCPU VMs (ids id0, id0 + 1,
 * ...), each measured 50 times at 'avg' capacity units (average, slow
 * average and last sample alike) with variance 'var'; decided at 100 s.
 * Tests change single vCPUs afterwards. */
static void
world_vms(struct world *w, unsigned n_cpus, unsigned n, uint32_t id0,
          uint32_t avg, uint32_t var)
{
    world_cpus(w, n_cpus);
    for (unsigned v = 0; v < n; v++) {
        w->vms[v].id = id0 + v;
        w->vms[v].first_vcpu = v;
        w->vms[v].n_vcpus = 1;
        w->vcpus[v].vm = v;
        w->vcpus[v].cpu = -1;
        w->vcpus[v].load.avg_cap = avg;
        w->vcpus[v].load.slow_cap = avg;
        w->vcpus[v].load.last_cap = avg;
        w->vcpus[v].load.peak_cap = avg;
        w->vcpus[v].load.var_cap2 = var;
        w->vcpus[v].load.n_samples = 50;
    }
    w->in.n_vms = n;
    w->in.n_vcpus = n;
    w->in.now_ns = 100 * SEC;
}

static void
random_load(struct pol_load *l, uint32_t max)
{
    memset(l, 0, sizeof *l);
    l->avg_cap = rnd(max);
    l->peak_cap = l->avg_cap + rnd(max - l->avg_cap + 1);
    /* Half steady, half just risen or fallen. */
    l->last_cap = rnd(2) ? l->avg_cap : rnd(max + 1);
    l->n_samples = 10;
}

static void
random_world(struct world *w, unsigned n_cores, bool allow_perf)
{
    /* Leave cores for the others even with one CPU offline. */
    unsigned perf_budget = allow_perf ? (n_cores - 1) / 2 : 0;
    uint32_t nv = 0;
    size_t nvm = 1 + rnd(12);

    memset(w, 0, sizeof *w);
    world_share(w);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&w->in.managed, c);
        cpuset_set(&w->in.online, c);
    }
    if (rnd(3) == 0 && m->n_cpus > 1) {
        cpuset_clr(&w->in.online, 1 + rnd(m->n_cpus - 1));
    }
    for (size_t v = 0; v < nvm; v++) {
        struct pol_vm *vm = &w->vms[v];
        uint32_t k = 1 + rnd(6);

        vm->id = 100 + (uint32_t) v;
        vm->policy.kind = (enum pol_kind) rnd(3);
        if (vm->policy.kind == POL_PERFORMANCE) {
            if (k > perf_budget) {
                vm->policy.kind = POL_BALANCED;
            } else {
                perf_budget -= k;
            }
        }
        if (rnd(8) == 0) {
            vm->policy.latency_us = 1 + rnd(400);
        }
        vm->first_vcpu = nv;
        vm->n_vcpus = k;
        for (uint32_t j = 0; j < k; j++) {
            w->vcpus[nv].vm = (uint32_t) v;
            w->vcpus[nv].idx = j;
            w->vcpus[nv].cpu = -1;
            random_load(&w->vcpus[nv].load, 700);
            nv++;
        }
    }
    w->in.vms = w->vms;
    w->in.n_vms = nvm;
    w->in.vcpus = w->vcpus;
    w->in.n_vcpus = nv;
    w->in.now_ns = 1000 * SEC;
    /* Half the cases with measured per-CPU busy time (some unknown), so
     * the per-core points of pool cores are under the same properties. */
    if (rnd(2)) {
        for (unsigned c = 0; c < m->n_cpus; c++) {
            w->busy[c] = rnd(8) == 0 ? UINT32_MAX : rnd(1000001);
            w->khz[c] = rnd(2) ? 0 : 1000000 + 100000 * rnd(16);
        }
        w->in.cpu_busy_ppm = w->busy;
        w->in.cpu_ran_khz = w->khz;
    }
}

/* Checks the contract on one decision; returns a message or NULL. */
static const char *
check_plan(const struct world *w, const struct pol_plan *p,
           const struct pol_config *cfg)
{
    struct cpuset usable, excl_cores, pool, seen;
    uint64_t demand = 0, cap = 0;
    bool all_active;

    cpuset_and(&usable, &w->in.managed, &w->in.online);
    all_active = cpuset_subset(&usable, &p->active);
    cpuset_zero(&excl_cores);
    for (size_t v = 0; v < w->in.n_vms; v++) {
        const struct pol_vm *vm = &w->vms[v];

        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            const struct cpuset *a = &p->vcpu_allowed[vm->first_vcpu + j];
            struct cpuset ok;

            cpuset_and(&ok, &usable, &p->active);
            if (cpuset_empty(a) || !cpuset_subset(a, &ok)) {
                return "allowed set empty or outside managed&online&active";
            }
            if (p->vm_reason[v] == POL_R_PERFORMANCE) {
                CPUSET_FOREACH (c, a) {
                    for (unsigned s = 0; s < m->n_cpus; s++) {
                        if (m->cpu_core[s] == m->cpu_core[c]) {
                            cpuset_set(&excl_cores, s);
                        }
                    }
                }
            }
        }
    }
    /* Performance VMs never share a physical core with another VM. */
    for (size_t v = 0; v < w->in.n_vms; v++) {
        const struct pol_vm *vm = &w->vms[v];

        if (p->vm_reason[v] == POL_R_PERFORMANCE) {
            continue;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            struct cpuset x;

            cpuset_and(&x, &p->vcpu_allowed[vm->first_vcpu + j], &excl_cores);
            if (!cpuset_empty(&x)) {
                return "a VM shares a core with a performance VM";
            }
        }
    }
    /* Capacity with headroom over the shared (packed) active cores. */
    cpuset_andnot(&pool, &p->active, &excl_cores);
    for (size_t v = 0; v < w->in.n_vms; v++) {
        const struct pol_vm *vm = &w->vms[v];
        uint32_t h = vm->policy.kind == POL_POWERSAVE
                     ? cfg->powersave_headroom_pct : cfg->headroom_pct;

        if (p->vm_reason[v] != POL_R_PACKED) {
            continue;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            const struct pol_load *l = &w->vcpus[vm->first_vcpu + j].load;

            /* The estimator's mean term (docs/policy.md): the pool
             * must hold at least the inflated averages; where per-core
             * points can act (per-CPU busy time given), a vCPU whose
             * last period fell below its average counts that. */
            uint32_t x = l->avg_cap;

            if (w->in.cpu_busy_ppm && l->last_cap < x) {
                x = l->last_cap;
            }
            demand += (uint64_t) x * 100 / (100 - h);
        }
    }
    cpuset_zero(&seen);
    CPUSET_FOREACH (c, &pool) {
        unsigned sib = 0;
        uint32_t cc = pol_model_capacity_at(m, (unsigned) c,
                          p->dom_freq_khz[m->cpu_domain[c]]);

        if (cpuset_has(&seen, m->cpu_core[c])) {
            continue;                 /* Count each core once. */
        }
        cpuset_set(&seen, m->cpu_core[c]);
        for (unsigned s = 0; s < m->n_cpus; s++) {
            sib += m->cpu_core[s] == m->cpu_core[c]
                   && cpuset_has(&pool, s);
        }
        cap += sib > 1 ? (uint64_t) cc * m->smt_capacity_pct / 100 : cc;
    }
    if (!all_active && demand > cap + 8 * cpuset_count(&pool)) {
        return "packed demand above active capacity with headroom";
    }
    return NULL;
}

static void
test_random_properties(void **state)
{
    const char *env = getenv("VPOWER_SEED");
    uint64_t seed0 = env ? strtoull(env, NULL, 0) : 20240601;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_plan *q = pol_plan_create(64, 512);
    struct pol_action *acts = calloc(8192, sizeof *acts);
    static struct world w;
    unsigned cases = env ? 1 : 300;

    (void) state;
    for (unsigned i = 0; i < cases; i++) {
        uint64_t seed = seed0 + i;
        struct pol_config cfg;
        struct pol_state *st;
        unsigned n_cores;
        const char *msg;
        int n;

        rng = seed;
        random_model(&n_cores);
        random_world(&w, n_cores, true);
        pol_config_default(&cfg);
        cfg.allow_offline = rnd(2);
        st = pol_state_create(m, &cfg);
        assert_non_null(st);
        if (pol_decide(st, &w.in, p)) {
            fail_msg("seed %llu: decide failed", (unsigned long long) seed);
        }
        msg = check_plan(&w, p, &cfg);
        if (msg) {
            fail_msg("seed %llu: %s", (unsigned long long) seed, msg);
        }
        /* Apply, decide again a little later: nothing to do. */
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, q), 0);
        n = pol_plan_diff(p, q, acts, 8192);
        if (n != 0) {
            fail_msg("seed %llu: second decision gives %d actions (first "
                     "type %d)", (unsigned long long) seed, n, acts[0].type);
        }
        /* Same input, fresh state: same plan (determinism). */
        {
            struct pol_state *st2 = pol_state_create(m, &cfg);

            w.in.now_ns -= SEC;
            assert_int_equal(pol_decide(st2, &w.in, q), 0);
            if (pol_plan_diff(p, q, acts, 8192) != 0) {
                fail_msg("seed %llu: not deterministic",
                         (unsigned long long) seed);
            }
            pol_state_destroy(st2);
        }
        /* Override spreads everything at once. */
        w.in.override_performance = true;
        w.in.now_ns += 2 * SEC;
        assert_int_equal(pol_decide(st, &w.in, q), 0);
        {
            struct cpuset usable;

            cpuset_and(&usable, &w.in.managed, &w.in.online);
            if (!cpuset_subset(&usable, &q->active)
                || !cpuset_empty(&q->offline)) {
                fail_msg("seed %llu: override did not wake every core",
                         (unsigned long long) seed);
            }
            for (unsigned d = 0; d < m->n_domains; d++) {
                const struct pol_domain *dom = &m->domains[d];
                struct cpuset x;

                cpuset_and(&x, &dom->cpus, &usable);
                if (!cpuset_empty(&x) && q->dom_freq_khz[d]
                    != dom->opps[dom->nominal_opp].freq_khz) {
                    fail_msg("seed %llu: override domain %u at %u kHz",
                             (unsigned long long) seed, d,
                             q->dom_freq_khz[d]);
                }
            }
        }
        pol_state_destroy(st);
    }
    print_message("%u random cases from seed %llu\n", cases,
                  (unsigned long long) seed0);
    free(acts);
    pol_plan_destroy(p);
    pol_plan_destroy(q);
}

/* A fixed host: 1 package, 8 cores, no SMT, per-core domains. */
static void
fixed_model(void)
{
    model_or_fail(m, "cpus 8\npackage 0 0-7 9000 3000\n"
                  "domain 0-7 per-core\n"
                  "opp 1000000 410 1800\nopp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
}

/* One VM of 8 light vCPUs (50 capacity units each, warm) on 8 CPUs of
 * the fixed model, at 100 s: it fits on one core. */
static void
light_world(struct world *w)
{
    fixed_model();
    world_cpus(w, 8);
    w->vms[0].id = 1;
    w->vms[0].n_vcpus = 8;
    for (unsigned j = 0; j < 8; j++) {
        w->vcpus[j].vm = 0;
        w->vcpus[j].idx = j;
        w->vcpus[j].cpu = -1;
        w->vcpus[j].load.avg_cap = 50;
        w->vcpus[j].load.peak_cap = 50;
        w->vcpus[j].load.n_samples = 10;
    }
    w->in.n_vms = 1;
    w->in.n_vcpus = 8;
    w->in.now_ns = 100 * SEC;
}

static void
test_hysteresis(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    unsigned k0, k1;

    (void) state;
    light_world(&w);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);

    /* Light load: packed onto one core. */
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    k0 = cpuset_count(&p->active);
    assert_int_equal(k0, 1);
    assert_int_equal(p->next_interval_ns, cfg.min_interval_ns);
    /* Stable: the interval grows. */
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->next_interval_ns, 2 * cfg.min_interval_ns);

    /* Ready time rises: spread at once. */
    w.vcpus[0].load.ready_ppm = 200000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    k1 = cpuset_count(&p->active);
    assert_int_equal(k1, 8);
    assert_int_equal(p->vm_reason[0], POL_R_READY_SPREAD);
    assert_int_equal(p->next_interval_ns, cfg.min_interval_ns);

    /* Ready time gone: no packing before the dwell time ... */
    w.vcpus[0].load.ready_ppm = 0;
    for (int i = 0; i < 5; i++) {
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        assert_int_equal(cpuset_count(&p->active), 8);
    }
    /* ... then half the way to the smallest size per dwell. */
    w.in.now_ns += cfg.pack_dwell_ns;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    k0 = cpuset_count(&p->active);
    assert_int_equal(k0, 4);
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_count(&p->active), k0);
    /* The next step only if the energy estimate does not rise by more
     * than 1 % (here it would: see docs/policy.md), never a growth. */
    w.in.now_ns += cfg.pack_dwell_ns;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_true(cpuset_count(&p->active) <= k0);
    assert_true(cpuset_count(&p->active) >= 1);

    /* Load above capacity spreads at once. */
    for (unsigned j = 0; j < 8; j++) {
        w.vcpus[j].load.avg_cap = 700;
        w.vcpus[j].load.peak_cap = 700;
    }
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    /* 8 x 700 x 100/80 = 7000 capacity units: 7 nominal cores. */
    assert_true(cpuset_count(&p->active) >= 7);
    assert_int_equal(p->dom_freq_khz[m->cpu_domain[cpuset_next(&p->active,
                                                               0)]],
                     2500000);

    /* Warm-up: new vCPUs count as a whole core each. */
    pol_state_destroy(st);
    st = pol_state_create(m, &cfg);
    for (unsigned j = 0; j < 8; j++) {
        w.vcpus[j].load.avg_cap = 0;
        w.vcpus[j].load.peak_cap = 0;
        w.vcpus[j].load.n_samples = j < 3 ? 0 : 10;
    }
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->vm_reason[0], POL_R_WARMUP);
    /* A whole nominal thread each: in the pool at nominal or on a core
     * of their own, whichever the estimate finds cheaper. */
    assert_true(cpuset_count(&p->active) >= 3);
    for (unsigned j = 0; j < 3; j++) {
        int c = cpuset_next(&p->vcpu_allowed[j], 0);

        assert_int_equal(p->dom_freq_khz[m->cpu_domain[c]], 2500000);
    }

    /* Latency bound caps idle depth on the VM's CPUs; parked: none. */
    w.vms[0].policy.latency_us = 10;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    CPUSET_FOREACH (c, &p->active) {
        assert_int_equal(p->idle_limit[c], 0);
    }
    for (unsigned c = 0; c < 8; c++) {
        if (!cpuset_has(&p->active, c)) {
            assert_int_equal(p->idle_limit[c], -1);
        }
    }
    /* Thermal cap and min frequency. */
    w.vms[0].policy.latency_us = 0;
    w.vms[0].policy.min_freq_khz = 2500000;
    w.in.thermal_cap_khz[0] = 1500000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_true(p->dom_freq_khz[0] <= 1500000);
    assert_int_equal(p->dom_freq_khz[1], 2500000);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* A ready-time spread soon after a shrink means the packing made vCPUs
 * wait: the dwell doubles, so the next packing waits twice as long
 * instead of making them wait again after the plain dwell. */
static void
test_ready_backoff(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    unsigned k;

    (void) state;
    light_world(&w);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);

    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_count(&p->active), 1);
    /* Spread for ready time, then packed again after the plain dwell. */
    w.vcpus[0].load.ready_ppm = 200000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_count(&p->active), 8);
    w.vcpus[0].load.ready_ppm = 0;
    w.in.now_ns += cfg.pack_dwell_ns;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    k = cpuset_count(&p->active);
    assert_true(k < 8);
    /* The packed pool makes a vCPU wait at once: spread again ... */
    w.vcpus[0].load.ready_ppm = 200000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_true(cpuset_count(&p->active) > k);
    k = cpuset_count(&p->active);
    w.vcpus[0].load.ready_ppm = 0;
    /* ... and the plain dwell no longer packs ... */
    w.in.now_ns += cfg.pack_dwell_ns + SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_count(&p->active), k);
    /* ... twice the dwell does. */
    w.in.now_ns += cfg.pack_dwell_ns;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_true(cpuset_count(&p->active) < k);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* The aggregate estimator, stability under noise, interval growth and
 * the frequency choice, on a 2 x 8-core SMT2 host. */
static void
test_estimator(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512), *q = pol_plan_create(64, 512);
    struct pol_action acts[1024];
    struct pol_config cfg;
    struct pol_state *st;
    unsigned n1, n2;
    uint64_t iv;

    (void) state;
    model_or_fail(m, "cpus 32\nsmt 0-15 16-31\n"
                  "package 0 0-7,16-23 9000 3000\n"
                  "package 1 8-15,24-31 9000 3000\n"
                  "domain 0-31 per-core\n"
                  "opp 1000000 410 1800\nopp 1600000 655 3400\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    /* 40 one-vCPU VMs, each 10 % busy on average with the variance of
     * an on/off process (u (1 - u) 1024^2). */
    world_vms(&w, 32, 40, 1, 102, 94371);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    /* Per-vCPU peaks would need 40 cores (all 16 awake); the aggregate
     * 40 x 102 x 1.25 + 2 sqrt(40 x 94371 x 1.25^2) = 10 000 units fits
     * in far fewer, on one package, below nominal frequency. */
    n1 = cpuset_count(&p->active);
    assert_true(n1 < 32);
    /* ... and below nominal frequency (each vCPU needs 128 units). */
    CPUSET_FOREACH (c, &p->active) {
        assert_true(p->dom_freq_khz[m->cpu_domain[c]] < 2500000);
    }
    assert_true(n1 >= 2 * 7);        /* >= 10000 / (1024 x 1.25) cores */
    CPUSET_FOREACH (c, &p->active) {
        assert_true(c < 8 || (c >= 16 && c < 24) || n1 > 16);
    }
    /* Same input again: nothing to do, the interval doubles, and keeps
     * doubling to the maximum. */
    iv = p->next_interval_ns;
    for (int i = 0; i < 6; i++) {
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, q), 0);
        assert_int_equal(pol_plan_diff(p, q, acts, 1024), 0);
        assert_true(q->next_interval_ns >= iv);
        iv = q->next_interval_ns;
    }
    assert_int_equal(iv, cfg.max_interval_ns);
    /* Small noise (+-5 % on every average): no pin changes at all. */
    for (int i = 0; i < 20; i++) {
        for (unsigned v = 0; v < 40; v++) {
            uint32_t x = 97 + (uint32_t) ((v * 7 + (unsigned) i * 13) % 11);

            w.vcpus[v].load.avg_cap = x;
            w.vcpus[v].load.slow_cap = x;
            w.vcpus[v].load.last_cap = x;
        }
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, q), 0);
        for (unsigned v = 0; v < 40; v++) {
            assert_true(cpuset_equal(&p->vcpu_allowed[v],
                                     &q->vcpu_allowed[v]));
        }
    }
    /* Twice the load: more capacity at once, the interval back to the
     * minimum. */
    for (unsigned v = 0; v < 40; v++) {
        w.vcpus[v].load.avg_cap = 300;
        w.vcpus[v].load.slow_cap = 300;
        w.vcpus[v].load.last_cap = 300;
        w.vcpus[v].load.var_cap2 = 300 * (1024 - 300);
    }
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    n2 = cpuset_count(&q->active);
    assert_true(n2 > n1);
    assert_int_equal(q->next_interval_ns, cfg.min_interval_ns);
    /* Frequency: one vCPU needing 90 % of a nominal core. */
    pol_state_destroy(st);
    st = pol_state_create(m, &cfg);
    for (unsigned v = 0; v < 40; v++) {
        w.vcpus[v].load.avg_cap = 102;
        w.vcpus[v].load.slow_cap = 102;
        w.vcpus[v].load.last_cap = 102;
        w.vcpus[v].load.var_cap2 = 94371;
    }
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.slow_cap = 920;
    w.vcpus[0].load.last_cap = 920;
    w.vcpus[0].load.var_cap2 = 0;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    /* Every CPU vCPU 0 may use offers it 920 x 1.25 (capped at one
     * nominal core): on a core of its own or in a nominal pool,
     * whichever the estimate finds cheaper. */
    CPUSET_FOREACH (c, &p->vcpu_allowed[0]) {
        assert_int_equal(p->dom_freq_khz[m->cpu_domain[c]], 2500000);
    }
    pol_state_destroy(st);
    pol_plan_destroy(p);
    pol_plan_destroy(q);
}

/* The live host of the real-guest suite: 2 CPUs, no cpufreq (one
 * operating point), cpuidle POLL + haltpoll, the model hostmodel builds
 * from sysfs (assumed powers: 4000 mW busy, idle 2000 / 1000 mW, uncore
 * 2000 / 500, platform 20000).  Three light 1-vCPU guests (about 4 %
 * busy, 0.5 % ready) must end up sharing ONE CPU, the other parked,
 * once warm-up and the dwell time are over, and stay there. */
/* Per-core points inside the pool: on per-core domains a pool core runs
 * at what its own measured load needs, never above the pool's level;
 * up at once when it saturates, and stable on the same input. */
static void
test_pool_trim(void **state)
{
    static struct world w;
    static uint32_t busy[POL_MAX_CPUS], khz[POL_MAX_CPUS];
    struct pol_plan *p = pol_plan_create(64, 512), *q = pol_plan_create(64, 512);
    struct pol_action acts[1024];
    struct pol_config cfg;
    struct pol_state *st;
    uint32_t level = 0, lo = 0, hi = 0;
    int trimmed = -1, loaded = -1;

    (void) state;
    model_or_fail(m, "cpus 16\n"
                  "package 0 0-15 9000 3000\n"
                  "domain 0-15 per-core\n"
                  "opp 1000000 410 1800\nopp 1600000 655 3400\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    /* 24 one-vCPU VMs at 300 units: 24 x 300 x 1.25 = 9000 does not fit
     * 16 cores at 1 GHz (6560), so the pool runs above the lowest
     * point. */
    world_vms(&w, 16, 24, 1, 300, 0);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    /* Without per-CPU busy time: every pool core at the one level. */
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    CPUSET_FOREACH (c, &p->active) {
        uint32_t f = p->dom_freq_khz[m->cpu_domain[c]];

        level = level ? level : f;
        assert_int_equal(f, level);
    }
    assert_true(level > 1000000);
    assert_true(cpuset_count(&p->active) >= 3);
    for (unsigned i = 0; i < 24; i++) {
        assert_true(cpuset_equal(&p->vcpu_allowed[i], &p->active));
    }
    /* Measured: the first active core idle, the second saturated, the
     * rest half busy.  The half-busy cores' load fits the lowest point,
     * but the vCPUs' tracked loads need more capacity than that leaves,
     * so cores are raised again: the busiest for their point first, the
     * idle core last (it stays at the lowest point). */
    CPUSET_FOREACH (c, &p->active) {
        if (trimmed < 0) {
            trimmed = c;
            busy[c] = 0;
        } else if (loaded < 0) {
            loaded = c;
            busy[c] = 1000000;
        } else {
            busy[c] = 500000;
        }
        khz[c] = level;
    }
    w.in.cpu_busy_ppm = busy;
    w.in.cpu_ran_khz = khz;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    lo = q->dom_freq_khz[m->cpu_domain[trimmed]];
    hi = q->dom_freq_khz[m->cpu_domain[loaded]];
    assert_int_equal(lo, 1000000);
    assert_int_equal(hi, level);
    /* Same allowed sets: only frequencies moved. */
    for (unsigned i = 0; i < 24; i++) {
        assert_true(cpuset_equal(&p->vcpu_allowed[i], &q->vcpu_allowed[i]));
    }
    /* Same input again: no action. */
    pol_plan_copy(p, q);
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    assert_int_equal(pol_plan_diff(p, q, acts, 1024), 0);
    /* The idle core saturates at 1 GHz: up at once, not above the
     * level. */
    busy[trimmed] = 1000000;
    khz[trimmed] = 1000000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    assert_true(q->dom_freq_khz[m->cpu_domain[trimmed]] > 1000000);
    assert_true(q->dom_freq_khz[m->cpu_domain[trimmed]] <= level);
    /* The override ignores measured load. */
    w.in.override_performance = true;
    busy[trimmed] = 0;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    assert_int_equal(q->dom_freq_khz[m->cpu_domain[trimmed]], 2500000);
    /* Measured per-CPU load far below the tracked vCPU loads (average
     * and last period both 300: inconsistent input) never takes the
     * pool below their recent demand with headroom. */
    w.in.override_performance = false;
    for (unsigned c = 0; c < 16; c++) {
        busy[c] = 0;
    }
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    {
        double cap = 0;

        CPUSET_FOREACH (c, &q->active) {
            cap += pol_model_capacity_at(m, (unsigned) c,
                       q->dom_freq_khz[m->cpu_domain[c]]);
        }
        assert_true(cap >= 24 * 300 * 1.25);
    }
    /* The load drops: last period 50 units each, the averages still 300.
     * The capacity floor counts what the vCPUs did last (an average
     * takes several periods to follow a drop), so every pool core goes
     * to the lowest point now; the floor on the averages held them
     * above it. */
    for (unsigned i = 0; i < 24; i++) {
        w.vcpus[i].load.last_cap = 50;
    }
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, q), 0);
    CPUSET_FOREACH (c, &q->active) {
        assert_int_equal(q->dom_freq_khz[m->cpu_domain[c]], 1000000);
    }
    pol_state_destroy(st);
    pol_plan_destroy(p);
    pol_plan_destroy(q);
}

/* Per-core points on an SMT core: busy time on both threads is not two
 * threads' worth of work.  Two cores of two threads, every one usable,
 * at the top level; core 0 ran at 1.4 GHz with its threads 90 % and
 * 50 % busy.  Their sum (1.4 threads) can be at most one thread plus
 * the SMT gain's share of the other 0.4, which 1.8 GHz holds with the
 * margins; the plain sum would have needed a point above 2.2 GHz.  With
 * 50 % + 50 % (which may be a whole thread's work if they never
 * overlapped) the core stays where a whole thread's work needs it.  A
 * load that falls lowers the core at once. */
static void
test_pool_trim_smt(void **state)
{
    static struct world w;
    static uint32_t busy[POL_MAX_CPUS], khz[POL_MAX_CPUS];
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    unsigned d0, d1;

    (void) state;
    model_or_fail(m, "cpus 4\nsmt 0-1 2-3\nsmt-capacity 125\n"
                  "package 0 0-3 9000 3000\n"
                  "domain 0-3 per-core\n"
                  "opp 1000000 410 1800\nopp 1400000 573 2800\n"
                  "opp 1800000 737 4100\nopp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    /* 5 x 300 x 1.25 = 1875 needs both cores with both threads at the
     * top level (2 x 1.25 x 737 = 1842 at 1.8 GHz is short). */
    world_vms(&w, 4, 5, 1, 300, 0);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    d0 = m->cpu_domain[0];
    d1 = m->cpu_domain[1];
    assert_int_not_equal(d0, d1);
    assert_int_equal(cpuset_count(&p->active), 4);
    assert_int_equal(p->dom_freq_khz[d0], 2500000);
    assert_int_equal(p->dom_freq_khz[d1], 2500000);

    /* Core 0 (CPUs 0 and 2): 90 % + 50 % at 1.4 GHz; core 1 (CPUs 1
     * and 3) saturated at 2.5 GHz. */
    busy[0] = 900000;
    busy[2] = 500000;
    khz[0] = khz[2] = 1400000;
    busy[1] = busy[3] = 1000000;
    khz[1] = khz[3] = 2500000;
    w.in.cpu_busy_ppm = busy;
    w.in.cpu_ran_khz = khz;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->dom_freq_khz[d0], 1800000);
    assert_int_equal(p->dom_freq_khz[d1], 2500000);

    /* Core 0's load falls to 60 % of one thread at 1.8 GHz: 442 units,
     * 553 with the headroom, which 1.4 GHz (573) holds by less than the
     * packing margin.  The core goes down at once (a frequency change,
     * unlike a pool resize, costs no migration). */
    busy[0] = 600000;
    busy[2] = 0;
    khz[0] = khz[2] = 1800000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->dom_freq_khz[d0], 1400000);
    assert_int_equal(p->dom_freq_khz[d1], 2500000);

    /* 50 % + 50 % at 2.5 GHz: up to a whole thread's work. */
    busy[0] = busy[2] = 500000;
    khz[0] = khz[2] = 2500000;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->dom_freq_khz[d0], 2500000);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* Two packages of four per-core domains, package 0 (CPUs 0-3) capped
 * at 1 GHz; 'n' one-vCPU VMs: VM 0 at 70 % of nominal (needs 896 with
 * headroom, more than a 1 GHz thread's 410), the others at 5 %. */
static void
capped_world(struct world *w, unsigned n)
{
    model_or_fail(m, "cpus 8\n"
                  "package 0 0-3 9000 3000\n"
                  "package 1 4-7 9000 3000\n"
                  "domain 0-7 per-core\n"
                  "opp 1000000 410 1800\nopp 1600000 655 3400\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    world_vms(w, 8, n, 1, 51, 0);
    w->vcpus[0].load.avg_cap = w->vcpus[0].load.slow_cap = 717;
    w->vcpus[0].load.last_cap = w->vcpus[0].load.peak_cap = 717;
    for (unsigned c = 0; c < 4; c++) {
        w->in.thermal_cap_khz[m->cpu_domain[c]] = 1000000;
    }
}

/* A thermal cap on one package: a vCPU that needs more than a capped
 * thread gets an own core on the cool package, light ones may stay on
 * capped cores, and no domain runs above its cap. */
static void
test_thermal_misfit(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;

    (void) state;
    capped_world(&w, 4);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    {
        int c = cpuset_next(&p->vcpu_allowed[0], 0);

        assert_true(c >= 4);
        assert_true(pol_model_capacity_at(m, (unsigned) c,
                        p->dom_freq_khz[m->cpu_domain[c]]) >= 717);
    }
    for (unsigned c = 0; c < 4; c++) {
        assert_true(p->dom_freq_khz[m->cpu_domain[c]] <= 1000000);
    }
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* Own cores in the final plan: each vCPU of a performance VM and a
 * packed vCPU too big for the pool's level (a misfit) may run on one
 * CPU of a core of its own, no two on the same core and none in the
 * pool; the misfit's VM keeps the pool for its emulator threads and adds
 * that CPU, the performance VM's emulator threads run in the pool. */
static void
test_own_core_pins(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    struct cpuset pool, own, x;

    (void) state;
    /* VM 0 a misfit (it does not fit a capped pool thread), VMs 1-3
     * light, VM 4 performance with two vCPUs. */
    capped_world(&w, 5);
    w.vms[4].policy.kind = POL_PERFORMANCE;
    w.vms[4].n_vcpus = 2;
    w.vcpus[5] = w.vcpus[4];
    w.vcpus[5].idx = 1;
    w.in.n_vcpus = 6;
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);

    pool = p->vcpu_allowed[1];
    assert_false(cpuset_empty(&pool));
    for (unsigned i = 2; i < 4; i++) {
        assert_true(cpuset_equal(&p->vcpu_allowed[i], &pool));
    }
    assert_int_equal(p->vm_reason[0], POL_R_PACKED);
    assert_int_equal(p->vm_reason[4], POL_R_PERFORMANCE);
    cpuset_zero(&own);
    for (unsigned i = 0; i < 6; i++) {
        int c;

        if (i >= 1 && i <= 3) {
            continue;
        }
        assert_int_equal(cpuset_count(&p->vcpu_allowed[i]), 1);
        c = cpuset_next(&p->vcpu_allowed[i], 0);
        assert_true(cpuset_has(&p->active, (unsigned) c));
        assert_false(cpuset_has(&pool, (unsigned) c));
        CPUSET_FOREACH (s, &own) {
            assert_int_not_equal(m->cpu_core[s], m->cpu_core[c]);
        }
        cpuset_set(&own, (unsigned) c);
    }
    cpuset_or(&x, &pool, &p->vcpu_allowed[0]);
    assert_true(cpuset_equal(&p->vm_emulator[0], &x));
    assert_true(cpuset_equal(&p->vm_emulator[4], &pool));
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* A latency hint's plan, applied as pol_plan_diff() orders it: the
 * hinted VM's own cores are sped up (frequency raised, idle limit made
 * shallower) before any pin, its pins come first, and no other VM
 * loses a CPU before the hinted VM has its own.  The hinted VM has the
 * highest index, so vCPU index order fails. */
static void
test_hint_first(void **state)
{
    static struct world w;
    struct pol_plan *cur = pol_plan_create(64, 512);
    struct pol_plan *next = pol_plan_create(64, 512);
    struct pol_action acts[256];
    struct pol_config cfg;
    struct pol_state *st;
    int n, first_pin = -1, last_hint_pin = -1, hint_pins = 0;

    (void) state;
    fixed_model();
    /* Six light VMs packed; then VM 5 says latency-critical work. */
    world_vms(&w, 8, 6, 1, 300, 0);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, cur), 0);
    assert_int_equal(cur->vm_reason[5], POL_R_PACKED);
    w.in.now_ns += SEC;
    w.vms[5].hints.latency_until_ns = w.in.now_ns + 10 * SEC;
    w.vms[5].hints.latency_us = 1;
    assert_int_equal(pol_decide(st, &w.in, next), 0);
    assert_int_equal(next->vm_reason[5], POL_R_LATENCY_HINT);
    n = pol_plan_diff(cur, next, acts, 256);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        const struct pol_action *a = &acts[i];
        bool pin = a->type == POL_A_PIN_VCPU
                   || a->type == POL_A_PIN_EMULATOR;

        if (pin && first_pin < 0) {
            first_pin = i;
        }
        if (pin && a->vm == 5) {
            hint_pins++;
            last_hint_pin = i;
        }
        if (a->type == POL_A_SET_FREQ
            && a->khz > cur->dom_freq_khz[a->domain]
            && cur->dom_freq_khz[a->domain]) {
            assert_true(first_pin < 0);
        }
        if (a->type == POL_A_IDLE_LIMIT && a->state >= 0
            && (cur->idle_limit[a->cpu] < 0
                || a->state < cur->idle_limit[a->cpu])) {
            assert_true(first_pin < 0);
        }
        /* A narrowing of another VM only after the hinted VM's pins. */
        if (a->type == POL_A_PIN_VCPU && a->vm != 5
            && !cpuset_subset(&cur->vcpu_allowed[a->vcpu], &a->set)) {
            assert_true(last_hint_pin >= 0);
        }
    }
    assert_true(hint_pins >= 1);
    assert_int_equal(acts[first_pin].vm, 5);
    assert_int_equal(last_hint_pin, first_pin + hint_pins - 1);
    pol_state_destroy(st);
    pol_plan_destroy(cur);
    pol_plan_destroy(next);
}

/* Turbo only where the model says it pays: a lone core of its package
 * races to idle at a turbo point when the package's extra power makes
 * that cheaper per unit of work; not with a cheap package, not without
 * use_turbo. */
static void
test_turbo_race(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    /* Per unit of work at 2.5 / 3.2 GHz: (7300 + 29000) / 1024 = 35.4
     * against (9000 + 29000) / 1311 = 29.0 mW: turbo pays.  With a
     * 5 W package: 12.0 against 10.7: still pays; with busy power
     * 11000 at 3.2 GHz: 12.0 against 12.2: it does not. */
    static const char *const models[3] = {
        "cpus 4\npackage 0 0-1 30000 1000\npackage 1 2-3 30000 1000\n"
        "domain 0-3 per-core\nopp 1000000 410 1800\n"
        "opp 2500000 1024 7300\nopp 3200000 1311 9000 turbo\n"
        "idle C1 1 1 1500\nidle C6 290 800 100\n",
        "cpus 4\npackage 0 0-1 10000 5000\npackage 1 2-3 10000 5000\n"
        "domain 0-3 per-core\nopp 1000000 410 1800\n"
        "opp 2500000 1024 7300\nopp 3200000 1311 9000 turbo\n"
        "idle C1 1 1 1500\nidle C6 290 800 100\n",
        "cpus 4\npackage 0 0-1 10000 5000\npackage 1 2-3 10000 5000\n"
        "domain 0-3 per-core\nopp 1000000 410 1800\n"
        "opp 2500000 1024 7300\nopp 3200000 1311 11000 turbo\n"
        "idle C1 1 1 1500\nidle C6 290 800 100\n",
    };
    static const uint32_t want[3] = { 3200000, 3200000, 2500000 };

    (void) state;
    for (unsigned t = 0; t < 4; t++) {
        int c;

        model_or_fail(m, models[t < 3 ? t : 0]);
        /* One busy vCPU: one core of one package awake. */
        world_vms(&w, 4, 1, 1, 700, 0);
        pol_config_default(&cfg);
        cfg.use_turbo = t < 3;            /* Case 3: turbo not allowed. */
        st = pol_state_create(m, &cfg);
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        assert_int_equal(cpuset_count(&p->active), 1);
        c = cpuset_next(&p->active, 0);
        if (t < 3) {
            assert_int_equal(p->dom_freq_khz[m->cpu_domain[c]], want[t]);
        } else {
            assert_int_equal(p->dom_freq_khz[m->cpu_domain[c]], 2500000);
        }
        pol_state_destroy(st);
    }
    pol_plan_destroy(p);
}

/* Saturation (docs/policy.md, "Turbo"): with every CPU awake at its top
 * non-turbo point, none idle and vCPUs waiting, turbo adds the only
 * capacity left; with use_turbo only, and not when any of those
 * conditions fails or for a domain under a thermal cap. */
static void
test_turbo_saturated(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    uint32_t busy[4], ran[4];
    const unsigned hold_s = (unsigned) (POL_SAT_HOLD_NS / SEC);

    (void) state;
    model_or_fail(m, "cpus 4\npackage 0 0-3 10000 5000\n"
                  "domain 0-3 per-core\nopp 1000000 410 1800\n"
                  "opp 2500000 1024 7300\nopp 3200000 1311 9000 turbo\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    /* Case 0 saturated; 1 saturation_turbo off; 2 one CPU idled 10 %;
     * 3 nobody waits; 4 domain 0 under a thermal cap; 5 as 0, then
     * after turbo nobody waits and every CPU ran at the turbo point 88 %
     * busy (112 % of the nominal point: still saturated) and last 70 %
     * (90 %: no longer).  Decisions 1 s apart, the same input each time:
     * turbo only from POL_SAT_HOLD_NS after the first saturated one. */
    for (unsigned t = 0; t < 6; t++) {
        world_vms(&w, 4, 6, 1, 1024, 0);
        for (unsigned v = 0; v < 6; v++) {
            w.vcpus[v].load.ready_ppm = t == 3 ? 0 : 300000;
            w.vcpus[v].load.last_ready_ppm = t == 3 ? 0 : 300000;
        }
        for (unsigned c = 0; c < 4; c++) {
            busy[c] = t == 2 && c == 1 ? 900000 : 1000000;
            ran[c] = 0;
        }
        w.in.cpu_busy_ppm = busy;
        w.in.cpu_ran_khz = ran;
        if (t == 4) {
            w.in.thermal_cap_khz[m->cpu_domain[0]] = 3000000;
        }
        pol_config_default(&cfg);
        assert_true(cfg.saturation_turbo && !cfg.use_turbo);
        cfg.saturation_turbo = t != 1;
        st = pol_state_create(m, &cfg);
        for (unsigned s = 0; s <= hold_s + (t == 5 ? 2 : 0); s++) {
            bool on = (t == 0 || t == 4 || t == 5) && s >= hold_s
                      && s <= hold_s + 1;

            if (t == 5 && s == hold_s + 1) {
                for (unsigned v = 0; v < 6; v++) {
                    w.vcpus[v].load.ready_ppm = 0;
                    w.vcpus[v].load.last_ready_ppm = 0;
                }
            }
            if (t == 5 && s > hold_s) {
                for (unsigned c = 0; c < 4; c++) {
                    busy[c] = s == hold_s + 1 ? 880000 : 700000;
                    ran[c] = 3200000;
                }
            }
            assert_int_equal(pol_decide(st, &w.in, p), 0);
            assert_int_equal(cpuset_count(&p->active), 4);
            for (unsigned c = 0; c < 4; c++) {
                uint32_t want = on && (t != 4 || c != 0) ? 3200000
                                                         : 2500000;

                assert_int_equal(p->dom_freq_khz[m->cpu_domain[c]], want);
            }
            w.in.now_ns += SEC;
        }
        pol_state_destroy(st);
    }
    pol_plan_destroy(p);
}

static void
test_live_two_cpus(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    uint64_t t_end;
    unsigned changes = 0;
    uint64_t h_prev = 0;

    (void) state;
    model_or_fail(m, "cpus 2\nplatform 20000\n"
                  "package 0 0-1 2000 500\n"
                  "domain 0-1 per-core\n"
                  "opp 1000000 1024 4000\n"
                  "idle POLL 0 0 2000\nidle haltpoll 1 1 1000\n");
    /* Three unmeasured VMs; the loop below feeds their samples. */
    world_vms(&w, 2, 3, 10, 0, 0);
    for (unsigned v = 0; v < 3; v++) {
        w.vcpus[v].load.n_samples = 0;
    }
    w.in.now_ns = 10 * SEC;
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    t_end = w.in.now_ns + 300 * SEC;
    while (w.in.now_ns < t_end) {
        uint64_t dt;

        assert_int_equal(pol_decide(st, &w.in, p), 0);
        if (w.in.now_ns > 120 * SEC) {
            assert_int_equal(cpuset_count(&p->active), 1);
            for (unsigned v = 0; v < 3; v++) {
                assert_true(cpuset_equal(&p->vcpu_allowed[v], &p->active));
            }
            if (p->est_power_mw != h_prev) {
                changes++;
            }
        }
        h_prev = p->est_power_mw;
        dt = p->next_interval_ns;
        for (unsigned v = 0; v < 3; v++) {
            int c = cpuset_next(&p->vcpu_allowed[v], 0);

            /* 4 % busy with a little noise, 0.5 % ready. */
            pol_load_update(&w.vcpus[v].load, m, c, 0,
                            dt / 25 + (dt / 200) * ((w.in.now_ns / SEC
                                                     + v) % 3),
                            dt / 200, dt);
            w.vcpus[v].cpu = c;
        }
        w.in.now_ns += dt;
    }
    assert_true(changes <= 1);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* big.LITTLE (the Juno r0 model): light load runs on the LITTLE cluster
 * alone with the big cluster parked; a vCPU too big for a LITTLE thread
 * gets a big core of its own and the big domain runs at the lowest point
 * holding it, not at the LITTLE cluster's fraction of nominal. */
static void
test_big_little(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_state *st;
    unsigned big_dom, lit_dom;

    (void) state;
    model_or_fail(m, "cpus 6\nplatform 0\npackage 0 0-5 0 0\n"
      "domain 1-2\n"
      "opp 450000 417 168 cluster 24\nopp 625000 579 251 cluster 32\n"
      "opp 800000 744 359 cluster 43\nopp 950000 883 479 cluster 49\n"
      "opp 1100000 1024 616 cluster 64\ncluster 65 24\n"
      "idle WFI 1 1 15\nidle cpu-sleep-0 250 1500 0\n"
      "idle cluster-sleep-0 800 3000 0\n"
      "domain 0,3-5\n"
      "opp 450000 235 33 cluster 26\nopp 575000 302 46 cluster 30\n"
      "opp 700000 368 61 cluster 39\nopp 775000 406 76 cluster 47\n"
      "opp 850000 447 93 cluster 57\ncluster 56 17\n"
      "idle WFI 1 1 6\nidle cpu-sleep-0 250 1500 0\n"
      "idle cluster-sleep-0 800 3000 0\n");
    big_dom = m->cpu_domain[1];
    lit_dom = m->cpu_domain[0];
    world_vms(&w, 6, 3, 20, 60, 60 * 60);
    st = pol_state_create(m, NULL);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_false(cpuset_has(&p->active, 1));
    assert_false(cpuset_has(&p->active, 2));
    assert_true(cpuset_count(&p->active) >= 1);
    assert_true(p->dom_freq_khz[lit_dom] < 850000);

    /* One vCPU needs 600 of 1024: no LITTLE thread (447) holds it. */
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.slow_cap = 480;
    w.vcpus[0].load.last_cap = 480;
    w.vcpus[0].load.var_cap2 = 100 * 100;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    {
        int c = cpuset_next(&p->vcpu_allowed[0], 0);

        assert_int_equal(cpuset_count(&p->vcpu_allowed[0]), 1);
        assert_true(c == 1 || c == 2);
        /* 480 x 1.25 = 600: the A57's 744 point, not nominal. */
        assert_int_equal(p->dom_freq_khz[big_dom], 800000);
        assert_false(cpuset_has(&p->vcpu_allowed[1], (unsigned) c));
    }
    /* The same input again: nothing moves. */
    {
        struct pol_plan *q = pol_plan_create(64, 512);
        struct pol_action acts[64];

        pol_plan_copy(q, p);
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        assert_int_equal(pol_plan_diff(q, p, acts, 64), 0);
        pol_plan_destroy(q);
    }
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* Churn: a vCPU on a core of its own (too big for the pool's thread)
 * returns to the pool only when its 60 s need has fallen and it has had
 * the core for the dwell time; a short-average dip does not move it.
 * (A need below every thread's lowest point returns it at once.) */
static void
test_own_core_dwell(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    int c0;

    (void) state;
    fixed_model();
    world_vms(&w, 8, 8, 30, 250, 0);
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.slow_cap = 600;
    w.vcpus[0].load.last_cap = w.vcpus[0].load.peak_cap = 600;
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_count(&p->vcpu_allowed[0]), 1);
    c0 = cpuset_next(&p->vcpu_allowed[0], 0);
    assert_false(cpuset_has(&p->vcpu_allowed[1], (unsigned) c0));

    /* Short average dips, 60 s need still high: stays. */
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.last_cap = 50;
    w.vcpus[0].load.slow_cap = 400;
    for (int i = 0; i < 5; i++) {
        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        assert_int_equal(cpuset_count(&p->vcpu_allowed[0]), 1);
        assert_int_equal(cpuset_next(&p->vcpu_allowed[0], 0), c0);
    }
    /* 60 s need low (below 75 % of the pool thread), the short average
     * still bursting above it: inside the dwell it stays. */
    w.vcpus[0].load.slow_cap = 200;
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.last_cap = 400;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(cpuset_next(&p->vcpu_allowed[0], 0), c0);
    assert_int_equal(cpuset_count(&p->vcpu_allowed[0]), 1);
    /* After the dwell: back in the pool with the others. */
    w.in.now_ns += cfg.pack_dwell_ns;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_true(cpuset_equal(&p->vcpu_allowed[0], &p->vcpu_allowed[1]));
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* A kept plan must stay feasible.  Four vCPUs fill all four cores of
 * the pool at the low point; one grows past what a thread there holds.
 * At that point it needs a core of its own, and none is left beside the
 * pool, so the plan must change (here: a point whose threads hold it),
 * not be kept with the vCPU saturated at the low point.  Before the fix
 * the keep won for as long as its estimate, which leaves the vCPU in the
 * pool, was cheaper (Bitbrains mix on 10 hosts: one VM 9 % late). */
static void
test_kept_pool_misfit(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    uint32_t best = 0;

    (void) state;
    model_or_fail(m, "cpus 4\npackage 0 0-3 9000 3000\n"
                  "domain 0-3 per-core\n"
                  "opp 1000000 410 1000\nopp 2000000 819 4900\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 300\nidle C6 290 800 100\n");
    world_vms(&w, 4, 4, 1, 280, 0);
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    for (int i = 0; i < 45; i++) {
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        w.in.now_ns += 10 * SEC;
    }
    /* The premise: one pool of every core, at the low point. */
    for (unsigned v = 0; v < 4; v++) {
        assert_int_equal(cpuset_count(&p->vcpu_allowed[v]), 4);
    }
    for (unsigned d = 0; d < 4; d++) {
        assert_int_equal(p->dom_freq_khz[d], 1000000);
    }

    /* vCPU 0 now needs 400 x 1.25 = 500 > 410. */
    w.vcpus[0].load.avg_cap = w.vcpus[0].load.slow_cap = 400;
    w.vcpus[0].load.last_cap = w.vcpus[0].load.peak_cap = 400;
    w.in.now_ns += SEC;
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    CPUSET_FOREACH (c, &p->vcpu_allowed[0]) {
        uint32_t f = p->dom_freq_khz[m->cpu_domain[c]];
        uint32_t cap = pol_model_capacity_at(m, c, f);

        best = cap > best ? cap : best;
    }
    assert_true(best >= 500);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

static void
test_errors(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(1, 1);
    struct pol_state *st;

    (void) state;
    fixed_model();
    st = pol_state_create(m, NULL);
    memset(&w, 0, sizeof w);
    w.in.vms = w.vms;
    w.in.vcpus = w.vcpus;
    w.in.n_vms = 2;
    assert_int_equal(pol_decide(st, &w.in, p), -ENOSPC);
    w.in.n_vms = 1;
    w.in.n_vcpus = 1;
    w.vcpus[0].vm = 3;
    assert_int_equal(pol_decide(st, &w.in, p), -EINVAL);
    w.vcpus[0].vm = 0;
    w.vms[0].n_vcpus = 2;
    assert_int_equal(pol_decide(st, &w.in, p), -EINVAL);
    pol_state_destroy(st);
    pol_plan_destroy(p);
}

/* SMT isolation: for each VM with share_smt false, no other VM's vCPU
 * may run (allowed sets, unmanaged VMs' fixed CPUs) on any thread of a
 * core one of its vCPUs may run on.  Returns a message or NULL. */
static const char *
check_smt(const struct world *w, const struct pol_plan *p)
{
    static char msg[160];

    for (size_t v = 0; v < w->in.n_vms; v++) {
        const struct pol_vm *vm = &w->vms[v];
        struct cpuset cores;

        if (vm->policy.share_smt || vm->unmanaged) {
            continue;
        }
        cpuset_zero(&cores);
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            CPUSET_FOREACH (c, &p->vcpu_allowed[vm->first_vcpu + j]) {
                for (unsigned s = 0; s < m->n_cpus; s++) {
                    if (m->cpu_core[s] == m->cpu_core[c]) {
                        cpuset_set(&cores, s);
                    }
                }
            }
        }
        for (size_t u = 0; u < w->in.n_vms; u++) {
            const struct pol_vm *o = &w->vms[u];

            for (uint32_t j = 0; u != v && j < o->n_vcpus; j++) {
                struct cpuset x;

                cpuset_and(&x, o->unmanaged ? &o->fixed
                                            : &p->vcpu_allowed[
                                                o->first_vcpu + j],
                           &cores);
                if (!cpuset_empty(&x)) {
                    snprintf(msg, sizeof msg, "no-share VM %u and VM %u "
                             "may run on threads of one core", vm->id,
                             o->id);
                    return msg;
                }
            }
        }
    }
    return NULL;
}

/* Random plans on sibling topologies (SMT 2 always): a third of the VMs
 * may not share siblings, sometimes one VM is unmanaged on a random CPU;
 * three decisions with new loads each.  check_smt() must hold in every
 * plan unless too few cores are free (one per no-share VM, one per
 * performance vCPU, one for the pool), where the explanation must say
 * it does not. */
static void
test_smt_random(void **state)
{
    const char *env = getenv("VPOWER_SEED");
    uint64_t seed0 = env ? strtoull(env, NULL, 0) : 20261205;
    struct pol_plan *p = pol_plan_create(64, 512);
    static struct world w;
    unsigned cases = env ? 1 : 400, n_iso = 0, n_short = 0;
    char text[1024];

    (void) state;
    for (unsigned i = 0; i < cases; i++) {
        uint64_t seed = seed0 + i;
        struct pol_config cfg;
        struct pol_state *st;
        unsigned n_cores, need = 1, n_free;
        bool unmanaged = false;

        rng = seed;
        do {
            random_model(&n_cores);
        } while (m->n_cpus == n_cores);
        random_world(&w, n_cores, true);
        if (rnd(4) == 0 && w.in.n_vms > 1) {
            struct pol_vm *u = &w.vms[w.in.n_vms - 1];

            u->unmanaged = unmanaged = true;
            cpuset_zero(&u->fixed);
            cpuset_set(&u->fixed, rnd(m->n_cpus));
            u->policy.share_smt = rnd(2);
            need++;
        }
        for (size_t v = 0; v < w.in.n_vms; v++) {
            if (!w.vms[v].unmanaged && rnd(3) == 0) {
                w.vms[v].policy.share_smt = false;
            }
            need += w.vms[v].policy.kind == POL_PERFORMANCE
                    ? w.vms[v].n_vcpus : !w.vms[v].policy.share_smt;
        }
        n_free = n_cores - (cpuset_count(&w.in.online) < m->n_cpus);
        pol_config_default(&cfg);
        cfg.allow_offline = rnd(2);
        st = pol_state_create(m, &cfg);
        assert_non_null(st);
        for (int round = 0; round < 3; round++) {
            const char *msg;

            assert_int_equal(pol_decide(st, &w.in, p), 0);
            msg = unmanaged ? NULL : check_plan(&w, p, &cfg);
            if (!msg && need <= n_free) {
                msg = check_smt(&w, p);
            }
            for (size_t v = 0; !msg && v < w.in.n_vms; v++) {
                pol_explain(st, &w.in, p, v, text, sizeof text);
                if (strstr(text, "NOT held") && need <= n_free) {
                    msg = "isolation not held with cores free";
                }
                n_iso += p->vm_reason[v] == POL_R_SMT_ISOLATED;
                n_short += strstr(text, "NOT held") != NULL;
            }
            if (msg) {
                fail_msg("seed %llu round %d: %s", (unsigned long long) seed,
                         round, msg);
            }
            for (size_t j = 0; j < w.in.n_vcpus; j++) {
                random_load(&w.vcpus[j].load, 700);
            }
            w.in.now_ns += 31 * SEC;
        }
        pol_state_destroy(st);
    }
    assert_true(n_iso > cases / 2);
    print_message("%u random cases from seed %llu: %u isolated VM plans, "
                  "%u not held (too few cores)\n", cases,
                  (unsigned long long) seed0, n_iso, n_short);
    pol_plan_destroy(p);
}

/* Two 1-vCPU VMs of 100 units (125 with headroom) on 4 cores x 2
 * threads: sharing, they fit one core's two threads; VM 0 no-share gets
 * a whole core of its own (both threads, its emulator too), VM 1 the
 * pool, and the explanation says isolation cost a core.  Under core
 * scheduling VM 0 is pooled again and the pool counts no SMT gain. */
static void
test_smt_cost(void **state)
{
    static struct world w;
    struct pol_plan *p = pol_plan_create(64, 512);
    struct pol_config cfg;
    struct pol_state *st;
    char text[1024];
    unsigned n_share, n_iso;

    (void) state;
    model_or_fail(m, "cpus 8\nsmt 0-3 4-7\nsmt-capacity 125\n"
                  "package 0 0-7 9000 3000\n"
                  "domain 0-7 per-core\n"
                  "opp 1000000 410 1800\nopp 1800000 737 4100\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    pol_config_default(&cfg);
    world_vms(&w, 8, 2, 1, 100, 0);
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    n_share = cpuset_count(&p->active);
    assert_true(cpuset_has(&p->vcpu_allowed[0], 0)
                || cpuset_has(&p->vcpu_allowed[0], 4));
    pol_state_destroy(st);

    w.vms[0].policy.share_smt = false;
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    n_iso = cpuset_count(&p->active);
    assert_int_equal(n_iso, n_share + 2);
    assert_int_equal(p->vm_reason[0], POL_R_SMT_ISOLATED);
    assert_int_equal(cpuset_count(&p->vcpu_allowed[0]), 2);
    assert_true(cpuset_equal(&p->vm_emulator[0], &p->vcpu_allowed[0]));
    assert_null(check_smt(&w, p));
    pol_explain(st, &w.in, p, 0, text, sizeof text);
    assert_non_null(strstr(text, "isolation cost 0.9 core"));
    pol_explain(st, &w.in, p, 1, text, sizeof text);
    assert_null(strstr(text, "SMT isolation"));
    /* Again with the same input: nothing moves. */
    {
        struct pol_plan *q = pol_plan_create(64, 512);
        struct pol_action acts[64];

        w.in.now_ns += SEC;
        assert_int_equal(pol_decide(st, &w.in, q), 0);
        assert_int_equal(pol_plan_diff(p, q, acts, 64), 0);
        pol_plan_destroy(q);
    }
    pol_state_destroy(st);

    /* Core scheduling: pooled. */
    w.in.sched_core = true;
    st = pol_state_create(m, &cfg);
    assert_int_equal(pol_decide(st, &w.in, p), 0);
    assert_int_equal(p->vm_reason[0], POL_R_PACKED);
    assert_int_equal(cpuset_count(&p->active), n_share);
    pol_explain(st, &w.in, p, 0, text, sizeof text);
    assert_non_null(strstr(text, "core scheduling"));
    pol_state_destroy(st);
    /* And without SMT gain between VMs: at one operating point, two VMs
     * of 400 (1000 with headroom, 1100 with the packing margin) fit one
     * core's two threads (1280), not one thread (1024). */
    model_or_fail(m, "cpus 8\nsmt 0-3 4-7\nsmt-capacity 125\n"
                  "package 0 0-7 9000 3000\n"
                  "domain 0-7 per-core\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    for (int sc = 0; sc < 2; sc++) {
        world_vms(&w, 8, 2, 1, 400, 0);
        w.in.sched_core = sc;
        st = pol_state_create(m, &cfg);
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        assert_int_equal(cpuset_count(&p->active), sc ? 4 : 2);
        pol_state_destroy(st);
    }
    pol_plan_destroy(p);
}

/* The size make bench times (256 CPUs, 2 x 64 cores SMT2, 1024 vCPUs,
 * one VM in 16 performance): twenty decisions succeed and the last plan
 * keeps the contract.  Its speed is make bench's to report, not a unit
 * test's to assert. */
static void
test_large_host(void **state)
{
    static char text[4096];
    struct pol_vm *vms = calloc(256, sizeof *vms);
    struct pol_vcpu *vcpus = calloc(1024, sizeof *vcpus);
    struct pol_plan *p = pol_plan_create(256, 1024);
    struct pol_input in;
    struct pol_state *st;
    struct cpuset perf_cores, other;

    (void) state;
    snprintf(text, sizeof text, "cpus 256\nsmt 0-127 128-255\n"
             "package 0 0-63,128-191 9000 3000\n"
             "package 1 64-127,192-255 9000 3000\n"
             "domain 0-255 per-core\n"
             "opp 1000000 410 1800\nopp 1800000 737 4100\n"
             "opp 2500000 1024 7300\nidle C1 1 1 1500\n"
             "idle C6 290 800 100\n");
    model_or_fail(m, text);
    memset(&in, 0, sizeof in);
    for (unsigned c = 0; c < 256; c++) {
        cpuset_set(&in.managed, c);
        cpuset_set(&in.online, c);
    }
    rng = 7;
    for (unsigned v = 0; v < 256; v++) {
        vms[v].id = v;
        vms[v].first_vcpu = v * 4;
        vms[v].n_vcpus = 4;
        vms[v].policy.kind = v % 16 == 0 ? POL_PERFORMANCE : POL_BALANCED;
        vms[v].policy.share_smt = true;
        for (unsigned j = 0; j < 4; j++) {
            vcpus[v * 4 + j].vm = v;
            vcpus[v * 4 + j].idx = j;
            random_load(&vcpus[v * 4 + j].load, 150);
        }
    }
    in.vms = vms;
    in.n_vms = 256;
    in.vcpus = vcpus;
    in.n_vcpus = 1024;
    st = pol_state_create(m, NULL);
    for (int i = 0; i < 20; i++) {
        in.now_ns = (uint64_t) (i + 1) * SEC;
        assert_int_equal(pol_decide(st, &in, p), 0);
    }
    /* Every vCPU placed inside the active set; the performance VMs'
     * cores (both threads) used by nobody else. */
    cpuset_zero(&perf_cores);
    cpuset_zero(&other);
    for (unsigned i = 0; i < 1024; i++) {
        const struct cpuset *a = &p->vcpu_allowed[i];
        bool perf = vms[vcpus[i].vm].policy.kind == POL_PERFORMANCE;

        assert_false(cpuset_empty(a));
        assert_true(cpuset_subset(a, &p->active));
        CPUSET_FOREACH (c, a) {
            for (unsigned s = 0; s < m->n_cpus; s++) {
                if (m->cpu_core[s] == m->cpu_core[c]) {
                    cpuset_set(perf ? &perf_cores : &other, s);
                }
            }
        }
    }
    assert_int_equal(cpuset_count(&perf_cores), 16 * 4 * 2);
    cpuset_and(&other, &other, &perf_cores);
    assert_true(cpuset_empty(&other));
    pol_state_destroy(st);
    pol_plan_destroy(p);
    free(vms);
    free(vcpus);
}

/* Pool size at the top level: 16 two-thread cores, per-core domains.
 * 100 vCPUs at 125 units (12500 in all) fit 16 cores at 2.0 GHz only
 * without the packing margin, so once kept the level table holds the
 * top level with the margin: 14 cores at 2.5 GHz.  Per-core points
 * (measured per-CPU load given) give 16 cores an even share that 2.0
 * GHz holds, for less power, so the pool takes all 16; without measured
 * load there are no per-core points and the pool stays at 14.  With 20
 * vCPUs at 625 units (the same load) a thread per vCPU is 10 cores:
 * the pool is not widened beyond the 14 either. */
static size_t
top_pool_cores(unsigned n_vcpus, uint32_t avg, bool measured)
{
    static struct world w;
    static uint32_t busy[POL_MAX_CPUS], khz[POL_MAX_CPUS];
    struct pol_plan *p = pol_plan_create(128, 512);
    struct pol_config cfg;
    struct pol_state *st;
    size_t n = 0;

    /* VMs of up to 4 vCPUs (struct world holds 64 VMs). */
    world_cpus(&w, 32);
    for (unsigned i = 0; i < n_vcpus; i++) {
        struct pol_vm *vm = &w.vms[i / 4];

        if (i % 4 == 0) {
            vm->id = 1 + i / 4;
            vm->first_vcpu = i;
            w.in.n_vms++;
        }
        vm->n_vcpus++;
        w.vcpus[i].vm = i / 4;
        w.vcpus[i].idx = i % 4;
        w.vcpus[i].cpu = -1;
        w.vcpus[i].load.n_samples = 50;      /* Loads: in the loop below. */
    }
    w.in.n_vcpus = n_vcpus;
    w.in.now_ns = 100 * SEC;
    pol_config_default(&cfg);
    st = pol_state_create(m, &cfg);
    for (unsigned c = 0; c < 32; c++) {
        busy[c] = 600000;
        khz[c] = 2500000;
    }
    if (measured) {
        w.in.cpu_busy_ppm = busy;
        w.in.cpu_ran_khz = khz;
    }
    /* 20 % more load first (the top level), then this load past the
     * packing dwell, the same input each time. */
    for (int i = 0; i < 45; i++) {
        for (unsigned v = 0; v < n_vcpus; v++) {
            struct pol_load *ld = &w.vcpus[v].load;

            ld->avg_cap = ld->slow_cap = ld->last_cap = ld->peak_cap
                = i < 5 ? avg * 6 / 5 : avg;
        }
        assert_int_equal(pol_decide(st, &w.in, p), 0);
        w.in.now_ns += 10 * SEC;
    }
    n = cpuset_count(&p->vcpu_allowed[0]) / 2;
    pol_state_destroy(st);
    pol_plan_destroy(p);
    return n;
}

static void
test_top_pool(void **state)
{
    (void) state;
    model_or_fail(m, "cpus 32\nsmt 0-15 16-31\nsmt-capacity 125\n"
                  "package 0 0-31 9000 3000\n"
                  "domain 0-31 per-core\n"
                  "opp 1000000 410 1800\nopp 2000000 819 4900\n"
                  "opp 2500000 1024 7300\n"
                  "idle C1 1 1 1500\nidle C6 290 800 100\n");
    assert_int_equal(top_pool_cores(100, 125, false), 14);
    assert_int_equal(top_pool_cores(100, 125, true), 16);
    assert_int_equal(top_pool_cores(20, 625, false), 14);
    assert_int_equal(top_pool_cores(20, 625, true), 14);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_properties),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test(test_estimator),
        cmocka_unit_test(test_pool_trim),
        cmocka_unit_test(test_pool_trim_smt),
        cmocka_unit_test(test_thermal_misfit),
        cmocka_unit_test(test_own_core_pins),
        cmocka_unit_test(test_hint_first),
        cmocka_unit_test(test_turbo_race),
        cmocka_unit_test(test_turbo_saturated),
        cmocka_unit_test(test_live_two_cpus),
        cmocka_unit_test(test_big_little),
        cmocka_unit_test(test_own_core_dwell),
        cmocka_unit_test(test_ready_backoff),
        cmocka_unit_test(test_kept_pool_misfit),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_large_host),
        cmocka_unit_test(test_top_pool),
        cmocka_unit_test(test_smt_random),
        cmocka_unit_test(test_smt_cost),
    };
    int r;

    m = calloc(1, sizeof *m);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    free(m);
    return r;
}
