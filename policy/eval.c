/* policy/eval.c -- One candidate plan and its estimated power.
 *
 * The choice (choose.c) compares (pool size, level) candidates by the
 * power pol_energy_power_mw() estimates for them at the expected load,
 * and the final plan (emit.c) starts from the chosen candidate.  A
 * candidate is: the own cores and the first 'k' pool cores awake, the
 * misfits on cores of their own (misfit.c), the pool's domains at the
 * level, the rest at their lowest point, idle limits (idle.c), and the
 * expected load shared over the pool by capacity (the kernel balances
 * inside the set). */

#include <config.h>

#include "policy/policy.h"

#include <string.h>

#include "policy/state.h"

/* Frequencies: pool and own-core domains at the level (own cores'
 * domains are at max through dom_max), misfits' domains at least at
 * their need, the rest at the lowest point where managed. */
static void
set_freqs(struct pol_state *st, const struct pol_input *in,
          struct pol_plan *p)
{
    const struct pol_model *m = st->m;

    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];

        if (!st->dom_managed[di]) {
            continue;
        }
        if (st->dom_act[di] || st->big_khz[di]) {
            p->dom_freq_khz[di] = st->dom_act[di] ? st->lvl_khz[di] : 0;
            if (st->big_khz[di] > p->dom_freq_khz[di]) {
                p->dom_freq_khz[di] = st->big_khz[di];
            }
        } else {
            uint32_t f = d->opps[0].freq_khz;

            if (in->thermal_cap_khz[di] && f > in->thermal_cap_khz[di]) {
                f = in->thermal_cap_khz[di];
            }
            p->dom_freq_khz[di] = f;
        }
    }
}

/* Busy estimate of the pool: the expected load 'st->d_avg' shared by
 * capacity over the first 'k' cores ('cum' in all), each core's share
 * on its first thread, then its sibling; fixed load on every pool core.
 * With st->est_points, a core of its own frequency domain runs at the
 * point trim_pool() would give its share ('n_need' sorted needs of
 * pooled misfit candidates: one per core, as trim_pool() holds a
 * core's busiest thread). */
static void
pool_busy(struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, unsigned k, double cum,
          size_t n_need, struct pol_plan *p)
{
    const struct pol_model *m = st->m;

    for (unsigned i = 0; i < st->n_pool; i++) {
        unsigned kc = st->pool[i], di;
        uint32_t tc;
        double left = st->core_fixed[kc];

        if (i >= k && !st->core_fixed[kc]) {
            continue;         /* Parked, no load: busy_ppm stays 0. */
        }
        di = st->core_dom[kc];
        tc = dom_cap_at(st, di, p->dom_freq_khz[di]);
        if (i < k && cum > 0) {
            left += st->d_avg * pool_core_cap(st, i) / cum;
        }
        /* The point trim_pool() would give this share, where it can
         * (the same conditions, less the measured load it needs). */
        if (st->est_points && i < k && tc && trim_ok(st, in, kc, di)
            && p->dom_freq_khz[di] == st->lvl_khz[di]) {
            double g = 100.0 / (100 - st->cfg.headroom_pct);
            double gain = st->pool_nt[i] >= 2 ? m->smt_capacity_pct / 100.0
                                              : 1.0;
            uint32_t f = trim_point(&m->domains[di], st->lvl_khz[di],
                                    left * g,
                                    i < n_need ? st->need_sorted[i] : 0,
                                    gain);

            if (f < p->dom_freq_khz[di]) {
                p->dom_freq_khz[di] = f;
                tc = pol_dom_capacity_at(&m->domains[di], f);
            }
        }
        for (unsigned s = 0; s < st->core_nsib[kc] && tc; s++) {
            unsigned c = st->core_cpu[kc][s];
            double t = !s ? tc : st->sched_core ? 0
                       : (double) tc * (m->smt_capacity_pct - 100) / 100;
            double u;

            if (!cpuset_has(usable, c) || t <= 0) {
                continue;
            }
            u = left < t ? left : t;
            st->busy_ppm[c] = (uint32_t) (u * 1e6 / t);
            left -= u;
        }
    }
}

/* Busy estimate of own core 'kc' holding one vCPU of average load
 * 'avg_cap', on its first usable thread. */
static void
own_core_busy(struct pol_state *st, const struct cpuset *usable,
              const struct pol_plan *p, unsigned kc, uint32_t avg_cap)
{
    unsigned c = core_first_usable(st, kc, usable);
    uint32_t cap = pol_model_capacity_at(st->m, c,
                                         p->dom_freq_khz[st->core_dom[kc]]);
    uint64_t u = cap ? (uint64_t) avg_cap * 1000000 / cap : 0;

    st->busy_ppm[c] = (uint32_t) (u > 1000000 ? 1000000 : u);
}

uint32_t
eval_plan(struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, unsigned k, unsigned l,
          struct pol_plan *p)
{
    const struct pol_model *m = st->m;
    double cum = 0;
    size_t n_need = 0;

    if (k > st->n_pool) {
        k = st->n_pool;
    }
    cpuset_zero(&p->active);
    cpuset_zero(&p->offline);
    memset(p->dom_freq_khz, 0, sizeof p->dom_freq_khz);
    memset(p->idle_limit, -1, sizeof p->idle_limit);
    memset(st->busy_ppm, 0, m->n_cpus * sizeof st->busy_ppm[0]);
    memset(st->dom_act, 0, m->n_domains * sizeof st->dom_act[0]);
    level_fill(st, in, l);
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_use[kc] == 1) {
            core_cpus(st, kc, usable, &p->active);    /* Own cores. */
            st->dom_act[st->core_dom[kc]] = true;
        } else if (st->core_use[kc] == 3) {
            core_cpus(st, kc, usable, &p->active);    /* iso.c's. */
        }
    }
    for (unsigned i = 0; i < k; i++) {
        core_cpus(st, st->pool[i], usable, &p->active);
        st->dom_act[st->core_dom[st->pool[i]]] = true;
        cum += pool_core_cap(st, i);
    }
    misfit_place(st, in, usable, k, l, p);
    for (unsigned di = 0; di < m->n_domains; di++) {
        if (st->iso_khz[di] > st->big_khz[di]) {
            st->big_khz[di] = st->iso_khz[di];
        }
    }
    set_freqs(st, in, p);
    idle_awake(st, p);
    if (st->est_points) {
        n_need = misfit_sort_needs(st, true);
    }
    pool_busy(st, in, usable, k, cum, n_need, p);
    iso_busy(st, in, usable, p);
    for (size_t j = 0; j < st->n_excl; j++) {
        uint32_t i = st->excl_vcpu[j];

        own_core_busy(st, usable, p, st->excl_core[i],
                      in->vcpus[i].load.avg_cap);
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        uint16_t kc = st->big_core[j];

        if (kc != NO_CORE) {
            own_core_busy(st, usable, p, kc,
                          in->vcpus[st->bigc[j]].load.avg_cap);
        }
    }
    return pol_energy_power_mw(m, p, st->busy_ppm);
}
