/* policy/energy.c -- The one energy estimate: plan + utilisation -> mW.
 *
 * pol_decide() compares candidate configurations with this function
 * (EAS-style), vpower-sim integrates it over time for every baseline it
 * compares, and the exporter reports it.  Because the same function
 * judges packing and spreading alike, it models the costs of both
 * honestly: a busier core has shorter idle gaps and so reaches only
 * shallower idle states; a parked core sleeps in its deepest state; a
 * cluster or package reaches its low-power state only while all its cores
 * are in their deepest state.  The rules are in docs/energy-model.md. */

#include "policy/policy.h"

#include <math.h>
#include <string.h>

#include "policy/internal.h"

double
pol_opp_power_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    const struct pol_opp *o = d->opps;
    unsigned n = d->n_opps;

    if (!n) {
        return 0;
    }
    if (!freq_khz) {
        return o[d->nominal_opp < n ? d->nominal_opp : n - 1].busy_mw;
    }
    if (freq_khz <= o[0].freq_khz) {
        return o[0].busy_mw;
    }
    for (unsigned i = 1; i < n; i++) {
        if (freq_khz == o[i].freq_khz) {
            return o[i].busy_mw;       /* What the line below gives. */
        }
        if (freq_khz < o[i].freq_khz) {
            double t = (double) (freq_khz - o[i - 1].freq_khz)
                       / (double) (o[i].freq_khz - o[i - 1].freq_khz);

            return o[i - 1].busy_mw
                   + t * ((double) o[i].busy_mw - (double) o[i - 1].busy_mw);
        }
    }
    return o[n - 1].busy_mw;
}

double
pol_model_busy_mw(const struct pol_model *m, int cpu, uint32_t freq_khz)
{
    unsigned di = 0;

    if (!m || !m->n_domains) {
        return 0;
    }
    if (cpu >= 0 && (unsigned) cpu < m->n_cpus && cpu < POL_MAX_CPUS) {
        di = m->cpu_domain[cpu];
    }
    return pol_opp_power_mw(&m->domains[di < m->n_domains ? di : 0],
                            freq_khz);
}

double
pol_opp_cluster_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    const struct pol_opp *o = d->opps;
    unsigned n = d->n_opps;
    unsigned lo = 0;

    if (!n || !o[0].cluster_mw) {
        return d->cluster_active_mw;
    }
    if (!freq_khz) {
        return o[d->nominal_opp < n ? d->nominal_opp : n - 1].cluster_mw;
    }
    /* The lowest point at or above the frequency (clamped). */
    while (lo + 1 < n && o[lo].freq_khz < freq_khz) {
        lo++;
    }
    return o[lo].cluster_mw;
}

unsigned
pol_idle_state_for_busy(const struct pol_domain *d, double busy, int limit)
{
    unsigned max = d->n_idle ? d->n_idle - 1 : 0;
    unsigned best = 0;
    double gap_us;

    if (limit >= 0 && (unsigned) limit < max) {
        max = (unsigned) limit;
    }
    if (busy <= 0) {
        return max;
    }
    gap_us = busy >= 1 ? 0 : POL_ENERGY_BURST_US * (1 - busy) / busy;
    for (unsigned i = 0; i <= max && i < d->n_idle; i++) {
        if (d->idle[i].target_residency_us <= gap_us) {
            best = i;
        }
    }
    return best;
}

/* Adds to '*mw' the power of a cluster or package: asleep ('awake'
 * false), 'idle_mw'; awake, 'busy_mw' for the fraction 'busy' of the
 * time a core is busy and for the rest 'active_mw' while some core is in
 * a shallow state ('shallow'), else 'idle_mw'. */
static void
add_shared(double *mw, bool awake, double busy, bool shallow,
           double busy_mw, uint32_t active_mw, uint32_t idle_mw)
{
    if (!awake) {
        *mw += idle_mw;
        return;
    }
    *mw += busy * busy_mw;
    *mw += (1 - busy) * (shallow ? active_mw : idle_mw);
}

/* cpuset_has() for a 'cpu' known to be < POL_MAX_CPUS, inline: the
 * estimate runs for every candidate plan and every simulated second. */
static inline bool
bit_of(const struct cpuset *s, unsigned cpu)
{
    return (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

uint32_t
pol_energy_power_mw(const struct pol_model *m, const struct pol_plan *plan,
                    const uint32_t *cpu_busy_ppm)
{
    /* Per physical core, indexed by its core id (a CPU number). */
    double idle_prob[POL_MAX_CPUS];    /* P(no sibling busy). */
    int8_t limit[POL_MAX_CPUS];        /* Tightest sibling limit. */
    uint8_t flags[POL_MAX_CPUS];       /* 1 seen, 2 awake, 4 online. */
    double dom_idle[POL_MAX_DOMAINS];  /* P(no core of domain busy). */
    bool dom_awake[POL_MAX_DOMAINS], dom_shallow[POL_MAX_DOMAINS];
    double pkg_idle[POL_MAX_PKGS];
    bool pkg_awake[POL_MAX_PKGS], pkg_shallow[POL_MAX_PKGS];
    double mw = m->platform_mw;
    unsigned ncpu = m->n_cpus < POL_MAX_CPUS ? m->n_cpus : POL_MAX_CPUS;

    memset(flags, 0, sizeof flags);
    /* Only the model's domains are read below. */
    for (unsigned i = 0; i < m->n_domains && i < POL_MAX_DOMAINS; i++) {
        dom_idle[i] = 1;
        dom_awake[i] = dom_shallow[i] = false;
    }
    for (unsigned i = 0; i < POL_MAX_PKGS; i++) {
        pkg_idle[i] = 1;
        pkg_awake[i] = pkg_shallow[i] = false;
    }
    /* Siblings are assumed to be busy independently of each other: the
     * core is busy while any of them is. */
    for (unsigned c = 0; c < ncpu; c++) {
        unsigned k = m->cpu_core[c] < POL_MAX_CPUS ? m->cpu_core[c] : c;
        double u = cpu_busy_ppm ? cpu_busy_ppm[c] / 1e6 : 0;
        int lim = plan->idle_limit[c];

        u = u < 0 ? 0 : u > 1 ? 1 : u;
        if (!(flags[k] & 1)) {
            flags[k] = 1;
            idle_prob[k] = 1;
            limit[k] = -1;
        }
        if (bit_of(&plan->offline, c)) {
            continue;
        }
        flags[k] |= 4;
        idle_prob[k] *= 1 - u;
        if (bit_of(&plan->active, c)) {
            flags[k] |= 2;
            if (lim >= 0 && (limit[k] < 0 || lim < limit[k])) {
                limit[k] = (int8_t) lim;
            }
        }
    }
    for (unsigned c = 0; c < ncpu; c++) {
        unsigned k = m->cpu_core[c] < POL_MAX_CPUS ? m->cpu_core[c] : c;
        unsigned di = m->cpu_domain[c];
        const struct pol_domain *d;
        double busy, p;
        unsigned st, deepest;
        uint32_t f;

        if (!(flags[k] & 1) || di >= m->n_domains) {
            continue;
        }
        flags[k] &= (uint8_t) ~1;        /* Count each core once. */
        d = &m->domains[di];
        deepest = d->n_idle ? d->n_idle - 1 : 0;
        if (!(flags[k] & 4)) {
            /* Whole core offline: an offline CPU is not powered off, it
             * waits in the deepest C-state (x86 mwait_play_dead() takes
             * the highest CPUID-leaf-5 state; Arm PSCI CPU_OFF is the
             * power-down state the EAS models list as the deepest), so
             * it costs what a parked core costs, and lets its cluster
             * and package sleep like one. */
            mw += d->n_idle ? d->idle[deepest].power_mw : 0;
            continue;
        }
        f = plan->dom_freq_khz[di];
        busy = 1 - idle_prob[k];
        /* Parked cores have no limit: they reach the deepest state for
         * their idle time. */
        st = pol_idle_state_for_busy(d, busy,
                                     (flags[k] & 2) ? limit[k] : -1);
        p = busy * pol_opp_power_mw(d, f);
        if (d->n_idle) {
            p += (1 - busy) * d->idle[st].power_mw;
        }
        mw += p;
        dom_idle[di] *= 1 - busy;
        dom_awake[di] = true;
        if (st != deepest || busy >= 1) {
            dom_shallow[di] = true;
        }
        if (d->pkg < POL_MAX_PKGS) {
            pkg_idle[d->pkg] *= 1 - busy;
            pkg_awake[d->pkg] = true;
            if (st != deepest || busy >= 1) {
                pkg_shallow[d->pkg] = true;
            }
        }
    }
    /* Clusters and packages: busy while any core is, and in their low
     * state for the rest only if every core reaches its deepest state. */
    for (unsigned i = 0; i < m->n_domains && i < POL_MAX_DOMAINS; i++) {
        const struct pol_domain *d = &m->domains[i];

        add_shared(&mw, dom_awake[i], 1 - dom_idle[i], dom_shallow[i],
                   dom_awake[i] ? pol_opp_cluster_mw(d, plan->dom_freq_khz[i])
                                : 0,
                   d->cluster_active_mw, d->cluster_idle_mw);
    }
    for (unsigned i = 0; i < m->n_pkgs && i < POL_MAX_PKGS; i++) {
        const struct pol_pkg *pk = &m->pkgs[i];

        add_shared(&mw, pkg_awake[i], 1 - pkg_idle[i], pkg_shallow[i],
                   pk->uncore_active_mw, pk->uncore_active_mw,
                   pk->uncore_idle_mw);
    }
    if (mw < 0) {
        mw = 0;
    }
    return mw > 4e9 ? UINT32_MAX : (uint32_t) lround(mw);
}
