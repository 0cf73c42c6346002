/* policy/level.c -- Frequency levels of the packed pool.
 *
 * A level is one operating point per domain: on a homogeneous host the
 * lowest point reaching a fraction of nominal capacity that some domain
 * has a point at, on big.LITTLE one combination of a point per core
 * type.  The table is built once from the model; each decision fills a
 * level's row (the frequency and one thread's capacity per domain) under
 * its floors, thermal caps and boosts.  The candidates pol_decide()
 * compares are (pool size, level) pairs. */

#include <config.h>

#include "policy/policy.h"

#include <string.h>

#include "policy/state.h"

/* Capacity of 'o' as ppm of the domain's nominal capacity. */
static uint32_t
opp_ppm(const struct pol_domain *d, unsigned j)
{
    uint32_t nom = d->opps[d->nominal_opp < d->n_opps ? d->nominal_opp
                                                      : d->n_opps - 1]
                   .capacity;

    return nom ? (uint32_t) ((uint64_t) d->opps[j].capacity * 1000000 / nom)
               : 1000000;
}

/* Whether domains 'a' and 'b' have the same operating points (same
 * core type). */
bool
level_same_type(const struct pol_domain *a, const struct pol_domain *b)
{
    if (a->n_opps != b->n_opps || a->nominal_opp != b->nominal_opp) {
        return false;
    }
    for (unsigned j = 0; j < a->n_opps; j++) {
        if (a->opps[j].freq_khz != b->opps[j].freq_khz
            || a->opps[j].capacity != b->opps[j].capacity) {
            return false;
        }
    }
    return true;
}

/* Heterogeneous hosts (big.LITTLE): one level per combination of one
 * operating point per core type, so each cluster runs at its own lowest
 * sufficient point instead of a common fraction of nominal.  Mixed-radix
 * order, the last level is every type at nominal.  Returns false (and
 * builds nothing) on homogeneous hosts or when the combinations do not
 * fit MAX_LEVELS. */
static bool
build_levels_hetero(struct pol_state *st)
{
    const struct pol_model *m = st->m;
    unsigned type_of[POL_MAX_DOMAINS], rep[MAX_LEVELS], cnt[MAX_LEVELS];
    unsigned n_types = 0, prod = 1;

    for (unsigned di = 0; di < m->n_domains; di++) {
        unsigned t = 0;

        while (t < n_types
               && !level_same_type(&m->domains[rep[t]], &m->domains[di])) {
            t++;
        }
        if (t == n_types) {
            const struct pol_domain *d = &m->domains[di];

            if (n_types == MAX_LEVELS) {
                return false;
            }
            rep[t] = di;
            cnt[t] = (d->nominal_opp < d->n_opps ? d->nominal_opp
                                                 : d->n_opps - 1) + 1;
            n_types++;
            if (prod * cnt[t] > MAX_LEVELS) {
                return false;
            }
            prod *= cnt[t];
        }
        type_of[di] = t;
    }
    if (n_types < 2) {
        return false;
    }
    st->n_levels = prod;
    for (unsigned l = 0; l < prod; l++) {
        unsigned x = l;
        uint32_t top = 0;

        for (unsigned t = 0; t < n_types; t++) {
            unsigned j = x % cnt[t];
            uint32_t ppm = opp_ppm(&m->domains[rep[t]], j);

            x /= cnt[t];
            top = ppm > top ? ppm : top;
            for (unsigned di = 0; di < m->n_domains; di++) {
                if (type_of[di] == t) {
                    st->level_opp[di][l] = (uint8_t) j;
                }
            }
        }
        st->level_ppm[l] = top;      /* Informational only. */
    }
    return true;
}

/* Whether level 'a' runs every domain at least as fast as level 'b'. */
bool
level_ge(const struct pol_state *st, unsigned a, unsigned b)
{
    for (unsigned di = 0; di < st->m->n_domains; di++) {
        if (st->level_opp[di][a] < st->level_opp[di][b]) {
            return false;
        }
    }
    return true;
}

/* Homogeneous hosts: one level per fraction of nominal capacity that
 * some domain has a point at, and per domain the lowest point reaching
 * it. */
static void
build_levels_homo(struct pol_state *st)
{
    const struct pol_model *m = st->m;

    st->n_levels = 0;
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];

        for (unsigned j = 0; j <= d->nominal_opp && j < d->n_opps; j++) {
            uint32_t x = opp_ppm(d, j);
            unsigned i = 0;

            while (i < st->n_levels && st->level_ppm[i] < x) {
                i++;
            }
            if (i < st->n_levels && st->level_ppm[i] == x) {
                continue;
            }
            if (st->n_levels == MAX_LEVELS) {
                continue;    /* Keeps the lowest 64; nominal is added. */
            }
            memmove(&st->level_ppm[i + 1], &st->level_ppm[i],
                    (st->n_levels - i) * sizeof st->level_ppm[0]);
            st->level_ppm[i] = x;
            st->n_levels++;
        }
    }
    if (!st->n_levels || st->level_ppm[st->n_levels - 1] < 1000000) {
        if (st->n_levels == MAX_LEVELS) {
            st->n_levels--;
        }
        st->level_ppm[st->n_levels++] = 1000000;
    }
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];
        unsigned top = d->nominal_opp < d->n_opps ? d->nominal_opp
                                                  : d->n_opps - 1;

        for (unsigned l = 0; l < st->n_levels; l++) {
            unsigned j = 0;

            while (j < top && opp_ppm(d, j) < st->level_ppm[l]) {
                j++;
            }
            st->level_opp[di][l] = (uint8_t) j;
        }
    }
}

/* Levels, per domain the operating point of each level, and one
 * thread's capacity there (what level_fill() needs unless a floor, cap
 * or boost moves the point). */
void
level_build(struct pol_state *st)
{
    const struct pol_model *m = st->m;

    if (!build_levels_hetero(st)) {
        build_levels_homo(st);
    }
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];

        for (unsigned l = 0; l < st->n_levels; l++) {
            st->level_khz[l][di] = d->opps[st->level_opp[di][l]].freq_khz;
            st->level_cap[l][di] = pol_dom_capacity_at(d,
                                                       st->level_khz[l][di]);
        }
    }
}

/* Frequency of domain 'di' at level 'l' for the pool: the level's point,
 * under the thermal cap, raised to a VM's floor; nominal (or turbo) for
 * a boost or the override. */
static uint32_t
dom_level_khz(const struct pol_state *st, const struct pol_input *in,
              unsigned di, unsigned l)
{
    const struct pol_domain *d = &st->m->domains[di];
    uint32_t cap_khz = in->thermal_cap_khz[di];
    uint32_t f;

    if (in->override_performance || st->dom_max[di]) {
        f = pol_dom_max_khz(d, st->cfg.use_turbo);
    } else {
        f = d->opps[st->level_opp[di][l]].freq_khz;
    }
    if (st->dom_floor[di] > f) {
        f = st->dom_floor[di];
    }
    if (cap_khz && f > cap_khz) {
        /* The highest point under the cap (the cap itself if none). */
        uint32_t g = 0;

        for (unsigned j = 0; j < d->n_opps; j++) {
            if (d->opps[j].freq_khz <= cap_khz) {
                g = d->opps[j].freq_khz;
            }
        }
        f = g ? g : cap_khz;
    }
    return f;
}

/* Fills st->lvl_khz / lvl_cap (one thread) for every domain at 'l':
 * the level's row from level_build(), recomputed only for the domains in
 * lvl_moved[].  A level's row depends only on this decision's floors,
 * caps and boosts, so it is computed once per decision and copied after
 * that (eval_plan() runs ~2 x levels times). */
void
level_fill(struct pol_state *st, const struct pol_input *in, unsigned l)
{
    size_t n = st->m->n_domains;

    if (l < MAX_LEVELS && st->lc_gen[l] == st->gen) {
        memcpy(st->lvl_khz, st->lc_khz[l], n * sizeof st->lvl_khz[0]);
        memcpy(st->lvl_cap, st->lc_cap[l], n * sizeof st->lvl_cap[0]);
        return;
    }
    memcpy(st->lvl_khz, st->level_khz[l], n * sizeof st->lvl_khz[0]);
    memcpy(st->lvl_cap, st->level_cap[l], n * sizeof st->lvl_cap[0]);
    for (unsigned a = 0; a < st->n_lvl_moved; a++) {
        unsigned di = st->lvl_moved[a];

        st->lvl_khz[di] = dom_level_khz(st, in, di, l);
        st->lvl_cap[di] = st->lvl_khz[di] == st->level_khz[l][di]
                          ? st->level_cap[l][di]
                          : pol_dom_capacity_at(&st->m->domains[di],
                                                st->lvl_khz[di]);
    }
    if (l < MAX_LEVELS) {
        memcpy(st->lc_khz[l], st->lvl_khz, n * sizeof st->lvl_khz[0]);
        memcpy(st->lc_cap[l], st->lvl_cap, n * sizeof st->lvl_cap[0]);
        st->lc_gen[l] = st->gen;
    }
}
