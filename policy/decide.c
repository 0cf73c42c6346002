/* policy/decide.c -- pol_decide(): one snapshot in, one target plan out.
 *
 * This is the single owner of power policy.  It (1) gives performance and
 * latency-critical VMs physical cores of their own at full speed with
 * shallow idle, (2) lets every other managed VM share one set of active
 * cores (the "pool"), sized by the aggregate demand of the whole set with
 * statistical multiplexing rather than by per-vCPU peaks, (3) chooses the
 * number of pool cores and the frequency level of their domains by the
 * energy estimate of energy.c among the feasible candidates (EAS-style),
 * (4) applies hysteresis (spread at once, pack in steps no faster than
 * the dwell time, lower the frequency only with a margin, change a plan
 * only for a real gain) so allowed sets change only when the pool does,
 * and (5) parks the rest in their deepest idle state or offline.  The
 * host kernel balances vCPU threads inside the sets this produces.  All
 * memory is allocated in pol_state_create(); the estimator, its constants
 * and the algorithm are described in docs/policy.md. */

#include <config.h>

#include "policy/policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"

#define NO_CORE 0xffff
#define MAX_LEVELS 64

/* Estimator constants; the reasoning is in docs/policy.md. */
#define POOL_Z 2.0            /* Sigmas of aggregate 1 s demand covered. */
#define DOWN_MARGIN_PCT 10    /* Extra demand a smaller pool or a lower
                               * level must also hold. */
#define GAIN_PPM 10000        /* A feasible plan is only replaced for an
                               * estimated saving of 1 % of the power
                               * without the platform's. */
#define BIG_STAY_PCT 25       /* An own-core vCPU returns to the pool
                               * below 75 % of the pool's thread. */
#define RISE_READY_DIV 2      /* Last ready > spread/2: decide again soon. */

enum vm_class {
    C_UNMANAGED,
    C_EXCLUSIVE,             /* Own cores. */
    C_PACKED,
};

struct pol_state {
    const struct pol_model *m;
    struct pol_config cfg;
    size_t max_vcpus;

    /* Topology, derived once from the model. */
    unsigned n_cores;
    uint16_t core_cpu[POL_MAX_CPUS][POL_MAX_SMT]; /* Siblings, ascending. */
    uint8_t core_nsib[POL_MAX_CPUS];
    uint16_t core_dom[POL_MAX_CPUS];
    uint16_t core_of_cpu[POL_MAX_CPUS];          /* CPU -> core index. */
    uint16_t core_order[POL_MAX_CPUS];  /* Most efficient domains first,
                                         * then core id. */
    /* Frequency levels: fractions (ppm of nominal capacity) at which
     * some domain has an operating point, ascending; and per domain and
     * level the lowest non-turbo point reaching it. */
    unsigned n_levels;
    uint32_t level_ppm[MAX_LEVELS];
    uint8_t (*level_opp)[MAX_LEVELS];    /* [n_domains] */

    /* Hysteresis. */
    bool have_prev;
    unsigned k_prev;                 /* Active cores in the packed pool. */
    unsigned l_prev;                 /* Frequency level of the pool. */
    uint64_t last_pack_ns;
    uint64_t last_shrink_ns;         /* Last pool shrink (0 none). */
    uint64_t dwell_ns;               /* Current packing dwell. */
    uint64_t interval_ns;
    uint64_t prev_hash;
    bool race[POL_MAX_DOMAINS];          /* Scratch: race_to_idle() chose
                                         * this domain's point. */

    /* Per-decision scratch (no allocation in pol_decide). */
    uint8_t core_use[POL_MAX_CPUS];      /* 0 free, 1 own, 2 fixed. */
    uint32_t core_fixed[POL_MAX_CPUS];   /* Unmanaged load on the core. */
    uint16_t pool[POL_MAX_CPUS];         /* Packed-pool cores in order. */
    uint8_t pool_nt[POL_MAX_CPUS];       /* Usable threads per pool core. */
    unsigned n_pool, n_forced;
    uint32_t busy_ppm[POL_MAX_CPUS];
    struct trim_key {                    /* trim_pool()'s raise order. */
        double u;                        /* Measured load / capacity. */
        unsigned i;                      /* Index in its candidates. */
    } trim_by[POL_MAX_CPUS];
    uint32_t dom_floor[POL_MAX_DOMAINS];
    bool dom_max[POL_MAX_DOMAINS];
    bool dom_act[POL_MAX_DOMAINS];
    uint32_t lvl_khz[POL_MAX_DOMAINS];   /* Scratch for one level. */
    uint32_t lvl_cap[POL_MAX_DOMAINS];
    /* Rows of level_fill() computed in this decision (lc_gen == gen). */
    uint64_t gen;
    uint64_t lc_gen[MAX_LEVELS];
    uint32_t lc_khz[MAX_LEVELS][POL_MAX_DOMAINS];
    uint32_t lc_cap[MAX_LEVELS][POL_MAX_DOMAINS];
    int8_t lat_limit[POL_MAX_CPUS];      /* Per CPU, from latency bounds. */
    struct pol_plan *tmp;                /* Candidate plans. */

    /* Aggregate demand of the pool (capacity units). */
    double d_up;                         /* Must fit now. */
    double d_down;                       /* Must fit to pack / lower. */
    double d_avg;                        /* Expected load (energy). */
    uint32_t r_max;                      /* Largest one-vCPU need. */
    unsigned k_up[MAX_LEVELS], k_down[MAX_LEVELS];
    unsigned n_big[MAX_LEVELS];          /* Own-core vCPUs per level. */
    uint32_t thr[MAX_LEVELS];            /* Slowest pool thread. */
    uint32_t big_khz[POL_MAX_DOMAINS];   /* Scratch: own-core needs. */
    size_t n_bigc;                       /* Candidates for own cores. */
    uint32_t *bigc;                      /* [max_vcpus] vCPU indices. */
    uint16_t *big_core;                  /* [max_vcpus] per candidate. */
    float *vr, *vavg, *vvar, *vlast;     /* [max_vcpus] per vCPU need,
                                          * inflated avg and variance,
                                          * last sample. */
    uint8_t *prev_big;                   /* [max_vcpus] had own core. */
    uint16_t *big_prev;                  /* [max_vcpus] that core. */
    uint64_t *big_since;                 /* [max_vcpus] since when. */
    float *vslow;                        /* [max_vcpus] slow need. */
    uint64_t now;
    uint8_t taken[POL_MAX_CPUS];         /* Pool cores given as own. */
    unsigned big_end;                    /* End of the compact range. */
    bool pkg_on[POL_MAX_PKGS];           /* Packages awake with it. */
    uint32_t thr_sorted[POL_MAX_CPUS];   /* Scratch: thread capacities. */
    float *need_sorted;                  /* [max_vcpus] scratch: sorted
                                          * needs (threads_hold(), or
                                          * evaluate() with est_points). */
    bool est_points;                     /* Scratch: evaluate() puts pool
                                          * cores at the per-core points
                                          * of their share (top_pool()). */
    uint32_t nom_cap[POL_MAX_DOMAINS];   /* One thread at nominal. */

    uint8_t *vm_class;                   /* [max_vcpus] per VM. */
    uint8_t *vm_reason;
    uint32_t *vm_lat;                    /* Latency bound, 0 none. */
    uint16_t *excl_core;                 /* Per vCPU own core or NO_CORE. */
    uint16_t *prev_core;                 /* Last decision's own core. */
    uint32_t *prev_key;
};

void
pol_config_default(struct pol_config *c)
{
    memset(c, 0, sizeof *c);
    c->headroom_pct = 20;
    c->powersave_headroom_pct = 10;
    c->spread_ready_ppm = 50000;
    c->pack_dwell_ns = UINT64_C(30000000000);
    c->warmup_samples = 3;
    c->min_interval_ns = UINT64_C(1000000000);
    c->max_interval_ns = UINT64_C(10000000000);
    c->allow_offline = false;
    c->use_turbo = false;
    c->max_vcpus = 4096;
}

void
pol_state_destroy(struct pol_state *st)
{
    if (!st) {
        return;
    }
    pol_plan_destroy(st->tmp);
    free(st->level_opp);
    free(st->vm_class);
    free(st->vm_reason);
    free(st->vm_lat);
    free(st->excl_core);
    free(st->prev_core);
    free(st->prev_key);
    free(st->bigc);
    free(st->big_core);
    free(st->vr);
    free(st->vavg);
    free(st->vvar);
    free(st->vlast);
    free(st->prev_big);
    free(st->big_prev);
    free(st->big_since);
    free(st->vslow);
    free(st->need_sorted);
    free(st);
}

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
static bool
same_type(const struct pol_domain *a, const struct pol_domain *b)
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
               && !same_type(&m->domains[rep[t]], &m->domains[di])) {
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
static bool
level_ge(const struct pol_state *st, unsigned a, unsigned b)
{
    for (unsigned di = 0; di < st->m->n_domains; di++) {
        if (st->level_opp[di][a] < st->level_opp[di][b]) {
            return false;
        }
    }
    return true;
}

/* Levels and, per domain, the operating point of each level. */
static void
build_levels(struct pol_state *st)
{
    const struct pol_model *m = st->m;

    if (build_levels_hetero(st)) {
        return;
    }
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

struct pol_state *
pol_state_create(const struct pol_model *m, const struct pol_config *c)
{
    struct pol_state *st;
    size_t n;
    uint32_t eff[POL_MAX_CPUS];

    if (!m || !m->n_cpus || m->n_cpus > POL_MAX_CPUS || !m->n_domains) {
        return NULL;
    }
    st = calloc(1, sizeof *st);
    if (!st) {
        return NULL;
    }
    st->m = m;
    if (c) {
        st->cfg = *c;
    } else {
        pol_config_default(&st->cfg);
    }
    if (!st->cfg.max_vcpus) {
        st->cfg.max_vcpus = 4096;
    }
    if (st->cfg.headroom_pct > 90) {
        st->cfg.headroom_pct = 90;
    }
    if (st->cfg.powersave_headroom_pct > 90) {
        st->cfg.powersave_headroom_pct = 90;
    }
    if (st->cfg.max_interval_ns < st->cfg.min_interval_ns) {
        st->cfg.max_interval_ns = st->cfg.min_interval_ns;
    }
    n = st->max_vcpus = st->cfg.max_vcpus;
    st->tmp = pol_plan_create(0, 0);
    st->level_opp = calloc(m->n_domains, sizeof *st->level_opp);
    st->vm_class = calloc(n, 1);
    st->vm_reason = calloc(n, 1);
    st->vm_lat = calloc(n, sizeof *st->vm_lat);
    st->excl_core = calloc(n, sizeof *st->excl_core);
    st->prev_core = calloc(n, sizeof *st->prev_core);
    st->prev_key = calloc(n, sizeof *st->prev_key);
    st->bigc = calloc(n, sizeof *st->bigc);
    st->big_core = calloc(n, sizeof *st->big_core);
    st->vr = calloc(n, sizeof *st->vr);
    st->vavg = calloc(n, sizeof *st->vavg);
    st->vvar = calloc(n, sizeof *st->vvar);
    st->vlast = calloc(n, sizeof *st->vlast);
    st->prev_big = calloc(n, sizeof *st->prev_big);
    st->big_prev = calloc(n, sizeof *st->big_prev);
    st->big_since = calloc(n, sizeof *st->big_since);
    st->vslow = calloc(n, sizeof *st->vslow);
    st->need_sorted = calloc(n, sizeof *st->need_sorted);
    if (!st->bigc || !st->big_core || !st->vr || !st->vavg || !st->vvar
        || !st->vlast || !st->prev_big || !st->big_prev
        || !st->need_sorted || !st->big_since || !st->vslow) {
        pol_state_destroy(st);
        return NULL;
    }
    if (!st->tmp || !st->level_opp || !st->vm_class || !st->vm_reason
        || !st->vm_lat || !st->excl_core || !st->prev_core
        || !st->prev_key) {
        pol_state_destroy(st);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        st->prev_core[i] = st->big_prev[i] = NO_CORE;
    }
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];

        st->nom_cap[di] = d->opps[d->nominal_opp < d->n_opps
                                  ? d->nominal_opp : d->n_opps - 1].capacity;
    }
    /* Physical cores in CPU order; siblings share cpu_core. */
    for (unsigned cpu = 0; cpu < m->n_cpus; cpu++) {
        unsigned first = m->cpu_core[cpu] < m->n_cpus ? m->cpu_core[cpu]
                                                      : cpu;
        unsigned k;

        if (first == cpu || first > cpu) {
            k = st->n_cores++;
            st->core_nsib[k] = 0;
            st->core_dom[k] = m->cpu_domain[cpu];
        } else {
            k = st->core_of_cpu[first];
        }
        st->core_of_cpu[cpu] = (uint16_t) k;
        if (st->core_nsib[k] < POL_MAX_SMT) {
            st->core_cpu[k][st->core_nsib[k]++] = (uint16_t) cpu;
        }
    }
    /* Pool order: cheapest work first (busy power per capacity at the
     * lowest point: LITTLE before big), then core id, so on a homogeneous
     * host the lowest-numbered cores wake first and the highest park
     * first. Insertion sort, once. */
    for (unsigned k = 0; k < st->n_cores; k++) {
        const struct pol_domain *d = &m->domains[st->core_dom[k]];
        unsigned i = k;

        eff[k] = d->opps[0].capacity
                 ? (uint32_t) ((uint64_t) d->opps[0].busy_mw * 1024
                               / d->opps[0].capacity) : UINT32_MAX;
        while (i > 0 && eff[st->core_order[i - 1]] > eff[k]) {
            st->core_order[i] = st->core_order[i - 1];
            i--;
        }
        st->core_order[i] = (uint16_t) k;
    }
    build_levels(st);
    st->interval_ns = st->cfg.min_interval_ns;
    st->dwell_ns = st->cfg.pack_dwell_ns;
    return st;
}

static uint32_t
pct_of(uint32_t v, uint32_t pct)
{
    return (uint32_t) ((uint64_t) v * pct / 100);
}

static bool
active_until(uint64_t until, uint64_t now)
{
    return until && until > now;
}

/* The domain's package index (bounded). */
static unsigned
core_pkg(const struct pol_state *st, unsigned k)
{
    const struct pol_domain *d = &st->m->domains[st->core_dom[k]];

    return d->pkg < POL_MAX_PKGS ? d->pkg : 0;
}

/* Adds the usable CPUs of core 'k' to 'set'. */
static void
core_cpus(const struct pol_state *st, unsigned k, const struct cpuset *usable,
          struct cpuset *set)
{
    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        if (cpuset_has(usable, st->core_cpu[k][i])) {
            cpuset_set(set, st->core_cpu[k][i]);
        }
    }
}

/* First usable CPU of core 'k' (its first CPU if none is usable). */
static unsigned
core_first_usable(const struct pol_state *st, unsigned k,
                  const struct cpuset *usable)
{
    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        if (cpuset_has(usable, st->core_cpu[k][i])) {
            return st->core_cpu[k][i];
        }
    }
    return st->core_cpu[k][0];
}

static unsigned
core_usable_threads(const struct pol_state *st, unsigned k,
                    const struct cpuset *usable)
{
    unsigned n = 0;

    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        n += cpuset_has(usable, st->core_cpu[k][i]);
    }
    return n;
}

/* Hands own cores to VM 'v': its previous cores when still free, the
 * rest from the package with the fewest free cores that still holds
 * them all (best fit), else from any package in order.  Returns false
 * (and takes nothing) when there are not enough free cores. */
static bool
assign_exclusive(struct pol_state *st, const struct pol_input *in,
                 const struct cpuset *usable, size_t v)
{
    const struct pol_vm *vm = &in->vms[v];
    unsigned free_per_pkg[POL_MAX_PKGS] = { 0 };
    unsigned n_free = 0, need = 0;
    int best = -1;

    for (unsigned k = 0; k < st->n_cores; k++) {
        if (!st->core_use[k] && core_usable_threads(st, k, usable)) {
            free_per_pkg[core_pkg(st, k)]++;
            n_free++;
        }
    }
    if (vm->n_vcpus > n_free) {
        return false;
    }
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint32_t i = vm->first_vcpu + j;
        uint32_t key = vm->id * 2654435761u ^ in->vcpus[i].idx;
        uint16_t k = st->prev_core[i];

        st->excl_core[i] = NO_CORE;
        if (st->prev_key[i] == key && k != NO_CORE && k < st->n_cores
            && !st->core_use[k] && core_usable_threads(st, k, usable)) {
            st->excl_core[i] = k;
            st->core_use[k] = 1;
            free_per_pkg[core_pkg(st, k)]--;
        } else {
            need++;
        }
    }
    for (unsigned p = 0; p < st->m->n_pkgs && p < POL_MAX_PKGS; p++) {
        if (free_per_pkg[p] >= need
            && (best < 0 || free_per_pkg[p] < free_per_pkg[best])) {
            best = (int) p;
        }
    }
    for (uint32_t j = 0; j < vm->n_vcpus && need; j++) {
        uint32_t i = vm->first_vcpu + j;

        if (st->excl_core[i] != NO_CORE) {
            continue;
        }
        for (int pass = best < 0 ? 1 : 0; pass < 2; pass++) {
            unsigned k;

            for (k = 0; k < st->n_cores; k++) {
                if (!st->core_use[k] && core_usable_threads(st, k, usable)
                    && (pass || (int) core_pkg(st, k) == best)) {
                    break;
                }
            }
            if (k < st->n_cores) {
                st->excl_core[i] = (uint16_t) k;
                st->core_use[k] = 1;
                need--;
                break;
            }
        }
    }
    return true;
}

/* Frequency of domain 'di' at level 'l' for the pool: the level's point,
 * under the thermal cap, raised to a VM's floor; nominal (or turbo) for
 * a boost or the override. */
static uint32_t
level_khz(const struct pol_state *st, const struct pol_input *in,
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

/* Fills st->lvl_khz / lvl_cap (one thread) for every domain at 'l'.
 * A level's row depends only on this decision's floors, caps and boosts,
 * so it is computed once per decision and copied after that (evaluate()
 * runs ~2 x levels times). */
static void
level_fill(struct pol_state *st, const struct pol_input *in, unsigned l)
{
    size_t n = st->m->n_domains;

    if (l < MAX_LEVELS && st->lc_gen[l] == st->gen) {
        memcpy(st->lvl_khz, st->lc_khz[l], n * sizeof st->lvl_khz[0]);
        memcpy(st->lvl_cap, st->lc_cap[l], n * sizeof st->lvl_cap[0]);
        return;
    }
    for (unsigned di = 0; di < n; di++) {
        st->lvl_khz[di] = level_khz(st, in, di, l);
        st->lvl_cap[di] = pol_dom_capacity_at(&st->m->domains[di],
                                              st->lvl_khz[di]);
    }
    if (l < MAX_LEVELS) {
        memcpy(st->lc_khz[l], st->lvl_khz, n * sizeof st->lvl_khz[0]);
        memcpy(st->lc_cap[l], st->lvl_cap, n * sizeof st->lvl_cap[0]);
        st->lc_gen[l] = st->gen;
    }
}

/* Capacity pool core 'i' offers the packed set at the filled level. */
static uint32_t
pool_core_cap(const struct pol_state *st, unsigned i)
{
    unsigned kc = st->pool[i];
    uint32_t tc = st->lvl_cap[st->core_dom[kc]];
    uint32_t cc = st->pool_nt[i] > 1 ? pct_of(tc, st->m->smt_capacity_pct)
                                     : tc;

    return cc > st->core_fixed[kc] ? cc - st->core_fixed[kc] : 0;
}

/* Smallest pool prefix holding 'dem' in aggregate with a thread of at
 * least 'r' capacity (n_pool + 1 if none does), at the filled level. */
static unsigned
min_pool(const struct pol_state *st, double dem, uint32_t r)
{
    double cum = 0;
    bool big = r == 0;
    unsigned k = st->n_forced;

    for (unsigned i = 0; i < st->n_pool; i++) {
        cum += pool_core_cap(st, i);
        big |= st->lvl_cap[st->core_dom[st->pool[i]]] >= r;
        if (i + 1 >= k && cum >= dem && big) {
            return i + 1 > k ? i + 1 : k;
        }
    }
    if (dem <= 0 && big) {
        return k;
    }
    return st->n_pool + 1;
}

/* Whether packed vCPU 'i' gets a core of its own at level 'l': its need
 * exceeds the slowest pool thread there (by BIG_STAY_PCT less if it had
 * one last time, so noise does not move it back and forth). */
static bool
is_big(const struct pol_state *st, uint32_t i, unsigned l)
{
    double t = st->thr[l];

    if (st->prev_big[i]) {
        /* Back to the pool only when the minutes-scale need is below
         * 75 % of the thread and the vCPU has had its core for the
         * dwell time: the short average's noise moves it out (fast,
         * protects its work) but never back in. */
        return st->vslow[i] > t * (100 - BIG_STAY_PCT) / 100
               || st->now - st->big_since[i] < st->dwell_ns;
    }
    return st->vr[i] > t;
}

/* Lowest frequency of domain 'di' whose thread holds 'r' (nominal if
 * none does), with the floors and caps of level_khz(). */
static uint32_t
need_khz(const struct pol_state *st, const struct pol_input *in,
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

/* The part of an estimate a plan can change: without the constant
 * platform power, so the 1 % gain rule means 1 % of what the policy
 * controls (on a 2-CPU host with a 20 W platform, halving the cores'
 * power was "0.2 %" and never taken). */
static uint64_t
ctl_mw(const struct pol_state *st, uint32_t mw)
{
    return mw > st->m->platform_mw ? mw - st->m->platform_mw : 0;
}

static int
cmp_float_desc(const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;

    return x < y ? 1 : x > y ? -1 : 0;
}

static int
cmp_u32_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

    return x < y ? 1 : x > y ? -1 : 0;
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

/* Lowest non-turbo point of domain 'd', at most 'top_khz', whose core
 * holds 'need' in all and 'need_thr' on one thread ('gain' = capacity
 * factor of the core's usable threads together); 'top_khz' if none. */
static uint32_t
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
 * the core alone in its frequency domain (trim_pool(), and evaluate()'s
 * estimate of it). */
static bool
trim_ok(const struct pol_state *st, const struct pol_input *in,
        unsigned kc, unsigned di)
{
    return in->cpu_busy_ppm && !in->override_performance && !st->dom_max[di]
           && cpuset_count(&st->m->domains[di].cpus) == st->core_nsib[kc];
}

/* Whether a pool of 'k' cores leaves a core for each vCPU that needs
 * one of its own at level 'l' (every candidate, kept plans included). */
static bool
own_cores_fit(const struct pol_state *st, unsigned k, unsigned l)
{
    return k + st->n_big[l] <= st->n_pool;
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

/* Builds the plan for 'k' pool cores at level 'l' into 'p' (active set,
 * frequencies, idle limits, per-CPU busy estimate at the expected load)
 * and returns its estimated power.  With st->est_points, each pool core
 * of its own frequency domain is estimated at the point trim_pool()
 * would give an even share of the load (an estimate only: the final
 * plan is built without it, and trim_pool() sets the points from what
 * each core measured). */
static uint32_t
evaluate(struct pol_state *st, const struct pol_input *in,
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
        }
    }
    for (unsigned i = 0; i < k; i++) {
        core_cpus(st, st->pool[i], usable, &p->active);
        st->dom_act[st->core_dom[st->pool[i]]] = true;
        cum += pool_core_cap(st, i);
    }
    /* vCPUs too big for the pool's level: a core each after the pool,
     * at the lowest point that holds them. */
    memset(st->big_khz, 0, m->n_domains * sizeof st->big_khz[0]);
    memset(st->taken, 0, st->n_pool);
    {
        unsigned nb = 0;

        for (size_t j = 0; j < st->n_bigc; j++) {
            nb += is_big(st, st->bigc[j], l);
        }
        /* Previous cores are kept inside the compact range right after
         * the pool, or in a package that range keeps awake anyway (same
         * core type): a core further out would keep a second package
         * or cluster awake. */
        st->big_end = k + nb < st->n_pool ? k + nb : st->n_pool;
        memset(st->pkg_on, 0, sizeof st->pkg_on);
        for (unsigned q = 0; q < st->big_end; q++) {
            st->pkg_on[core_pkg(st, st->pool[q])] = true;
        }
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        uint32_t i = st->bigc[j];
        unsigned b = NO_CORE, fast = NO_CORE;

        st->big_core[j] = NO_CORE;
        if (!is_big(st, i, l)) {
            continue;
        }
        /* Its previous core when still outside the pool prefix and able
         * to hold it (stable identity: no pin change), else the first
         * core after the prefix whose nominal thread holds it (LITTLE
         * cores cannot take a vCPU that needs a big one), else the
         * fastest free one. */
        for (unsigned q = k; q < st->n_pool; q++) {
            unsigned kc = st->pool[q];
            uint32_t nc = top_cap(st, in, st->core_dom[kc]);

            if (st->taken[q]) {
                continue;
            }
            if (kc == st->big_prev[i] && nc >= st->vr[i]
                && (q < st->big_end
                    || (st->pkg_on[core_pkg(st, kc)] && st->m->n_pkgs > 1
                        && same_type(&st->m->domains[st->core_dom[kc]],
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
        if (b == NO_CORE) {
            b = fast;
        }
        if (b == NO_CORE) {
            continue;
        }
        st->taken[b] = 1;
        {
            unsigned kc = st->pool[b];
            unsigned di = st->core_dom[kc];
            uint32_t f = need_khz(st, in, di, (uint32_t) st->vr[i]);


            st->big_core[j] = (uint16_t) kc;
            core_cpus(st, kc, usable, &p->active);
            if (f > st->big_khz[di]) {
                st->big_khz[di] = f;
            }
        }
    }
    /* Frequencies: pool and own-core domains at the level (own cores'
     * domains are at max through dom_max), the rest at the lowest point
     * where managed. */
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];
        bool managed = false;

        CPUSET_FOREACH (c, &d->cpus) {
            if (cpuset_has(&in->managed, (unsigned) c)) {
                managed = true;
                break;
            }
        }
        if (!managed) {
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
    /* Idle limits per CPU of awake cores. */
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        const struct pol_domain *d = &m->domains[st->core_dom[kc]];
        bool act = false;

        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            act |= cpuset_has(&p->active, st->core_cpu[kc][s]);
        }
        if (!act) {
            continue;
        }
        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            unsigned c = st->core_cpu[kc][s];
            int lim = -1;

            if (cpuset_has(&in->managed, c)) {
                lim = st->lat_limit[c];
                if (in->override_performance || st->core_use[kc] == 1) {
                    int sh = d->n_idle >= 2 ? 1 : 0;

                    lim = lim < 0 || sh < lim ? sh : lim;
                }
            }
            if (lim >= (int) d->n_idle - 1) {
                lim = -1;
            }
            p->idle_limit[c] = (int8_t) lim;
        }
    }
    /* With est_points: the pool's vCPUs too big for the lowest point,
     * largest first, one per core (trim_pool() holds each core's
     * busiest thread). */
    if (st->est_points) {
        for (size_t j = 0; j < st->n_bigc; j++) {
            if (st->big_core[j] == NO_CORE) {
                st->need_sorted[n_need++] = st->vr[st->bigc[j]];
            }
        }
        qsort(st->need_sorted, n_need, sizeof st->need_sorted[0],
              cmp_float_desc);
    }
    /* Busy estimate: the expected pool load shared by capacity (the
     * kernel balances inside the set), each core's share on its first
     * thread, then its sibling; fixed load on its own cores. */
    for (unsigned i = 0; i < st->n_pool; i++) {
        unsigned kc = st->pool[i], di = st->core_dom[kc];
        /* Pool domains run at the filled level: its capacity is known. */
        uint32_t tc = p->dom_freq_khz[di] == st->lvl_khz[di]
                      ? st->lvl_cap[di]
                      : pol_dom_capacity_at(&m->domains[di],
                                            p->dom_freq_khz[di]);
        double left = st->core_fixed[kc];

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
            double t = s ? (double) tc * (m->smt_capacity_pct - 100) / 100
                         : tc;
            double u;

            if (!cpuset_has(usable, c) || t <= 0) {
                continue;
            }
            u = left < t ? left : t;
            st->busy_ppm[c] = (uint32_t) (u * 1e6 / t);
            left -= u;
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint16_t kc = st->excl_core[i];

        if (kc != NO_CORE && st->vm_class[in->vcpus[i].vm] == C_EXCLUSIVE) {
            unsigned c = core_first_usable(st, kc, usable);
            uint32_t cap = pol_model_capacity_at(m, c,
                               p->dom_freq_khz[st->core_dom[kc]]);
            uint64_t u = cap ? (uint64_t) in->vcpus[i].load.avg_cap
                               * 1000000 / cap : 0;

            st->busy_ppm[c] = (uint32_t) (u > 1000000 ? 1000000 : u);
        }
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        uint16_t kc = st->big_core[j];

        if (kc != NO_CORE) {
            unsigned c = core_first_usable(st, kc, usable);
            uint32_t cap = pol_model_capacity_at(m, c,
                               p->dom_freq_khz[st->core_dom[kc]]);
            uint64_t u = cap ? (uint64_t) in->vcpus[st->bigc[j]].load.avg_cap
                               * 1000000 / cap : 0;

            st->busy_ppm[c] = (uint32_t) (u > 1000000 ? 1000000 : u);
        }
    }
    return pol_energy_power_mw(m, p, st->busy_ppm);
}

/* Turbo for a lone core (docs/policy.md, "Turbo"): with use_turbo, a
 * core that is the only awake core of its package and alone in its
 * frequency domain runs at the point, from its planned one up to the top
 * turbo point, that serves a unit of work for the least energy, counting
 * the package's (and cluster's) extra power while the core is busy: the
 * sooner it is done, the sooner they sleep (race to idle).  Turbo is
 * taken only when the model says it pays; on the shipped models it does
 * not.  Never under a thermal cap, the override or a floor below. */
static void
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
            || cpuset_count(&d->cpus) != st->core_nsib[kc]
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

/* Capacity core 'kc' offers at 'khz': one thread, times
 * smt_capacity_pct when two or more of its threads are usable. */
static double
core_cap_at(const struct pol_state *st, const struct cpuset *usable,
            unsigned kc, uint32_t khz)
{
    const struct pol_domain *d = &st->m->domains[st->core_dom[kc]];
    unsigned nt = 0;
    double c = pol_dom_capacity_at(d, khz);

    for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
        nt += cpuset_has(usable, st->core_cpu[kc][s]);
    }
    return nt >= 2 ? c * st->m->smt_capacity_pct / 100.0 : c;
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

/* Per-core frequency for packed VMs' cores (docs/policy.md, "Per-core
 * points").  The pool's level assumes the kernel spreads the packed set
 * evenly; at the 1 s scale it does not (threads stay where they woke),
 * and a misfit's own core is sized from its vCPU's minutes-scale need.
 * So each such core that is alone in its frequency domain runs at the
 * lowest point holding its own measured load with the pool's headroom
 * (schedutil's 1.25 x util for the default 20 %), never above the level,
 * never below a floor.  A core saturated at a trimmed point measures its
 * full capacity and is raised at the next decision, and a core whose
 * load fell is lowered at once (no margin).  Only with measured per-CPU
 * busy time, not under the override, not for a domain with a boost
 * (dom_max). */
static bool
trim_pool(struct pol_state *st, const struct pol_input *in,
          const struct cpuset *usable, unsigned k, double budget,
          struct pol_plan *p)
{
    bool any = false;
    const struct pol_model *m = st->m;
    double g = 100.0 / (100 - st->cfg.headroom_pct);
    uint32_t top_of[POL_MAX_DOMAINS];
    uint16_t cand[POL_MAX_CPUS];
    unsigned n = 0;
    double total = 0;

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
        total += core_cap_at(st, usable, kc, p->dom_freq_khz[di]);
    }

    for (unsigned i = 0; i < n; i++) {
        unsigned kc = cand[i], di = st->core_dom[kc];
        const struct pol_domain *d = &m->domains[di];
        double w = 0, tmax = 0, one = 0, gain, cap;
        unsigned nt = 0;
        uint32_t top = p->dom_freq_khz[di], prev, tc;
        bool known = true;

        if (!trim_ok(st, in, kc, di) || !top || st->race[di]) {
            continue;
        }
        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            unsigned c = st->core_cpu[kc][s];
            uint32_t b = in->cpu_busy_ppm[c];
            double x;

            if (!cpuset_has(usable, c)) {
                continue;
            }
            if (b == UINT32_MAX) {
                known = false;
                break;
            }
            tc = pol_model_capacity_at(m, c, in->cpu_ran_khz
                                             ? in->cpu_ran_khz[c] : 0);
            x = (b > 1000000 ? 1000000 : b) / 1e6 * tc;
            one = tc > one ? tc : one;
            w += x;
            tmax = x > tmax ? x : tmax;
            nt++;
        }
        if (!known || !nt) {
            continue;
        }
        gain = nt >= 2 ? m->smt_capacity_pct / 100.0 : 1.0;
        /* The threads' busy time counts a thread's whole capacity, but
         * a core whose threads are busy at once delivers only the SMT
         * gain over one thread.  Without knowing the overlap, the most
         * work busy fractions summing to s (in threads) can be is s
         * threads' worth up to one thread and one thread plus the
         * gain's share of the rest beyond it (the threads overlap no
         * more than they must).  The plain sum counted two saturated
         * threads as two threads' worth and kept every core whose
         * sibling had work one point or more too fast (Bitbrains at
         * 220 vCPUs per host: +2 W of 380). */
        if (nt >= 2 && w > one) {
            w = one + (w - one) * (gain - 1.0) / (nt - 1);
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
        cap = core_cap_at(st, usable, kc, prev);
        total -= core_cap_at(st, usable, kc, top) - cap;
        st->trim_by[i].u = w / cap;
        if (prev < top) {
            /* The energy estimate's busy shares at the lower point. */
            double r = (double) pol_dom_capacity_at(d, top)
                       / pol_dom_capacity_at(d, prev);

            for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
                unsigned c = st->core_cpu[kc][s];
                double b = st->busy_ppm[c] * r;

                st->busy_ppm[c] = (uint32_t) (b > 1e6 ? 1e6 : b);
            }
        }
        p->dom_freq_khz[di] = prev;
    }
    /* Over budget: raise trimmed cores one point at a time, the busiest
     * for its point first (its vCPUs are the likeliest to run short
     * there; an idle core raised first only waits faster), round after
     * round, until the pool holds it again. */
    qsort(st->trim_by, n, sizeof st->trim_by[0], cmp_trim_key);
    for (bool raised = true; total < budget && raised;) {
        raised = false;
        for (unsigned t = 0; t < n && total < budget; t++) {
            unsigned kc = cand[st->trim_by[t].i], di = st->core_dom[kc];
            const struct pol_domain *d = &m->domains[di];
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
    for (unsigned i = 0; i < n; i++) {
        unsigned di = st->core_dom[cand[i]];

        any |= p->dom_freq_khz[di] < top_of[di];
    }
    return any;
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
    mw = evaluate(st, in, usable, k, l, st->tmp);
    wide_mw = evaluate(st, in, usable, kw, l, st->tmp);
    st->est_points = false;
    return ctl_mw(st, wide_mw) * 1000000
           < ctl_mw(st, mw) * (1000000 - GAIN_PPM) ? kw : k;
}

/* Per level: the slowest pool thread, the vCPUs that need more (a core
 * each), and the smallest pool that holds the rest now (k_up) and with
 * the packing margin (k_down).  's_full', 's_var', 's_last' are the
 * inflated sums over all packed vCPUs. */
static void
level_table(struct pol_state *st, const struct pol_input *in,
            double s_full, double s_var, double s_last, bool any_packed)
{
    for (unsigned l = 0; l < st->n_levels; l++) {
        double a = s_full, var = s_var, last = s_last, up;
        unsigned nb = 0;

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
        st->n_big[l] = nb;
        st->k_up[l] = min_pool(st, up, 0);
        st->k_down[l] = min_pool(st, up * (100 + DOWN_MARGIN_PCT) / 100, 0);
        if (!any_packed && st->k_up[l] > st->n_pool) {
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

/* FNV-1a over the parts of a plan that become actions, a word at a
 * time. */
static uint64_t
plan_hash(const struct pol_model *m, const struct pol_plan *p)
{
    uint64_t h = UINT64_C(1469598103934665603);
    /* Only the words and entries the model's CPUs and domains use: the
     * rest is zero in every plan, and hashing all 1024 CPUs' words for
     * every vCPU was a sixth of pol_decide()'s time. */
    int words = (int) ((m->n_cpus + 63) / 64);
    unsigned ncpu = (m->n_cpus + 7) / 8 * 8;

    words = words < 1 ? 1 : words > CPUSET_WORDS ? CPUSET_WORDS : words;
    ncpu = ncpu > POL_MAX_CPUS ? POL_MAX_CPUS : ncpu;
    for (int i = 0; i < words; i++) {
        h = (h ^ p->active.w[i]) * UINT64_C(1099511628211);
        h = (h ^ p->offline.w[i]) * UINT64_C(1099511628211);
    }
    for (unsigned d = 0; d < m->n_domains && d < POL_MAX_DOMAINS; d++) {
        h = (h ^ p->dom_freq_khz[d]) * UINT64_C(1099511628211);
    }
    for (unsigned c = 0; c < ncpu; c += 8) {
        uint64_t w;

        memcpy(&w, &p->idle_limit[c], sizeof w);
        h = (h ^ w) * UINT64_C(1099511628211);
    }
    for (size_t i = 0; i < p->n_vcpus; i++) {
        for (int j = 0; j < words; j++) {
            h = (h ^ p->vcpu_allowed[i].w[j]) * UINT64_C(1099511628211);
        }
    }
    return h;
}

static int
check_input(const struct pol_state *st, const struct pol_input *in,
            const struct pol_plan *plan)
{
    if (in->n_vms > plan->max_vms || in->n_vcpus > plan->max_vcpus
        || in->n_vms > st->max_vcpus || in->n_vcpus > st->max_vcpus) {
        return -ENOSPC;
    }
    if ((in->n_vms && !in->vms) || (in->n_vcpus && !in->vcpus)) {
        return -EINVAL;
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        if (in->vcpus[i].vm >= in->n_vms) {
            return -EINVAL;
        }
    }
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];

        if (vm->first_vcpu > in->n_vcpus
            || vm->n_vcpus > in->n_vcpus - vm->first_vcpu) {
            return -EINVAL;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            if (in->vcpus[vm->first_vcpu + j].vm != v) {
                return -EINVAL;
            }
        }
    }
    return 0;
}

int
pol_decide(struct pol_state *st, const struct pol_input *in,
           struct pol_plan *plan)
{
    const struct pol_model *m = st->m;
    const struct pol_config *cfg = &st->cfg;
    struct cpuset usable, all, pool_set;
    uint64_t now = in->now_ns;
    bool override = in->override_performance;
    bool any_managed = false, any_never_offline = false, unstable = false;
    bool spread = false, any_packed = false;
    unsigned k, l;
    double s_avg = 0, s_var = 0, s_last = 0, s_full = 0, s_recent = 0;
    uint32_t thr_lo = 0;
    size_t n_run = 0;
    int err;

    err = check_input(st, in, plan);
    if (err) {
        return err;
    }
    st->now = now;
    st->gen++;                    /* Level rows of earlier decisions go. */
    cpuset_zero(&all);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&all, c);
    }
    cpuset_and(&usable, &in->managed, &in->online);
    cpuset_and(&usable, &usable, &all);
    for (size_t v = 0; v < in->n_vms; v++) {
        if (!in->vms[v].unmanaged && in->vms[v].n_vcpus) {
            any_managed = true;
            any_never_offline |= in->vms[v].policy.never_offline;
        }
    }
    if (any_managed && cpuset_empty(&usable)) {
        return -EINVAL;
    }

    /* 1. Classes, latency bounds, frequency floors. */
    memset(st->core_use, 0, sizeof st->core_use);
    memset(st->core_fixed, 0, sizeof st->core_fixed);
    memset(st->dom_floor, 0, sizeof st->dom_floor);
    memset(st->dom_max, 0, sizeof st->dom_max);
    memset(st->lat_limit, -1, sizeof st->lat_limit);
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool lat = active_until(vm->hints.latency_until_ns, now);

        st->vm_lat[v] = vm->policy.latency_us;
        if (lat && vm->hints.latency_us
            && (!st->vm_lat[v] || vm->hints.latency_us < st->vm_lat[v])) {
            st->vm_lat[v] = vm->hints.latency_us;
        }
        if (vm->unmanaged) {
            st->vm_class[v] = C_UNMANAGED;
            st->vm_reason[v] = POL_R_UNMANAGED;
        } else if (override || vm->policy.kind == POL_PERFORMANCE || lat) {
            st->vm_class[v] = C_EXCLUSIVE;
            st->vm_reason[v] = override ? POL_R_OVERRIDE
                               : vm->policy.kind == POL_PERFORMANCE
                               ? POL_R_PERFORMANCE : POL_R_LATENCY_HINT;
        } else {
            st->vm_class[v] = C_PACKED;
            st->vm_reason[v] = POL_R_PACKED;
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        st->excl_core[i] = NO_CORE;
    }

    /* 2. Unmanaged load stays on its fixed CPUs. */
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        struct cpuset fx;
        uint64_t sum = 0;
        unsigned n;

        if (st->vm_class[v] != C_UNMANAGED) {
            continue;
        }
        cpuset_and(&fx, &vm->fixed, &all);
        n = cpuset_count(&fx);
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            sum += in->vcpus[vm->first_vcpu + j].load.avg_cap;
        }
        CPUSET_FOREACH (c, &fx) {
            unsigned kc = st->core_of_cpu[c];

            st->core_fixed[kc] += (uint32_t) (sum / n);
            if (cpuset_has(&usable, (unsigned) c) && !st->core_use[kc]) {
                st->core_use[kc] = 2;
            }
        }
    }

    /* 3. Own cores: performance first, then latency hints, then (under
     * override) everyone else if they all fit. */
    for (int pass = 0; pass < 3; pass++) {
        size_t want = 0, have = 0;

        if (pass == 2) {
            for (size_t v = 0; v < in->n_vms; v++) {
                if (st->vm_reason[v] == POL_R_OVERRIDE) {
                    want += in->vms[v].n_vcpus;
                }
            }
            for (unsigned kc = 0; kc < st->n_cores; kc++) {
                have += !st->core_use[kc]
                        && core_usable_threads(st, kc, &usable);
            }
        }
        for (size_t v = 0; v < in->n_vms; v++) {
            const struct pol_vm *vm = &in->vms[v];
            bool mine = st->vm_class[v] == C_EXCLUSIVE
                        && (pass == 0 ? vm->policy.kind == POL_PERFORMANCE
                            : pass == 1 ? st->vm_reason[v]
                                          == POL_R_LATENCY_HINT
                            : vm->policy.kind != POL_PERFORMANCE
                              && st->vm_reason[v] == POL_R_OVERRIDE);

            if (!mine) {
                continue;
            }
            if ((pass == 2 && want > have)
                || !assign_exclusive(st, in, &usable, v)) {
                /* Not enough cores: share the pool (documented). */
                st->vm_class[v] = C_PACKED;
            }
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint32_t v = in->vcpus[i].vm;

        uint32_t key = in->vms[v].id * 2654435761u ^ in->vcpus[i].idx;

        st->prev_core[i] = st->vm_class[v] == C_EXCLUSIVE ? st->excl_core[i]
                                                          : NO_CORE;
        if (st->prev_key[i] != key || st->vm_class[v] != C_PACKED) {
            st->prev_big[i] = 0;
            st->big_prev[i] = NO_CORE;
        }
        st->prev_key[i] = key;
    }

    /* 4. The packed pool: cores with unmanaged load first, then packages
     * already awake for own cores, then the rest, in the efficiency /
     * core-id order of pol_state_create().  (A package under a thermal
     * cap keeps its place: light vCPUs lose nothing on its capped cores;
     * vCPUs that need more become misfits and get own cores that can
     * give it, see top_cap().) */
    {
        bool pkg_awake[POL_MAX_PKGS] = { false };

        st->n_pool = st->n_forced = 0;
        for (unsigned kc = 0; kc < st->n_cores; kc++) {
            if (st->core_use[kc] && core_usable_threads(st, kc, &usable)) {
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
                        && core_usable_threads(st, kc, &usable)) {
                        st->pool[st->n_pool++] = (uint16_t) kc;
                    }
                }
            }
        }
        for (unsigned i = 0; i < st->n_pool; i++) {
            st->pool_nt[i] = (uint8_t) core_usable_threads(st, st->pool[i],
                                                           &usable);
        }
    }

    /* 5. Aggregate demand of the packed set (docs/policy.md):
     *   need = sum(avg_i g_i) + z sqrt(sum(var_i g_i^2)) + full cores,
     * g_i = 100 / (100 - headroom of its VM); a vCPU warming up, or of a
     * VM whose ready time is above spread_ready_ppm, counts as one full
     * core (without headroom: it cannot use more); an idle hint counts
     * 0.  The last measured aggregate, with headroom, is a floor (fast
     * feedback when the load steps up).  Per vCPU, a thread must offer
     * avg_i g_i, and more than it had if it was saturated. */
    st->r_max = 0;
    st->n_bigc = 0;
    for (unsigned i = 0; i < st->n_pool; i++) {
        const struct pol_domain *d = &m->domains[st->core_dom[st->pool[i]]];
        uint32_t c = (uint32_t) d->opps[0].capacity
                     * (100 - DOWN_MARGIN_PCT) / 100;

        thr_lo = i == 0 || c < thr_lo ? c : thr_lo;
    }
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool save = vm->policy.kind == POL_POWERSAVE
                    || active_until(vm->hints.batch_until_ns, now);
        uint32_t h = save ? cfg->powersave_headroom_pct : cfg->headroom_pct;
        double g = 100.0 / (100 - h);
        bool idle = active_until(vm->hints.idle_until_ns, now);
        bool ready = false, warm = false;

        if (st->vm_class[v] != C_PACKED) {
            continue;
        }
        any_packed |= vm->n_vcpus > 0;
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            const struct pol_load *ld = &in->vcpus[vm->first_vcpu + j].load;

            ready |= ld->ready_ppm > cfg->spread_ready_ppm;
            if (ld->last_ready_ppm > cfg->spread_ready_ppm / RISE_READY_DIV
                && ld->last_ready_ppm > ld->ready_ppm) {
                unstable = true;              /* Rising: look again soon. */
            }
        }
        ready &= !idle;
        n_run += idle ? 0 : vm->n_vcpus;
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            uint32_t i = vm->first_vcpu + j;
            const struct pol_load *ld = &in->vcpus[i].load;
            double r;

            if (idle) {
                st->vr[i] = st->vavg[i] = st->vvar[i] = st->vlast[i] = 0;
                st->vslow[i] = 0;
                continue;
            }
            s_avg += ld->avg_cap;
            if (ld->n_samples < cfg->warmup_samples || ready) {
                warm |= ld->n_samples < cfg->warmup_samples;
                st->vr[i] = st->vavg[i] = st->vlast[i] = POL_CAPACITY_SCALE;
                st->vslow[i] = POL_CAPACITY_SCALE;
                st->vvar[i] = 0;
            } else {
                r = (ld->slow_cap > ld->avg_cap ? ld->slow_cap
                                                : ld->avg_cap) * g;
                if (r > POL_CAPACITY_SCALE) {
                    r = POL_CAPACITY_SCALE;
                }
                st->vr[i] = (float) r;
                st->vslow[i] = (float) (ld->slow_cap * g);
                st->vavg[i] = (float) (ld->avg_cap * g);
                st->vvar[i] = (float) ((double) ld->var_cap2 * g * g);
                st->vlast[i] = (float) (ld->last_cap * g);
            }
            s_full += st->vavg[i];
            s_recent += st->vavg[i] < st->vlast[i] ? st->vavg[i]
                                                   : st->vlast[i];
            s_var += st->vvar[i];
            s_last += st->vlast[i];
            if (st->vr[i] > st->r_max) {
                st->r_max = (uint32_t) st->vr[i];
            }
            if (st->vr[i] > thr_lo) {
                st->bigc[st->n_bigc++] = i;
            }
        }
        if (override) {
            st->vm_reason[v] = POL_R_OVERRIDE;
        } else if (ready) {
            st->vm_reason[v] = POL_R_READY_SPREAD;
            spread = unstable = true;
        } else if (warm) {
            st->vm_reason[v] = POL_R_WARMUP;
        }
        if (active_until(vm->hints.boost_until_ns, now)) {
            unstable = true;
        }
    }
    st->d_avg = s_avg;

    /* Frequency floors, boosts and latency bounds by domain / CPU: a
     * packed VM may use every pool core, so its wishes apply to the
     * domains and CPUs of the pool; own cores take their VM's. */
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool boost = active_until(vm->hints.boost_until_ns, now);
        struct cpuset set;

        cpuset_zero(&set);
        if (st->vm_class[v] == C_EXCLUSIVE) {
            for (uint32_t j = 0; j < vm->n_vcpus; j++) {
                uint16_t kc = st->excl_core[vm->first_vcpu + j];

                if (kc != NO_CORE) {
                    core_cpus(st, kc, &usable, &set);
                    st->dom_max[st->core_dom[kc]] = true;
                }
            }
        } else if (st->vm_class[v] == C_PACKED) {
            if (!vm->policy.min_freq_khz && !boost && !st->vm_lat[v]) {
                continue;
            }
            for (unsigned i = 0; i < st->n_pool; i++) {
                core_cpus(st, st->pool[i], &usable, &set);
            }
        } else {
            continue;
        }
        CPUSET_FOREACH (c, &set) {
            unsigned di = m->cpu_domain[c];

            if (vm->policy.min_freq_khz > st->dom_floor[di]) {
                st->dom_floor[di] = vm->policy.min_freq_khz;
            }
            if (boost) {
                st->dom_max[di] = true;
            }
            if (st->vm_lat[v]) {
                int lim = (int) pol_model_idle_for_latency(m, (unsigned) c,
                                                           st->vm_lat[v]);

                if (st->lat_limit[c] < 0 || lim < st->lat_limit[c]) {
                    st->lat_limit[c] = (int8_t) lim;
                }
            }
        }
    }

    /* 6. The level table (candidates' sizes). */
    level_table(st, in, s_full, s_var, s_last, any_packed);

    /* 7. Choice by estimated energy among feasible candidates. */
    if (override) {
        k = st->n_pool;
        l = st->n_levels - 1;
    } else {
        unsigned kp = st->have_prev && st->k_prev <= st->n_pool
                      ? st->k_prev : st->n_pool;
        unsigned lp = st->have_prev && st->l_prev < st->n_levels
                      ? st->l_prev : st->n_levels - 1;
        /* The previous plan is kept only while it is feasible: its pool
         * holds the load, and every vCPU that needs a core of its own at
         * its level can still get one beside the pool.  (Without the
         * second half, a pool of every core at a low level was kept
         * while vCPUs saturated at it grew into misfits with no core
         * left: they stayed at the low level for as long as the keep's
         * estimate, which leaves them in the pool, was the cheapest.) */
        bool keep_ok = st->have_prev && !spread && kp >= st->k_up[lp]
                       && own_cores_fit(st, kp, lp);
        uint32_t best_mw = UINT32_MAX, keep_mw = UINT32_MAX;
        unsigned kfloor = 0, kd_min = st->n_pool + 1;
        bool dwell = !st->have_prev
                     || (now >= st->last_pack_ns
                         && now - st->last_pack_ns >= st->dwell_ns);

        k = kp;
        l = lp;
        for (unsigned j = 0; j < st->n_levels; j++) {
            if (st->k_down[j] < kd_min) {
                kd_min = st->k_down[j];
            }
        }
        if (keep_ok) {
            /* Smaller pools only after the dwell time, and by at most
             * half the way to the smallest one that fits with margin. */
            kfloor = kp;
            if (dwell && kd_min < kp) {
                unsigned step = (kp - kd_min + 1) / 2;

                kfloor = kp - (step ? step : 1);
            }
            keep_mw = evaluate(st, in, &usable, kp, lp, st->tmp);
            best_mw = keep_mw;
        } else if (st->have_prev && !spread) {
            kfloor = kp < st->n_pool ? kp : st->n_pool;  /* Grow only. */
        } else if (spread) {
            /* Ready time: at least a quarter more capacity at once. */
            kfloor = kp + (kp + 3) / 4;
            if (kfloor > st->n_pool) {
                kfloor = st->n_pool;
            }
        }
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
            if (spread && !level_ge(st, j, lp)) {
                continue;                /* Never slower while waiting. */
            }
            mw = evaluate(st, in, &usable, kc, j, st->tmp);
            /* From a feasible plan: a smaller pool when it costs no
             * more (within GAIN_PPM, 1 %: consolidation frees cores),
             * anything else for a real saving only. */
            if (keep_ok ? (kc < kp ? ctl_mw(st, mw) * 1000000
                                     <= ctl_mw(st, keep_mw)
                                        * (1000000 + GAIN_PPM)
                                     && (mw < best_mw
                                         || (k == kp && l == lp))
                                   : ctl_mw(st, mw) * 1000000
                                     < ctl_mw(st, keep_mw)
                                       * (1000000 - GAIN_PPM)
                                     && mw < best_mw)
                        : mw < best_mw) {
                best_mw = mw;
                k = kc;
                l = j;
            }
        }
        if (best_mw == UINT32_MAX) {
            /* Nothing fits the 1 s concurrency estimate: every pool
             * core awake (the most threads there are), at the cheapest
             * level that still serves the expected (minutes-scale)
             * throughput with the margin and gives every vCPU a thread
             * holding its need; the top level if none does. */
            double thr_need = s_full
                              * (100 + DOWN_MARGIN_PCT) / 100;

            k = st->n_pool;
            l = st->n_levels - 1;
            for (size_t j = 0; j < st->n_bigc; j++) {
                st->need_sorted[j] = st->vr[st->bigc[j]];
            }
            qsort(st->need_sorted, st->n_bigc, sizeof st->need_sorted[0],
                  cmp_float_desc);
            for (unsigned j = 0; j < st->n_levels; j++) {
                double cap = 0;
                uint32_t mw;

                if (spread && !level_ge(st, j, lp)) {
                    continue;
                }
                level_fill(st, in, j);
                for (unsigned i = 0; i < st->n_pool; i++) {
                    cap += pool_core_cap(st, i);
                }
                if (cap < thr_need || !threads_hold(st, in, &usable)) {
                    continue;        /* Throughput, or one vCPU's need. */
                }
                mw = evaluate(st, in, &usable, k, j, st->tmp);
                if (mw < best_mw) {
                    best_mw = mw;
                    l = j;
                }
            }
        } else {
            /* Settle: what the next decision would do from here with the
             * same input (no pack step, margin, 1 % gain), done now, so
             * the same input twice gives no second change. */
            for (int it = 0; it < 4; it++) {
                unsigned k0 = k, l0 = l;
                uint32_t cur;

                /* With the own cores of this choice remembered, as the
                 * next decision will see them. */
                evaluate(st, in, &usable, k, l, st->tmp);
                for (size_t j = 0; j < st->n_bigc; j++) {
                    if (!st->prev_big[st->bigc[j]]
                        && st->big_core[j] != NO_CORE) {
                        st->big_since[st->bigc[j]] = now;
                    }
                    st->prev_big[st->bigc[j]] = st->big_core[j] != NO_CORE;
                    st->big_prev[st->bigc[j]] = st->big_core[j];
                }
                level_table(st, in, s_full, s_var, s_last, any_packed);
                cur = best_mw = evaluate(st, in, &usable, k, l, st->tmp);

                for (unsigned j = 0; j < st->n_levels; j++) {
                    unsigned kc = st->k_down[j] > k0 ? st->k_down[j] : k0;
                    uint32_t mw;

                    if (st->k_down[j] > st->n_pool
                        || (j == l0 && kc == k0)
                        || !own_cores_fit(st, kc, j)) {
                        continue;
                    }
                    mw = evaluate(st, in, &usable, kc, j, st->tmp);
                    if (ctl_mw(st, mw) * 1000000
                        < ctl_mw(st, cur) * (1000000 - GAIN_PPM)
                        && mw < best_mw) {
                        best_mw = mw;
                        k = kc;
                        l = j;
                    }
                }
                if (k == k0 && l == l0) {
                    break;
                }
            }
        }
        k = top_pool(st, in, &usable, k, l, n_run);
        /* The dwell backs off when the load keeps undoing packing: a
         * growth soon (4 dwells) after a shrink doubles it, up to 8 x
         * pack_dwell_ns; a shrink that is not undone for 8 x brings it
         * back by half.  Trace loads that step every few minutes then
         * see one resize per step, not a shrink/grow cycle. */
        if (st->have_prev && k > kp && !spread && st->last_shrink_ns
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
        }
        if (st->have_prev && k < kp) {
            st->last_pack_ns = now;
        }
        if (!st->have_prev || k > kp || spread) {
            st->last_pack_ns = now;      /* Dwell restarts on growth. */
        }
    }

    /* 8. The final plan.  Every packed VM shares the pool's cores (the
     * kernel balances inside; statistical multiplexing is what the
     * aggregate estimate counts on), so its allowed set changes only
     * when the pool does. */
    plan->n_vms = in->n_vms;
    plan->n_vcpus = in->n_vcpus;
    evaluate(st, in, &usable, k, l, plan);
    race_to_idle(st, in, &usable, plan);
    /* A core below the level is a bet on its recent load: decide every
     * min_interval while one is open, so a core that saturates is raised
     * within one period (schedutil re-evaluates every few ms). */
    unstable |= trim_pool(st, in, &usable, k, s_recent, plan);
    cpuset_zero(&pool_set);
    for (unsigned i = 0; i < k && i < st->n_pool; i++) {
        core_cpus(st, st->pool[i], &usable, &pool_set);
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        if (st->big_core[j] != NO_CORE && !st->prev_big[st->bigc[j]]) {
            st->big_since[st->bigc[j]] = now;
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        st->excl_core[i] = st->vm_class[in->vcpus[i].vm] == C_EXCLUSIVE
                           ? st->excl_core[i] : NO_CORE;
        if (st->vm_class[in->vcpus[i].vm] == C_PACKED) {
            st->prev_big[i] = 0;
            st->big_prev[i] = NO_CORE;
        }
    }
    for (size_t j = 0; j < st->n_bigc; j++) {
        if (st->big_core[j] != NO_CORE) {
            st->excl_core[st->bigc[j]] = st->big_core[j];
            st->prev_big[st->bigc[j]] = 1;
            st->big_prev[st->bigc[j]] = st->big_core[j];
        }
    }
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        struct cpuset set, own;

        cpuset_zero(&set);
        cpuset_zero(&own);
        if (st->vm_class[v] == C_UNMANAGED) {
            set = vm->fixed;
            own = set;
        } else if (st->vm_class[v] == C_PACKED) {
            set = pool_set;
            if (cpuset_empty(&set)) {
                /* Every core is owned: share the active set. */
                set = plan->active;
            }
            if (cpuset_empty(&set)) {
                set = usable;
                cpuset_or(&plan->active, &plan->active, &usable);
            }
            own = set;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            uint32_t i = vm->first_vcpu + j;

            plan->vcpu_vm[i] = (uint32_t) v;
            if (st->vm_class[v] == C_EXCLUSIVE) {
                struct cpuset one;

                cpuset_zero(&one);
                cpuset_set(&one, core_first_usable(st, st->excl_core[i],
                                                   &usable));
                plan->vcpu_allowed[i] = one;
                cpuset_or(&own, &own, &one);
            } else if (st->vm_class[v] == C_PACKED
                       && st->excl_core[i] != NO_CORE) {
                /* Too big for the pool's level: its own core. */
                struct cpuset one;

                cpuset_zero(&one);
                cpuset_set(&one, core_first_usable(st, st->excl_core[i],
                                                   &usable));
                plan->vcpu_allowed[i] = one;
                cpuset_or(&own, &own, &one);
            } else {
                plan->vcpu_allowed[i] = set;
            }
        }
        if (st->vm_class[v] == C_EXCLUSIVE) {
            plan->vm_emulator[v] = cpuset_empty(&pool_set) ? own : pool_set;
        } else {
            plan->vm_emulator[v] = own;
        }
        plan->vm_reason[v] = st->vm_reason[v];
    }
    /* Idle limits of CPUs that are not awake. */
    for (unsigned c = 0; c < m->n_cpus; c++) {
        if (!cpuset_has(&plan->active, c)) {
            plan->idle_limit[c] = -1;
        }
    }
    /* Parked cores: deepest idle, or offline where allowed. */
    if (cfg->allow_offline && !any_never_offline) {
        cpuset_andnot(&plan->offline, &usable, &plan->active);
        cpuset_clr(&plan->offline, 0);
        for (unsigned kc = 0; kc < st->n_cores; kc++) {
            if (st->core_fixed[kc]) {
                for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
                    cpuset_clr(&plan->offline, st->core_cpu[kc][s]);
                }
            }
        }
    }
    plan->est_power_mw = pol_energy_power_mw(m, plan, st->busy_ppm);

    /* 9. Adaptive interval: back to the minimum after any change or
     * while something is pending (pack step, rising ready time, boost);
     * doubled up to the maximum while the plan stays the same. */
    {
        uint64_t h = plan_hash(m, plan);

        if (!st->have_prev || h != st->prev_hash || unstable) {
            st->interval_ns = cfg->min_interval_ns;
        } else {
            st->interval_ns = st->interval_ns * 2 > cfg->max_interval_ns
                              ? cfg->max_interval_ns : st->interval_ns * 2;
            if (st->interval_ns < cfg->min_interval_ns) {
                st->interval_ns = cfg->min_interval_ns;
            }
        }
        st->prev_hash = h;
        plan->next_interval_ns = st->interval_ns;
    }
    st->k_prev = k;
    st->l_prev = l;
    st->have_prev = true;
    return 0;
}

unsigned
pol_state_active_cores(const struct pol_state *st)
{
    return st ? st->k_prev : 0;
}
