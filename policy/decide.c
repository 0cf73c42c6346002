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
 * host kernel balances vCPU threads inside the sets this produces.  Each
 * step lives in its own file (see state.h); all memory is allocated in
 * pol_state_create(); the estimator, its constants and the algorithm are
 * described in docs/policy.md. */

#include <config.h>

#include "policy/policy.h"

#include <errno.h>
#include <string.h>

#include "policy/state.h"

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

/* The CPUs this decision may use (st->usable, st->all) and whether a
 * managed VM forbids offlining.  -EINVAL when managed VMs have no CPU. */
static int
prepare(struct pol_state *st, const struct pol_input *in)
{
    bool any_managed = false;

    st->now = in->now_ns;
    st->gen++;                    /* Level rows of earlier decisions go. */
    st->unstable = false;
    st->any_never_offline = false;
    st->sched_core = in->sched_core;
    cpuset_zero(&st->all);
    for (unsigned c = 0; c < st->m->n_cpus; c++) {
        cpuset_set(&st->all, c);
    }
    cpuset_and(&st->usable, &in->managed, &in->online);
    cpuset_and(&st->usable, &st->usable, &st->all);
    for (unsigned di = 0; di < st->m->n_domains; di++) {
        struct cpuset mc;

        cpuset_and(&mc, &st->m->domains[di].cpus, &in->managed);
        st->dom_managed[di] = !cpuset_empty(&mc);
    }
    for (size_t v = 0; v < in->n_vms; v++) {
        if (!in->vms[v].unmanaged && in->vms[v].n_vcpus) {
            any_managed = true;
            st->any_never_offline |= in->vms[v].policy.never_offline;
        }
    }
    return any_managed && cpuset_empty(&st->usable) ? -EINVAL : 0;
}

/* Adaptive interval: back to the minimum after any change or while
 * something is pending (pack step, rising ready time, boost, a trimmed
 * core); doubled up to the maximum while the plan stays the same. */
static void
next_interval(struct pol_state *st, struct pol_plan *plan)
{
    const struct pol_config *cfg = &st->cfg;
    uint64_t h = plan_hash(st->m, plan);

    if (!st->have_prev || h != st->prev_hash || st->unstable) {
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

int
pol_decide(struct pol_state *st, const struct pol_input *in,
           struct pol_plan *plan)
{
    unsigned k, l;
    int err;

    err = check_input(st, in, plan);
    if (!err) {
        err = prepare(st, in);
    }
    if (err) {
        return err;
    }
    own_classify(st, in);
    own_assign(st, in);
    iso_assign(st, in);
    pool_order(st);
    demand_sum(st, in);
    demand_floors(st, in);
    idle_limits(st, in);
    iso_points(st, in);
    pool_table(st, in);
    choose_plan(st, in, &k, &l);
    emit_plan(st, in, k, l, plan);
    next_interval(st, plan);
    st->k_prev = k;
    st->l_prev = l;
    st->have_prev = true;
    return 0;
}
