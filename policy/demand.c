/* policy/demand.c -- What the packed set needs.
 *
 * The packed VMs' aggregate demand (docs/policy.md, "Demand of the
 * packed set"):
 *   need = sum(avg_i g_i) + z sqrt(sum(var_i g_i^2)) + full cores,
 * g_i = 100 / (100 - headroom of its VM); a vCPU warming up, or of a VM
 * whose ready time is above spread_ready_ppm, counts as one full core
 * (without headroom: it cannot use more); an idle hint counts 0.  The
 * last measured aggregate, with headroom, is a floor (fast feedback when
 * the load steps up).  Per vCPU, a thread must offer max(slow_i, avg_i)
 * g_i; the vCPUs whose need exceeds the slowest pool thread at the
 * lowest point are the misfit candidates (misfit.c).  Also the VMs'
 * frequency floors, boosts and latency bounds. */

#include <config.h>

#include "policy/policy.h"

#include "policy/state.h"

/* The slowest pool thread at the lowest point, less the margin: a vCPU
 * needing more may be a misfit at some level. */
static uint32_t
pool_thread_low(const struct pol_state *st)
{
    uint32_t thr_lo = 0;

    for (unsigned i = 0; i < st->n_pool; i++) {
        const struct pol_domain *d =
            &st->m->domains[st->core_dom[st->pool[i]]];
        uint32_t c = (uint32_t) d->opps[0].capacity
                     * (100 - DOWN_MARGIN_PCT) / 100;

        thr_lo = i == 0 || c < thr_lo ? c : thr_lo;
    }
    return thr_lo;
}

/* Whether packed VM 'vm' waits (ready time above spread_ready_ppm) and
 * whether its ready time is rising (sets st->unstable). */
static bool
vm_ready(struct pol_state *st, const struct pol_input *in,
         const struct pol_vm *vm)
{
    const struct pol_config *cfg = &st->cfg;
    bool ready = false;

    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        const struct pol_load *ld = &in->vcpus[vm->first_vcpu + j].load;

        ready |= ld->ready_ppm > cfg->spread_ready_ppm;
        if (ld->last_ready_ppm > cfg->spread_ready_ppm / RISE_READY_DIV
            && ld->last_ready_ppm > ld->ready_ppm) {
            st->unstable = true;              /* Rising: look again soon. */
        }
    }
    return ready;
}

/* Per-vCPU needs of packed VM 'vm' with headroom factor 'g' (a full
 * core each when 'ready' or warming up), added to the sums; returns
 * whether a vCPU is warming up. */
static bool
vm_needs(struct pol_state *st, const struct pol_input *in,
         const struct pol_vm *vm, double g, bool ready, double *s_avg,
         uint32_t thr_lo)
{
    const struct pol_config *cfg = &st->cfg;
    bool warm = false;

    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint32_t i = vm->first_vcpu + j;
        const struct pol_load *ld = &in->vcpus[i].load;
        double r;

        *s_avg += ld->avg_cap;
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
        st->s_full += st->vavg[i];
        st->s_recent += st->vavg[i] < st->vlast[i] ? st->vavg[i]
                                                   : st->vlast[i];
        st->s_var += st->vvar[i];
        st->s_last += st->vlast[i];
        if (st->vr[i] > st->r_max) {
            st->r_max = (uint32_t) st->vr[i];
        }
        if (st->vr[i] > thr_lo) {
            st->bigc[st->n_bigc++] = i;
        }
    }
    return warm;
}

void
demand_sum(struct pol_state *st, const struct pol_input *in)
{
    const struct pol_config *cfg = &st->cfg;
    uint64_t now = in->now_ns;
    uint32_t thr_lo = pool_thread_low(st);
    double s_avg = 0;

    st->r_max = 0;
    st->n_bigc = 0;
    st->s_full = st->s_var = st->s_last = st->s_recent = 0;
    st->n_run = 0;
    st->any_packed = st->spread = false;
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool save = vm->policy.kind == POL_POWERSAVE
                    || active_until(vm->hints.batch_until_ns, now);
        uint32_t h = save ? cfg->powersave_headroom_pct : cfg->headroom_pct;
        double g = 100.0 / (100 - h);
        bool idle = active_until(vm->hints.idle_until_ns, now);
        bool ready, warm = false;

        if (st->vm_class[v] != C_PACKED) {
            continue;
        }
        st->any_packed |= vm->n_vcpus > 0;
        ready = vm_ready(st, in, vm) && !idle;
        st->n_run += idle ? 0 : vm->n_vcpus;
        if (idle) {
            for (uint32_t j = 0; j < vm->n_vcpus; j++) {
                uint32_t i = vm->first_vcpu + j;

                st->vr[i] = st->vavg[i] = st->vvar[i] = st->vlast[i] = 0;
                st->vslow[i] = 0;
            }
        } else {
            warm = vm_needs(st, in, vm, g, ready, &s_avg, thr_lo);
        }
        if (in->override_performance) {
            st->vm_reason[v] = POL_R_OVERRIDE;
        } else if (ready) {
            st->vm_reason[v] = POL_R_READY_SPREAD;
            st->spread = st->unstable = true;
        } else if (warm) {
            st->vm_reason[v] = POL_R_WARMUP;
        }
        if (active_until(vm->hints.boost_until_ns, now)) {
            st->unstable = true;
        }
    }
    st->d_avg = s_avg;
}

/* Applies VM 'vm''s floor, boost and latency bound to the CPUs 'set'. */
static void
apply_wishes(struct pol_state *st, const struct pol_vm *vm, size_t v,
             bool boost, const struct cpuset *set)
{
    const struct pol_model *m = st->m;

    CPUSET_FOREACH (c, set) {
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

void
demand_floors(struct pol_state *st, const struct pol_input *in)
{
    const struct cpuset *usable = &st->usable;

    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool boost = active_until(vm->hints.boost_until_ns, in->now_ns);
        struct cpuset set;

        if (st->vm_class[v] == C_PACKED && !vm->policy.min_freq_khz
            && !boost && !st->vm_lat[v]) {
            continue;                    /* Nothing to apply. */
        }
        cpuset_zero(&set);
        if (st->vm_class[v] == C_EXCLUSIVE) {
            for (uint32_t j = 0; j < vm->n_vcpus; j++) {
                uint16_t kc = st->excl_core[vm->first_vcpu + j];

                if (kc != NO_CORE) {
                    core_cpus(st, kc, usable, &set);
                    st->dom_max[st->core_dom[kc]] = true;
                }
            }
        } else if (st->vm_class[v] == C_PACKED) {
            for (unsigned i = 0; i < st->n_pool; i++) {
                core_cpus(st, st->pool[i], usable, &set);
            }
        } else if (st->vm_class[v] == C_ISOLATED) {
            for (uint32_t j = 0; j < st->iso_n[v]; j++) {
                core_cpus(st, st->iso_core[vm->first_vcpu + j], usable,
                          &set);
            }
        } else {
            continue;
        }
        apply_wishes(st, vm, v, boost, &set);
    }
    st->n_lvl_moved = 0;
    for (unsigned di = 0; di < st->m->n_domains; di++) {
        if (in->override_performance || st->dom_max[di] || st->dom_floor[di]
            || in->thermal_cap_khz[di]) {
            st->lvl_moved[st->n_lvl_moved++] = (uint16_t) di;
        }
    }
}
