/* tests/unit/test-hostmodel.c -- Energy model built from sysfs.
 *
 * Fixture trees from tests/fixtures/mksysfs.sh give known topologies;
 * the last test reads this machine's own /sys/devices/system/cpu through
 * the sysfs driver, READ-ONLY (no set_* call is made on it). */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/stat.h>

#include "manager/drivers/drv.h"
#include "manager/inputs/hostmodel.h"
#include "manager/drivers/sysfs.h"
#include "policy/model.h"
#include "tests/unit/hostdrv-fixture.h"

struct hm {
    char *root;
    struct drv_host *h;
    struct pol_model *m;
    char err[256];
    int rc;
};

static struct hm *
hm_build(const char *args)
{
    struct hm *t = calloc(1, sizeof *t);

    t->root = fx_mksysfs(args);
    t->h = drv_host_sysfs.open(t->root, t->err, sizeof t->err);
    if (!t->h) {
        fprintf(stderr, "%s\n", t->err);
        exit(99);
    }
    t->m = malloc(sizeof *t->m);
    t->rc = hostmodel_build(&drv_host_sysfs, t->h, t->root, t->m, t->err,
                            sizeof t->err);
    return t;
}

static void
hm_free(struct hm *t)
{
    drv_host_sysfs.close(t->h);
    fx_rmtree(t->root);
    free(t->m);
    free(t);
}

static void
assert_sane(const struct pol_model *m)
{
    char err[256] = "";

    if (hostmodel_check(m, err, sizeof err)) {
        fail_msg("%s", err);
    }
    for (unsigned i = 0; i < m->n_domains; i++) {
        const struct pol_domain *d = &m->domains[i];

        for (unsigned k = 1; k < d->n_opps; k++) {
            assert_true(d->opps[k].freq_khz > d->opps[k - 1].freq_khz);
            assert_true(d->opps[k].busy_mw > d->opps[k - 1].busy_mw);
        }
        assert_int_equal(d->opps[d->nominal_opp].capacity,
                         POL_CAPACITY_SCALE);
        for (unsigned k = 1; k < d->n_idle; k++) {
            assert_true(d->idle[k].power_mw < d->idle[k - 1].power_mw);
        }
    }
}

static void
test_fixture_smt_two_packages(void **state)
{
    struct hm *t = hm_build("--cpus 8 --smt 2 --pkgs 2 --freqs "
                            "'800000 1600000 2400000'");
    const struct pol_model *m = t->m;
    const struct pol_domain *d;

    if (t->rc) {
        fail_msg("%s", t->err);
    }
    assert_sane(m);
    assert_int_equal(m->n_cpus, 8);
    assert_int_equal(m->n_pkgs, 2);
    assert_int_equal(m->n_domains, 4);       /* One policy per core. */
    assert_int_equal(m->smt_capacity_pct, 125);
    /* CPU i and i+4 are siblings (mksysfs numbering). */
    assert_int_equal(m->cpu_core[5], 1);
    assert_int_equal(m->cpu_core[1], 1);
    assert_int_equal(m->cpu_domain[5], m->cpu_domain[1]);
    assert_true(m->cpu_domain[0] != m->cpu_domain[1]);
    /* Cores 0,1 in package 0; cores 2,3 in package 1. */
    assert_true(cpuset_has(&m->pkgs[0].cpus, 4));
    assert_true(cpuset_has(&m->pkgs[1].cpus, 7));
    assert_int_equal(cpuset_count(&m->pkgs[0].cpus), 4);
    d = &m->domains[m->cpu_domain[3]];
    assert_int_equal(d->pkg, 1);
    assert_int_equal(cpuset_count(&d->cpus), 2);
    assert_int_equal(d->n_opps, 3);
    assert_int_equal(d->opps[0].freq_khz, 800000);
    assert_int_equal(d->opps[0].capacity, 341);
    assert_int_equal(d->opps[2].capacity, 1024);
    assert_int_equal(d->nominal_opp, 2);
    assert_false(d->opps[2].turbo);
    assert_int_equal(d->n_idle, 3);
    assert_string_equal(d->idle[2].name, "C6");
    assert_int_equal(d->idle[2].exit_latency_us, 133);
    assert_int_equal(d->idle[2].target_residency_us, 600);
    /* Model capacity agrees with the policy's interpolation. */
    assert_int_equal(pol_model_capacity_at(m, 3, 1600000), 683);
    hm_free(t);
}

static void
test_fixture_shared_policy_turbo(void **state)
{
    /* acpi-cpufreq style: listed descending, turbo = nominal + 1000. */
    struct hm *t = hm_build("--cpus 4 --shared-policy --freqs "
                            "'2401000 2400000 1200000'");
    const struct pol_domain *d = &t->m->domains[0];

    if (t->rc) {
        fail_msg("%s", t->err);
    }
    assert_sane(t->m);
    assert_int_equal(t->m->n_domains, 1);
    assert_int_equal(cpuset_count(&d->cpus), 4);
    assert_int_equal(t->m->smt_capacity_pct, 100);
    assert_int_equal(d->n_opps, 3);
    assert_int_equal(d->opps[0].freq_khz, 1200000);
    assert_int_equal(d->nominal_opp, 1);
    assert_true(d->opps[2].turbo);
    /* The marker says nothing about the real turbo frequency. */
    assert_true(d->opps[2].capacity >= 1024);
    assert_int_equal(d->opps[1].capacity, 1024);
    hm_free(t);
}

static void
test_fixture_no_cpufreq(void **state)
{
    struct hm *t = hm_build("--cpus 3 --no-cpufreq --idle "
                            "'POLL:0:0 C1:1:1'");
    const struct pol_model *m = t->m;

    if (t->rc) {
        fail_msg("%s", t->err);
    }
    assert_sane(m);
    assert_int_equal(m->n_domains, 3);
    for (unsigned i = 0; i < 3; i++) {
        assert_int_equal(m->domains[i].n_opps, 1);
        assert_int_equal(m->domains[i].opps[0].freq_khz,
                         HOSTMODEL_UNKNOWN_KHZ);
        assert_int_equal(m->domains[i].n_idle, 2);
    }
    hm_free(t);

    t = hm_build("--cpus 1 --no-cpufreq --no-cpuidle");
    if (t->rc) {
        fail_msg("%s", t->err);
    }
    assert_int_equal(t->m->domains[0].n_idle, 1);
    assert_string_equal(t->m->domains[0].idle[0].name, "halt");
    hm_free(t);
}

static void
test_fixture_malformed(void **state)
{
    char *root = fx_mksysfs("--cpus 2");
    char err[256] = "";
    struct pol_model *m = malloc(sizeof *m);
    struct drv_host *h = drv_host_sysfs.open(root, err, sizeof err);

    assert_non_null(h);
    fx_put(root, "cpu1/topology/physical_package_id", "abc\n");
    assert_int_equal(hostmodel_build(&drv_host_sysfs, h, root, m, err,
                                     sizeof err), -EINVAL);
    assert_non_null(strstr(err, "cpu1/topology/physical_package_id"));
    fx_put(root, "cpu1/topology/physical_package_id", "0\n");
    fx_put(root, "cpu0/cpufreq/scaling_available_frequencies",
           "800000 fast\n");
    assert_int_equal(hostmodel_build(&drv_host_sysfs, h, root, m, err,
                                     sizeof err), -EINVAL);
    assert_non_null(strstr(err, "scaling_available_frequencies"));
    fx_put(root, "cpu0/cpufreq/scaling_available_frequencies", "\n");
    /* Empty list: falls back to the cpuinfo range. */
    assert_int_equal(hostmodel_build(&drv_host_sysfs, h, root, m, err,
                                     sizeof err), 0);
    assert_int_equal(m->domains[0].n_opps, 5);
    assert_int_equal(m->domains[0].opps[4].freq_khz, 2400000);
    fx_put(root, "cpu1/cpufreq/cpuinfo_max_freq", "-1\n");
    assert_int_equal(hostmodel_build(&drv_host_sysfs, h, root, m, err,
                                     sizeof err), -EINVAL);
    assert_non_null(strstr(err, "cpu1"));
    fx_put(root, "cpu1/cpufreq/cpuinfo_max_freq", "2400000\n");
    fx_put(root, "cpu1/cpufreq/related_cpus", "1-\n");
    assert_int_equal(hostmodel_build(&drv_host_sysfs, h, root, m, err,
                                     sizeof err), -EINVAL);
    assert_non_null(strstr(err, "cpu1/cpufreq/related_cpus"));
    drv_host_sysfs.close(h);
    free(m);
    fx_rmtree(root);
}

static void
test_dummy_host(void **state)
{
    char err[256] = "";
    struct drv_host *h = drv_host_dummy.open("cpus=4", err, sizeof err);
    struct pol_model *m = malloc(sizeof *m);

    assert_non_null(h);
    if (hostmodel_build(&drv_host_dummy, h, NULL, m, err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_sane(m);
    assert_int_equal(m->n_cpus, 4);
    assert_int_equal(m->n_domains, 4);
    assert_int_equal(m->n_pkgs, 1);
    assert_int_equal(m->domains[0].n_opps, 5);   /* Synthesised. */
    assert_int_equal(m->domains[0].opps[0].freq_khz, 800000);
    assert_int_equal(m->domains[0].n_idle, 3);
    drv_host_dummy.close(h);
    free(m);
}

/* This machine, read-only: whatever it has must give a valid model that
 * matches what sysfs says independently of the driver. */
static void
test_real_host(void **state)
{
    const char *root = SYSFS_DEFAULT_ROOT;
    char err[256] = "", buf[256], rel[128];
    struct pol_model *m;
    struct drv_host *h;
    struct cpuset possible;
    struct stat st;
    unsigned expect;

    if (sysfs_read(root, "possible", buf, sizeof buf) < 0) {
        skip();         /* No sysfs at all (a container without /sys). */
    }
    assert_int_equal(cpuset_parse(&possible, buf), 0);
    expect = 0;
    CPUSET_FOREACH (c, &possible) {
        expect = (unsigned) c + 1;
    }
    h = drv_host_sysfs.open(root, err, sizeof err);
    assert_non_null(h);
    m = malloc(sizeof *m);
    if (hostmodel_build(&drv_host_sysfs, h, root, m, err, sizeof err)) {
        fail_msg("%s", err);
    }
    assert_sane(m);
    assert_int_equal(m->n_cpus, expect);
    if (stat(SYSFS_DEFAULT_ROOT "/cpu0/cpufreq", &st) != 0) {
        /* No cpufreq (this VM): a single nominal point per domain. */
        assert_int_equal(m->domains[0].n_opps, 1);
        assert_int_equal(m->domains[0].opps[0].capacity, 1024);
    }
    snprintf(rel, sizeof rel, "cpu0/cpuidle/state0/name");
    if (sysfs_read(root, rel, buf, sizeof buf) > 0) {
        const struct pol_domain *d = &m->domains[m->cpu_domain[0]];
        char want[300];

        snprintf(want, sizeof want, "%s", buf);
        for (char *c = want; *c; c++) {
            *c = *c == ' ' ? '-' : *c;
        }
        assert_true(d->n_idle >= 1);
        assert_string_equal(d->idle[0].name, want);   /* e.g. POLL */
    }
    drv_host_sysfs.close(h);
    free(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_smt_two_packages),
        cmocka_unit_test(test_fixture_shared_policy_turbo),
        cmocka_unit_test(test_fixture_no_cpufreq),
        cmocka_unit_test(test_fixture_malformed),
        cmocka_unit_test(test_dummy_host),
        cmocka_unit_test(test_real_host),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
