/* sim/lowerbound.c -- Convex-hull lower bound on power.
 *
 * pol_energy_power_mw() charges, per physical core, busy * opp power +
 * idle * (power of an idle state no deeper than the deepest); per domain
 * busy_dom * cluster power of the point + the rest at cluster_idle or
 * more; per package busy_pkg * uncore_active + the rest at uncore_idle
 * or more, where busy_dom and busy_pkg (the chance any core is busy) are
 * at least the mean busy fraction of their cores.  Replacing them by that
 * mean makes the whole cost linear in each core's busy time, so the
 * shared cluster/uncore cost folds into each core's busy power:
 *   busy'_j = busy_mw_j + (cluster_j - cluster_floor) / cores_in_domain
 *                       + (uncore_active - uncore_idle) / cores_in_pkg.
 * Per core, the cheapest power for throughput x is then the lower convex
 * hull of (0, idle floor) and (capacity_j * SMT gain, busy'_j) for every
 * point j, turbo included (time-sharing).  The idle floor is the
 * cheapest idle state's power for every core (offline cores wait in the
 * deepest state, policy/energy.c).  A sum of convex costs under one throughput
 * constraint is minimised greedily by ascending hull slope.  Every step
 * only lowers the cost, so the result is a valid (if not tight) bound. */

#include <config.h>

#include "sim/lowerbound.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct lb_seg {
    double slope;             /* mW per capacity unit. */
    double len;               /* Capacity units. */
};

struct lb_model {
    size_t n_segs;
    struct lb_seg *segs;      /* Sorted by slope. */
    double floor_mw;          /* Everything idle / offline. */
    double total_cap;
};

static int
cmp_seg(const void *a, const void *b)
{
    const struct lb_seg *x = a, *y = b;

    return x->slope < y->slope ? -1 : x->slope > y->slope;
}

static double
cluster_at(const struct pol_domain *d, unsigned o)
{
    return d->opps[o].cluster_mw ? d->opps[o].cluster_mw
                                 : d->cluster_active_mw;
}

struct lb_model *
lb_create(const struct pol_model *m)
{
    struct lb_model *lb = calloc(1, sizeof *lb);
    static unsigned threads[POL_MAX_CPUS];
    static int core_cpu[POL_MAX_CPUS];
    unsigned dom_cores[POL_MAX_DOMAINS] = { 0 };
    unsigned pkg_cores[POL_MAX_PKGS] = { 0 };
    double dom_floor[POL_MAX_DOMAINS];
    unsigned n_cores = 0;

    if (!lb) {
        abort();
    }
    memset(threads, 0, sizeof threads);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned k = m->cpu_core[c];
        if (!threads[k]++) {
            core_cpu[k] = (int) c;
            dom_cores[m->cpu_domain[c]]++;
            pkg_cores[m->domains[m->cpu_domain[c]].pkg]++;
        }
        if (k + 1 > n_cores) {
            n_cores = k + 1;
        }
    }
    lb->segs = calloc((size_t) n_cores * (POL_MAX_OPPS + 1),
                      sizeof *lb->segs);
    if (!lb->segs) {
        abort();
    }
    lb->floor_mw = m->platform_mw;
    for (unsigned p = 0; p < m->n_pkgs; p++) {
        lb->floor_mw += m->pkgs[p].uncore_idle_mw;
    }
    for (unsigned d = 0; d < m->n_domains; d++) {
        const struct pol_domain *dm = &m->domains[d];
        double f = dm->cluster_idle_mw;

        for (unsigned o = 0; o < dm->n_opps; o++) {
            f = cluster_at(dm, o) < f ? cluster_at(dm, o) : f;
        }
        dom_floor[d] = f;
        lb->floor_mw += f;
    }
    for (unsigned k = 0; k < n_cores; k++) {
        unsigned c, d;
        const struct pol_domain *dm;
        const struct pol_pkg *pk;
        double gain, x0 = 0, y0, px[POL_MAX_OPPS], py[POL_MAX_OPPS];
        double pkg_add;
        unsigned n = 0;

        if (!threads[k]) {
            continue;
        }
        c = (unsigned) core_cpu[k];
        d = m->cpu_domain[c];
        dm = &m->domains[d];
        pk = &m->pkgs[dm->pkg];
        gain = threads[k] >= 2 && m->smt_capacity_pct > 100
               ? m->smt_capacity_pct / 100.0 : 1.0;
        pkg_add = pk->uncore_active_mw > pk->uncore_idle_mw
                  ? ((double) pk->uncore_active_mw - pk->uncore_idle_mw)
                    / pkg_cores[dm->pkg] : 0;
        /* An unused core idles in the cheapest idle state of its
         * domain; offlining it costs the same (an offline CPU waits in
         * the deepest C-state, see policy/energy.c). */
        y0 = 0;
        if (dm->n_idle) {
            y0 = dm->idle[0].power_mw;
            for (unsigned i = 0; i < dm->n_idle; i++) {
                y0 = dm->idle[i].power_mw < y0 ? dm->idle[i].power_mw : y0;
            }
        }
        lb->floor_mw += y0;
        for (unsigned o = 0; o < dm->n_opps; o++) {
            double x = pol_model_capacity_at(m, c, dm->opps[o].freq_khz)
                       * gain;
            double y = dm->opps[o].busy_mw + pkg_add
                       + (cluster_at(dm, o) - dom_floor[d]) / dom_cores[d];

            if (x <= (n ? px[n - 1] : x0)) {
                continue;
            }
            while (n >= 1) {
                double ax = n >= 2 ? px[n - 2] : x0;
                double ay = n >= 2 ? py[n - 2] : y0;
                /* Drop the last point if it is on or above the chord. */
                if ((py[n - 1] - ay) * (x - ax)
                    >= (y - ay) * (px[n - 1] - ax)) {
                    n--;
                } else {
                    break;
                }
            }
            px[n] = x;
            py[n] = y;
            n++;
        }
        for (unsigned i = 0; i < n; i++) {
            double ax = i ? px[i - 1] : x0, ay = i ? py[i - 1] : y0;
            struct lb_seg *s = &lb->segs[lb->n_segs++];

            s->len = px[i] - ax;
            s->slope = (py[i] - ay) / s->len;
        }
        lb->total_cap += n ? px[n - 1] : 0;
    }
    qsort(lb->segs, lb->n_segs, sizeof *lb->segs, cmp_seg);
    return lb;
}

void
lb_destroy(struct lb_model *lb)
{
    if (!lb) {
        return;
    }
    free(lb->segs);
    free(lb);
}

double
lb_power_mw(const struct lb_model *lb, double demand)
{
    double p = lb->floor_mw, left;

    if (demand > lb->total_cap) {
        demand = lb->total_cap;
    }
    left = demand > 0 ? demand : 0;
    for (size_t i = 0; i < lb->n_segs && left > 1e-9; i++) {
        double take = lb->segs[i].len < left ? lb->segs[i].len : left;

        p += take * lb->segs[i].slope;
        left -= take;
    }
    return p;
}
