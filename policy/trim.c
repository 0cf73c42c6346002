/* policy/trim.c -- Per-core frequency points inside the pool.
 *
 * The pool's level assumes the kernel spreads the packed set evenly; at
 * the 1 s scale it does not (threads stay where they woke), and a
 * misfit's own core is sized from its vCPU's minutes-scale need.  So
 * each such core that is alone in its frequency domain runs at the
 * lowest point holding its own measured load with the pool's headroom
 * (schedutil's 1.25 x util for the default 20 %), never above the level,
 * never below a floor (docs/policy.md, "Per-core points"). */

#include <config.h>

#include "policy/policy.h"

#include <stdlib.h>

#include "policy/state.h"

/* Lowest non-turbo point of domain 'd', at most 'top_khz', whose core
 * holds 'need' in all and 'need_thr' on one thread ('gain' = capacity
 * factor of the core's usable threads together); 'top_khz' if none. */
uint32_t
trim_point(const struct pol_domain *d, uint32_t top_khz, double need,
           double need_thr, double gain)
{
    for (unsigned j = 0; j <= d->nominal_opp && j < d->n_opps; j++) {
        const struct pol_opp *o = &d->opps[j];

        if (o->freq_khz >= top_khz) {
            break;
        }
        if (o->capacity >= need_thr && o->capacity * gain >= need) {
            return o->freq_khz;
        }
    }
    return top_khz;
}

/* Whether per-core points can apply to core 'kc' of domain 'di':
 * measured per-CPU busy time, no override, no boost on the domain, and
 * the core alone in its frequency domain (trim_pool(), and eval_plan()'s
 * estimate of it). */
bool
trim_ok(const struct pol_state *st, const struct pol_input *in,
        unsigned kc, unsigned di)
{
    return in->cpu_busy_ppm && !in->override_performance && !st->dom_max[di]
           && st->dom_ncpus[di] == st->core_nsib[kc];
}

/* Capacity core 'kc' offers with one thread of capacity 'thr': 'thr',
 * times smt_capacity_pct when two or more of its threads are usable. */
static double
core_cap(const struct pol_state *st, const struct cpuset *usable,
         unsigned kc, uint32_t thr)
{
    unsigned nt = 0;
    double c = thr;

    for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
        nt += cpuset_has(usable, st->core_cpu[kc][s]);
    }
    return nt >= 2 ? c * st->m->smt_capacity_pct / 100.0 : c;
}

/* Capacity core 'kc' offers at 'khz' (core_cap()). */
static double
core_cap_at(const struct pol_state *st, const struct cpuset *usable,
            unsigned kc, uint32_t khz)
{
    return core_cap(st, usable, kc, dom_cap_at(st, st->core_dom[kc], khz));
}

/* Busiest first; candidate order among equals (deterministic). */
static int
cmp_trim_key(const void *a, const void *b)
{
    const struct trim_key *x = a, *y = b;

    if (x->u != y->u) {
        return x->u > y->u ? -1 : 1;
    }
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Measured load of core 'kc' in capacity units: '*w' its threads' work
 * together, '*tmax' its busiest thread's, '*gain' the capacity factor
 * of its usable threads together.  False when a thread's busy time is
 * unknown or no thread is usable. */
static bool
core_load(const struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, unsigned kc, double *w,
          double *tmax, double *gain)
{
    const struct pol_model *m = st->m;
    double one = 0;
    unsigned nt = 0;

    *w = *tmax = 0;
    for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
        unsigned c = st->core_cpu[kc][s];
        uint32_t b = in->cpu_busy_ppm[c], tc;
        double x;

        if (!cpuset_has(usable, c)) {
            continue;
        }
        if (b == UINT32_MAX) {
            return false;
        }
        tc = pol_model_capacity_at(m, c, in->cpu_ran_khz
                                         ? in->cpu_ran_khz[c] : 0);
        x = (b > 1000000 ? 1000000 : b) / 1e6 * tc;
        one = tc > one ? tc : one;
        *w += x;
        *tmax = x > *tmax ? x : *tmax;
        nt++;
    }
    if (!nt) {
        return false;
    }
    *gain = nt >= 2 ? m->smt_capacity_pct / 100.0 : 1.0;
    /* The threads' busy time counts a thread's whole capacity, but a
     * core whose threads are busy at once delivers only the SMT gain
     * over one thread.  Without knowing the overlap, the most work busy
     * fractions summing to s (in threads) can be is s threads' worth up
     * to one thread and one thread plus the gain's share of the rest
     * beyond it (the threads overlap no more than they must).  The plain
     * sum counted two saturated threads as two threads' worth and kept
     * every core whose sibling had work one point or more too fast
     * (Bitbrains at 220 vCPUs per host: +2 W of 380). */
    if (nt >= 2 && *w > one) {
        *w = one + (*w - one) * (*gain - 1.0) / (nt - 1);
    }
    return true;
}

/* Puts each candidate core 'cand[0..n)' that may be trimmed at the point
 * of its measured load, scales the estimate's busy shares to it, keeps
 * st->trim_by[] (load per capacity at the new point) and lowers
 * '*total' (planned capacity, st->trim_top[] per core) by what the
 * cores give up. */
static void
lower_cores(struct pol_state *st, const struct pol_input *in,
            const struct cpuset *usable, const uint16_t *cand, unsigned n,
            double *total, struct pol_plan *p)
{
    const struct pol_model *m = st->m;
    double g = 100.0 / (100 - st->cfg.headroom_pct);

    for (unsigned i = 0; i < n; i++) {
        unsigned kc = cand[i], di = st->core_dom[kc];
        const struct pol_domain *d = &m->domains[di];
        double w, tmax, gain, cap;
        uint32_t top = p->dom_freq_khz[di], prev, thr;

        if (!trim_ok(st, in, kc, di) || !top || st->race[di]
            || !core_load(st, in, usable, kc, &w, &tmax, &gain)) {
            continue;
        }
        /* Up and down at once to what holds the load with the
         * headroom, as schedutil does.  No down margin: a frequency
         * change on a core's own domain costs microseconds, not the
         * migrations a pool resize does, and the headroom already
         * covers a rise until the next decision (1 s while a core is
         * trimmed).  With the packing margin here too, a core whose
         * load fell less than 10 % below a point's threshold stayed a
         * point higher (440 vCPUs on one host: 2 W of 317). */
        prev = trim_point(d, top, w * g, tmax * g, gain);
        if (prev > top) {
            prev = top;
        }
        if (st->dom_floor[di] > prev) {
            prev = st->dom_floor[di] < top ? st->dom_floor[di] : top;
        }
        /* 'top' is still the planned point trim_top[i] is for: a core
         * alone in its domain is the only one that moves it. */
        thr = prev < top ? dom_cap_at(st, di, prev) : 0;
        cap = prev < top ? core_cap(st, usable, kc, thr) : st->trim_top[i];
        *total -= st->trim_top[i] - cap;
        st->trim_by[i].u = w / cap;
        if (prev < top) {
            /* The energy estimate's busy shares at the lower point. */
            double r = (double) dom_cap_at(st, di, top) / thr;

            for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
                unsigned c = st->core_cpu[kc][s];
                double b = st->busy_ppm[c] * r;

                st->busy_ppm[c] = (uint32_t) (b > 1e6 ? 1e6 : b);
            }
        }
        p->dom_freq_khz[di] = prev;
    }
}

/* Over budget: raises trimmed cores by one point per step, never above
 * 'top_of' their domain, the busiest for its point first (its vCPUs are
 * the likeliest to run short there; an idle core raised first only
 * waits faster), round after round, until the pool holds 'budget'
 * again. */
static void
raise_cores(const struct pol_state *st, const struct cpuset *usable,
            const uint16_t *cand, unsigned n, const uint32_t *top_of,
            double budget, double total, struct pol_plan *p)
{
    for (bool raised = true; total < budget && raised;) {
        raised = false;
        for (unsigned t = 0; t < n && total < budget; t++) {
            unsigned kc = cand[st->trim_by[t].i], di = st->core_dom[kc];
            const struct pol_domain *d = &st->m->domains[di];
            uint32_t f = p->dom_freq_khz[di], nf = top_of[di];

            if (f >= top_of[di]) {
                continue;
            }
            for (unsigned j = 0; j < d->n_opps; j++) {
                if (d->opps[j].freq_khz > f) {
                    nf = d->opps[j].freq_khz < top_of[di]
                         ? d->opps[j].freq_khz : top_of[di];
                    break;
                }
            }
            total += core_cap_at(st, usable, kc, nf)
                     - core_cap_at(st, usable, kc, f);
            p->dom_freq_khz[di] = nf;
            raised = true;
        }
    }
}

/* A core saturated at a trimmed point measures its full capacity and is
 * raised at the next decision, and a core whose load fell is lowered at
 * once (no margin).  Only with measured per-CPU busy time, not under the
 * override, not for a domain with a boost (dom_max), not where race to
 * idle chose the point. */
bool
trim_cores(struct pol_state *st, const struct pol_input *in,
           const struct cpuset *usable, const uint16_t *cand, unsigned n,
           double budget, struct pol_plan *p)
{
    bool any = false;
    uint32_t top_of[POL_MAX_DOMAINS];
    double total = 0;

    /* Their capacity as planned: trimming never takes it below 'budget'
     * (the packed vCPUs' recent demand with headroom: per vCPU the
     * lesser of its average and its last period, so a burst counts at
     * its average while the average catches up, and a drop counts at
     * once instead of over the average's half-life); where it would,
     * cores are raised again, the busiest for their point first. */
    for (unsigned i = 0; i < n; i++) {
        unsigned kc = cand[i], di = st->core_dom[kc];

        st->trim_by[i] = (struct trim_key) { .u = 0, .i = i };
        top_of[di] = p->dom_freq_khz[di];
        st->trim_top[i] = core_cap_at(st, usable, kc, p->dom_freq_khz[di]);
        total += st->trim_top[i];
    }
    lower_cores(st, in, usable, cand, n, &total, p);
    if (total < budget) {
        /* Only raising reads the order. */
        qsort(st->trim_by, n, sizeof st->trim_by[0], cmp_trim_key);
        raise_cores(st, usable, cand, n, top_of, budget, total, p);
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned di = st->core_dom[cand[i]];

        any |= p->dom_freq_khz[di] < top_of[di];
    }
    return any;
}

bool
trim_pool(struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, unsigned k, double budget,
          struct pol_plan *p)
{
    uint16_t cand[POL_MAX_CPUS];
    unsigned n = 0;

    /* The packed VMs' cores: the pool's, then the misfits' own cores
     * (performance and latency-bound VMs' cores are never lowered). */
    for (unsigned i = 0; i < k && i < st->n_pool; i++) {
        cand[n++] = st->pool[i];
    }
    for (size_t j = 0; j < st->n_bigc && n < POL_MAX_CPUS; j++) {
        if (st->big_core[j] != NO_CORE) {
            cand[n++] = st->big_core[j];
        }
    }
    return trim_cores(st, in, usable, cand, n, budget, p);
}
