/* policy/race.c -- Turbo points (docs/policy.md, "Turbo"):
 *
 *  - race to idle: a core that is the only awake core of its package and
 *    alone in its frequency domain runs at the point, from its planned
 *    one up to the top turbo point, that serves a unit of work for the
 *    least energy, counting the package's (and cluster's) extra power
 *    while the core is busy: the sooner it is done, the sooner they
 *    sleep (use_turbo only);
 *  - saturation: when every usable CPU is awake at its top non-turbo
 *    point, none of them idled and vCPUs still wait, only turbo adds
 *    capacity, so every awake domain takes its top point once that has
 *    lasted POL_SAT_HOLD_NS (saturation_turbo, on by default). */

#include <config.h>

#include "policy/policy.h"

#include <string.h>

#include "policy/state.h"

/* Turbo for a lone core (docs/policy.md, "Turbo"): with use_turbo, a
 * core that is the only awake core of its package and alone in its
 * frequency domain runs at the point, from its planned one up to the top
 * turbo point, that serves a unit of work for the least energy, counting
 * the package's (and cluster's) extra power while the core is busy: the
 * sooner it is done, the sooner they sleep (race to idle).  Turbo is
 * taken only when the model says it pays; on the shipped models it does
 * not.  Never under a thermal cap, the override or a floor below. */
void
race_to_idle(struct pol_state *st, const struct pol_input *in,
             const struct cpuset *usable, struct pol_plan *p)
{
    const struct pol_model *m = st->m;

    memset(st->race, 0, sizeof st->race);
    if (!st->cfg.use_turbo || in->override_performance) {
        return;
    }
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        unsigned di = st->core_dom[kc];
        const struct pol_domain *d = &m->domains[di];
        const struct pol_pkg *pk;
        struct cpuset mine, rest;
        double stat = 0, best_cost = 0;
        uint32_t f = p->dom_freq_khz[di], best = f;

        cpuset_zero(&mine);
        core_cpus(st, kc, usable, &mine);
        cpuset_and(&mine, &mine, &p->active);
        if (cpuset_empty(&mine) || !f || in->thermal_cap_khz[di]
            || st->dom_ncpus[di] != st->core_nsib[kc]
            || d->pkg >= m->n_pkgs) {
            continue;
        }
        pk = &m->pkgs[d->pkg];
        cpuset_and(&rest, &p->active, &pk->cpus);
        cpuset_andnot(&rest, &rest, &mine);
        if (!cpuset_empty(&rest)) {
            continue;                         /* Not alone in its package. */
        }
        if (pk->uncore_active_mw > pk->uncore_idle_mw) {
            stat += (double) pk->uncore_active_mw - pk->uncore_idle_mw;
        }
        if (d->cluster_active_mw > d->cluster_idle_mw) {
            stat += (double) d->cluster_active_mw - d->cluster_idle_mw;
        }
        for (unsigned j = 0; j < d->n_opps; j++) {
            const struct pol_opp *o = &d->opps[j];
            double cost;

            if (o->freq_khz < f || !o->capacity) {
                continue;
            }
            cost = (o->busy_mw + stat) / o->capacity;
            if (o->freq_khz == f || cost < best_cost) {
                best_cost = cost;
                best = o->freq_khz;
            }
        }
        if (best > f) {
            p->dom_freq_khz[di] = best;
            st->race[di] = true;
        }
    }
}

/* Busy share of CPU 'c' over the last period, in ppm; for a CPU that
 * ran above domain 'd''s top non-turbo point 'top' (a turbo point), in
 * ppm of what it could run at 'top': it counts the work it did, so a
 * host that turbo keeps just ahead of its demand still reads saturated.
 * One that ran at or below 'top' reads as measured. */
static uint64_t
busy_at_top(const struct pol_input *in, const struct pol_domain *d,
            uint32_t top, unsigned c)
{
    uint64_t busy = in->cpu_busy_ppm[c];
    uint32_t ran = in->cpu_ran_khz ? in->cpu_ran_khz[c] : 0;
    uint32_t cap_top = pol_dom_capacity_at(d, top);

    if (ran > top && cap_top) {
        busy = busy * pol_dom_capacity_at(d, ran) / cap_top;
    }
    return busy;
}

/* Whether the host is saturated in plan 'p': no usable CPU is parked or
 * offline, every awake domain runs at least at its top non-turbo point,
 * and every awake CPU was busy at least SAT_BUSY_PPM of the last period
 * at that point (measured; unknown is not saturated). */
static bool
saturated(const struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, const struct pol_plan *p)
{
    const struct pol_model *m = st->m;
    struct cpuset rest;

    if (!in->cpu_busy_ppm) {
        return false;
    }
    cpuset_andnot(&rest, usable, &p->active);
    if (!cpuset_empty(&rest) || cpuset_empty(&p->active)) {
        return false;
    }
    CPUSET_FOREACH (c, &p->active) {
        unsigned di = m->cpu_domain[c];
        const struct pol_domain *d = &m->domains[di];
        uint32_t top = pol_dom_max_khz(d, false);

        if (in->cpu_busy_ppm[c] == UINT32_MAX || p->dom_freq_khz[di] < top
            || busy_at_top(in, d, top, c) < SAT_BUSY_PPM) {
            return false;
        }
    }
    return true;
}

/* Whether saturation turbo holds this period: taken once the host has
 * been saturated with packed vCPUs waiting (above spread_ready_ppm) for
 * POL_SAT_HOLD_NS, then kept while it stays saturated, waiting or not
 * (turbo is what drains the wait). */
static bool
saturation_holds(struct pol_state *st, const struct pol_input *in,
                 const struct cpuset *usable, const struct pol_plan *p)
{
    if (!st->cfg.saturation_turbo || in->override_performance
        || !saturated(st, in, usable, p)) {
        st->sat_since_ns = 0;
        st->sat_on = false;
        return false;
    }
    if (st->sat_on) {
        return true;
    }
    if (!st->spread) {
        st->sat_since_ns = 0;
        return false;
    }
    if (!st->sat_since_ns) {
        st->sat_since_ns = in->now_ns ? in->now_ns : 1;
        return false;
    }
    st->sat_on = in->now_ns >= st->sat_since_ns
                 && in->now_ns - st->sat_since_ns >= POL_SAT_HOLD_NS;
    return st->sat_on;
}

void
race_saturation(struct pol_state *st, const struct pol_input *in,
                const struct cpuset *usable, struct pol_plan *p)
{
    const struct pol_model *m = st->m;

    if (!saturation_holds(st, in, usable, p)) {
        return;
    }
    CPUSET_FOREACH (c, &p->active) {
        unsigned di = m->cpu_domain[c];
        uint32_t top = pol_dom_max_khz(&m->domains[di], true);

        /* A capped domain is held by the hardware below its top. */
        if (!in->thermal_cap_khz[di] && top > p->dom_freq_khz[di]) {
            p->dom_freq_khz[di] = top;
            st->race[di] = true;         /* Per-core points keep it. */
        }
    }
}
