/* policy/misfit.c -- Own cores for packed vCPUs too big for the pool.
 *
 * A packed vCPU whose need exceeds the slowest pool thread at a level
 * (is_big()) gets a core of its own after the pool's cores, at the
 * lowest point that holds it (EAS "misfit"), so one busy VM does not
 * force the whole pool to a high level.  It keeps its previous core
 * while that core is in the compact range right after the pool (or in
 * a package that range keeps awake anyway, same core type), and returns
 * to the pool only after the dwell time; see docs/policy.md. */

#include <config.h>

#include "policy/policy.h"

#include <stdlib.h>
#include <string.h>

#include "policy/state.h"

uint32_t
misfit_need_khz(const struct pol_state *st, const struct pol_input *in,
                unsigned di, uint32_t r)
{
    const struct pol_domain *d = &st->m->domains[di];
    unsigned top = d->nominal_opp < d->n_opps ? d->nominal_opp
                                              : d->n_opps - 1;
    unsigned j = 0;
    uint32_t f, cap_khz = in->thermal_cap_khz[di];

    while (j < top && d->opps[j].capacity < r) {
        j++;
    }
    f = d->opps[j].freq_khz;
    if (in->override_performance || st->dom_max[di]) {
        f = pol_dom_max_khz(d, st->cfg.use_turbo);
    }
    if (st->dom_floor[di] > f) {
        f = st->dom_floor[di];
    }
    if (cap_khz && f > cap_khz) {
        f = cap_khz;
    }
    return f;
}

/* One thread's capacity at nominal, or under the domain's thermal cap
 * if that is lower: what an own core there can give. */
static uint32_t
top_cap(const struct pol_state *st, const struct pol_input *in, unsigned di)
{
    uint32_t cap = in->thermal_cap_khz[di];
    const struct pol_domain *d = &st->m->domains[di];

    if (cap && cap < d->opps[d->nominal_opp].freq_khz) {
        uint32_t c = pol_dom_capacity_at(d, cap);

        return c < st->nom_cap[di] ? c : st->nom_cap[di];
    }
    return st->nom_cap[di];
}

/* Pool position (at or after 'k') of the core misfit 'i' gets: its
 * previous core when still outside the pool prefix and able to hold it
 * (stable identity: no pin change), else the first core after the
 * prefix whose nominal thread holds it (LITTLE cores cannot take a vCPU
 * that needs a big one), else the fastest free one; NO_CORE if none. */
static unsigned
pick_core(const struct pol_state *st, const struct pol_input *in,
          uint32_t i, unsigned k)
{
    unsigned b = NO_CORE, fast = NO_CORE;

    for (unsigned q = k; q < st->n_pool; q++) {
        unsigned kc = st->pool[q];
        uint32_t nc = top_cap(st, in, st->core_dom[kc]);

        if (st->taken[q]) {
            continue;
        }
        if (kc == st->big_prev[i] && nc >= st->vr[i]
            && (q < st->big_end
                || (st->pkg_on[core_pkg(st, kc)] && st->m->n_pkgs > 1
                    && level_same_type(&st->m->domains[st->core_dom[kc]],
                                       &st->m->domains[st->core_dom[
                                           st->pool[st->big_end - 1]]])))) {
            b = q;
            break;
        }
        if (b == NO_CORE && nc >= st->vr[i]) {
            b = q;
        }
        if (fast == NO_CORE
            || nc > top_cap(st, in, st->core_dom[st->pool[fast]])) {
            fast = q;
        }
    }
    return b == NO_CORE ? fast : b;
}

void
misfit_place(struct pol_state *st, const struct pol_input *in,
             const struct cpuset *usable, unsigned k, unsigned l,
             struct pol_plan *p)
{
    unsigned nb = 0;

    memset(st->big_khz, 0, st->m->n_domains * sizeof st->big_khz[0]);
    memset(st->taken, 0, st->n_pool);
    for (size_t j = 0; j < st->n_bigc; j++) {
        nb += is_big(st, st->bigc[j], l);
    }
    /* Previous cores are kept inside the compact range right after the
     * pool, or in a package that range keeps awake anyway (same core
     * type): a core further out would keep a second package or cluster
     * awake. */
    st->big_end = k + nb < st->n_pool ? k + nb : st->n_pool;
    memset(st->pkg_on, 0, sizeof st->pkg_on);
    for (unsigned q = 0; q < st->big_end; q++) {
        st->pkg_on[core_pkg(st, st->pool[q])] = true;
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        uint32_t i = st->bigc[j];
        unsigned b, kc, di;
        uint32_t f;

        st->big_core[j] = NO_CORE;
        if (!is_big(st, i, l)) {
            continue;
        }
        b = pick_core(st, in, i, k);
        if (b == NO_CORE) {
            continue;
        }
        st->taken[b] = 1;
        kc = st->pool[b];
        di = st->core_dom[kc];
        f = misfit_need_khz(st, in, di, (uint32_t) st->vr[i]);
        st->big_core[j] = (uint16_t) kc;
        core_cpus(st, kc, usable, &p->active);
        if (f > st->big_khz[di]) {
            st->big_khz[di] = f;
        }
    }
}

bool
misfit_remember(struct pol_state *st)
{
    bool changed = false;

    for (size_t j = 0; j < st->n_bigc; j++) {
        uint8_t had = st->big_core[j] != NO_CORE;

        if (!st->prev_big[st->bigc[j]] && had) {
            st->big_since[st->bigc[j]] = st->now;
        }
        changed |= st->prev_big[st->bigc[j]] != had
                   || st->big_prev[st->bigc[j]] != st->big_core[j];
        st->prev_big[st->bigc[j]] = had;
        st->big_prev[st->bigc[j]] = st->big_core[j];
    }
    return changed;
}

static int
cmp_float_desc(const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;

    return x < y ? 1 : x > y ? -1 : 0;
}

size_t
misfit_sort_needs(struct pol_state *st, bool pooled_only)
{
    size_t n = 0;

    for (size_t j = 0; j < st->n_bigc; j++) {
        if (!pooled_only || st->big_core[j] == NO_CORE) {
            st->need_sorted[n++] = st->vr[st->bigc[j]];
        }
    }
    qsort(st->need_sorted, n, sizeof st->need_sorted[0], cmp_float_desc);
    return n;
}
