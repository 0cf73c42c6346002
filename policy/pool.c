/* policy/pool.c -- The packed pool: its core order and its sizes.
 *
 * Packed VMs share one set of active cores, a prefix of st->pool[]: the
 * kernel balances their vCPU threads inside it.  The order is fixed per
 * decision (cores with unmanaged load, then packages already awake,
 * then the rest, each in the efficiency / core-id order of
 * pol_state_create()); the level table says, per frequency level, how
 * long a prefix holds the packed set's demand (demand.c) now and with
 * the packing margin, and which vCPUs are misfits there. */

#include <config.h>

#include "policy/policy.h"

#include <math.h>

#include "policy/state.h"

/* Smallest pool prefixes, never shorter than the forced cores, holding
 * 'dem[0]' and 'dem[1]' in aggregate at the filled level, into 'k[0]'
 * and 'k[1]' (n_pool + 1 where none does): one pass for both. */
static void
min_pools(const struct pol_state *st, const double dem[2], unsigned k[2])
{
    unsigned kf = st->n_forced, left = 2;
    bool found[2] = { false, false };
    double cum = 0;

    k[0] = k[1] = st->n_pool + 1;
    for (unsigned i = 0; i < st->n_pool && left; i++) {
        cum += pool_core_cap(st, i);
        for (int j = 0; j < 2; j++) {
            if (!found[j] && i + 1 >= kf && cum >= dem[j]) {
                k[j] = i + 1;
                found[j] = true;
                left--;
            }
        }
    }
    for (int j = 0; j < 2; j++) {
        if (!found[j] && dem[j] <= 0) {
            k[j] = kf;
        }
    }
}

void
pool_order(struct pol_state *st)
{
    const struct pol_model *m = st->m;
    const struct cpuset *usable = &st->usable;
    bool pkg_awake[POL_MAX_PKGS] = { false };

    /* A package under a thermal cap keeps its place: light vCPUs lose
     * nothing on its capped cores; vCPUs that need more become misfits
     * and get own cores that can give it (misfit.c). */
    st->n_pool = st->n_forced = 0;
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_use[kc] && core_usable_threads(st, kc, usable)) {
            pkg_awake[core_pkg(st, kc)] = true;
        }
    }
    for (unsigned o = 0; o < st->n_cores; o++) {
        unsigned kc = st->core_order[o];

        if (st->core_use[kc] == 2) {
            st->pool[st->n_pool++] = (uint16_t) kc;
        }
    }
    st->n_forced = st->n_pool;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned q = 0; q < m->n_pkgs && q < POL_MAX_PKGS; q++) {
            if (pkg_awake[q] != !pass) {
                continue;
            }
            for (unsigned o = 0; o < st->n_cores; o++) {
                unsigned kc = st->core_order[o];

                if (!st->core_use[kc] && core_pkg(st, kc) == q
                    && core_usable_threads(st, kc, usable)) {
                    st->pool[st->n_pool++] = (uint16_t) kc;
                }
            }
        }
    }
    for (unsigned i = 0; i < st->n_pool; i++) {
        st->pool_nt[i] = (uint8_t) core_usable_threads(st, st->pool[i],
                                                       usable);
    }
}

void
pool_table(struct pol_state *st, const struct pol_input *in)
{
    for (unsigned l = 0; l < st->n_levels; l++) {
        double a = st->s_full, var = st->s_var, last = st->s_last, up;
        double dem[2];                /* Now, and with the packing margin. */
        unsigned nb = 0, kk[2];

        level_fill(st, in, l);
        st->thr[l] = UINT32_MAX;
        for (unsigned i = 0; i < st->n_pool; i++) {
            uint32_t c = st->lvl_cap[st->core_dom[st->pool[i]]];

            if (c < st->thr[l]) {
                st->thr[l] = c;
            }
        }
        for (size_t j = 0; j < st->n_bigc; j++) {
            uint32_t i = st->bigc[j];

            if (is_big(st, i, l)) {
                nb++;
                a -= st->vavg[i];
                var -= st->vvar[i];
                last -= st->vlast[i];
            }
        }
        up = a + POOL_Z * sqrt(var > 0 ? var : 0);
        if (last > up) {
            up = last;
        }
        dem[0] = up;
        dem[1] = up * (100 + DOWN_MARGIN_PCT) / 100;
        min_pools(st, dem, kk);
        st->n_big[l] = nb;
        st->k_up[l] = kk[0];
        st->k_down[l] = kk[1];
        if (!st->any_packed && st->k_up[l] > st->n_pool) {
            st->k_up[l] = st->k_down[l] = st->n_forced;
        }
        if (st->k_up[l] + nb > st->n_pool) {
            st->k_up[l] = st->n_pool + 1;
        }
        if (st->k_down[l] + nb > st->n_pool) {
            st->k_down[l] = st->n_pool + 1;
        }
        if (l == 0 || up > st->d_up) {
            st->d_up = up;
        }
    }
}
