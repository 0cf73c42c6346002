/* policy/emit.c -- The final plan of a decision.
 *
 * From the chosen candidate (pool size, level): its active set, points
 * and idle limits (eval.c), race to idle (race.c) and per-core points
 * (trim.c); then where every vCPU and emulator may run.  Every packed VM
 * shares the pool's cores (the kernel balances inside; statistical
 * multiplexing is what the aggregate estimate counts on), so its allowed
 * set changes only when the pool does; exclusive vCPUs and misfits get
 * one CPU of their own core; a VM that may not share SMT siblings
 * (iso.c) has its whole cores; unmanaged VMs keep their fixed CPUs. */

#include <config.h>

#include "policy/policy.h"

#include "policy/state.h"

/* Own cores of misfits become the vCPUs' excl_core and are remembered
 * for the next decision; packed vCPUs without one forget theirs. */
static void
keep_misfits(struct pol_state *st, const struct pol_input *in)
{
    for (size_t j = 0; j < st->n_bigc; j++) {
        if (st->big_core[j] != NO_CORE && !st->prev_big[st->bigc[j]]) {
            st->big_since[st->bigc[j]] = st->now;
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
}

/* The allowed set of packed vCPUs without an own core, into 'set':
 * 'pool_set', the CPUs of the pool's awake cores; when every core is
 * owned, the active set without the cores a VM that may not share SMT
 * siblings holds whole, else the usable CPUs without them, else every
 * usable CPU (the last two are added to the active set).  The same for
 * every packed VM: once it has added CPUs to the active set, the same
 * steps give the same set again. */
static void
packed_set(const struct pol_state *st, const struct cpuset *pool_set,
           struct pol_plan *plan, struct cpuset *set)
{
    const struct cpuset *usable = &st->usable;

    *set = *pool_set;
    if (cpuset_empty(set)) {
        cpuset_andnot(set, &plan->active, &st->smt_private);
    }
    if (cpuset_empty(set)) {
        cpuset_andnot(set, usable, &st->smt_private);
        cpuset_or(&plan->active, &plan->active, set);
    }
    if (cpuset_empty(set)) {
        *set = *usable;
        cpuset_or(&plan->active, &plan->active, usable);
    }
}

/* Allowed sets of VM 'v''s vCPUs, its emulator set and its reason, with
 * 'pool_set' the CPUs of the pool's awake cores and 'packed' the set of
 * packed vCPUs without an own core (packed_set(); only read for packed
 * VMs).  The sets are written in place in 'plan': they are 1024-CPU
 * values and every VM has them. */
static void
vm_sets(struct pol_state *st, const struct pol_input *in, size_t v,
        const struct cpuset *pool_set, const struct cpuset *packed,
        struct pol_plan *plan)
{
    const struct pol_vm *vm = &in->vms[v];
    const struct cpuset *usable = &st->usable;
    const struct cpuset *set;        /* Its vCPUs without an own core. */
    struct cpuset *emu = &plan->vm_emulator[v];
    struct cpuset group;

    if (st->vm_class[v] == C_UNMANAGED) {
        set = &vm->fixed;
    } else if (st->vm_class[v] == C_PACKED) {
        set = packed;
    } else {
        cpuset_zero(&group);
        if (st->vm_class[v] == C_ISOLATED) {
            /* Its whole cores, every thread, for each of its vCPUs. */
            for (uint32_t j = 0; j < st->iso_n[v]; j++) {
                core_cpus(st, st->iso_core[vm->first_vcpu + j], usable,
                          &group);
            }
        }
        set = &group;
    }
    /* The emulator set: 'set' and the own cores' CPUs, except below. */
    *emu = *set;
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint32_t i = vm->first_vcpu + j;

        plan->vcpu_vm[i] = (uint32_t) v;
        if (st->vm_class[v] == C_EXCLUSIVE
            || (st->vm_class[v] == C_PACKED && st->excl_core[i] != NO_CORE)) {
            /* An own core (a misfit's: too big for the pool's level). */
            struct cpuset *one = &plan->vcpu_allowed[i];

            cpuset_zero(one);
            cpuset_set(one, core_first_usable(st, st->excl_core[i],
                                              usable));
            cpuset_or(emu, emu, one);
        } else {
            plan->vcpu_allowed[i] = *set;
        }
    }
    if (st->vm_class[v] == C_EXCLUSIVE && !vm->policy.share_smt) {
        /* Its own cores' sibling threads: no other VM runs there. */
        cpuset_zero(emu);
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            core_cpus(st, st->excl_core[vm->first_vcpu + j], usable, emu);
        }
    } else if (st->vm_class[v] == C_EXCLUSIVE && !cpuset_empty(pool_set)) {
        *emu = *pool_set;
    }
    plan->vm_reason[v] = st->vm_reason[v];
}

void
emit_plan(struct pol_state *st, const struct pol_input *in, unsigned k,
          unsigned l, struct pol_plan *plan)
{
    const struct cpuset *usable = &st->usable;
    struct cpuset pool_set, packed;
    bool have_packed = false;

    plan->n_vms = in->n_vms;
    plan->n_vcpus = in->n_vcpus;
    eval_plan(st, in, usable, k, l, plan);
    race_to_idle(st, in, usable, plan);
    race_saturation(st, in, usable, plan);
    /* A core below the level is a bet on its recent load: decide every
     * min_interval while one is open, so a core that saturates is raised
     * within one period (schedutil re-evaluates every few ms). */
    st->unstable |= trim_pool(st, in, usable, k, st->s_recent, plan);
    st->unstable |= iso_trim(st, in, usable, plan);
    cpuset_zero(&pool_set);
    for (unsigned i = 0; i < k && i < st->n_pool; i++) {
        core_cpus(st, st->pool[i], usable, &pool_set);
    }
    keep_misfits(st, in);
    for (size_t v = 0; v < in->n_vms; v++) {
        if (st->vm_class[v] == C_PACKED && !have_packed) {
            packed_set(st, &pool_set, plan, &packed);
            have_packed = true;
        }
        vm_sets(st, in, v, &pool_set, &packed, plan);
    }
    idle_parked(st, plan);
    plan->est_power_mw = pol_energy_power_mw(st->m, plan, st->busy_ppm);
}
