/* tests/unit/test-calibrate.c -- Calibration against a simulated host.
 *
 * The simulated host has a hidden TRUE model (config/models/
 * xeon-r640-2s.model, read with the policy parser).  Calibration drives
 * it through the same tables it drives a real host through: frequency
 * and idle limits through drv_host_dummy, busy loops and time through a
 * 'struct calib_ops' whose sleep advances a virtual clock in 10 ms
 * steps, charging each step the true model's power for the state the
 * host is in -- which cores spin, at the frequency calibration set,
 * in the deepest idle state it left enabled -- with seeded noise, into
 * a dummy meter whose counter wraps.  The written model must recover
 * the true powers. */

#include <config.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "manager/calibrate/calib.h"
#include "manager/calibrate/calib_lsq.h"
#include "manager/drivers/drv.h"
#include "manager/drivers/meter.h"
#include "manager/drivers/sysfs.h"
#include "manager/util.h"
#include "policy/model.h"
#include "policy/policy.h"
#include "tests/unit/hostdrv-fixture.h"

#define XEON_FREQS "1000000 1200000 1400000 1600000 1800000 2000000 " \
                   "2200000 2500000 2800000 3200000"
#define STEP_NS 10000000ull
#define RANGE_UJ 100000000ull      /* Wraps every 100 J: several times a
                                    * point at 300-470 W. */

struct sim {
    struct pol_model *truth;
    struct pol_plan *plan;
    struct drv_host *h;
    struct meter *meter;
    struct cpuset busy;
    uint64_t now_ns;
    double energy_uj;
    uint64_t rng;
    double noise;               /* Relative power noise per step, +-. */
    unsigned wraps;             /* Times the counter went past its range. */
    unsigned busy_starts;
    int fail_after;             /* Meter fails after this many steps. */
    unsigned steps;
};

static double
sim_uniform(struct sim *s)
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return (double) (s->rng >> 11) / (double) (1ull << 53) * 2 - 1;
}

/* The true model's power for the state the host is in now. */
static double
sim_power_mw(struct sim *s)
{
    const struct pol_model *m = s->truth;
    uint32_t ppm[POL_MAX_CPUS];

    memset(s->plan->idle_limit, -1, sizeof s->plan->idle_limit);
    cpuset_zero(&s->plan->active);
    cpuset_zero(&s->plan->offline);
    for (unsigned cpu = 0; cpu < m->n_cpus; cpu++) {
        struct drv_freq f;
        struct drv_idle id;
        int deepest = 0;

        assert_int_equal(drv_host_dummy.get_freq(s->h, cpu, &f), 0);
        assert_int_equal(drv_host_dummy.get_idle(s->h, cpu, &id), 0);
        for (unsigned k = 0; k < id.n_states; k++) {
            deepest = id.disabled[k] ? deepest : (int) k;
        }
        cpuset_set(&s->plan->active, cpu);
        s->plan->idle_limit[cpu] = (int8_t) deepest;
        s->plan->dom_freq_khz[m->cpu_domain[cpu]] = f.max_khz;
        ppm[cpu] = cpuset_has(&s->busy, cpu) ? 1000000 : 0;
    }
    return pol_energy_power_mw(m, s->plan, ppm);
}

static int
sim_busy_start(void *aux, const struct cpuset *cpus, char *err,
               size_t errlen)
{
    struct sim *s = aux;

    (void) err;
    (void) errlen;
    s->busy = *cpus;
    s->busy_starts++;
    return 0;
}

static void
sim_busy_stop(void *aux)
{
    cpuset_zero(&((struct sim *) aux)->busy);
}

static uint64_t
sim_now_ns(void *aux)
{
    return ((struct sim *) aux)->now_ns;
}

static void
sim_sleep_ns(void *aux, uint64_t ns)
{
    struct sim *s = aux;
    double p = sim_power_mw(s);     /* Limits do not change in a sleep. */

    while (ns > 0) {
        uint64_t dt = ns < STEP_NS ? ns : STEP_NS;
        double before = s->energy_uj;

        s->energy_uj += p * (1 + s->noise * sim_uniform(s)) * dt / 1e6;
        s->wraps += (uint64_t) (s->energy_uj / (RANGE_UJ + 1))
                    != (uint64_t) (before / (RANGE_UJ + 1));
        s->now_ns += dt;
        ns -= dt;
        if (s->fail_after && ++s->steps == (unsigned) s->fail_after) {
            meter_dummy_fail(s->meter, -EIO);
        }
    }
    meter_dummy_set(s->meter,
                    (uint64_t) s->energy_uj % (RANGE_UJ + 1));
}

static const struct calib_ops sim_ops = {
    .busy_start = sim_busy_start,
    .busy_stop = sim_busy_stop,
    .now_ns = sim_now_ns,
    .sleep_ns = sim_sleep_ns,
};

/* One fixture tree for every test (112 CPUs take a while to write). */
static char *fx_tree;

static const char *
fx_root(void)
{
    if (!fx_tree) {
        fx_tree = fx_mksysfs("--cpus 112 --smt 2 --pkgs 2 --freqs '"
                             XEON_FREQS "' --idle "
                             "'C1:1:1 C1E:2:4 C6:290:800'");
    }
    return fx_tree;
}

struct fx {
    struct sim s;
    const char *root;
    struct calib *c;
    struct calib_opts opts;
    char err[1024];
};

static struct pol_model *
load_truth(void)
{
    struct pol_model *m = calloc(1, sizeof *m);
    char path[1024], err[256], *text;
    size_t len;

    snprintf(path, sizeof path, "%s/config/models/xeon-r640-2s.model",
             fx_srcdir());
    assert_int_equal(util_read_file(path, 1 << 20, &text, &len), 0);
    assert_int_equal(pol_model_parse(m, text, err, sizeof err), 0);
    free(text);
    return m;
}

/* A simulated xeon-r640-2s: the fixture tree gives the topology (2
 * packages x 28 cores x 2 threads), the dummy host its limits. */
static void
fx_setup(struct fx *f, double noise, uint32_t deepest_mw,
         uint32_t pkg_idle_mw)
{
    char err[256];

    memset(f, 0, sizeof *f);
    f->s.truth = load_truth();
    f->s.plan = pol_plan_create(1, 1);
    f->root = fx_root();
    f->s.h = drv_host_dummy.open("cpus=112,freqs=1000000:1200000:1400000:"
                                 "1600000:1800000:2000000:2200000:2500000:"
                                 "2800000:3200000,"
                                 "idle=C1:1:1/C1E:2:4/C6:290:800",
                                 err, sizeof err);
    assert_non_null(f->s.h);
    f->s.meter = meter_dummy_create("sim", METER_SCOPE_PLATFORM, true,
                                    RANGE_UJ);
    f->s.rng = 0x9e3779b97f4a7c15ull;
    f->s.noise = noise;
    f->s.energy_uj = 12345678;
    meter_dummy_set(f->s.meter, 12345678);
    f->opts = (struct calib_opts) {
        .point_ns = 1000000000ull, .sample_ns = 100000000ull,
        .deepest_idle_mw = deepest_mw, .package_idle_mw = pkg_idle_mw,
        .name = "sim-xeon",
    };
    /* An administrator's limits, which calibration changes (package
     * idle enables every state) and must put back. */
    assert_int_equal(drv_host_dummy.set_freq_range(f->s.h, 5, 1000000,
                                                   2500000), 0);
    assert_int_equal(drv_host_dummy.set_idle_disable(f->s.h, 7, 2, true),
                     0);
    assert_int_equal(calib_create(&drv_host_dummy, f->s.h, f->root,
                                  f->s.meter, &sim_ops, &f->s, &f->opts,
                                  &f->c, f->err, sizeof f->err), 0);
}

static void
fx_teardown(struct fx *f)
{
    calib_destroy(f->c);
    meter_close(f->s.meter);
    drv_host_dummy.close(f->s.h);
    pol_plan_destroy(f->s.plan);
    free(f->s.truth);
}

static void
assert_within(double got, double want, double pct, const char *what)
{
    double err = fabs(got - want) * 100 / want;

    if (err > pct) {
        fail_msg("%s: calibrated %.0f mW, true %.0f mW: %.1f %% off "
                 "(bound %.0f %%)", what, got, want, err, pct);
    }
}

/* Every CPU of the dummy host has the limits it started with: the full
 * range and no state disabled, but cpu5's max 2500000 kHz and cpu7's
 * state 2 disabled. */
static void
assert_restored(struct fx *f)
{
    for (unsigned cpu = 0; cpu < 112; cpu++) {
        struct drv_freq fr;
        struct drv_idle id;

        assert_int_equal(drv_host_dummy.get_freq(f->s.h, cpu, &fr), 0);
        assert_int_equal(fr.min_khz, 1000000);
        assert_int_equal(fr.max_khz, cpu == 5 ? 2500000 : 3200000);
        assert_int_equal(drv_host_dummy.get_idle(f->s.h, cpu, &id), 0);
        for (unsigned k = 0; k < id.n_states; k++) {
            assert_int_equal(id.disabled[k], cpu == 7 && k == 2);
        }
    }
}

static void
run_and_fit(struct fx *f)
{
    if (calib_run(f->c, f->err, sizeof f->err) < 0
        || calib_fit(f->c, f->err, sizeof f->err) < 0) {
        fail_msg("%s", f->err);
    }
}

/* Checks the written text: it parses, and says measured or assumed on
 * every number line. */
static void
assert_file(const struct calib *c, const struct pol_model *fit)
{
    struct pol_model *back = calloc(1, sizeof *back);
    char *text = NULL, err[256] = "";
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);

    assert_int_equal(calib_write(c, mem), 0);
    fclose(mem);
    if (pol_model_parse(back, text, err, sizeof err) < 0) {
        fail_msg("written model does not parse: %s\n%s", err, text);
    }
    for (unsigned k = 0; k < fit->domains[0].n_opps; k++) {
        assert_int_equal(back->domains[0].opps[k].busy_mw,
                         fit->domains[0].opps[k].busy_mw);
    }
    assert_int_equal(back->platform_mw, fit->platform_mw);
    assert_int_equal(back->n_pkgs, 2);
    assert_int_equal(back->n_cpus, 112);
    assert_int_equal(back->cpu_core[60], back->cpu_core[4]);
    if (getenv("VPOWER_TEST_VERBOSE")) {
        fputs(text, stderr);
    }
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "    opp ", 8) || !strncmp(line, "    idle ", 9)) {
            assert_true(strstr(line, "# measured, error <= ")
                        || strstr(line, "# assumed"));
        }
    }
    free(text);
    free(back);
}

/* The core check: the hidden true model comes back.  The two numbers
 * total power cannot separate (deepest state's core power, package
 * idle uncore) are given as the true model's own assumed values, as an
 * operator would give them; everything else is recovered from the
 * noisy, wrapping meter. */
static void
test_recovers_true_model(void **state)
{
    struct fx f;
    const struct pol_model *fit, *t;
    const struct calib_point *pts;
    size_t n;

    (void) state;
    fx_setup(&f, 0.02, 100, 5000);
    run_and_fit(&f);
    fit = calib_model(f.c);
    t = f.s.truth;
    assert_non_null(fit);
    assert_true(f.s.wraps > 10);
    /* The time bound printed up front is the time it takes. */
    assert_int_equal(f.s.now_ns, calib_total_ns(f.c));
    assert_restored(&f);
    pts = calib_points(f.c, &n);
    assert_int_equal(n, 2 + 3 * (10 + 2));
    for (size_t i = 0; i < n; i++) {
        assert_true(pts[i].measured);
        if (pts[i].kind == CALIB_BUSY) {
            assert_int_equal(cpuset_count(&pts[i].cpus), pts[i].n_cores);
        }
    }
    assert_int_equal(f.s.busy_starts, 30);
    for (unsigned k = 0; k < t->domains[0].n_opps; k++) {
        const struct pol_opp *o = &t->domains[0].opps[k];
        char what[64];

        snprintf(what, sizeof what, "busy at %u kHz", o->freq_khz);
        assert_within(pol_model_busy_mw(fit, 0, o->freq_khz), o->busy_mw,
                      5, what);
    }
    for (unsigned s = 0; s < t->domains[0].n_idle; s++) {
        assert_within(fit->domains[0].idle[s].power_mw,
                      t->domains[0].idle[s].power_mw, 10,
                      t->domains[0].idle[s].name);
    }
    for (unsigned p = 0; p < 2; p++) {
        assert_within(fit->pkgs[p].uncore_active_mw,
                      t->pkgs[p].uncore_active_mw, 10, "package active");
        assert_within(fit->pkgs[p].uncore_idle_mw,
                      t->pkgs[p].uncore_idle_mw, 10, "package idle");
    }
    assert_within(fit->platform_mw, t->platform_mw, 10, "platform");
    assert_file(f.c, fit);
    fx_teardown(&f);
}

/* The assumed numbers are what the file says they are: moving the
 * deepest state's power moves every measured core power with it, and
 * moving package idle moves the platform the other way. */
static void
test_assumptions_shift_split(void **state)
{
    struct fx a, b;
    const struct pol_model *ma, *mb;

    (void) state;
    fx_setup(&a, 0, 0, 0);
    run_and_fit(&a);
    fx_setup(&b, 0, 100, 5000);
    run_and_fit(&b);
    ma = calib_model(a.c);
    mb = calib_model(b.c);
    for (unsigned k = 0; k < 10; k++) {
        int d = (int) mb->domains[0].opps[k].busy_mw
                - (int) ma->domains[0].opps[k].busy_mw;

        assert_in_range(d, 99, 101);
    }
    assert_int_equal(ma->domains[0].idle[2].power_mw, 0);
    assert_int_equal(mb->domains[0].idle[2].power_mw, 100);
    assert_in_range((int) ma->platform_mw - (int) mb->platform_mw,
                    10000 + 5600 - 2, 10000 + 5600 + 2);
    assert_int_equal(mb->pkgs[0].uncore_idle_mw, 5000);
    assert_in_range((int) mb->pkgs[0].uncore_active_mw
                    - (int) ma->pkgs[0].uncore_active_mw, 4999, 5001);
    fx_teardown(&a);
    fx_teardown(&b);
}

/* A meter failing in the middle stops the run with the point named, and
 * every limit is back as it was. */
static void
test_meter_failure_restores(void **state)
{
    struct fx f;

    (void) state;
    fx_setup(&f, 0, 0, 0);
    f.s.fail_after = 1234;
    assert_int_equal(calib_run(f.c, f.err, sizeof f.err), -EIO);
    assert_non_null(strstr(f.err, "point 13 ("));
    assert_restored(&f);
    assert_int_equal(calib_fit(f.c, f.err, sizeof f.err), -EINVAL);
    assert_null(calib_model(f.c));
    fx_teardown(&f);
}

/* A meter that never moves is an error, not a model of zeros. */
static void
test_dead_meter(void **state)
{
    struct fx f;

    (void) state;
    fx_setup(&f, 0, 0, 0);
    f.s.truth->platform_mw = 0;
    for (unsigned k = 0; k < f.s.truth->n_pkgs; k++) {
        f.s.truth->pkgs[k].uncore_active_mw = 0;
        f.s.truth->pkgs[k].uncore_idle_mw = 0;
    }
    for (unsigned d = 0; d < f.s.truth->n_domains; d++) {
        struct pol_domain *dom = &f.s.truth->domains[d];

        for (unsigned k = 0; k < dom->n_opps; k++) {
            dom->opps[k].busy_mw = 0;
        }
        for (unsigned s = 0; s < dom->n_idle; s++) {
            dom->idle[s].power_mw = 0;
        }
    }
    assert_int_equal(calib_run(f.c, f.err, sizeof f.err), 0);
    assert_int_equal(calib_fit(f.c, f.err, sizeof f.err), -EIO);
    assert_non_null(strstr(f.err, "counted no energy"));
    fx_teardown(&f);
}

static void
test_lsq(void **state)
{
    /* y = 3 + 2 x, plus a dependent column in the second system. */
    double a[5 * 2], b[5], x[3], dep[5 * 3];

    (void) state;
    for (int i = 0; i < 5; i++) {
        a[i * 2] = 1;
        a[i * 2 + 1] = i;
        b[i] = 3 + 2 * i + (i % 2 ? 0.1 : -0.1) * (i == 4 ? 0 : 1);
        dep[i * 3] = 1;
        dep[i * 3 + 1] = i;
        dep[i * 3 + 2] = 2 + 3.0 * i;
    }
    assert_int_equal(calib_lsq_solve(a, b, 5, 2, x), 0);
    assert_true(fabs(x[0] - 3) < 0.15 && fabs(x[1] - 2) < 0.06);
    b[0] = 3;
    b[1] = 5;
    b[2] = 7;
    b[3] = 9;
    b[4] = 11;
    assert_int_equal(calib_lsq_solve(a, b, 5, 2, x), 0);
    assert_true(fabs(x[0] - 3) < 1e-9 && fabs(x[1] - 2) < 1e-9);
    assert_int_equal(calib_lsq_solve(dep, b, 5, 3, x), -EDOM);
    assert_int_equal(calib_lsq_solve(a, b, 1, 2, x), -EINVAL);
    assert_int_equal(calib_lsq_solve(a, b, 5, 0, x), -EINVAL);
}

/* Where cpufreq lists no points (intel_pstate), the plan runs a grid
 * from cpuinfo_min_freq to cpuinfo_max_freq; planning writes nothing. */
static void
test_grid_without_listed_points(void **state)
{
    char *root = fx_mksysfs("--cpus 2 --freqs '800000 2400000'");
    struct meter *m = meter_dummy_create("sim", METER_SCOPE_PACKAGE, true,
                                         0);
    struct calib_opts opts = { .point_ns = 1000000000ull,
                               .sample_ns = 100000000ull, .name = "g" };
    const struct calib_point *pts;
    struct drv_host *h;
    struct calib *c;
    char err[256], cmd[1024];
    uint32_t seen[8];
    unsigned n_seen = 0;
    size_t n;

    (void) state;
    snprintf(cmd, sizeof cmd, "rm %s/cpu*/cpufreq/"
             "scaling_available_frequencies", root);
    assert_int_equal(system(cmd), 0);
    h = drv_host_sysfs.open(root, err, sizeof err);
    assert_non_null(h);
    assert_int_equal(calib_create(&drv_host_sysfs, h, root, m, NULL, NULL,
                                  &opts, &c, err, sizeof err), 0);
    pts = calib_points(c, &n);
    for (size_t i = 0; i < n; i++) {
        uint32_t f;

        if (pts[i].kind != CALIB_BUSY || pts[i].n_cores != 1) {
            continue;
        }
        f = calib_opp_khz(c, pts[i].index);
        assert_true(n_seen < 8);
        seen[n_seen++] = f;
    }
    assert_int_equal(n_seen, 5);
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(seen[i], 800000 + 400000 * i);
    }
    assert_int_equal(calib_total_ns(c), n * 1000000000ull);
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        char rel[64], buf[32];

        snprintf(rel, sizeof rel, "cpu%u/cpufreq/scaling_min_freq", cpu);
        assert_true(sysfs_read_raw(root, rel, buf, sizeof buf) > 0);
        assert_string_equal(buf, "800000\n");
        snprintf(rel, sizeof rel, "cpu%u/cpuidle/state1/disable", cpu);
        assert_true(sysfs_read_raw(root, rel, buf, sizeof buf) > 0);
        assert_string_equal(buf, "0\n");
    }
    calib_destroy(c);

    /* An offline CPU is refused, naming it. */
    fx_put(root, "cpu1/online", "0\n");
    assert_int_equal(calib_create(&drv_host_sysfs, h, root, m, NULL, NULL,
                                  &opts, &c, err, sizeof err), -EBUSY);
    assert_non_null(strstr(err, "cpu1 is offline"));
    drv_host_sysfs.close(h);
    meter_close(m);
    fx_rmtree(root);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lsq),
        cmocka_unit_test(test_grid_without_listed_points),
        cmocka_unit_test(test_recovers_true_model),
        cmocka_unit_test(test_assumptions_shift_split),
        cmocka_unit_test(test_meter_failure_restores),
        cmocka_unit_test(test_dead_meter),
    };

    int r = cmocka_run_group_tests(tests, NULL, NULL);

    fx_rmtree(fx_tree);
    return r;
}
