/* policy/own.c -- Which VMs get physical cores of their own.
 *
 * Performance VMs, VMs with an active latency hint and (under the
 * host-wide override) every VM get cores of their own at full speed,
 * when there are enough; unmanaged VMs stay on the CPUs the
 * administrator pinned them to, and their load counts there.  Everything
 * else is packed (pool.c).  A vCPU keeps its previous own core while it
 * is free, so pins do not move without need. */

#include <config.h>

#include "policy/policy.h"

#include <string.h>

#include "policy/state.h"

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
        if (!st->core_use[k] && core_usable_threads(st, k, usable)
            && iso_core_ok(st, in, v, k)) {
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
            && !st->core_use[k] && core_usable_threads(st, k, usable)
            && iso_core_ok(st, in, v, k)) {
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
                    && iso_core_ok(st, in, v, k)
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

/* Unmanaged VM 'v''s load stays on its fixed CPUs.  The cores of one
 * that may not share SMT siblings leave the pool (core_use 3): awake for
 * it, no other VM's vCPU on their usable threads (iso.c). */
static void
fixed_load(struct pol_state *st, const struct pol_input *in, size_t v)
{
    const struct pol_vm *vm = &in->vms[v];
    struct cpuset fx;
    uint64_t sum = 0;
    unsigned n;

    cpuset_or(&st->fixed_all, &st->fixed_all, &vm->fixed);
    cpuset_and(&fx, &vm->fixed, &st->all);
    n = cpuset_count(&fx);
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        sum += in->vcpus[vm->first_vcpu + j].load.avg_cap;
    }
    CPUSET_FOREACH (c, &fx) {
        unsigned kc = st->core_of_cpu[c];

        st->core_fixed[kc] += (uint32_t) (sum / n);
        if (!vm->policy.share_smt && !in->sched_core
            && core_usable_threads(st, kc, &st->usable)) {
            st->core_use[kc] = 3;
            core_cpus(st, kc, &st->usable, &st->smt_private);
        } else if (cpuset_has(&st->usable, (unsigned) c)
                   && !st->core_use[kc]) {
            st->core_use[kc] = 2;
        }
    }
}

void
own_classify(struct pol_state *st, const struct pol_input *in)
{
    uint64_t now = in->now_ns;
    bool override = in->override_performance;

    memset(st->core_use, 0, sizeof st->core_use);
    memset(st->core_fixed, 0, sizeof st->core_fixed);
    memset(st->dom_floor, 0, sizeof st->dom_floor);
    memset(st->dom_max, 0, sizeof st->dom_max);
    memset(st->lat_limit, -1, sizeof st->lat_limit);
    for (size_t i = 0; i < in->n_vcpus; i++) {
        st->excl_core[i] = NO_CORE;
    }
    cpuset_zero(&st->fixed_all);
    cpuset_zero(&st->smt_private);
    st->n_excl_vm = 0;
    /* Classes, latency bounds, unmanaged load. */
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
            fixed_load(st, in, v);
        } else if (override || vm->policy.kind == POL_PERFORMANCE || lat) {
            st->vm_class[v] = C_EXCLUSIVE;
            st->vm_reason[v] = override ? POL_R_OVERRIDE
                               : vm->policy.kind == POL_PERFORMANCE
                               ? POL_R_PERFORMANCE : POL_R_LATENCY_HINT;
            st->excl_vm[st->n_excl_vm++] = (uint32_t) v;
        } else {
            st->vm_class[v] = C_PACKED;
            st->vm_reason[v] = POL_R_PACKED;
        }
    }
}

/* Whether VM 'v' takes own cores in pass 'pass' of own_assign(). */
static bool
in_pass(const struct pol_state *st, const struct pol_vm *vm, size_t v,
        int pass)
{
    return st->vm_class[v] == C_EXCLUSIVE
           && (pass == 0 ? vm->policy.kind == POL_PERFORMANCE
               : pass == 1 ? st->vm_reason[v] == POL_R_LATENCY_HINT
               : vm->policy.kind != POL_PERFORMANCE
                 && st->vm_reason[v] == POL_R_OVERRIDE);
}

void
own_assign(struct pol_state *st, const struct pol_input *in)
{
    const struct cpuset *usable = &st->usable;

    for (int pass = 0; pass < 3; pass++) {
        size_t want = 0, have = 0;

        if (pass == 2) {
            /* Only own_classify()'s exclusive VMs have this reason. */
            for (size_t x = 0; x < st->n_excl_vm; x++) {
                if (st->vm_reason[st->excl_vm[x]] == POL_R_OVERRIDE) {
                    want += in->vms[st->excl_vm[x]].n_vcpus;
                }
            }
            for (unsigned kc = 0; kc < st->n_cores; kc++) {
                have += !st->core_use[kc]
                        && core_usable_threads(st, kc, usable);
            }
        }
        for (size_t x = 0; x < st->n_excl_vm; x++) {
            size_t v = st->excl_vm[x];

            if (!in_pass(st, &in->vms[v], v, pass)) {
                continue;
            }
            if ((pass == 2 && want > have)
                || !assign_exclusive(st, in, usable, v)) {
                /* Not enough cores: share the pool (documented). */
                st->vm_class[v] = C_PACKED;
            }
        }
    }
    st->n_excl = 0;
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint32_t v = in->vcpus[i].vm;
        uint32_t key = in->vms[v].id * 2654435761u ^ in->vcpus[i].idx;

        st->prev_core[i] = st->vm_class[v] == C_EXCLUSIVE ? st->excl_core[i]
                                                          : NO_CORE;
        if (st->prev_core[i] != NO_CORE) {
            st->excl_vcpu[st->n_excl++] = (uint32_t) i;
        }
        if (st->prev_key[i] != key || st->vm_class[v] != C_PACKED) {
            st->prev_big[i] = 0;
            st->big_prev[i] = NO_CORE;
        }
        st->prev_key[i] = key;
    }
}
