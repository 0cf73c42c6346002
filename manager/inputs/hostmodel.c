/* manager/inputs/hostmodel.c -- An energy model built from what the host
 * shows.
 *
 * Topology and operating points come from the host: the driver's n_cpus,
 * get_freq and get_idle, plus cpuN/topology/ files and cpuN/cpufreq/
 * {related_cpus,scaling_available_frequencies} read below the sysfs
 * root.  Power numbers do not exist in sysfs, so every mW here is an
 * ASSUMPTION chosen to rank choices the right way round, not to report
 * watts (docs/configuration.md, "Energy model from sysfs"):
 *
 *  - busy power of a core at relative frequency x = f / f_nominal:
 *      P(x) = P_nom * (0.2 + 0.8 * x * v(x)^2),  v(x) = 0.5 + 0.5 x
 *    i.e. CMOS dynamic power f V^2 with voltage linear in frequency
 *    (half the nominal voltage at f -> 0) plus 20 % leakage;
 *    P_nom = HOSTMODEL_NOMINAL_BUSY_MW.
 *  - idle state k (shallowest k = 0) of n: P_nom * 0.5 / 2^k, at least
 *    1 mW: every deeper state saves half of what the one above costs.
 *  - uncore 2000 mW per package while any core is awake, 500 mW when
 *    all sleep; platform 20000 mW; no cluster power; SMT 125 %.
 *  - turbo: sysfs does not mark turbo points, except acpi-cpufreq's
 *    convention of listing turbo as nominal + 1000 kHz at the top of
 *    scaling_available_frequencies; that point is marked turbo. */

#include <config.h>

#include "manager/inputs/hostmodel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#define HM_SYNTH_OPPS 5          /* Points synthesised from a min..max. */
#define HM_UNCORE_ACTIVE_MW 2000
#define HM_UNCORE_IDLE_MW 500
#define HM_PLATFORM_MW 20000
#define HM_SMT_PCT 125

static uint32_t
busy_mw(uint32_t f, uint32_t f_nom)
{
    double x = (double) f / f_nom;
    double v = 0.5 + 0.5 * x;
    double p = HOSTMODEL_NOMINAL_BUSY_MW * (0.2 + 0.8 * x * v * v);

    return p < 1 ? 1 : (uint32_t) (p + 0.5);
}

/* Reads a signed topology id; missing file -> 'dflt', "-1" -> 0. */
static int
read_topo_id(const char *root, unsigned cpu, const char *file,
             unsigned dflt, unsigned *out)
{
    char rel[64], buf[32];
    uint32_t v;
    int n;

    if (!root) {
        *out = dflt;
        return 0;
    }
    snprintf(rel, sizeof rel, "cpu%u/topology/%s", cpu, file);
    n = sysfs_read(root, rel, buf, sizeof buf);
    if (n == -ENOENT) {
        *out = dflt;
        return 0;
    }
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (!strcmp(buf, "-1")) {
        *out = 0;               /* Firmware did not say: one package. */
        return 0;
    }
    if (sysfs_parse_u32(buf, &v) || v > 65535) {
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int
read_cpulist(const char *root, unsigned cpu, const char *file,
             struct cpuset *set)
{
    char rel[64], buf[SYSFS_READ_MAX];
    int n;

    if (!root) {
        return -ENOENT;
    }
    snprintf(rel, sizeof rel, "cpu%u/%s", cpu, file);
    n = sysfs_read(root, rel, buf, sizeof buf);
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (cpuset_parse(set, buf) || cpuset_empty(set)) {
        return -EINVAL;
    }
    return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

    return x < y ? -1 : x > y;
}

/* Fills the OPPs of 'd' from CPU 'cpu''s cpufreq. */
static int
build_opps(const struct drv_host_ops *ops, struct drv_host *h,
           const char *root, unsigned cpu, struct pol_domain *d,
           char *err, size_t errlen)
{
    uint32_t f[256];
    unsigned n = 0, turbo_from;
    struct drv_freq fr;
    int error = ops->get_freq(h, cpu, &fr);

    if (error == -ENOTSUP) {
        d->n_opps = 1;
        d->opps[0].freq_khz = HOSTMODEL_UNKNOWN_KHZ;
        d->opps[0].capacity = POL_CAPACITY_SCALE;
        d->opps[0].busy_mw = HOSTMODEL_NOMINAL_BUSY_MW;
        d->nominal_opp = 0;
        return 0;
    }
    if (error) {
        snprintf(err, errlen, "cpu%u: cpufreq: %s", cpu, strerror(-error));
        return error;
    }
    if (root) {
        char rel[64], buf[SYSFS_READ_MAX];
        int len;

        snprintf(rel, sizeof rel,
                 "cpu%u/cpufreq/scaling_available_frequencies", cpu);
        len = sysfs_read(root, rel, buf, sizeof buf);
        if (len < 0 && len != -ENOENT) {
            snprintf(err, errlen, "%s: %s", rel, strerror(-len));
            return len == -EOVERFLOW ? -EINVAL : len;
        }
        for (char *save, *tok = len > 0 ? strtok_r(buf, " ", &save) : NULL;
             tok; tok = strtok_r(NULL, " ", &save)) {
            if (n == ARRAY_SIZE(f) || sysfs_parse_u32(tok, &f[n])
                || !f[n]) {
                snprintf(err, errlen, "%s: bad frequency \"%.20s\"", rel,
                         tok);
                return -EINVAL;
            }
            if (f[n] >= fr.hw_min_khz && f[n] <= fr.hw_max_khz) {
                n++;
            }
        }
    }
    if (n == 0) {
        /* A continuous range (intel_pstate, amd-pstate, cppc): evenly
         * spaced points; the policy interpolates between them. */
        uint32_t lo = fr.hw_min_khz, hi = fr.hw_max_khz;

        if (!lo) {
            lo = hi;
        }
        for (unsigned i = 0; i < HM_SYNTH_OPPS; i++) {
            f[n++] = lo + (uint32_t) ((uint64_t) (hi - lo) * i
                                      / (HM_SYNTH_OPPS - 1));
        }
    }
    qsort(f, n, sizeof f[0], cmp_u32);
    {
        unsigned u = 0;

        for (unsigned i = 0; i < n; i++) {
            if (!u || f[i] != f[u - 1]) {
                f[u++] = f[i];
            }
        }
        n = u;
    }
    if (n > POL_MAX_OPPS) {
        /* Keep the ends, subsample the middle evenly. */
        uint32_t g[POL_MAX_OPPS];

        for (unsigned i = 0; i < POL_MAX_OPPS; i++) {
            g[i] = f[(size_t) i * (n - 1) / (POL_MAX_OPPS - 1)];
        }
        memcpy(f, g, sizeof g);
        n = POL_MAX_OPPS;
    }
    turbo_from = n;
    if (n >= 2 && f[n - 1] - f[n - 2] == 1000) {
        turbo_from = n - 1;     /* acpi-cpufreq's turbo marker. */
    }
    d->n_opps = n;
    d->nominal_opp = turbo_from - 1;
    for (unsigned i = 0; i < n; i++) {
        uint32_t nom = f[turbo_from - 1];
        uint64_t cap = ((uint64_t) f[i] * POL_CAPACITY_SCALE + nom / 2)
                       / nom;

        d->opps[i].freq_khz = f[i];
        d->opps[i].capacity = cap ? (uint32_t) cap : 1;
        d->opps[i].busy_mw = busy_mw(f[i], nom);
        d->opps[i].turbo = i >= turbo_from;
    }
    return 0;
}

static int
build_idle(const struct drv_host_ops *ops, struct drv_host *h,
           unsigned cpu, struct pol_domain *d, char *err, size_t errlen)
{
    struct drv_idle idle;
    int error = ops->get_idle(h, cpu, &idle);

    if (error == -ENOTSUP || (!error && idle.n_states == 0)) {
        /* No cpuidle: the kernel's default idle loop (halt).  One state
         * so that the policy has something to limit. */
        d->n_idle = 1;
        snprintf(d->idle[0].name, sizeof d->idle[0].name, "halt");
        d->idle[0].power_mw = HOSTMODEL_NOMINAL_BUSY_MW / 2;
        return 0;
    }
    if (error) {
        snprintf(err, errlen, "cpu%u: cpuidle: %s", cpu, strerror(-error));
        return error;
    }
    d->n_idle = idle.n_states < POL_MAX_IDLE ? idle.n_states : POL_MAX_IDLE;
    for (unsigned k = 0; k < d->n_idle; k++) {
        struct pol_idle_state *s = &d->idle[k];
        uint32_t p = (HOSTMODEL_NOMINAL_BUSY_MW / 2) >> k;

        snprintf(s->name, sizeof s->name, "%s", idle.name[k]);
        /* The model file format names states with one word. */
        for (char *c = s->name; *c; c++) {
            if (*c == ' ') {
                *c = '-';
            }
        }
        s->exit_latency_us = idle.latency_us[k];
        s->target_residency_us = idle.residency_us[k];
        /* The model needs both non-decreasing; cpuidle drivers order
         * states that way, so this only repairs firmware oddities. */
        if (k && s->exit_latency_us < d->idle[k - 1].exit_latency_us) {
            s->exit_latency_us = d->idle[k - 1].exit_latency_us;
        }
        if (k && s->target_residency_us
                 < d->idle[k - 1].target_residency_us) {
            s->target_residency_us = d->idle[k - 1].target_residency_us;
        }
        s->power_mw = p ? p : 1;
    }
    return 0;
}

int
hostmodel_build(const struct drv_host_ops *ops, struct drv_host *h,
                const char *root, struct pol_model *m, char *err,
                size_t errlen)
{
    unsigned n_cpus, pkg_id[POL_MAX_PKGS];
    struct cpuset assigned;
    bool smt = false;
    int error;

    memset(m, 0, sizeof *m);
    error = ops->n_cpus(h, &n_cpus);
    if (error || !n_cpus || n_cpus > POL_MAX_CPUS) {
        snprintf(err, errlen, "cannot count CPUs (or more than %d)",
                 POL_MAX_CPUS);
        return error ? error : -EINVAL;
    }
    snprintf(m->name, sizeof m->name, "%s:%.50s", ops->name,
             root ? root : "-");
    m->n_cpus = n_cpus;
    m->platform_mw = HM_PLATFORM_MW;

    /* Packages and cores. */
    for (unsigned c = 0; c < n_cpus; c++) {
        struct cpuset sib;
        unsigned pid, k;

        error = read_topo_id(root, c, "physical_package_id", 0, &pid);
        if (error) {
            snprintf(err, errlen, "cpu%u/topology/physical_package_id: "
                     "%s", c, strerror(-error));
            return error;
        }
        for (k = 0; k < m->n_pkgs && pkg_id[k] != pid; k++) {
            continue;
        }
        if (k == m->n_pkgs) {
            if (m->n_pkgs == POL_MAX_PKGS) {
                snprintf(err, errlen, "more than %d packages",
                         POL_MAX_PKGS);
                return -EINVAL;
            }
            pkg_id[k] = pid;
            m->pkgs[k].uncore_active_mw = HM_UNCORE_ACTIVE_MW;
            m->pkgs[k].uncore_idle_mw = HM_UNCORE_IDLE_MW;
            m->n_pkgs++;
        }
        cpuset_set(&m->pkgs[k].cpus, c);

        /* A physical core is named by its first SMT sibling. */
        m->cpu_core[c] = (uint16_t) c;
        error = read_cpulist(root, c, "topology/thread_siblings_list",
                             &sib);
        if (!error && cpuset_has(&sib, c)) {
            m->cpu_core[c] = (uint16_t) cpuset_next(&sib, 0);
            smt |= cpuset_count(&sib) > 1;
        } else if (error && error != -ENOENT) {
            snprintf(err, errlen, "cpu%u/topology/thread_siblings_list: "
                     "%s", c, strerror(-error));
            return error;
        }
    }
    for (unsigned c = 0; c < n_cpus; c++) {
        /* A sibling list naming CPUs beyond n_cpus, or not symmetric. */
        unsigned core = m->cpu_core[c];

        if (core >= n_cpus || m->cpu_core[core] != core) {
            m->cpu_core[c] = (uint16_t) c;
        }
    }
    m->smt_capacity_pct = smt ? HM_SMT_PCT : 100;

    /* Domains: one per cpufreq policy, else one per physical core. */
    cpuset_zero(&assigned);
    for (unsigned c = 0; c < n_cpus; c++) {
        struct pol_domain *d;
        struct cpuset rel;

        if (cpuset_has(&assigned, c)) {
            continue;
        }
        if (m->n_domains == POL_MAX_DOMAINS) {
            snprintf(err, errlen, "more than %d frequency domains",
                     POL_MAX_DOMAINS);
            return -EINVAL;
        }
        d = &m->domains[m->n_domains];
        cpuset_zero(&d->cpus);
        error = read_cpulist(root, c, "cpufreq/related_cpus", &rel);
        if (error == -EINVAL) {
            snprintf(err, errlen, "cpu%u/cpufreq/related_cpus: not a CPU "
                     "list", c);
            return error;
        }
        if (error) {
            /* No cpufreq policy: the CPU and its SMT siblings. */
            cpuset_zero(&rel);
            for (unsigned s = c; s < n_cpus; s++) {
                if (m->cpu_core[s] == m->cpu_core[c]) {
                    cpuset_set(&rel, s);
                }
            }
        }
        cpuset_set(&rel, c);
        CPUSET_FOREACH (s, &rel) {
            if ((unsigned) s < n_cpus && !cpuset_has(&assigned, s)) {
                cpuset_set(&d->cpus, (unsigned) s);
            }
        }
        error = build_opps(ops, h, root, c, d, err, errlen);
        if (!error) {
            error = build_idle(ops, h, c, d, err, errlen);
        }
        if (error) {
            return error;
        }
        cpuset_or(&assigned, &assigned, &d->cpus);
        CPUSET_FOREACH (s, &d->cpus) {
            m->cpu_domain[s] = (uint16_t) m->n_domains;
        }
        d->pkg = 0;
        for (unsigned k = 0; k < m->n_pkgs; k++) {
            if (cpuset_has(&m->pkgs[k].cpus, c)) {
                d->pkg = k;
            }
        }
        m->n_domains++;
    }
    return hostmodel_check(m, err, errlen);
}

int
hostmodel_check(const struct pol_model *m, char *err, size_t errlen)
{
    struct cpuset seen, pkgs;

    if (!m->n_cpus || m->n_cpus > POL_MAX_CPUS || !m->n_domains
        || m->n_domains > POL_MAX_DOMAINS || !m->n_pkgs
        || m->n_pkgs > POL_MAX_PKGS) {
        snprintf(err, errlen, "model: counts out of range");
        return -EINVAL;
    }
    cpuset_zero(&seen);
    cpuset_zero(&pkgs);
    for (unsigned k = 0; k < m->n_pkgs; k++) {
        struct cpuset both;

        cpuset_and(&both, &pkgs, &m->pkgs[k].cpus);
        if (!cpuset_empty(&both)) {
            snprintf(err, errlen, "model: cpu in two packages");
            return -EINVAL;
        }
        cpuset_or(&pkgs, &pkgs, &m->pkgs[k].cpus);
    }
    for (unsigned i = 0; i < m->n_domains; i++) {
        const struct pol_domain *d = &m->domains[i];
        struct cpuset both;

        cpuset_and(&both, &seen, &d->cpus);
        if (cpuset_empty(&d->cpus) || !cpuset_empty(&both)) {
            snprintf(err, errlen, "model: domain %u empty or overlapping",
                     i);
            return -EINVAL;
        }
        cpuset_or(&seen, &seen, &d->cpus);
        if (d->pkg >= m->n_pkgs
            || !cpuset_subset(&d->cpus, &m->pkgs[d->pkg].cpus)) {
            snprintf(err, errlen, "model: domain %u spans packages", i);
            return -EINVAL;
        }
        if (!d->n_opps || d->n_opps > POL_MAX_OPPS
            || d->nominal_opp >= d->n_opps || d->opps[d->nominal_opp].turbo
            || !d->n_idle || d->n_idle > POL_MAX_IDLE) {
            snprintf(err, errlen, "model: domain %u: bad OPP/idle counts",
                     i);
            return -EINVAL;
        }
        for (unsigned k = 1; k < d->n_opps; k++) {
            if (d->opps[k].freq_khz <= d->opps[k - 1].freq_khz
                || d->opps[k].capacity < d->opps[k - 1].capacity
                || (d->opps[k - 1].turbo && !d->opps[k].turbo)) {
                snprintf(err, errlen, "model: domain %u: OPP %u not "
                         "ascending", i, k);
                return -EINVAL;
            }
        }
        for (unsigned k = 1; k < d->n_idle; k++) {
            if (d->idle[k].exit_latency_us < d->idle[k - 1].exit_latency_us
                || d->idle[k].target_residency_us
                   < d->idle[k - 1].target_residency_us) {
                snprintf(err, errlen, "model: domain %u: idle state %u "
                         "shallower than the one before", i, k);
                return -EINVAL;
            }
        }
        CPUSET_FOREACH (c, &d->cpus) {
            if ((unsigned) c >= m->n_cpus || m->cpu_domain[c] != i) {
                snprintf(err, errlen, "model: cpu %d: bad domain index",
                         c);
                return -EINVAL;
            }
        }
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned core = m->cpu_core[c];

        if (!cpuset_has(&seen, c) || !cpuset_has(&pkgs, c)) {
            snprintf(err, errlen, "model: cpu %u in no domain or package",
                     c);
            return -EINVAL;
        }
        if (core >= m->n_cpus || m->cpu_domain[core] != m->cpu_domain[c]) {
            snprintf(err, errlen, "model: SMT siblings %u and %u in "
                     "different domains", core, c);
            return -EINVAL;
        }
    }
    return 0;
}
