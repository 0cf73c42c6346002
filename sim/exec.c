/* sim/exec.c -- One execution model and one energy accounting for all.
 *
 * See exec.h for the model.  Nothing here knows which policy made the
 * plan: that is what makes the comparison fair. */

#include <config.h>

#include "sim/exec.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/halt.h"
#include "sim/xalloc.h"

/* Water-filling scratch entry. */
struct want_idx {
    double want;
    uint32_t v;
};

struct exec_group {
    struct cpuset set;
    unsigned n_online;            /* Online CPUs in the set. */
    size_t n_cores;
    uint32_t *cores;              /* Core ids touched by the set, in
                                   * order of their first CPU. */
    int32_t *core_cpu;            /* That first CPU of the set on each. */
    double *lim;                  /* Capacity the set may use on each. */
    unsigned *nthr;               /* Threads of each core in the set. */
    int32_t first_cpu;
    size_t n_members;
    uint32_t *members;            /* Host-local vCPU indices. */
};

struct exec_host *
exec_host_create(const struct pol_model *m, size_t n_vms, size_t n_vcpus)
{
    struct exec_host *h = sim_xcalloc(1, sizeof *h);
    size_t nv = n_vcpus;

    h->m = m;
    h->n_vms = n_vms;
    h->n_vcpus = n_vcpus;
    h->plan = pol_plan_create(n_vms, n_vcpus);
    if (!h->plan) {
        abort();
    }
    h->pol_idle_limit = sim_xcalloc(POL_MAX_CPUS, sizeof *h->pol_idle_limit);
    h->backlog = sim_xcalloc(nv, sizeof *h->backlog);
    h->carried = sim_xcalloc(nv, sizeof *h->carried);
    h->want = sim_xcalloc(nv, sizeof *h->want);
    h->served = sim_xcalloc(nv, sizeof *h->served);
    h->order = sim_xcalloc(nv, sizeof(struct want_idx));
    h->vcpu_cpu = sim_xcalloc(nv, sizeof *h->vcpu_cpu);
    h->vcpu_home = sim_xcalloc(nv, sizeof *h->vcpu_home);
    h->vcpu_rate = sim_xcalloc(nv, sizeof *h->vcpu_rate);
    h->busy_s = sim_xcalloc(nv, sizeof *h->busy_s);
    h->ready_s = sim_xcalloc(nv, sizeof *h->ready_s);
    h->ready_ivl_s = sim_xcalloc(nv, sizeof *h->ready_ivl_s);
    h->vcpu_group = sim_xcalloc(nv, sizeof *h->vcpu_group);
    h->groups = sim_xcalloc(nv, sizeof *h->groups);
    h->group_members = sim_xcalloc(nv ? nv : 1, sizeof *h->group_members);
    h->group_hash = sim_xcalloc(nv ? nv : 1, sizeof *h->group_hash);
    h->n_group_slots = 4;
    while (h->n_group_slots <= 2 * nv) {
        h->n_group_slots *= 2;
    }
    h->group_slot = sim_xcalloc(h->n_group_slots, sizeof *h->group_slot);
    h->n_cores = 0;
    for (unsigned c = 0; c < m->n_cpus; c++) {
        if (m->cpu_core[c] + 1u > h->n_cores) {
            h->n_cores = m->cpu_core[c] + 1u;
        }
    }
    h->core_cap = sim_xcalloc(h->n_cores, sizeof *h->core_cap);
    h->cpu_cap = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_cap);
    h->core_threads = sim_xcalloc(h->n_cores, sizeof *h->core_threads);
    h->core_full = sim_xcalloc(h->n_cores, sizeof *h->core_full);
    h->core_rem = sim_xcalloc(h->n_cores, sizeof *h->core_rem);
    h->core_work = sim_xcalloc(h->n_cores, sizeof *h->core_work);
    h->core_wake = sim_xcalloc(h->n_cores, sizeof *h->core_wake);
    h->core_tmp = sim_xcalloc(h->n_cores, sizeof *h->core_tmp);
    h->core_homed = sim_xcalloc(h->n_cores, sizeof *h->core_homed);
    h->cpu_homed = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_homed);
    for (size_t v = 0; v < nv; v++) {
        h->vcpu_home[v] = -1;
    }
    h->busy_ppm = sim_xcalloc(POL_MAX_CPUS, sizeof *h->busy_ppm);
    h->cpu_first = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_first);
    h->cpu_work_last = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_work_last);
    h->cpu_work_period = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_work_period);
    h->cpu_busy_period = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_busy_period);
    h->cpu_guest_period = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_guest_period);
    h->core_guest = sim_xcalloc(POL_MAX_CPUS, sizeof *h->core_guest);
    h->core_thr = sim_xcalloc(2 * (size_t) h->n_cores, sizeof *h->core_thr);
    h->cpu_home_w = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_home_w);
    h->cpu_poll_w = sim_xcalloc(POL_MAX_CPUS, sizeof *h->cpu_poll_w);
    h->old_sets = sim_xcalloc(nv ? nv : 1, sizeof *h->old_sets);
    h->old_home = sim_xcalloc(nv ? nv : 1, sizeof *h->old_home);
    for (unsigned d = 0; d < m->n_domains; d++) {
        const struct pol_domain *dom = &m->domains[d];
        h->plan->dom_freq_khz[d] = dom->opps[dom->nominal_opp].freq_khz;
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&h->plan->active, c);
    }
    h->n_awake = m->n_cpus;
    return h;
}

static void
free_groups(struct exec_host *h)
{
    for (size_t g = 0; g < h->n_groups; g++) {
        free(h->groups[g].cores);
        free(h->groups[g].lim);
        free(h->groups[g].nthr);
        free(h->groups[g].core_cpu);
    }
    h->n_groups = 0;
}

void
exec_host_destroy(struct exec_host *h)
{
    if (!h) {
        return;
    }
    free_groups(h);
    pol_plan_destroy(h->plan);
    free(h->pol_idle_limit);
    free(h->backlog);
    free(h->carried);
    free(h->want);
    free(h->served);
    free(h->order);
    free(h->vcpu_cpu);
    free(h->vcpu_home);
    free(h->vcpu_rate);
    free(h->busy_s);
    free(h->ready_s);
    free(h->ready_ivl_s);
    free(h->vcpu_group);
    free(h->groups);
    free(h->group_members);
    free(h->group_hash);
    free(h->group_slot);
    free(h->core_cap);
    free(h->cpu_cap);
    free(h->core_threads);
    free(h->core_full);
    free(h->core_rem);
    free(h->core_work);
    free(h->core_wake);
    free(h->core_tmp);
    free(h->core_homed);
    free(h->cpu_homed);
    free(h->busy_ppm);
    free(h->cpu_first);
    free(h->cpu_work_last);
    free(h->cpu_work_period);
    free(h->cpu_busy_period);
    free(h->cpu_guest_period);
    free(h->core_guest);
    free(h->core_thr);
    free(h->cpu_home_w);
    free(h->cpu_poll_w);
    free(h->old_sets);
    free(h->old_home);
    halt_destroy(h->halt);
    free(h);
}

static int
cmp_group_size(const void *a, const void *b)
{
    const struct exec_group *x = a, *y = b;

    if (x->n_online != y->n_online) {
        return x->n_online < y->n_online ? -1 : 1;
    }
    return x->first_cpu < y->first_cpu ? -1 : x->first_cpu > y->first_cpu;
}

static uint64_t
set_hash(const struct cpuset *s)
{
    uint64_t x = 0;

    for (int i = 0; i < CPUSET_WORDS; i++) {
        x = (x ^ s->w[i]) * UINT64_C(0x100000001b3);
    }
    return x;
}

/* Recomputes capacities from the plan's frequencies: per core, per
 * group (what the set may use of each core) and per vCPU (one thread of
 * the fastest core of its set, which it reports to the policy). */
static void
refresh_caps(struct exec_host *h)
{
    const struct pol_model *m = h->m;
    struct pol_plan *p = h->plan;
    uint32_t dom_cap[POL_MAX_DOMAINS];
    bool known[POL_MAX_DOMAINS] = { false };

    /* The CPUs of a domain share its capacity: asked once a domain. */
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned core = m->cpu_core[c], d = m->cpu_domain[c];
        double cap;

        if (d < m->n_domains && !known[d]) {
            dom_cap[d] = pol_model_capacity_at(m, c, p->dom_freq_khz[d]);
            known[d] = true;
        }
        h->cpu_cap[c] = d < m->n_domains ? dom_cap[d] : 0;
        cap = h->cpu_cap[c];
        h->core_cap[core] = cap;
        h->core_full[core] = h->core_threads[core] >= 2
                             ? cap * m->smt_capacity_pct / 100.0 : cap;
    }
    for (size_t g = 0; g < h->n_groups; g++) {
        struct exec_group *gr = &h->groups[g];
        int32_t best = gr->first_cpu;

        for (size_t i = 0; i < gr->n_cores; i++) {
            uint32_t k = gr->cores[i];
            gr->lim[i] = gr->nthr[i] >= 2 ? h->core_full[k] : h->core_cap[k];
        }
        /* The first CPU of the fastest core (the threads of a core
         * have its capacity). */
        for (size_t i = 0; i < gr->n_cores; i++) {
            if (h->core_cap[gr->cores[i]] > h->core_cap[m->cpu_core[best]]) {
                best = gr->core_cpu[i];
            }
        }
        for (size_t i = 0; i < gr->n_members; i++) {
            uint32_t v = gr->members[i];
            h->vcpu_cpu[v] = best;
            h->vcpu_rate[v] = best >= 0 ? h->core_cap[m->cpu_core[best]] : 0;
        }
    }
}

/* Groups the vCPUs by identical allowed set restricted to 'online', in
 * order of first appearance, each group's members in vCPU order
 * (h->vcpu_group[v] is the unsorted group index). */
static void
group_vcpus(struct exec_host *h, const struct cpuset *online)
{
    const struct pol_plan *p = h->plan;
    size_t mask = h->n_group_slots - 1, off = 0;

    memset(h->group_slot, 0xff, h->n_group_slots * sizeof *h->group_slot);
    for (size_t v = 0; v < h->n_vcpus; v++) {
        struct cpuset s;
        uint64_t hs;
        size_t i, g;

        cpuset_and(&s, &p->vcpu_allowed[v], online);
        hs = set_hash(&s);
        i = (size_t) (hs ^ hs >> 29 ^ hs >> 47) & mask;
        while ((g = h->group_slot[i]) != SIZE_MAX
               && (h->group_hash[g] != hs
                   || !cpuset_equal(&h->groups[g].set, &s))) {
            i = (i + 1) & mask;
        }
        if (g == SIZE_MAX) {
            struct exec_group *gr;

            g = h->n_groups++;
            gr = &h->groups[g];
            memset(gr, 0, sizeof *gr);
            gr->set = s;
            gr->n_online = cpuset_count(&s);
            gr->first_cpu = cpuset_next(&s, 0);
            h->group_hash[g] = hs;
            h->group_slot[i] = g;
        }
        h->vcpu_group[v] = (uint32_t) g;
        h->groups[g].n_members++;
    }
    for (size_t g = 0; g < h->n_groups; g++) {
        h->groups[g].members = h->group_members + off;
        off += h->groups[g].n_members;
        h->groups[g].n_members = 0;
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        struct exec_group *gr = &h->groups[h->vcpu_group[v]];

        gr->members[gr->n_members++] = (uint32_t) v;
    }
}

/* Rebuilds the vCPU groups and homes of the plan, then capacities. */
static void
build_groups(struct exec_host *h)
{
    const struct pol_model *m = h->m;
    struct pol_plan *p = h->plan;
    struct cpuset online;
    unsigned *in_set = sim_xcalloc(h->n_cores, sizeof *in_set);

    free_groups(h);
    cpuset_zero(&online);
    memset(h->core_threads, 0, h->n_cores * sizeof *h->core_threads);
    for (unsigned k = 0; k < 2 * h->n_cores; k++) {
        h->core_thr[k] = -1;
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned k = m->cpu_core[c];

        h->cpu_first[c] = false;
        if (!cpuset_has(&p->offline, c)) {
            cpuset_set(&online, c);
            h->cpu_first[c] = h->core_threads[k] == 0;
            if (h->core_threads[k] < 2) {
                h->core_thr[2 * k + h->core_threads[k]] = (int32_t) c;
            }
            h->core_threads[k]++;
        }
    }
    group_vcpus(h, &online);
    qsort(h->groups, h->n_groups, sizeof *h->groups, cmp_group_size);
    for (size_t g = 0; g < h->n_groups; g++) {
        struct exec_group *gr = &h->groups[g];
        size_t n = 0;

        CPUSET_FOREACH (c, &gr->set) {
            in_set[m->cpu_core[c]]++;
            n++;
        }
        gr->cores = sim_xcalloc(n, sizeof *gr->cores);
        gr->lim = sim_xcalloc(n, sizeof *gr->lim);
        gr->nthr = sim_xcalloc(n, sizeof *gr->nthr);
        gr->core_cpu = sim_xcalloc(n, sizeof *gr->core_cpu);
        CPUSET_FOREACH (c, &gr->set) {
            unsigned k = m->cpu_core[c];
            if (in_set[k]) {
                gr->cores[gr->n_cores] = k;
                gr->nthr[gr->n_cores] = in_set[k];
                gr->core_cpu[gr->n_cores] = c;
                gr->n_cores++;
                in_set[k] = 0;
            }
        }
        for (size_t i = 0; i < gr->n_members; i++) {
            h->vcpu_group[gr->members[i]] = (uint32_t) g;
        }
    }
    free(in_set);
    /* Home CPUs: the kernel wakes a vCPU on its previous CPU when it can,
     * and places new ones on the least loaded core of their set.  Homes
     * are sticky while they stay in the vCPU's set. */
    memset(h->cpu_homed, 0, m->n_cpus * sizeof *h->cpu_homed);
    memset(h->core_homed, 0, h->n_cores * sizeof *h->core_homed);
    memset(h->pkg_homed, 0, sizeof h->pkg_homed);
    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t c = h->vcpu_home[v];
        const struct exec_group *gr = &h->groups[h->vcpu_group[v]];

        if (c >= 0 && cpuset_has(&gr->set, (unsigned) c)) {
            h->cpu_homed[c]++;
            h->core_homed[m->cpu_core[c]]++;
            h->pkg_homed[m->domains[m->cpu_domain[c]].pkg]++;
        } else {
            h->vcpu_home[v] = -1;
        }
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        const struct exec_group *gr = &h->groups[h->vcpu_group[v]];
        int32_t best = -1;

        if (h->vcpu_home[v] >= 0 || gr->first_cpu < 0) {
            continue;
        }
        /* Least loaded core, then package (the load balancer evens
         * running tasks across sockets), then thread, then lowest id. */
        CPUSET_FOREACH (c, &gr->set) {
            unsigned kc = m->cpu_core[c], kb;
            unsigned pc = m->domains[m->cpu_domain[c]].pkg, pb;

            if (best < 0) {
                best = c;
                continue;
            }
            kb = m->cpu_core[best];
            pb = m->domains[m->cpu_domain[best]].pkg;
            if (h->core_homed[kc] != h->core_homed[kb]
                ? h->core_homed[kc] < h->core_homed[kb]
                : h->pkg_homed[pc] != h->pkg_homed[pb]
                ? h->pkg_homed[pc] < h->pkg_homed[pb]
                : h->cpu_homed[c] < h->cpu_homed[best]) {
                best = c;
            }
        }
        h->vcpu_home[v] = best;
        h->cpu_homed[best]++;
        h->core_homed[m->cpu_core[best]]++;
        h->pkg_homed[m->domains[m->cpu_domain[best]].pkg]++;
    }
    refresh_caps(h);
}

/* Sets each domain to 'req' (0 = keep its frequency); counts changes
 * except on the first plan.  Whether any domain changed. */
static bool
set_freqs(struct exec_host *h, const uint32_t *req)
{
    struct pol_plan *p = h->plan;
    bool changed = false;

    for (unsigned d = 0; d < h->m->n_domains; d++) {
        uint32_t f = req[d] ? req[d] : p->dom_freq_khz[d];

        if (f != p->dom_freq_khz[d]) {
            h->freq_changes += h->applied != 0;
            changed = true;
        }
        p->dom_freq_khz[d] = f;
    }
    return changed;
}

/* A plan starts a new period: the per-decision accumulators restart. */
static void
period_reset(struct exec_host *h)
{
    size_t n_cpus = h->m->n_cpus;

    for (size_t v = 0; v < h->n_vcpus; v++) {
        h->busy_s[v] = 0;
        h->ready_s[v] = 0;
    }
    /* Only the host's CPUs are ever booked: the rest stay 0. */
    memset(h->cpu_work_period, 0, n_cpus * sizeof *h->cpu_work_period);
    memset(h->cpu_busy_period, 0, n_cpus * sizeof *h->cpu_busy_period);
    memset(h->cpu_guest_period, 0, n_cpus * sizeof *h->cpu_guest_period);
    h->period_s = 0;
    halt_period_reset(h);
    h->applied++;
}

/* The CPUs that are active and online in the applied plan.  Plans hold
 * only the host's CPUs (pol_decide() and the baselines build them from
 * the model), so no mask to n_cpus is needed. */
static unsigned
count_awake(const struct exec_host *h)
{
    struct cpuset awake;

    cpuset_andnot(&awake, &h->plan->active, &h->plan->offline);
    return cpuset_count(&awake);
}

/* Copies what 'plan' says besides the allowed and emulator sets into
 * the applied plan, keeping its domain frequencies (set_freqs() sets
 * them).  The per-vCPU and per-VM arrays are cut to the applied plan's
 * room, as pol_plan_copy() does. */
static void
copy_plan_rest(struct pol_plan *p, const struct pol_plan *plan)
{
    size_t nv = plan->n_vcpus < p->max_vcpus ? plan->n_vcpus : p->max_vcpus;
    size_t nm = plan->n_vms < p->max_vms ? plan->n_vms : p->max_vms;

    p->n_vms = nm;
    p->n_vcpus = nv;
    p->active = plan->active;
    p->offline = plan->offline;
    memcpy(p->idle_limit, plan->idle_limit, sizeof p->idle_limit);
    memcpy(p->vcpu_vm, plan->vcpu_vm, nv * sizeof *p->vcpu_vm);
    memcpy(p->vm_reason, plan->vm_reason, nm * sizeof *p->vm_reason);
    p->next_interval_ns = plan->next_interval_ns;
    p->est_power_mw = plan->est_power_mw;
}

/* The rest of exec_apply() once the applied plan holds the new sets:
 * 'sets_changed' whether any allowed set or the offline CPUs changed
 * (the old sets and homes are in h->old_sets, h->old_home unless this
 * is the first plan). */
static void
apply_rest(struct exec_host *h, const struct pol_plan *plan,
           bool sets_changed)
{
    struct pol_plan *p = h->plan;
    bool first = h->applied == 0;
    bool freq_changed;

    sets_changed |= !cpuset_equal(&p->offline, &plan->offline);
    copy_plan_rest(p, plan);
    h->n_awake = count_awake(h);
    freq_changed = set_freqs(h, plan->dom_freq_khz);
    memcpy(h->pol_idle_limit, p->idle_limit,
           POL_MAX_CPUS * sizeof *h->pol_idle_limit);
    /* Plans mostly repeat: rebuild only what changed. */
    if (sets_changed) {
        build_groups(h);
        if (!first) {
            exec_charge_moves(h, h->old_sets, h->old_home);
        }
    } else if (freq_changed) {
        refresh_caps(h);
    }
    period_reset(h);
}

/* Keeps every vCPU's allowed set and home before the first of a
 * commit's changes, for exec_charge_moves(). */
static void
save_old(struct exec_host *h)
{
    memcpy(h->old_sets, h->plan->vcpu_allowed,
           h->n_vcpus * sizeof *h->old_sets);
    memcpy(h->old_home, h->vcpu_home, h->n_vcpus * sizeof *h->old_home);
}

void
exec_apply(struct exec_host *h, const struct pol_plan *plan)
{
    struct pol_plan *p = h->plan;
    bool first = h->applied == 0;
    bool sets_changed = first;
    size_t nm = plan->n_vms < p->max_vms ? plan->n_vms : p->max_vms;

    for (size_t v = 0; v < h->n_vcpus; v++) {
        if (!cpuset_equal(&p->vcpu_allowed[v], &plan->vcpu_allowed[v])) {
            h->pin_changes += !first;
            sets_changed = true;
        }
    }
    if (sets_changed && !first) {
        save_old(h);
    }
    memcpy(p->vcpu_allowed, plan->vcpu_allowed,
           (plan->n_vcpus < p->max_vcpus ? plan->n_vcpus : p->max_vcpus)
           * sizeof *p->vcpu_allowed);
    memcpy(p->vm_emulator, plan->vm_emulator, nm * sizeof *p->vm_emulator);
    apply_rest(h, plan, sets_changed);
}

void
exec_apply_changes(struct exec_host *h, const struct pol_plan *plan,
                   const uint32_t *vcpus, size_t n_vcpus,
                   const uint32_t *vms, size_t n_vms)
{
    struct pol_plan *p = h->plan;
    bool sets_changed = false;

    if (h->applied == 0) {
        exec_apply(h, plan);
        return;
    }
    /* Old sets and homes of every vCPU, for exec_charge_moves(), only
     * once one set is known to change. */
    for (size_t i = 0; i < n_vcpus; i++) {
        uint32_t v = vcpus[i];

        if (v < h->n_vcpus
            && !cpuset_equal(&p->vcpu_allowed[v], &plan->vcpu_allowed[v])) {
            if (!sets_changed) {
                save_old(h);
                sets_changed = true;
            }
            h->pin_changes++;
            p->vcpu_allowed[v] = plan->vcpu_allowed[v];
        }
    }
    for (size_t i = 0; i < n_vms; i++) {
        if (vms[i] < p->max_vms) {
            p->vm_emulator[vms[i]] = plan->vm_emulator[vms[i]];
        }
    }
    apply_rest(h, plan, sets_changed);
}

void
exec_apply_freqs(struct exec_host *h, const uint32_t *dom_freq_khz)
{
    if (set_freqs(h, dom_freq_khz)) {
        refresh_caps(h);
    }
    period_reset(h);
}

static int
cmp_want(const void *a, const void *b)
{
    const struct want_idx *x = a, *y = b;

    return x->want < y->want ? -1 : x->want > y->want
           ? 1 : (x->v > y->v) - (x->v < y->v);
}

/* Serves group 'gr' from the cores' remaining capacity: max-min fair
 * over the pooled capacity of its set (CFS load balancing), each vCPU at
 * most one thread of its home core.  Work lands on the home core; what
 * exceeds a core's share moves to cores of the set with spare room. */
static void
serve_group(struct exec_host *h, struct exec_group *gr)
{
    const struct pol_model *m = h->m;
    double cap = 0, total = 0, excess = 0, spare = 0;
    double *placed = h->core_tmp;

    for (size_t i = 0; i < gr->n_cores; i++) {
        uint32_t k = gr->cores[i];
        double c = h->core_rem[k] < gr->lim[i] ? h->core_rem[k] : gr->lim[i];
        cap += c > 0 ? c : 0;
        placed[k] = 0;
    }
    for (size_t i = 0; i < gr->n_members; i++) {
        uint32_t v = gr->members[i];
        double r = h->vcpu_rate[v];
        double w = h->want[v] < r ? h->want[v] : r;
        h->served[v] = w;
        total += w;
    }
    if (total > cap) {
        /* Max-min fair share ("water level") of 'cap'. */
        size_t n = gr->n_members;
        double left = cap;

        struct want_idx *order = h->order;

        for (size_t i = 0; i < n; i++) {
            order[i].v = gr->members[i];
            order[i].want = h->served[gr->members[i]];
        }
        qsort(order, n, sizeof *order, cmp_want);
        for (size_t i = 0; i < n; i++) {
            uint32_t v = order[i].v;
            double level = left / (double) (n - i);

            if (h->served[v] > level) {
                h->served[v] = level;
            }
            left -= h->served[v];
        }
    }
    for (size_t i = 0; i < gr->n_members; i++) {
        uint32_t v = gr->members[i];
        int32_t c = h->vcpu_home[v];

        if (c >= 0) {
            uint32_t k = m->cpu_core[c];
            placed[k] += h->served[v];
            h->cpu_home_w[c] += h->served[v];
            h->core_wake[k] += WAKE_IDLE_HZ + WAKE_BUSY_HZ
                * (h->vcpu_rate[v] > 0 ? h->served[v] / h->vcpu_rate[v] : 0);
        }
    }
    for (size_t i = 0; i < gr->n_cores; i++) {
        uint32_t k = gr->cores[i];
        double c = h->core_rem[k] < gr->lim[i] ? h->core_rem[k] : gr->lim[i];
        c = c > 0 ? c : 0;
        if (placed[k] > c) {
            excess += placed[k] - c;
            placed[k] = c;
        } else {
            spare += c - placed[k];
        }
    }
    for (size_t i = 0; i < gr->n_cores; i++) {
        uint32_t k = gr->cores[i];
        double c = h->core_rem[k] < gr->lim[i] ? h->core_rem[k] : gr->lim[i];
        c = c > 0 ? c : 0;
        if (excess > 0 && spare > 0 && placed[k] < c) {
            placed[k] += excess * (c - placed[k]) / spare;
        }
        h->core_rem[k] -= placed[k];
        h->core_work[k] += placed[k];
    }
}

void
exec_split_threads(double wa, double wb, double cap, double smt,
                   double *ba, double *bb)
{
    /* While both run, each thread does smt/2 of its solo work: thread
     * a does cap * a * (1 - k * b) with k = 1 - smt / 2.  In units of
     * 'cap' (A, B), while neither is full: a (1 - k b) = A and
     * b (1 - k a) = B, so a - b = A - B and a is the smaller root of
     * k a^2 - (1 + k (A - B)) a + A = 0 (written so k = 0 needs no
     * case).  Otherwise the busier thread is full and its sibling s
     * takes what it cannot fit: s (1 - k) = A + B - (1 - k s). */
    double k = 1.0 - smt / 2.0;
    double A, B, d, q, disc, r, s;

    *ba = *bb = 0;
    if (!(cap > 0)) {
        return;
    }
    A = wa > 0 ? wa / cap : 0;
    B = wb > 0 ? wb / cap : 0;
    d = A - B;
    q = 1.0 + k * d;
    disc = q * q - 4.0 * k * A;
    r = disc >= 0 ? q + sqrt(disc) : 0;
    if (r > 0) {
        double a = 2.0 * A / r, b = a - d;

        /* The tolerance keeps an exactly full pair (rounding) here. */
        if (a <= 1.0 + 1e-9 && b <= 1.0 + 1e-9) {
            *ba = a < 1.0 ? a : 1.0;
            *bb = b < 0 ? 0 : b < 1.0 ? b : 1.0;
            return;
        }
    }
    /* The sibling's share; with smt = 1 (k = 1/2) two threads do one
     * thread's work, so it only runs while the pair is overcommitted. */
    s = 1.0 - 2.0 * k > 0 ? (A + B - 1.0) / (1.0 - 2.0 * k)
                          : (A + B >= 1.0 ? 1.0 : 0.0);
    s = s < 0 ? 0 : s > 1.0 ? 1.0 : s;
    *ba = A >= B ? 1.0 : s;
    *bb = A >= B ? s : 1.0;
}

/* Busy fractions b[0], b[1] of the online threads of core 'k' doing 'w'
 * capacity-unit-seconds in a step, split in proportion to 'wt' (per
 * CPU; all to the first thread if the weights are 0). */
static void
book_core(const struct exec_host *h, unsigned k, double w, const double *wt,
          double *b)
{
    int32_t t0 = h->core_thr[2 * k], t1 = h->core_thr[2 * k + 1];
    double cap = h->core_cap[k];

    b[0] = b[1] = 0;
    if (t0 < 0 || !(cap > 0) || !(w > 0)) {
        return;
    }
    if (t1 < 0) {
        b[0] = w >= cap ? 1.0 : w / cap;
        return;
    }
    double w0 = wt[t0] > 0 ? wt[t0] : 0, w1 = wt[t1] > 0 ? wt[t1] : 0;
    double f0 = w0 + w1 > 0 ? w0 / (w0 + w1) : 1.0;

    exec_split_threads(w * f0, w * (1.0 - f0), cap,
                       h->m->smt_capacity_pct / 100.0, &b[0], &b[1]);
}

void
exec_charge_moves(struct exec_host *h, const struct cpuset *old_sets,
                  const int32_t *old_home)
{
    const struct pol_model *m = h->m;
    const struct pol_plan *p = h->plan;

    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t o = old_home ? old_home[v] : -1, n = h->vcpu_home[v];
        double cost_s = 0;

        if (old_sets && !cpuset_equal(&old_sets[v], &p->vcpu_allowed[v])) {
            cost_s += h->pin_cost_s;
        }
        if (o >= 0 && n >= 0 && m->cpu_core[o] != m->cpu_core[n]) {
            h->migrations++;
            cost_s += h->mig_cost_s;
        }
        if (cost_s > 0) {
            double w = cost_s * h->vcpu_rate[v];

            h->backlog[v] += w;
            h->demand_work += w;
            h->overhead_work += w;
        }
    }
}

bool
exec_may_home(const struct exec_host *h, size_t v, unsigned cpu)
{
    return v < h->n_vcpus && cpu < h->m->n_cpus
           && !cpuset_has(&h->plan->offline, cpu)
           && cpuset_has(&h->groups[h->vcpu_group[v]].set, cpu);
}

int
exec_set_home(struct exec_host *h, size_t v, unsigned cpu)
{
    const struct pol_model *m = h->m;
    int32_t o;

    if (!exec_may_home(h, v, cpu)) {
        return -EINVAL;
    }
    o = h->vcpu_home[v];
    if (o == (int32_t) cpu) {
        return 0;
    }
    if (o >= 0) {
        h->cpu_homed[o]--;
        h->core_homed[m->cpu_core[o]]--;
        h->pkg_homed[m->domains[m->cpu_domain[o]].pkg]--;
    }
    h->vcpu_home[v] = (int32_t) cpu;
    h->cpu_homed[cpu]++;
    h->core_homed[m->cpu_core[cpu]]++;
    h->pkg_homed[m->domains[m->cpu_domain[cpu]].pkg]++;
    if (o >= 0 && m->cpu_core[o] != m->cpu_core[cpu]) {
        double w = h->mig_cost_s * h->vcpu_rate[v];

        h->migrations++;
        h->backlog[v] += w;
        h->demand_work += w;
        h->overhead_work += w;
    }
    return 0;
}

/* New wants (backlog plus 'demand'), then every group served: fills
 * served, core_work, core_wake and cpu_home_w. */
static void
serve_all(struct exec_host *h, const float *demand)
{
    for (unsigned k = 0; k < h->n_cores; k++) {
        h->core_rem[k] = h->core_full[k];
        h->core_work[k] = 0;
    }
    memset(h->core_wake, 0, h->n_cores * sizeof *h->core_wake);
    memset(h->cpu_home_w, 0, h->m->n_cpus * sizeof *h->cpu_home_w);
    for (size_t v = 0; v < h->n_vcpus; v++) {
        h->want[v] = h->backlog[v]
                     + demand[v] * (double) POL_CAPACITY_SCALE;
        h->served[v] = 0;
    }
    for (size_t g = 0; g < h->n_groups; g++) {
        serve_group(h, &h->groups[g]);
    }
}

void
exec_probe_util(struct exec_host *h, const float *demand,
                const uint32_t *khz, double *util)
{
    const struct pol_model *m = h->m;
    struct pol_plan *p = h->plan;
    uint32_t saved[POL_MAX_DOMAINS];
    bool moved = false;

    memcpy(saved, p->dom_freq_khz, m->n_domains * sizeof *saved);
    for (unsigned d = 0; d < m->n_domains; d++) {
        if (khz && khz[d] && khz[d] != p->dom_freq_khz[d]) {
            p->dom_freq_khz[d] = khz[d];
            moved = true;
        }
    }
    if (moved) {
        refresh_caps(h);
    }
    serve_all(h, demand);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        util[c] = 0;
        h->cpu_home_w[c] += h->cpu_poll_w[c];
    }
    for (unsigned k = 0; k < h->n_cores; k++) {
        int32_t t0 = h->core_thr[2 * k], t1 = h->core_thr[2 * k + 1];
        double w = h->core_work[k], b[2];

        w += (t0 >= 0 ? h->cpu_poll_w[t0] : 0)
             + (t1 >= 0 ? h->cpu_poll_w[t1] : 0);
        w = w > h->core_full[k] ? h->core_full[k] : w;
        book_core(h, k, w, h->cpu_home_w, b);
        if (t0 >= 0) {
            util[t0] = b[0] * h->core_cap[k];
        }
        if (t1 >= 0) {
            util[t1] = b[1] * h->core_cap[k];
        }
    }
    if (moved) {
        memcpy(p->dom_freq_khz, saved, m->n_domains * sizeof *saved);
        refresh_caps(h);
    }
}

/* After halt_step(): each CPU's halt-poll work this step (granted
 * polling of the vCPUs homed there, scaled to the work polling added to
 * its core), kept for the next exec_probe_util(). */
static void
poll_weights(struct exec_host *h)
{
    const struct pol_model *m = h->m;
    const struct exec_halt *z = h->halt;

    memset(h->cpu_poll_w, 0, m->n_cpus * sizeof *h->cpu_poll_w);
    if (!z) {
        return;
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t c = h->vcpu_home[v];

        if (c >= 0) {
            h->cpu_poll_w[c] += z->want_s[v] * z->core_want[m->cpu_core[c]];
        }
    }
    for (unsigned k = 0; k < h->n_cores; k++) {
        int32_t t0 = h->core_thr[2 * k], t1 = h->core_thr[2 * k + 1];
        double add = h->core_work[k] - h->core_guest[k];
        double sum = (t0 >= 0 ? h->cpu_poll_w[t0] : 0)
                     + (t1 >= 0 ? h->cpu_poll_w[t1] : 0);

        for (int i = 0; i < 2; i++) {
            int32_t t = h->core_thr[2 * k + i];

            if (t >= 0) {
                h->cpu_poll_w[t] = sum > 0 && add > 0
                                   ? add * h->cpu_poll_w[t] / sum : 0;
            }
        }
    }
}

/* Core work -> busy time of each thread, with and without polling. */
static void
book_threads(struct exec_host *h)
{
    const struct pol_model *m = h->m;
    memset(h->busy_ppm, 0, m->n_cpus * sizeof *h->busy_ppm);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        h->cpu_work_last[c] = 0;
    }
    for (unsigned k = 0; k < h->n_cores; k++) {
        double cap = h->core_cap[k], b[2], g[2], wt[2];
        int32_t t[2] = { h->core_thr[2 * k], h->core_thr[2 * k + 1] };
        bool same;
        if (t[0] < 0) {
            continue;
        }
        for (int i = 0; i < 2; i++) {
            wt[i] = t[i] >= 0 ? h->cpu_home_w[t[i]] : 0;
        }
        book_core(h, k, h->core_guest[k], h->cpu_home_w, g);
        same = h->core_work[k] == h->core_guest[k];
        for (int i = 0; i < 2; i++) {
            if (t[i] >= 0) {
                h->cpu_home_w[t[i]] = wt[i] + h->cpu_poll_w[t[i]];
                same = same && h->cpu_home_w[t[i]] == wt[i];
            }
        }
        /* No polling on this core: the same split as the guest's. */
        if (same) {
            b[0] = g[0];
            b[1] = g[1];
        } else {
            book_core(h, k, h->core_work[k], h->cpu_home_w, b);
        }
        for (int i = 0; i < 2; i++) {
            unsigned c;

            if (t[i] < 0) {
                continue;
            }
            c = (unsigned) t[i];
            h->busy_ppm[c] = (uint32_t) (b[i] * 1e6 + 0.5);
            h->cpu_work_last[c] = b[i] * cap;
            h->cpu_work_period[c] += b[i] * cap;
            h->cpu_busy_period[c] += b[i];
            h->cpu_guest_period[c] += g[i];
        }
    }
}

void
exec_step(struct exec_host *h, const float *demand)
{
    const struct pol_model *m = h->m;
    struct pol_plan *p = h->plan;
    unsigned active = h->n_awake;
    double demand_work = h->demand_work, late = h->late_work;
    double wait = h->wait_work_s;
    uint32_t mw;

    serve_all(h, demand);
    /* The sums stay in locals (the arrays written below could alias
     * them), added in vCPU order (the order fixes the rounding). */
    for (size_t v = 0; v < h->n_vcpus; v++) {
        demand_work += demand[v] * (double) POL_CAPACITY_SCALE;
    }
    h->demand_work = demand_work;
    for (size_t v = 0; v < h->n_vcpus; v++) {
        double rate = h->vcpu_rate[v], want = h->want[v];
        double served = h->served[v];
        double busy = rate > 0 ? served / rate : 0;
        double runnable = rate > 0 ? want / rate : 1.0;
        double ready, before = h->backlog[v], backlog;

        if (runnable > 1.0) {
            runnable = 1.0;
        }
        ready = runnable - busy > 0 ? runnable - busy : 0;
        backlog = want - served;
        if (backlog < 1e-9) {
            backlog = 0;
        }
        if (backlog > before) {
            late += backlog - before;
        }
        wait += backlog;
        h->backlog[v] = backlog;
        h->busy_s[v] += busy;
        h->ready_s[v] += ready;
        h->ready_ivl_s[v] += ready;
    }
    h->late_work = late;
    h->wait_work_s = wait;
    memcpy(h->core_guest, h->core_work, h->n_cores * sizeof *h->core_guest);
    halt_step(h);                 /* Halt polling fills idle time. */
    poll_weights(h);
    book_threads(h);
    /* Idle depth from the mean idle gap, capped by the plan's limit. */
    for (unsigned c = 0; c < m->n_cpus; c++) {
        const struct pol_domain *dom = &m->domains[m->cpu_domain[c]];
        int lim = h->pol_idle_limit[c];
        int st = (int) dom->n_idle - 1;

        if (lim >= 0 && lim < st) {
            st = lim;
        }
        unsigned k = m->cpu_core[c];
        if (h->core_wake[k] > 0) {
            double b = h->core_cap[k] > 0
                       ? h->core_work[k] / h->core_full[k] : 1.0;
            double gap_us = (1.0 - (b > 1.0 ? 1.0 : b)) * 1e6
                            / h->core_wake[k];
            while (st > 0 && dom->idle[st].target_residency_us > gap_us) {
                st--;
            }
        }
        p->idle_limit[c] = (int8_t) st;
    }
    mw = pol_energy_power_mw(h->energy_m ? h->energy_m : m, p, h->busy_ppm);
    h->energy_j += mw / 1000.0;
    h->last_power_w = mw / 1000.0;
    h->last_active = active;
    h->active_cpu_s += active;
    h->period_s += 1.0;
}

void
exec_interval_end(struct exec_host *h, float *ready_out, double *late_out)
{
    for (size_t v = 0; v < h->n_vcpus; v++) {
        double late = h->backlog[v] - h->carried[v];

        late = late > 0 ? late : 0;
        h->unmet_work += late;
        if (late_out) {
            late_out[v] = late;
        }
        h->carried[v] = h->backlog[v];
    }
    /* Copied out in a loop of its own, then cleared: with the copy and
     * the clearing in the loop above, GCC 12.2 at -O3 turns the clearing
     * into a memset() placed before the copy (loop distribution), and
     * every interval reads as free of ready time. */
    for (size_t v = 0; ready_out && v < h->n_vcpus; v++) {
        ready_out[v] = (float) h->ready_ivl_s[v];
    }
    memset(h->ready_ivl_s, 0, h->n_vcpus * sizeof *h->ready_ivl_s);
}
