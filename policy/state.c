/* policy/state.c -- Creating and destroying the decision state.
 *
 * pol_state_create() derives everything pol_decide() needs of the model
 * once: the physical cores and their siblings, the order in which pool
 * cores wake (most efficient domains first, then core id) and the
 * frequency levels (level.c); and it allocates every per-decision scratch
 * array, so a decision allocates nothing. */

#include <config.h>

#include "policy/policy.h"

#include <stdlib.h>
#include <string.h>

#include "policy/state.h"

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
    c->saturation_turbo = true;
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
    free(st->excl_vcpu);
    free(st->excl_vm);
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
    free(st->vm_smt);
    free(st->iso_n);
    free(st->iso_need);
    free(st->iso_rmax);
    free(st->iso_cap);
    free(st->iso_core);
    free(st->iso_key);
    free(st);
}

/* The physical cores of the model (siblings share cpu_core) and the
 * order in which pool cores wake. */
static void
build_cores(struct pol_state *st)
{
    const struct pol_model *m = st->m;
    uint32_t eff[POL_MAX_CPUS];

    /* Physical cores in CPU order. */
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
}

struct pol_state *
pol_state_create(const struct pol_model *m, const struct pol_config *c)
{
    struct pol_state *st;
    size_t n;

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
    st->excl_vcpu = calloc(n, sizeof *st->excl_vcpu);
    st->excl_vm = calloc(n, sizeof *st->excl_vm);
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
    st->vm_smt = calloc(n, sizeof *st->vm_smt);
    st->iso_n = calloc(n, sizeof *st->iso_n);
    st->iso_need = calloc(n, sizeof *st->iso_need);
    st->iso_rmax = calloc(n, sizeof *st->iso_rmax);
    st->iso_cap = calloc(n, sizeof *st->iso_cap);
    st->iso_core = calloc(n, sizeof *st->iso_core);
    st->iso_key = calloc(n, sizeof *st->iso_key);
    if (!st->vm_smt || !st->iso_n || !st->iso_need || !st->iso_rmax
        || !st->iso_cap || !st->iso_core || !st->iso_key) {
        pol_state_destroy(st);
        return NULL;
    }
    if (!st->bigc || !st->big_core || !st->vr || !st->vavg || !st->vvar
        || !st->vlast || !st->prev_big || !st->big_prev
        || !st->need_sorted || !st->big_since || !st->vslow) {
        pol_state_destroy(st);
        return NULL;
    }
    if (!st->tmp || !st->level_opp || !st->vm_class
        || !st->vm_reason || !st->vm_lat || !st->excl_core
        || !st->excl_vcpu || !st->excl_vm || !st->prev_core
        || !st->prev_key) {
        pol_state_destroy(st);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        st->prev_core[i] = st->big_prev[i] = st->iso_core[i] = NO_CORE;
    }
    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];

        st->nom_cap[di] = d->opps[d->nominal_opp < d->n_opps
                                  ? d->nominal_opp : d->n_opps - 1].capacity;
        st->dom_ncpus[di] = (uint16_t) cpuset_count(&d->cpus);
    }
    build_cores(st);
    level_build(st);
    st->interval_ns = st->cfg.min_interval_ns;
    st->dwell_ns = st->cfg.pack_dwell_ns;
    return st;
}

unsigned
pol_state_active_cores(const struct pol_state *st)
{
    return st ? st->k_prev : 0;
}
