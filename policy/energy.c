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

/* The first operating point of 'd' in [lo, n_opps) whose frequency is
 * at or above 'freq_khz', or n_opps if there is none: a binary search,
 * as the frequencies ascend (model.h). */
static inline unsigned
opp_at_or_above(const struct pol_domain *d, unsigned lo, uint32_t freq_khz)
{
    unsigned hi = d->n_opps;

    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;

        if (d->opps[mid].freq_khz < freq_khz) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static inline double
opp_power_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    const struct pol_opp *o = d->opps;
    unsigned n = d->n_opps, i;

    if (!n) {
        return 0;
    }
    if (!freq_khz) {
        return o[d->nominal_opp < n ? d->nominal_opp : n - 1].busy_mw;
    }
    if (freq_khz <= o[0].freq_khz) {
        return o[0].busy_mw;
    }
    /* Plans mostly run at nominal: that point first, if it is the first
     * at the frequency. */
    i = d->nominal_opp < n ? d->nominal_opp : n - 1;
    if (freq_khz == o[i].freq_khz && o[i - 1].freq_khz < freq_khz) {
        return o[i].busy_mw;
    }
    i = opp_at_or_above(d, 1, freq_khz);
    if (i == n) {
        return o[n - 1].busy_mw;
    }
    if (freq_khz == o[i].freq_khz) {
        return o[i].busy_mw;           /* What the line below gives. */
    }
    {
        double t = (double) (freq_khz - o[i - 1].freq_khz)
                   / (double) (o[i].freq_khz - o[i - 1].freq_khz);

        return o[i - 1].busy_mw
               + t * ((double) o[i].busy_mw - (double) o[i - 1].busy_mw);
    }
}

double
pol_opp_power_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    return opp_power_mw(d, freq_khz);
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

/* Whether domain 'd' has no cluster power at all: then its cluster adds
 * nothing to the estimate, awake or asleep. */
static inline bool
no_cluster_power(const struct pol_domain *d)
{
    return !d->cluster_active_mw && !d->cluster_idle_mw
           && (!d->n_opps || !d->opps[0].cluster_mw);
}

static inline double
opp_cluster_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    const struct pol_opp *o = d->opps;
    unsigned n = d->n_opps;

    if (!n || !o[0].cluster_mw) {
        return d->cluster_active_mw;
    }
    if (!freq_khz) {
        return o[d->nominal_opp < n ? d->nominal_opp : n - 1].cluster_mw;
    }
    /* The lowest point at or above the frequency, else the highest. */
    {
        unsigned i = opp_at_or_above(d, 0, freq_khz);

        return o[i < n ? i : n - 1].cluster_mw;
    }
}

double
pol_opp_cluster_mw(const struct pol_domain *d, uint32_t freq_khz)
{
    return opp_cluster_mw(d, freq_khz);
}

static inline unsigned
idle_state_for_busy(const struct pol_domain *d, double busy, int limit)
{
    unsigned max = d->n_idle ? d->n_idle - 1 : 0;
    double gap_us;

    if (limit >= 0 && (unsigned) limit < max) {
        max = (unsigned) limit;
    }
    if (busy <= 0) {
        return max;
    }
    gap_us = busy >= 1 ? 0 : POL_ENERGY_BURST_US * (1 - busy) / busy;
    /* The deepest allowed state whose target residency fits the gap
     * (0 if none does); searching down from the deepest finds it first
     * whatever the order of the residencies. */
    for (unsigned i = max; i > 0; i--) {
        if (d->idle[i].target_residency_us <= gap_us) {
            return i;
        }
    }
    return 0;
}

unsigned
pol_idle_state_for_busy(const struct pol_domain *d, double busy, int limit)
{
    return idle_state_for_busy(d, busy, limit);
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

/* Per physical core (indexed by its core id, a CPU number), what the
 * pass over the CPUs gathers for the estimate. */
enum {
    CORE_SEEN = 1,
    CORE_AWAKE = 2,        /* Some CPU of it is in the active set. */
    CORE_ONLINE = 4,       /* Some CPU of it is online. */
    CORE_LISTED = 8,       /* In core[]/dom[] below. */
};

struct cores {
    double idle_prob[POL_MAX_CPUS];    /* P(no sibling busy). */
    int8_t limit[POL_MAX_CPUS];        /* Tightest sibling limit. */
    uint8_t flags[POL_MAX_CPUS];       /* CORE_*. */
    /* The cores to estimate, in the order of the first CPU of each that
     * has a domain, and that CPU's domain. */
    unsigned n;
    uint16_t core[POL_MAX_CPUS];
    uint16_t dom[POL_MAX_CPUS];
};

/* Fills 'cs' from the model, the plan and the CPUs' busy shares.
 * Siblings are assumed to be busy independently of each other: the core
 * is busy while any of them is. */
static void
gather_cores(struct cores *cs, const struct pol_model *m,
             const struct pol_plan *plan, const uint32_t *cpu_busy_ppm)
{
    unsigned ncpu = m->n_cpus < POL_MAX_CPUS ? m->n_cpus : POL_MAX_CPUS;

    memset(cs->flags, 0, sizeof cs->flags);
    cs->n = 0;
    for (unsigned c = 0; c < ncpu; c++) {
        unsigned k = m->cpu_core[c] < POL_MAX_CPUS ? m->cpu_core[c] : c;
        uint8_t fl = cs->flags[k];

        if (!(fl & CORE_SEEN)) {
            fl = CORE_SEEN;
            cs->idle_prob[k] = 1;
            cs->limit[k] = -1;
        }
        if (!(fl & CORE_LISTED) && m->cpu_domain[c] < m->n_domains) {
            fl |= CORE_LISTED;
            cs->core[cs->n] = (uint16_t) k;
            cs->dom[cs->n] = m->cpu_domain[c];
            cs->n++;
        }
        if (!bit_of(&plan->offline, c)) {
            fl |= CORE_ONLINE;
            /* The CPU's busy share u is ppm / 1e6 clamped to 1; an idle
             * CPU (u = 0) multiplies by exactly 1. */
            if (cpu_busy_ppm && cpu_busy_ppm[c]) {
                uint32_t ppm = cpu_busy_ppm[c];

                cs->idle_prob[k] *= ppm >= 1000000 ? 0 : 1 - ppm / 1e6;
            }
            if (bit_of(&plan->active, c)) {
                int lim = plan->idle_limit[c];

                fl |= CORE_AWAKE;
                if (lim >= 0 && (cs->limit[k] < 0 || lim < cs->limit[k])) {
                    cs->limit[k] = (int8_t) lim;
                }
            }
        }
        cs->flags[k] = fl;
    }
}

/* State of a cluster or package while the cores are estimated. */
enum {
    SHARED_AWAKE = 1,      /* Some core of it is online. */
    SHARED_SHALLOW = 2,    /* Some core of it is busy or not in its
                            * deepest idle state. */
};

uint32_t
pol_energy_power_mw(const struct pol_model *m, const struct pol_plan *plan,
                    const uint32_t *cpu_busy_ppm)
{
    struct cores cs;
    double dom_idle[POL_MAX_DOMAINS];  /* P(no core of domain busy);
                                        * set once the domain is awake. */
    uint8_t dom_st[POL_MAX_DOMAINS];   /* SHARED_*. */
    double pkg_idle[POL_MAX_PKGS];
    bool pkg_awake[POL_MAX_PKGS], pkg_shallow[POL_MAX_PKGS];
    double mw = m->platform_mw;
    unsigned nd = m->n_domains < POL_MAX_DOMAINS ? m->n_domains
                                                 : POL_MAX_DOMAINS;

    memset(dom_st, 0, nd);
    for (unsigned i = 0; i < POL_MAX_PKGS; i++) {
        pkg_idle[i] = 1;
        pkg_awake[i] = pkg_shallow[i] = false;
    }
    gather_cores(&cs, m, plan, cpu_busy_ppm);
    for (unsigned q = 0; q < cs.n; q++) {
        unsigned k = cs.core[q], di = cs.dom[q];
        const struct pol_domain *d = &m->domains[di];
        unsigned deepest = d->n_idle ? d->n_idle - 1 : 0, st;
        double busy, p;
        bool shallow;

        if (!(cs.flags[k] & CORE_ONLINE)) {
            /* Whole core offline: an offline CPU is not powered off, it
             * waits in the deepest C-state (x86 mwait_play_dead() takes
             * the highest CPUID-leaf-5 state; Arm PSCI CPU_OFF is the
             * power-down state the EAS models list as the deepest), so
             * it costs what a parked core costs, and lets its cluster
             * and package sleep like one. */
            mw += d->n_idle ? d->idle[deepest].power_mw : 0;
            continue;
        }
        busy = 1 - cs.idle_prob[k];
        /* Parked cores have no limit: they reach the deepest state for
         * their idle time. */
        st = idle_state_for_busy(d, busy,
                                 (cs.flags[k] & CORE_AWAKE) ? cs.limit[k]
                                                            : -1);
        /* A core that is never busy adds 0 * busy power, that is 0. */
        p = busy > 0 ? busy * opp_power_mw(d, plan->dom_freq_khz[di]) : 0;
        if (d->n_idle) {
            p += (1 - busy) * d->idle[st].power_mw;
        }
        mw += p;
        shallow = st != deepest || busy >= 1;
        if (dom_st[di] & SHARED_AWAKE) {
            dom_idle[di] *= 1 - busy;
        } else {
            dom_idle[di] = 1 - busy;
        }
        dom_st[di] |= SHARED_AWAKE | (shallow ? SHARED_SHALLOW : 0);
        if (d->pkg < POL_MAX_PKGS) {
            pkg_idle[d->pkg] *= 1 - busy;
            pkg_awake[d->pkg] = true;
            pkg_shallow[d->pkg] |= shallow;
        }
    }
    /* Clusters and packages: busy while any core is, and in their low
     * state for the rest only if every core reaches its deepest state.
     * A domain without cluster power adds nothing. */
    for (unsigned i = 0; i < nd; i++) {
        const struct pol_domain *d = &m->domains[i];

        if (!(dom_st[i] & SHARED_AWAKE)) {
            mw += d->cluster_idle_mw;
        } else if (!no_cluster_power(d)) {
            add_shared(&mw, true, 1 - dom_idle[i],
                       dom_st[i] & SHARED_SHALLOW,
                       opp_cluster_mw(d, plan->dom_freq_khz[i]),
                       d->cluster_active_mw, d->cluster_idle_mw);
        }
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
