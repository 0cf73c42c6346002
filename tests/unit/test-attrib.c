/* tests/unit/test-attrib.c -- Energy attribution (manager/attrib.c).
 *
 * The invariant that makes per-VM energy usable for chargeback is that the
 * shares add up to what the host used; the property test checks it on
 * random hosts, loads and pinnings over many seeds (a failing seed is
 * printed).  The edge cases pin the documented rule: busy energy by
 * operating point, the rest by held active cores, "_host" for the rest. */

#include <config.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "manager/attrib.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
    /* xorshift64*: reproducible from the seed, no libc state. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static unsigned
rnd_below(unsigned n)
{
    return n ? (unsigned) (rnd() % n) : 0;
}

/* Two CPUs, each its own domain with two operating points:
 * 1 GHz = 1000 mW busy, 2 GHz = 3000 mW busy (nominal). */
static void
small_model(struct pol_model *m, unsigned n_cpus)
{
    memset(m, 0, sizeof *m);
    m->n_cpus = n_cpus;
    m->n_domains = n_cpus;
    for (unsigned c = 0; c < n_cpus; c++) {
        struct pol_domain *d = &m->domains[c];

        cpuset_set(&d->cpus, c);
        d->n_opps = 2;
        d->opps[0] = (struct pol_opp) { 1000000, 512, 1000, false, 0 };
        d->opps[1] = (struct pol_opp) { 2000000, 1024, 3000, false, 0 };
        d->nominal_opp = 1;
        d->n_idle = 1;
        m->cpu_domain[c] = (uint16_t) c;
        m->cpu_core[c] = (uint16_t) c;
    }
}

static void
test_busy_power_interpolates(void **unused)
{
    struct pol_model m;

    small_model(&m, 2);
    assert_true(fabs(pol_model_busy_mw(&m, 0, 1000000) - 1000) < 1e-9);
    assert_true(fabs(pol_model_busy_mw(&m, 0, 1500000) - 2000) < 1e-9);
    assert_true(fabs(pol_model_busy_mw(&m, 1, 0) - 3000) < 1e-9);
    assert_true(fabs(pol_model_busy_mw(&m, 1, 500000) - 1000) < 1e-9);
    assert_true(fabs(pol_model_busy_mw(&m, 1, 9000000) - 3000) < 1e-9);
    assert_true(fabs(pol_model_busy_mw(&m, -1, 0) - 3000) < 1e-9);
}

/* Same run time, different operating points: shares follow power, not
 * CPU time (the difference from Kepler/Scaphandre). */
static void
test_weights_by_operating_point(void **unused)
{
    struct pol_model m;
    struct cpuset a0, a1;
    uint32_t freq[POL_MAX_DOMAINS] = { 2000000, 1000000 };
    struct attrib_vcpu v[2];
    struct attrib_input in;
    struct attrib_result res;
    double j[2];

    small_model(&m, 2);
    cpuset_zero(&a0);
    cpuset_set(&a0, 0);
    cpuset_zero(&a1);
    cpuset_set(&a1, 1);
    v[0] = (struct attrib_vcpu) { 0, 0, 1000000000ull, &a0 };
    v[1] = (struct attrib_vcpu) { 1, 1, 1000000000ull, &a1 };
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.dom_freq_khz = freq;
    in.interval_ns = 1000000000ull;
    in.n_vms = 2;
    in.vcpus = v;
    in.n_vcpus = 2;

    in.host_joules = 4;             /* Exactly the busy energy. */
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(fabs(j[0] - 3) < 1e-9 && fabs(j[1] - 1) < 1e-9);
    assert_true(fabs(res.static_joules) < 1e-9);

    in.host_joules = 6;             /* 2 J static: one core each. */
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(fabs(j[0] - 4) < 1e-9 && fabs(j[1] - 2) < 1e-9);
    assert_true(fabs(res.host_joules) < 1e-9);

    in.host_joules = 2;             /* Meter below model: scaled. */
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(fabs(j[0] - 1.5) < 1e-9 && fabs(j[1] - 0.5) < 1e-9);

    /* Busy beyond the interval is clamped to it. */
    v[0].busy_ns = 5000000000ull;
    in.host_joules = 4;
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(fabs(j[0] - 3) < 1e-9);
}

/* Static energy follows held active cores; unheld cores go to _host. */
static void
test_static_by_held_cores(void **unused)
{
    struct pol_model m;
    struct cpuset active, pin0, pin01;
    struct attrib_vcpu v[3];
    struct attrib_input in;
    struct attrib_result res;
    double j[2];

    small_model(&m, 4);
    cpuset_zero(&active);
    for (unsigned c = 0; c < 4; c++) {
        cpuset_set(&active, c);
    }
    cpuset_zero(&pin0);
    cpuset_set(&pin0, 0);
    pin01 = pin0;
    cpuset_set(&pin01, 1);
    /* VM0: two vCPUs on CPU 0 (counted once), VM1 on CPUs 0-1; idle. */
    v[0] = (struct attrib_vcpu) { 0, 0, 0, &pin0 };
    v[1] = (struct attrib_vcpu) { 0, 0, 0, &pin0 };
    v[2] = (struct attrib_vcpu) { 1, 1, 0, &pin01 };
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.active = &active;
    in.interval_ns = 1000000000ull;
    in.n_vms = 2;
    in.vcpus = v;
    in.n_vcpus = 3;
    in.host_joules = 8;             /* 2 J per active CPU. */
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(fabs(j[0] - 1) < 1e-9);         /* Half of CPU 0. */
    assert_true(fabs(j[1] - 3) < 1e-9);         /* Half of 0, all of 1. */
    assert_true(fabs(res.host_joules - 4) < 1e-9);  /* CPUs 2, 3. */
    assert_true(fabs(res.busy_joules) < 1e-9);
}

/* The two parts of each VM's share: a busy VM and an idle one on the
 * same two cores.  The idle VM's share is all static; the busy parts sum
 * to the host's busy part; each part is within the VM's share. */
static void
test_parts(void **unused)
{
    struct pol_model m;
    struct cpuset active;
    struct attrib_vcpu v[2];
    struct attrib_input in;
    struct attrib_result res;
    double j[2], jb[2] = { -1, -1 }, sum_b;

    (void) unused;
    small_model(&m, 2);
    cpuset_zero(&active);
    cpuset_set(&active, 0);
    cpuset_set(&active, 1);
    v[0] = (struct attrib_vcpu) { 0, 0, 500000000ull, NULL };
    v[1] = (struct attrib_vcpu) { 1, 1, 0, NULL };
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.active = &active;
    in.interval_ns = 1000000000ull;
    in.n_vms = 2;
    in.vcpus = v;
    in.n_vcpus = 2;
    in.host_joules = 10;
    assert_int_equal(attrib_split_parts(&in, j, jb, &res), 0);
    sum_b = jb[0] + jb[1];
    assert_true(jb[0] > 0);
    assert_true(fabs(jb[1]) < 1e-12);           /* Idle: all static. */
    assert_true(j[1] > 0);
    assert_true(fabs(sum_b - res.busy_joules) < 1e-9);
    assert_true(jb[0] <= j[0] + 1e-12);
    assert_true(j[0] - jb[0] > 0);              /* Its static share. */
    /* attrib_split() gives the same shares. */
    {
        double j2[2];

        assert_int_equal(attrib_split(&in, j2, NULL), 0);
        assert_true(fabs(j2[0] - j[0]) < 1e-12 && fabs(j2[1] - j[1]) < 1e-12);
    }
    /* On error both outputs are zeroed. */
    in.interval_ns = 0;
    assert_int_equal(attrib_split_parts(&in, j, jb, &res), -EINVAL);
    assert_true(j[0] == 0 && jb[0] == 0 && jb[1] == 0);
}

static void
test_no_vms_all_host(void **unused)
{
    struct pol_model m;
    struct attrib_input in;
    struct attrib_result res;

    small_model(&m, 2);
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.interval_ns = 1000000000ull;
    in.host_joules = 17.5;
    assert_int_equal(attrib_split(&in, NULL, &res), 0);
    assert_true(fabs(res.host_joules - 17.5) < 1e-12);
    assert_true(fabs(res.static_joules - 17.5) < 1e-12);
}

static void
test_bad_input(void **unused)
{
    struct pol_model m;
    struct attrib_vcpu v = { 3, 0, 1000, NULL };
    struct attrib_input in;
    struct attrib_result res;
    double j[2] = { 99, 99 };

    small_model(&m, 2);
    memset(&in, 0, sizeof in);
    in.model = &m;
    in.interval_ns = 1000000000ull;
    in.n_vms = 2;
    in.vcpus = &v;
    in.n_vcpus = 1;
    in.host_joules = 1;
    assert_int_equal(attrib_split(&in, j, &res), -EINVAL);   /* vm 3. */
    assert_true(j[0] == 0 && j[1] == 0 && res.host_joules == 0);
    v.vm = 1;
    in.host_joules = -1;
    assert_int_equal(attrib_split(&in, j, &res), -ERANGE);
    in.host_joules = NAN;
    assert_int_equal(attrib_split(&in, j, &res), -ERANGE);
    in.host_joules = INFINITY;
    assert_int_equal(attrib_split(&in, j, &res), -ERANGE);
    in.host_joules = 1;
    in.interval_ns = 0;
    assert_int_equal(attrib_split(&in, j, &res), -EINVAL);
    in.interval_ns = 1;
    in.model = NULL;
    assert_int_equal(attrib_split(&in, j, &res), -EINVAL);
    assert_int_equal(attrib_split(NULL, j, &res), -EINVAL);
    /* Zero energy: nothing to give, nothing breaks. */
    in.model = &m;
    in.host_joules = 0;
    assert_int_equal(attrib_split(&in, j, &res), 0);
    assert_true(j[0] == 0 && j[1] == 0 && res.host_joules == 0);
}

/* A random host: 1-64 CPUs in 1-4 domains with random operating points. */
static void
random_model(struct pol_model *m)
{
    unsigned nd;

    memset(m, 0, sizeof *m);
    m->n_cpus = 1 + rnd_below(64);
    nd = 1 + rnd_below(m->n_cpus < 4 ? m->n_cpus : 4);
    m->n_domains = nd;
    for (unsigned d = 0; d < nd; d++) {
        struct pol_domain *dom = &m->domains[d];
        uint32_t f = 400000 + rnd_below(1000000), p = 100 + rnd_below(900);

        dom->n_opps = 1 + rnd_below(8);
        for (unsigned k = 0; k < dom->n_opps; k++) {
            dom->opps[k].freq_khz = f;
            dom->opps[k].busy_mw = p;
            dom->opps[k].capacity = 1024;
            f += 100000 + rnd_below(500000);
            p += rnd_below(3000);
        }
        dom->nominal_opp = rnd_below(dom->n_opps);
        dom->n_idle = 1;
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        m->cpu_domain[c] = (uint16_t) (c % nd);
        m->cpu_core[c] = (uint16_t) (c / 2);
        cpuset_set(&m->domains[c % nd].cpus, c);
    }
}

static void
test_sum_property_random(void **unused)
{
    enum { SEEDS = 3000, MAX_VMS = 40, MAX_VCPUS = 160 };
    static struct pol_model m;
    static struct cpuset allowed[MAX_VCPUS];
    struct attrib_vcpu v[MAX_VCPUS];
    uint32_t freq[POL_MAX_DOMAINS];
    double j[MAX_VMS];
    unsigned failures = 0;

    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        struct attrib_input in;
        struct attrib_result res;
        struct cpuset active;
        double sum = 0, e;
        int rc;

        rng_state = seed * 0x9e3779b97f4a7c15ull;
        random_model(&m);
        memset(freq, 0, sizeof freq);
        for (unsigned d = 0; d < m.n_domains; d++) {
            freq[d] = rnd_below(3) ? rnd_below(4000000) : 0;
        }
        cpuset_zero(&active);
        for (unsigned c = 0; c < m.n_cpus; c++) {
            if (rnd_below(4)) {
                cpuset_set(&active, c);
            }
        }
        memset(&in, 0, sizeof in);
        in.model = &m;
        in.dom_freq_khz = rnd_below(5) ? freq : NULL;
        in.active = rnd_below(10) ? &active : NULL;
        in.interval_ns = 1 + rnd() % 10000000000ull;
        in.n_vms = rnd_below(MAX_VMS + 1);
        in.n_vcpus = in.n_vms ? rnd_below(MAX_VCPUS + 1) : 0;
        for (size_t i = 0; i < in.n_vcpus; i++) {
            cpuset_zero(&allowed[i]);
            for (unsigned k = 0, n = 1 + rnd_below(4); k < n; k++) {
                cpuset_set(&allowed[i], rnd_below(m.n_cpus));
            }
            v[i].vm = rnd_below((unsigned) in.n_vms);
            v[i].cpu = (int) rnd_below(m.n_cpus + 2) - 1;   /* -1, >n. */
            v[i].busy_ns = rnd_below(8) ? rnd() % (in.interval_ns * 5 / 4
                                                   + 1) : 0;
            v[i].allowed = rnd_below(8) ? &allowed[i] : NULL;
        }
        in.vcpus = v;
        /* Energies from far below the busy estimate to far above. */
        e = (double) (rnd() % 1000000) / 1000.0
            * (rnd_below(2) ? 1 : 1e-3) * (rnd_below(10) ? 1 : 0);
        in.host_joules = e;
        rc = attrib_split(&in, j, &res);
        if (rc != 0) {
            printf("seed %llu: attrib_split returned %d\n",
                   (unsigned long long) seed, rc);
            failures++;
            continue;
        }
        for (size_t i = 0; i < in.n_vms; i++) {
            if (!(j[i] >= 0) || !isfinite(j[i])) {
                printf("seed %llu: vm %zu got %g J\n",
                       (unsigned long long) seed, i, j[i]);
                failures++;
            }
            sum += j[i];
        }
        sum += res.host_joules;
        if (fabs(sum - e) > 1e-3 * e + 1e-12 || res.host_joules < 0) {
            printf("seed %llu: shares sum to %.9g J, host used %.9g J\n",
                   (unsigned long long) seed, sum, e);
            failures++;
        }
        if (!in.n_vms && fabs(res.host_joules - e) > 1e-12) {
            printf("seed %llu: no VMs but _host got %.9g of %.9g J\n",
                   (unsigned long long) seed, res.host_joules, e);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_busy_power_interpolates),
        cmocka_unit_test(test_weights_by_operating_point),
        cmocka_unit_test(test_static_by_held_cores),
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_no_vms_all_host),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_sum_property_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
