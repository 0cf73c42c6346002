/* policy/choose.c -- The choice of pool size and level.
 *
 * Candidates (k pool cores, level l) that hold the packed set's demand
 * and leave a core for each misfit are ranked by estimated power
 * (eval.c), EAS-style, with hysteresis (docs/policy.md, "Stability"):
 * the previous plan is kept while it is feasible unless another saves a
 * real share (GAIN_PPM); the pool shrinks only after the dwell time and
 * by at most half the way, grows at once, never runs slower while vCPUs
 * wait; a choice is settled to where the next decision would go with
 * the same input; and the dwell backs off when the load keeps undoing
 * packing. */

#include <config.h>

#include "policy/policy.h"

#include <stdlib.h>

#include "policy/state.h"

static int
cmp_u32_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

    return x < y ? 1 : x > y ? -1 : 0;
}

/* eval_plan()'s estimate for 'k' pool cores at level 'l' (no per-core
 * points), from st->memo when this decision made it already: settle()
 * prices again many of the candidates candidates() did. */
static uint32_t
estimate(struct pol_state *st, const struct pol_input *in, unsigned k,
         unsigned l)
{
    uint32_t mw;

    for (unsigned i = 0; i < st->n_memo; i++) {
        if (st->memo[i].k == k && st->memo[i].l == l) {
            return st->memo[i].mw;
        }
    }
    mw = eval_plan(st, in, &st->usable, k, l, st->tmp);
    if (st->n_memo < sizeof st->memo / sizeof st->memo[0]) {
        st->memo[st->n_memo++] = (struct pol_memo) { k, l, mw };
    }
    return mw;
}

/* Whether, with every pool core awake at the filled level, the i-th
 * largest per-vCPU need (need_sorted, the candidates for own cores) fits
 * the i-th fastest pool thread: each vCPU can be given a thread that
 * holds it (on big.LITTLE, the vCPUs too big for a LITTLE thread need
 * as many big threads fast enough). */
static bool
threads_hold(struct pol_state *st, const struct pol_input *in,
             const struct cpuset *usable)
{
    unsigned n = 0;

    (void) in;
    for (unsigned i = 0; i < st->n_pool; i++) {
        unsigned kc = st->pool[i];
        uint32_t c = st->lvl_cap[st->core_dom[kc]];

        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            if (cpuset_has(usable, st->core_cpu[kc][s])) {
                st->thr_sorted[n++] = c;
            }
        }
    }
    qsort(st->thr_sorted, n, sizeof st->thr_sorted[0], cmp_u32_desc);
    for (size_t j = 0; j < st->n_bigc && j < n; j++) {
        if (st->need_sorted[j] > st->thr_sorted[j]) {
            return false;
        }
    }
    return true;
}

/* Whether a pool of 'k' cores leaves a core for each vCPU that needs
 * one of its own at level 'l' (every candidate, kept plans included). */
static bool
own_cores_fit(const struct pol_state *st, unsigned k, unsigned l)
{
    return k + st->n_big[l] <= st->n_pool;
}

/* Smallest pool the candidates may have: with a feasible previous plan
 * 'kp' (keep_ok), after the dwell time at most half the way down to the
 * smallest pool that fits with margin at any level; from an infeasible
 * one, no smaller; while vCPUs wait, a quarter more at once. */
static unsigned
pool_floor(const struct pol_state *st, unsigned kp, bool keep_ok)
{
    unsigned kfloor = 0, kd_min = st->n_pool + 1;
    bool dwell = !st->have_prev
                 || (st->now >= st->last_pack_ns
                     && st->now - st->last_pack_ns >= st->dwell_ns);

    for (unsigned j = 0; j < st->n_levels; j++) {
        if (st->k_down[j] < kd_min) {
            kd_min = st->k_down[j];
        }
    }
    if (keep_ok) {
        kfloor = kp;
        if (dwell && kd_min < kp) {
            unsigned step = (kp - kd_min + 1) / 2;

            kfloor = kp - (step ? step : 1);
        }
    } else if (st->have_prev && !st->spread) {
        kfloor = kp < st->n_pool ? kp : st->n_pool;  /* Grow only. */
    } else if (st->spread) {
        /* Ready time: at least a quarter more capacity at once. */
        kfloor = kp + (kp + 3) / 4;
        if (kfloor > st->n_pool) {
            kfloor = st->n_pool;
        }
    }
    return kfloor;
}

/* Ranks the candidates of every level against the previous plan
 * ('kp', 'lp', feasible when 'keep_ok' with power 'keep_mw'); '*k' and
 * '*l' start at the previous plan and end at the best.  Returns the
 * best estimate, UINT32_MAX when nothing is feasible. */
static uint32_t
candidates(struct pol_state *st, const struct pol_input *in, unsigned kp,
           unsigned lp, bool keep_ok, uint32_t keep_mw, unsigned *k,
           unsigned *l)
{
    unsigned kfloor = pool_floor(st, kp, keep_ok);
    uint32_t best_mw = keep_mw;

    for (unsigned j = 0; j < st->n_levels; j++) {
        unsigned kc = keep_ok || st->k_down[j] <= st->n_pool
                      ? st->k_down[j] : st->k_up[j];
        uint32_t mw;

        if (kc > st->n_pool) {
            continue;                /* Infeasible at this level. */
        }
        if (kc < kfloor) {
            kc = kfloor;
        }
        if (!own_cores_fit(st, kc, j)) {
            continue;
        }
        if (keep_ok && kc == kp && j == lp) {
            continue;
        }
        if (st->spread && !level_ge(st, j, lp)) {
            continue;                /* Never slower while waiting. */
        }
        mw = estimate(st, in, kc, j);
        /* From a feasible plan: a smaller pool when it costs no more
         * (within GAIN_PPM, 1 %: consolidation frees cores), anything
         * else for a real saving only. */
        if (keep_ok ? (kc < kp ? ctl_mw(st, mw) * 1000000
                                 <= ctl_mw(st, keep_mw)
                                    * (1000000 + GAIN_PPM)
                                 && (mw < best_mw
                                     || (*k == kp && *l == lp))
                               : ctl_mw(st, mw) * 1000000
                                 < ctl_mw(st, keep_mw)
                                   * (1000000 - GAIN_PPM)
                                 && mw < best_mw)
                    : mw < best_mw) {
            best_mw = mw;
            *k = kc;
            *l = j;
        }
    }
    return best_mw;
}

/* Nothing fits the 1 s concurrency estimate: every pool core awake (the
 * most threads there are), at the cheapest level that still serves the
 * expected (minutes-scale) throughput with the margin and gives every
 * vCPU a thread holding its need; the top level if none does.  Never
 * slower than 'lp' while vCPUs wait. */
static void
fallback(struct pol_state *st, const struct pol_input *in, unsigned lp,
         unsigned *k, unsigned *l)
{
    double thr_need = st->s_full * (100 + DOWN_MARGIN_PCT) / 100;
    uint32_t best_mw = UINT32_MAX;

    *k = st->n_pool;
    *l = st->n_levels - 1;
    misfit_sort_needs(st, false);
    for (unsigned j = 0; j < st->n_levels; j++) {
        double cap = 0;
        uint32_t mw;

        if (st->spread && !level_ge(st, j, lp)) {
            continue;
        }
        level_fill(st, in, j);
        for (unsigned i = 0; i < st->n_pool; i++) {
            cap += pool_core_cap(st, i);
        }
        if (cap < thr_need || !threads_hold(st, in, &st->usable)) {
            continue;        /* Throughput, or one vCPU's need. */
        }
        mw = estimate(st, in, *k, j);
        if (mw < best_mw) {
            best_mw = mw;
            *l = j;
        }
    }
}

/* Settle: what the next decision would do from here with the same
 * input (no pack step, margin, 1 % gain), done now, so the same input
 * twice gives no second change. */
static void
settle(struct pol_state *st, const struct pol_input *in, unsigned *k,
       unsigned *l)
{
    for (int it = 0; it < 4; it++) {
        unsigned k0 = *k, l0 = *l;
        uint32_t cur, best_mw;

        /* With the own cores of this choice remembered, as the next
         * decision will see them (misfit_place() is the part of
         * eval_plan() that picks them; the estimate is not needed).
         * The level table and the estimates change only if they do. */
        misfit_place(st, in, &st->usable, *k < st->n_pool ? *k : st->n_pool,
                     *l, st->tmp);
        if (misfit_remember(st)) {
            pool_table(st, in);
            st->n_memo = 0;
        }
        cur = best_mw = estimate(st, in, *k, *l);

        for (unsigned j = 0; j < st->n_levels; j++) {
            unsigned kc = st->k_down[j] > k0 ? st->k_down[j] : k0;
            uint32_t mw;

            if (st->k_down[j] > st->n_pool || (j == l0 && kc == k0)
                || !own_cores_fit(st, kc, j)) {
                continue;
            }
            mw = estimate(st, in, kc, j);
            if (ctl_mw(st, mw) * 1000000
                < ctl_mw(st, cur) * (1000000 - GAIN_PPM)
                && mw < best_mw) {
                best_mw = mw;
                *k = kc;
                *l = j;
            }
        }
        if (*k == k0 && *l == l0) {
            break;
        }
    }
}

/* Pool size at the top level (docs/policy.md, "Pool size at the top
 * level").  The level table sizes the pool for one frequency on every
 * pool core, so at the top level each extra core only adds power to its
 * estimate, and the choice packs the load onto the fewest cores at the
 * top point.  But there the frequencies are the per-core points'
 * (trim_pool()), and a wider pool gives each core a smaller share and a
 * lower point: on a host dense with vCPUs the packed pool ran most cores
 * at or near the top while spreading would not have.  So at the top
 * level the pool 'k' and the widest useful one (up to one thread per
 * packed vCPU that is not on an own core: a thread beyond that only
 * idles, and a vCPU alone on a core is served at that core's point
 * alone) are compared with each core at the point of its share
 * (est_points), and the wider one is taken for a real saving (GAIN_PPM).
 * 'n_run' = packed vCPUs without an idle hint.  Returns the pool
 * size. */
static unsigned
top_pool(struct pol_state *st, const struct pol_input *in,
         const struct cpuset *usable, unsigned k, unsigned l, size_t n_run)
{
    size_t want = n_run > st->n_big[l] ? n_run - st->n_big[l] : 0, thr = 0;
    unsigned kw = 0, kmax;
    uint32_t mw, wide_mw;

    if (!in->cpu_busy_ppm || in->override_performance
        || l + 1 != st->n_levels || st->n_big[l] >= st->n_pool) {
        return k;
    }
    kmax = st->n_pool - st->n_big[l];
    while (kw < kmax && thr < want) {
        thr += st->pool_nt[kw++];
    }
    if (kw <= k) {
        return k;
    }
    st->est_points = true;
    mw = eval_plan(st, in, usable, k, l, st->tmp);
    wide_mw = eval_plan(st, in, usable, kw, l, st->tmp);
    st->est_points = false;
    return ctl_mw(st, wide_mw) * 1000000
           < ctl_mw(st, mw) * (1000000 - GAIN_PPM) ? kw : k;
}

/* The dwell backs off when the load keeps undoing packing: a growth
 * soon (4 dwells) after a shrink doubles it, up to 8 x pack_dwell_ns; a
 * shrink that is not undone for 8 x brings it back by half.  Trace loads
 * that step every few minutes then see one resize per step, not a
 * shrink/grow cycle.  A spread for ready time or host pressure counts
 * as such a growth: the packed pool made work wait, and packing again
 * after the plain dwell makes it wait again, a pack/spread cycle every
 * few periods.  Only the first growth after a shrink counts (a spread grows
 * for several periods in a row; that is one undone packing).  Then the
 * dwell restarts on any resize, from the previous pool 'kp' to 'k'. */
static void
backoff(struct pol_state *st, unsigned kp, unsigned k)
{
    const struct pol_config *cfg = &st->cfg;
    uint64_t now = st->now;

    if (st->have_prev && k > kp && st->last_shrink_ns
        && st->last_pack_ns == st->last_shrink_ns
        && now - st->last_shrink_ns < 4 * st->dwell_ns) {
        st->dwell_ns = st->dwell_ns * 2 > 8 * cfg->pack_dwell_ns
                       ? 8 * cfg->pack_dwell_ns : st->dwell_ns * 2;
    } else if (st->have_prev && k < kp && st->last_shrink_ns
               && now - st->last_shrink_ns >= 8 * st->dwell_ns) {
        st->dwell_ns = st->dwell_ns / 2 < cfg->pack_dwell_ns
                       ? cfg->pack_dwell_ns : st->dwell_ns / 2;
    }
    if (st->have_prev && k < kp) {
        st->last_shrink_ns = now;
        st->last_pack_ns = now;
    }
    if (!st->have_prev || k > kp || st->spread) {
        st->last_pack_ns = now;      /* Dwell restarts on growth. */
    }
}

void
choose_plan(struct pol_state *st, const struct pol_input *in, unsigned *k,
            unsigned *l)
{
    unsigned kp, lp;
    bool keep_ok;
    uint32_t keep_mw = UINT32_MAX;

    st->n_memo = 0;
    if (in->override_performance) {
        *k = st->n_pool;
        *l = st->n_levels - 1;
        return;
    }
    kp = st->have_prev && st->k_prev <= st->n_pool ? st->k_prev
                                                   : st->n_pool;
    lp = st->have_prev && st->l_prev < st->n_levels ? st->l_prev
                                                    : st->n_levels - 1;
    /* The previous plan is kept only while it is feasible: its pool
     * holds the load, and every vCPU that needs a core of its own at its
     * level can still get one beside the pool.  (Without the second
     * half, a pool of every core at a low level was kept while vCPUs
     * saturated at it grew into misfits with no core left: they stayed
     * at the low level for as long as the keep's estimate, which leaves
     * them in the pool, was the cheapest.) */
    keep_ok = st->have_prev && !st->spread && kp >= st->k_up[lp]
              && own_cores_fit(st, kp, lp);
    *k = kp;
    *l = lp;
    if (keep_ok) {
        keep_mw = estimate(st, in, kp, lp);
    }
    if (candidates(st, in, kp, lp, keep_ok, keep_mw, k, l) == UINT32_MAX) {
        fallback(st, in, lp, k, l);
    } else {
        settle(st, in, k, l);
    }
    *k = top_pool(st, in, &st->usable, *k, *l, st->n_run);
    backoff(st, kp, *k);
}
