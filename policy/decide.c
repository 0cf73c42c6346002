/* policy/decide.c -- pol_decide(): one snapshot in, one target plan out.
 *
 * This is the single owner of power policy.  It (1) gives performance and
 * latency-critical VMs physical cores of their own at full speed with
 * shallow idle, (2) packs every other managed VM onto as few cores as the
 * tracked demand needs, choosing the number of active cores and their
 * frequencies by the energy estimate of energy.c among the feasible
 * configurations, (3) applies hysteresis (spread at once, pack one core
 * per dwell time), and (4) parks the rest in their deepest idle state or
 * offline.  The host kernel balances vCPU threads inside the per-VM sets
 * this produces.  All memory is allocated in pol_state_create(); the
 * algorithm is described step by step in docs/energy-model.md. */

#include "policy/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/internal.h"

#define NO_CORE 0xffff

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

    /* Hysteresis. */
    bool have_prev;
    unsigned k_prev;                 /* Active cores in the packed pool. */
    uint64_t last_pack_ns;
    uint64_t interval_ns;
    uint64_t prev_hash;

    /* Per-decision scratch (no allocation in pol_decide). */
    uint8_t core_use[POL_MAX_CPUS];      /* 0 free, 1 own, 2 fixed. */
    uint32_t core_fixed[POL_MAX_CPUS];   /* Unmanaged load on the core. */
    uint16_t pool[POL_MAX_CPUS];         /* Packed-pool cores in order. */
    unsigned n_pool, n_forced;
    uint32_t core_cap[POL_MAX_CPUS];     /* Pool bin capacity at cap freq. */
    uint32_t thread_cap[POL_MAX_CPUS];
    uint32_t bin_used[POL_MAX_CPUS];
    uint32_t busy_ppm[POL_MAX_CPUS];
    uint32_t dom_floor[POL_MAX_DOMAINS];
    bool dom_max[POL_MAX_DOMAINS];
    int8_t lat_limit[POL_MAX_CPUS];      /* Per CPU, from latency bounds. */
    struct pol_plan *tmp;                /* Candidate plans. */

    uint8_t *vm_class;                   /* [max_vcpus] per VM. */
    uint8_t *vm_reason;
    int16_t *vm_pkg;                     /* Package, -1 spans the pool. */
    uint32_t *vm_dem;                    /* Sum of inflated demand. */
    uint32_t *vm_avg;                    /* Sum of tracked average. */
    uint32_t *vm_maxd;                   /* Largest vCPU demand. */
    uint32_t *vm_lat;                    /* Latency bound, 0 none. */
    uint32_t *vm_order;
    uint32_t *dem;                       /* Per vCPU inflated demand. */
    uint32_t *order;                     /* vCPUs by demand. */
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
    free(st->vm_class);
    free(st->vm_reason);
    free(st->vm_pkg);
    free(st->vm_dem);
    free(st->vm_avg);
    free(st->vm_maxd);
    free(st->vm_lat);
    free(st->vm_order);
    free(st->dem);
    free(st->order);
    free(st->excl_core);
    free(st->prev_core);
    free(st->prev_key);
    free(st);
}

struct pol_state *
pol_state_create(const struct pol_model *m, const struct pol_config *c)
{
    struct pol_state *st;
    size_t n;

    if (!m || !m->n_cpus || m->n_cpus > POL_MAX_CPUS) {
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
    n = st->max_vcpus = st->cfg.max_vcpus;
    st->tmp = pol_plan_create(0, 0);
    st->vm_class = calloc(n, 1);
    st->vm_reason = calloc(n, 1);
    st->vm_pkg = calloc(n, sizeof *st->vm_pkg);
    st->vm_dem = calloc(n, sizeof *st->vm_dem);
    st->vm_avg = calloc(n, sizeof *st->vm_avg);
    st->vm_maxd = calloc(n, sizeof *st->vm_maxd);
    st->vm_lat = calloc(n, sizeof *st->vm_lat);
    st->vm_order = calloc(n, sizeof *st->vm_order);
    st->dem = calloc(n, sizeof *st->dem);
    st->order = calloc(n, sizeof *st->order);
    st->excl_core = calloc(n, sizeof *st->excl_core);
    st->prev_core = calloc(n, sizeof *st->prev_core);
    st->prev_key = calloc(n, sizeof *st->prev_key);
    if (!st->tmp || !st->vm_class || !st->vm_reason || !st->vm_pkg
        || !st->vm_dem || !st->vm_avg || !st->vm_maxd || !st->vm_lat
        || !st->vm_order || !st->dem || !st->order || !st->excl_core
        || !st->prev_core || !st->prev_key) {
        pol_state_destroy(st);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        st->prev_core[i] = NO_CORE;
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
    st->interval_ns = st->cfg.min_interval_ns;
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

static int
cmp_desc(const uint32_t *key, uint32_t a, uint32_t b)
{
    if (key[a] != key[b]) {
        return key[a] > key[b] ? -1 : 1;
    }
    return a < b ? -1 : a > b;
}

/* Insertion-free sort helper: qsort needs a context, so sort pairs. */
static void
sort_desc(uint32_t *idx, size_t n, const uint32_t *key)
{
    /* Shell sort: deterministic, no allocation, fast enough for 4096. */
    static const size_t gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

    for (size_t g = 0; g < sizeof gaps / sizeof gaps[0]; g++) {
        size_t gap = gaps[g];

        for (size_t i = gap; i < n; i++) {
            uint32_t t = idx[i];
            size_t j = i;

            while (j >= gap && cmp_desc(key, idx[j - gap], t) > 0) {
                idx[j] = idx[j - gap];
                j -= gap;
            }
            idx[j] = t;
        }
    }
}

/* Lowest non-turbo operating point of 'd' (not above 'cap_khz' unless
 * that is below every point) whose capacity covers 'need'; the highest
 * allowed one if none does. */
static uint32_t
pick_freq(const struct pol_domain *d, uint32_t need, uint32_t cap_khz)
{
    uint32_t f = 0;

    for (unsigned i = 0; i <= d->nominal_opp && i < d->n_opps; i++) {
        if (cap_khz && d->opps[i].freq_khz > cap_khz) {
            break;
        }
        f = d->opps[i].freq_khz;
        if (d->opps[i].capacity >= need) {
            break;
        }
    }
    return f ? f : cap_khz;
}

struct eval {
    unsigned k;               /* Active pool cores. */
    bool final;               /* Fill VM sets too. */
    bool override;
};

/* Builds the plan for 'k' active pool cores into 'p' (frequencies, idle
 * limits, active set, per-CPU busy estimate) and returns its estimated
 * power.  With 'final', also assigns VMs to packages (st->vm_pkg). */
static uint32_t
evaluate(struct pol_state *st, const struct pol_input *in,
         const struct cpuset *usable, const struct eval *e,
         struct pol_plan *p)
{
    const struct pol_model *m = st->m;
    uint64_t pkg_cap[POL_MAX_PKGS] = { 0 }, pkg_load[POL_MAX_PKGS] = { 0 };
    uint64_t pkg_avg[POL_MAX_PKGS] = { 0 };
    uint32_t pkg_maxd[POL_MAX_PKGS] = { 0 };
    uint32_t dom_need[POL_MAX_DOMAINS];
    uint64_t span_load = 0, span_avg = 0, tot_cap = 0, tot_room = 0;
    uint32_t span_maxd = 0;
    unsigned n_pkgs = m->n_pkgs < POL_MAX_PKGS ? m->n_pkgs : POL_MAX_PKGS;

    cpuset_zero(&p->active);
    cpuset_zero(&p->offline);
    memset(p->dom_freq_khz, 0, sizeof p->dom_freq_khz);
    memset(p->idle_limit, -1, sizeof p->idle_limit);
    memset(dom_need, 0, sizeof dom_need);
    memset(st->busy_ppm, 0, sizeof st->busy_ppm);
    for (unsigned k = 0; k < st->n_cores; k++) {
        if (st->core_use[k] == 1) {
            core_cpus(st, k, usable, &p->active);    /* Own cores. */
        }
    }
    for (unsigned i = 0; i < e->k && i < st->n_pool; i++) {
        unsigned k = st->pool[i];

        core_cpus(st, k, usable, &p->active);
        pkg_cap[core_pkg(st, k)] += st->core_cap[k];
        tot_cap += st->core_cap[k];
    }
    /* VMs to packages: worst fit by remaining capacity, biggest first;
     * a VM that fits no single package spans the pool. */
    for (size_t j = 0; j < in->n_vms; j++) {
        uint32_t v = st->vm_order[j];
        int best = -1;
        int64_t room = -1;

        if (st->vm_class[v] != C_PACKED) {
            continue;
        }
        for (unsigned q = 0; q < n_pkgs; q++) {
            int64_t r = (int64_t) pkg_cap[q] - (int64_t) pkg_load[q];

            if (pkg_cap[q] && r >= (int64_t) st->vm_dem[v] && r > room) {
                room = r;
                best = (int) q;
            }
        }
        if (st->vm_dem[v] == 0 && best < 0) {
            for (unsigned q = 0; q < n_pkgs && best < 0; q++) {
                best = pkg_cap[q] ? (int) q : -1;
            }
        }
        st->vm_pkg[v] = (int16_t) best;
        if (best >= 0) {
            pkg_load[best] += st->vm_dem[v];
            pkg_avg[best] += st->vm_avg[v];
            if (st->vm_maxd[v] > pkg_maxd[best]) {
                pkg_maxd[best] = st->vm_maxd[v];
            }
        } else {
            span_load += st->vm_dem[v];
            span_avg += st->vm_avg[v];
            if (st->vm_maxd[v] > span_maxd) {
                span_maxd = st->vm_maxd[v];
            }
        }
    }
    for (unsigned q = 0; q < n_pkgs; q++) {
        tot_room += pkg_cap[q] > pkg_load[q] ? pkg_cap[q] - pkg_load[q] : 0;
    }
    /* Per pool core: its package's load shared by capacity (the kernel
     * balances inside the set), spanning load shared over the pool. */
    for (unsigned i = 0; i < e->k && i < st->n_pool; i++) {
        unsigned k = st->pool[i];
        unsigned q = core_pkg(st, k);
        uint64_t load = 0, avg = 0;
        uint32_t maxd = pkg_maxd[q] > span_maxd ? pkg_maxd[q] : span_maxd;
        unsigned nt = core_usable_threads(st, k, usable);
        uint32_t need, smt = nt > 1 ? m->smt_capacity_pct : 100;

        if (pkg_cap[q]) {
            load = pkg_load[q] * st->core_cap[k] / pkg_cap[q];
            avg = pkg_avg[q] * st->core_cap[k] / pkg_cap[q];
        }
        if (tot_room && pkg_cap[q]) {
            /* Spanning load goes where there is room left. */
            uint64_t room = pkg_cap[q] > pkg_load[q]
                            ? pkg_cap[q] - pkg_load[q] : 0;

            load += span_load * room / tot_room * st->core_cap[k]
                    / pkg_cap[q];
            avg += span_avg * room / tot_room * st->core_cap[k] / pkg_cap[q];
        } else if (tot_cap) {
            load += span_load * st->core_cap[k] / tot_cap;
            avg += span_avg * st->core_cap[k] / tot_cap;
        }
        load += st->core_fixed[k];
        avg += st->core_fixed[k];
        /* Thread capacity needed: the load over the core's SMT
         * throughput, and the largest single vCPU. */
        need = (uint32_t) ((load * 100 + smt - 1) / smt);
        if (maxd > need) {
            need = maxd;
        }
        if (need > dom_need[st->core_dom[k]]) {
            dom_need[st->core_dom[k]] = need;
        }
        /* Tracked average load, kept for the busy estimate below. */
        st->bin_used[k] = (uint32_t) (avg > UINT32_MAX ? UINT32_MAX : avg);
    }
    /* Frequencies per domain. */
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];
        uint32_t cap_khz = in->thermal_cap_khz[di];
        bool any_active = false, any_managed = false;
        uint32_t f;

        CPUSET_FOREACH (c, &d->cpus) {
            any_active |= cpuset_has(&p->active, (unsigned) c);
            any_managed |= cpuset_has(&in->managed, (unsigned) c);
        }
        if (!any_managed) {
            p->dom_freq_khz[di] = 0;
            continue;
        }
        if (!any_active) {
            f = d->opps[0].freq_khz;
        } else if (e->override || st->dom_max[di]) {
            f = pol_dom_max_khz(d, st->cfg.use_turbo);
        } else {
            f = pick_freq(d, dom_need[di], cap_khz);
        }
        if (any_active && st->dom_floor[di] > f) {
            f = st->dom_floor[di];
        }
        if (cap_khz && f > cap_khz) {
            f = cap_khz;
        }
        p->dom_freq_khz[di] = f;
    }
    /* Idle limits and busy estimate per CPU. */
    for (unsigned k = 0; k < st->n_cores; k++) {
        const struct pol_domain *d = &m->domains[st->core_dom[k]];
        uint32_t cap = pol_dom_capacity_at(d, p->dom_freq_khz[st->core_dom[k]]);
        bool act = false;

        for (unsigned s = 0; s < st->core_nsib[k]; s++) {
            unsigned c = st->core_cpu[k][s];

            act |= cpuset_has(&p->active, c);
        }
        for (unsigned s = 0; s < st->core_nsib[k]; s++) {
            unsigned c = st->core_cpu[k][s];
            int lim = -1;

            if (act && cpuset_has(&in->managed, c)) {
                lim = st->lat_limit[c];
                if (e->override || st->core_use[k] == 1) {
                    int sh = d->n_idle >= 2 ? 1 : 0;

                    lim = lim < 0 || sh < lim ? sh : lim;
                }
            }
            if (lim >= (int) d->n_idle - 1) {
                lim = -1;
            }
            p->idle_limit[c] = (int8_t) lim;
        }
        if (!act || !cap) {
            continue;
        }
        if (st->core_use[k] != 1) {
            /* Pool or fixed core: split its average load over threads,
             * first thread first. */
            uint64_t left = st->bin_used[k];

            for (unsigned s = 0; s < st->core_nsib[k]; s++) {
                unsigned c = st->core_cpu[k][s];
                uint64_t tc = s ? pct_of(cap, m->smt_capacity_pct - 100) : cap;
                uint64_t u;

                if (!cpuset_has(usable, c) || !tc) {
                    continue;
                }
                u = left < tc ? left : tc;
                st->busy_ppm[c] = (uint32_t) (u * 1000000 / tc);
                left -= u;
            }
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint16_t k = st->excl_core[i];

        if (k != NO_CORE && st->vm_class[in->vcpus[i].vm] == C_EXCLUSIVE) {
            unsigned c = core_first_usable(st, k, usable);
            uint32_t cap = pol_model_capacity_at(m, c,
                               p->dom_freq_khz[st->core_dom[k]]);
            uint64_t u = cap ? (uint64_t) in->vcpus[i].load.avg_cap
                               * 1000000 / cap : 0;

            st->busy_ppm[c] = (uint32_t) (u > 1000000 ? 1000000 : u);
        }
    }
    return pol_energy_power_mw(m, p, st->busy_ppm);
}

/* FNV-1a over the parts of a plan that become actions. */
static uint64_t
plan_hash(const struct pol_plan *p)
{
    uint64_t h = UINT64_C(1469598103934665603);
    const unsigned char *parts[4] = {
        (const void *) &p->active, (const void *) p->dom_freq_khz,
        (const void *) p->idle_limit, (const void *) p->vcpu_allowed,
    };
    size_t lens[4] = {
        sizeof p->active, sizeof p->dom_freq_khz, sizeof p->idle_limit,
        p->n_vcpus * sizeof *p->vcpu_allowed,
    };

    for (int i = 0; i < 4; i++) {
        for (size_t j = 0; j < lens[i]; j++) {
            h = (h ^ parts[i][j]) * UINT64_C(1099511628211);
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
    unsigned k_ffd = 0, k_star, k;
    uint32_t best_mw = UINT32_MAX;
    uint32_t full_demand;
    size_t n_dem = 0;
    struct eval e;
    int err;

    err = check_input(st, in, plan);
    if (err) {
        return err;
    }
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

        st->prev_core[i] = st->vm_class[v] == C_EXCLUSIVE ? st->excl_core[i]
                                                          : NO_CORE;
        st->prev_key[i] = in->vms[v].id * 2654435761u ^ in->vcpus[i].idx;
    }

    /* 4. The packed pool: cores with unmanaged load first, then packages
     * already awake for own cores, then the rest, cores ascending. */
    {
        bool pkg_awake[POL_MAX_PKGS] = { false };

        st->n_pool = st->n_forced = 0;
        for (unsigned kc = 0; kc < st->n_cores; kc++) {
            if (st->core_use[kc] && core_usable_threads(st, kc, &usable)) {
                pkg_awake[core_pkg(st, kc)] = true;
            }
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
                for (unsigned kc = 0; kc < st->n_cores; kc++) {
                    if (!st->core_use[kc] && core_pkg(st, kc) == q
                        && core_usable_threads(st, kc, &usable)) {
                        st->pool[st->n_pool++] = (uint16_t) kc;
                    }
                }
            }
        }
        for (unsigned i = 0; i < st->n_pool; i++) {
            unsigned kc = st->pool[i];
            const struct pol_domain *d = &m->domains[st->core_dom[kc]];
            uint32_t capf = pol_dom_max_khz(d, false);
            uint32_t tc, cc;
            unsigned nt = core_usable_threads(st, kc, &usable);

            if (in->thermal_cap_khz[st->core_dom[kc]]
                && in->thermal_cap_khz[st->core_dom[kc]] < capf) {
                capf = in->thermal_cap_khz[st->core_dom[kc]];
            }
            tc = pol_dom_capacity_at(d, capf);
            cc = nt > 1 ? pct_of(tc, m->smt_capacity_pct) : tc;
            st->thread_cap[kc] = tc;
            st->core_cap[kc] = cc > st->core_fixed[kc]
                               ? cc - st->core_fixed[kc] : 0;
            st->bin_used[kc] = 0;
        }
    }

    /* 5. Demands of packed vCPUs, inflated by their VM's headroom:
     * demand = (avg + peak) / 2, a whole core while warming up or while
     * the VM waits for CPU, ~0 under an idle hint. */
    full_demand = POL_CAPACITY_SCALE;
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool save = vm->policy.kind == POL_POWERSAVE
                    || active_until(vm->hints.batch_until_ns, now);
        uint32_t h = save ? cfg->powersave_headroom_pct : cfg->headroom_pct;
        bool idle = active_until(vm->hints.idle_until_ns, now);
        bool ready = false, warm = false;

        st->vm_order[v] = (uint32_t) v;
        st->vm_dem[v] = st->vm_avg[v] = st->vm_maxd[v] = 0;
        if (st->vm_class[v] != C_PACKED) {
            continue;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            ready |= in->vcpus[vm->first_vcpu + j].load.ready_ppm
                     > cfg->spread_ready_ppm;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            uint32_t i = vm->first_vcpu + j;
            const struct pol_load *l = &in->vcpus[i].load;
            uint64_t d = ((uint64_t) l->avg_cap + l->peak_cap) / 2;

            if (l->n_samples < cfg->warmup_samples) {
                d = pct_of(full_demand, 100 - h);
                warm = true;
            } else if (ready && !idle) {
                d = pct_of(full_demand, 100 - h);
            } else if (idle) {
                d = 0;
            }
            d = d * 100 / (100 - h);
            if (d > full_demand * 4) {
                d = full_demand * 4;
            }
            st->dem[i] = (uint32_t) d;
            st->order[n_dem++] = i;
            st->vm_dem[v] += (uint32_t) d;
            st->vm_avg[v] += idle ? 0 : l->avg_cap;
            if (d > st->vm_maxd[v]) {
                st->vm_maxd[v] = (uint32_t) d;
            }
        }
        if (override) {
            st->vm_reason[v] = POL_R_OVERRIDE;
        } else if (ready && !idle) {
            st->vm_reason[v] = POL_R_READY_SPREAD;
            unstable = true;
        } else if (warm) {
            st->vm_reason[v] = POL_R_WARMUP;
        }
        if (active_until(vm->hints.boost_until_ns, now)) {
            unstable = true;
        }
    }
    sort_desc(st->order, n_dem, st->dem);
    sort_desc(st->vm_order, in->n_vms, st->vm_dem);

    /* 6. First-fit decreasing over the pool in order gives the fewest
     * cores that hold every vCPU with headroom. */
    for (size_t j = 0; j < n_dem; j++) {
        uint32_t d = st->dem[st->order[j]];
        unsigned i;

        for (i = 0; i < st->n_pool; i++) {
            unsigned kc = st->pool[i];

            if (d <= st->thread_cap[kc]
                && st->bin_used[kc] + (uint64_t) d <= st->core_cap[kc]) {
                st->bin_used[kc] += d;
                break;
            }
        }
        if (i == st->n_pool) {
            k_ffd = st->n_pool;      /* Overloaded: everything awake. */
            break;
        }
        if (i + 1 > k_ffd) {
            k_ffd = i + 1;
        }
    }
    if (k_ffd < st->n_forced) {
        k_ffd = st->n_forced;
    }
    if (n_dem && !k_ffd && st->n_pool) {
        k_ffd = 1;
    }
    if (override) {
        k_ffd = st->n_pool;
    }

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

    /* 7. EAS choice among feasible pool sizes: k_ffd, then +1, +2, +4...
     * (more cores may allow a lower frequency), and the current size. */
    e.final = false;
    e.override = override;
    k_star = k_ffd;
    for (unsigned step = 0, cand = k_ffd; cand <= st->n_pool;
         step = step ? step * 2 : 1, cand = k_ffd + step) {
        uint32_t mw;

        e.k = cand;
        mw = evaluate(st, in, &usable, &e, st->tmp);
        if (mw < best_mw) {
            best_mw = mw;
            k_star = cand;
        }
        if (override || !n_dem) {
            break;
        }
    }
    if (st->have_prev && st->k_prev > k_ffd && st->k_prev <= st->n_pool
        && !override) {
        uint32_t mw;

        e.k = st->k_prev;
        mw = evaluate(st, in, &usable, &e, st->tmp);
        if (mw < best_mw) {
            best_mw = mw;
            k_star = st->k_prev;
        }
    }

    /* 8. Hysteresis: spread at once, pack one core per dwell time. */
    k = k_star;
    if (st->have_prev && k_star < st->k_prev && !override) {
        unsigned cur = st->k_prev < st->n_pool ? st->k_prev : st->n_pool;

        if (k_star < cur && now - st->last_pack_ns >= cfg->pack_dwell_ns
            && now >= st->last_pack_ns) {
            k = cur - 1;
            st->last_pack_ns = now;
        } else {
            k = cur > k_star ? cur : k_star;
        }
        if (k != k_star) {
            unstable = true;
        }
    }
    if (!st->have_prev) {
        st->last_pack_ns = now;
    }

    /* 9. The final plan. */
    plan->n_vms = in->n_vms;
    plan->n_vcpus = in->n_vcpus;
    e.k = k;
    e.final = true;
    evaluate(st, in, &usable, &e, plan);
    cpuset_zero(&pool_set);
    for (unsigned i = 0; i < k && i < st->n_pool; i++) {
        core_cpus(st, st->pool[i], &usable, &pool_set);
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint16_t kc = st->excl_core[i];

        if (kc != NO_CORE && st->vm_class[in->vcpus[i].vm] == C_EXCLUSIVE) {
            core_cpus(st, kc, &usable, &plan->active);
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
            int q = st->vm_pkg[v];

            if (q >= 0) {
                for (unsigned i = 0; i < k && i < st->n_pool; i++) {
                    if ((int) core_pkg(st, st->pool[i]) == q) {
                        core_cpus(st, st->pool[i], &usable, &set);
                    }
                }
            }
            if (cpuset_empty(&set)) {
                set = pool_set;
            }
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
    /* Idle limits of CPUs that became active through the fallbacks. */
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

    /* 10. Adaptive interval. */
    {
        uint64_t h = plan_hash(plan);

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
    st->have_prev = true;
    return 0;
}

unsigned
pol_state_active_cores(const struct pol_state *st)
{
    return st ? st->k_prev : 0;
}
