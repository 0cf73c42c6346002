/* policy/iso.c -- SMT isolation: whole cores for VMs that may not share.
 *
 * A VM with share_smt false must never have a vCPU on one thread of a
 * core while another VM's vCPU runs on a sibling thread (the L1TF/MDS
 * class of leaks).  A packed VM's allowed set is the whole pool and the
 * kernel balances inside it, so such a VM cannot be pooled: it gets
 * whole cores of its own, which its vCPUs share among themselves, as
 * many as hold its own aggregate demand at nominal (the pool's
 * estimator, demand.c), run at the lowest point that holds it.  Own
 * cores of performance VMs and misfits are whole cores already.  Under
 * core scheduling the kernel keeps VMs apart itself and nothing is
 * reserved.  See docs/policy.md, "SMT isolation". */

#include <config.h>

#include "policy/policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "policy/state.h"

bool
iso_core_ok(const struct pol_state *st, const struct pol_input *in,
            size_t v, unsigned kc)
{
    if (in->vms[v].policy.share_smt) {
        return true;
    }
    for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
        if (cpuset_has(&st->fixed_all, st->core_cpu[kc][s])) {
            return false;
        }
    }
    return true;
}

/* Aggregate demand of VM 'v' with its headroom, counted as demand.c
 * counts the pool's: average plus POOL_Z sigmas, at least the last
 * sample's sum; a vCPU warming up or of a VM with ready time counts one
 * full core, an idle hint nothing.  '*rmax' = its largest vCPU need. */
static double
vm_need(const struct pol_state *st, const struct pol_input *in, size_t v,
        float *rmax)
{
    const struct pol_config *cfg = &st->cfg;
    const struct pol_vm *vm = &in->vms[v];
    bool save = vm->policy.kind == POL_POWERSAVE
                || active_until(vm->hints.batch_until_ns, in->now_ns);
    double g = 100.0 / (100 - (save ? cfg->powersave_headroom_pct
                                    : cfg->headroom_pct));
    double a = 0, var = 0, last = 0, up;
    bool ready = false;

    *rmax = 0;
    if (active_until(vm->hints.idle_until_ns, in->now_ns)) {
        return 0;
    }
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        ready |= in->vcpus[vm->first_vcpu + j].load.ready_ppm
                 > cfg->spread_ready_ppm;
    }
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        const struct pol_load *ld = &in->vcpus[vm->first_vcpu + j].load;
        double r = POL_CAPACITY_SCALE;

        if (ld->n_samples < cfg->warmup_samples || ready) {
            a += POL_CAPACITY_SCALE;
            last += POL_CAPACITY_SCALE;
        } else {
            r = (ld->slow_cap > ld->avg_cap ? ld->slow_cap : ld->avg_cap) * g;
            r = r > POL_CAPACITY_SCALE ? POL_CAPACITY_SCALE : r;
            a += ld->avg_cap * g;
            var += (double) ld->var_cap2 * g * g;
            last += ld->last_cap * g;
        }
        if (r > *rmax) {
            *rmax = (float) r;
        }
    }
    up = a + POOL_Z * sqrt(var);
    return last > up ? last : up;
}

/* Capacity of whole core 'kc' at nominal: one thread, with the SMT gain
 * when two or more of its threads are usable (all of them are the same
 * VM's). */
static uint32_t
core_nominal(const struct pol_state *st, unsigned kc)
{
    uint32_t c = st->nom_cap[st->core_dom[kc]];

    return core_usable_threads(st, kc, &st->usable) > 1
           ? pct_of(c, st->m->smt_capacity_pct) : c;
}

static bool
core_free(const struct pol_state *st, const struct pol_input *in,
          size_t v, unsigned kc)
{
    return kc < st->n_cores && !st->core_use[kc]
           && core_usable_threads(st, kc, &st->usable)
           && iso_core_ok(st, in, v, kc);
}

/* Free cores VM 'v' may take, in the order it takes them: the cores its
 * vCPUs held before (no pin change), then cores of packages already
 * awake, then the rest, each in wake order.  Returns how many, with
 * '*n_prev' of them held before. */
static unsigned
candidates(const struct pol_state *st, const struct pol_input *in,
           size_t v, uint16_t *cand, unsigned *n_prev)
{
    const struct pol_vm *vm = &in->vms[v];
    bool awake[POL_MAX_PKGS] = { false }, seen[POL_MAX_CPUS] = { false };
    unsigned n = 0;

    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint32_t i = vm->first_vcpu + j;
        uint16_t kc = st->iso_core[i];

        if (st->iso_key[i] == (vm->id * 2654435761u ^ in->vcpus[i].idx)
            && kc != NO_CORE && core_free(st, in, v, kc) && !seen[kc]) {
            seen[kc] = true;
            cand[n++] = kc;
        }
    }
    *n_prev = n;
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_use[kc] && core_usable_threads(st, kc, &st->usable)) {
            awake[core_pkg(st, kc)] = true;
        }
    }
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned o = 0; o < st->n_cores; o++) {
            unsigned kc = st->core_order[o];

            if (!seen[kc] && awake[core_pkg(st, kc)] == !pass
                && core_free(st, in, v, kc)) {
                seen[kc] = true;
                cand[n++] = (uint16_t) kc;
            }
        }
    }
    return n;
}

/* Gives VM 'v' (packed, share_smt false) its whole cores, at most
 * 'most': enough to hold its need at nominal; the cores it held keep it
 * while they hold the need with the packing margin (no resize, no pin
 * change, on noise).  Returns the number taken. */
static unsigned
take_cores(struct pol_state *st, const struct pol_input *in, size_t v,
           unsigned most)
{
    const struct pol_vm *vm = &in->vms[v];
    uint16_t cand[POL_MAX_CPUS];
    unsigned n_prev, nc = candidates(st, in, v, cand, &n_prev);
    unsigned n_up = 0, n_down = 0, n;
    double need = vm_need(st, in, v, &st->iso_rmax[v]), cum = 0;

    for (unsigned q = 0; q < nc && (!n_up || !n_down); q++) {
        cum += core_nominal(st, cand[q]);
        if (!n_up && cum >= need) {
            n_up = q + 1;
        }
        if (!n_down && cum >= need * (100 + DOWN_MARGIN_PCT) / 100) {
            n_down = q + 1;
        }
    }
    n = n_up ? n_up : nc;
    if (n_prev > n) {
        unsigned keep = n_down ? n_down : nc;

        n = n_prev < keep ? n_prev : keep;
    }
    n = n > most ? most : n;
    n = n > vm->n_vcpus ? vm->n_vcpus : n;
    n = n > nc ? nc : n;
    st->iso_need[v] = (float) need;
    st->iso_cap[v] = 0;
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint32_t i = vm->first_vcpu + j;

        st->iso_core[i] = j < n ? cand[j] : NO_CORE;
        if (j < n) {
            st->core_use[cand[j]] = 3;
            st->iso_cap[v] += core_nominal(st, cand[j]);
            core_cpus(st, cand[j], &st->usable, &st->smt_private);
        }
    }
    return n;
}

/* Whole cores already: a no-share VM's own cores join smt_private. */
static void
own_private(struct pol_state *st, const struct pol_input *in, size_t v)
{
    const struct pol_vm *vm = &in->vms[v];

    st->vm_smt[v] = SMT_OWN;
    for (uint32_t j = 0; j < vm->n_vcpus; j++) {
        uint16_t kc = st->excl_core[vm->first_vcpu + j];

        if (kc != NO_CORE) {
            core_cpus(st, kc, &st->usable, &st->smt_private);
        }
    }
}

void
iso_assign(struct pol_state *st, const struct pol_input *in)
{
    unsigned n_free = 0, left = 0, shared = 0;

    st->n_iso = 0;
    for (size_t v = 0; v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];

        st->iso_n[v] = 0;
        if (st->vm_class[v] == C_UNMANAGED || vm->policy.share_smt) {
            st->vm_smt[v] = vm->policy.share_smt ? SMT_SHARES : SMT_FIXED;
        } else if (st->vm_class[v] == C_EXCLUSIVE) {
            own_private(st, in, v);
        } else {
            st->vm_smt[v] = in->sched_core ? SMT_KERNEL
                            : vm->n_vcpus ? SMT_NO_CORE : SMT_SHARES;
            left += st->vm_smt[v] == SMT_NO_CORE;
        }
        shared |= st->vm_class[v] == C_PACKED && vm->policy.share_smt
                  && vm->n_vcpus;
    }
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        n_free += !st->core_use[kc]
                  && core_usable_threads(st, kc, &st->usable);
    }
    /* In VM order; each leaves a core for every no-share VM after it and
     * one for the pool (the first VMs keep theirs when cores run out). */
    for (size_t v = 0; v < in->n_vms && left; v++) {
        unsigned most, n;

        if (st->vm_smt[v] != SMT_NO_CORE) {
            continue;
        }
        left--;
        most = n_free > left + shared ? n_free - left - shared
               : n_free > shared ? 1 : 0;
        n = most ? take_cores(st, in, v, most) : 0;
        if (n) {
            n_free -= n;
            st->iso_n[v] = (uint16_t) n;
            st->vm_class[v] = C_ISOLATED;
            st->n_iso++;
            st->vm_reason[v] = POL_R_SMT_ISOLATED;
            st->vm_smt[v] = SMT_GROUP;
        }
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        uint32_t v = in->vcpus[i].vm;

        st->iso_key[i] = in->vms[v].id * 2654435761u ^ in->vcpus[i].idx;
        if (st->vm_class[v] != C_ISOLATED) {
            st->iso_core[i] = NO_CORE;
        }
    }
}

void
iso_points(struct pol_state *st, const struct pol_input *in)
{
    double g = 100.0 / (100 - st->cfg.headroom_pct);

    memset(st->iso_khz, 0, sizeof st->iso_khz);
    for (size_t v = 0; st->n_iso && v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];

        if (st->vm_class[v] != C_ISOLATED) {
            continue;
        }
        for (uint32_t j = 0; j < st->iso_n[v] && j < vm->n_vcpus; j++) {
            unsigned kc = st->iso_core[vm->first_vcpu + j];
            unsigned di = st->core_dom[kc];
            double gain = core_usable_threads(st, kc, &st->usable) > 1
                          ? st->m->smt_capacity_pct / 100.0 : 1.0;
            double r = st->iso_need[v] / st->iso_n[v] / gain;
            uint32_t f;

            r = r < st->iso_rmax[v] ? st->iso_rmax[v] : r;
            r = r > POL_CAPACITY_SCALE ? POL_CAPACITY_SCALE : ceil(r);
            f = misfit_need_khz(st, in, di, (uint32_t) r);
            st->iso_khz[di] = f > st->iso_khz[di] ? f : st->iso_khz[di];
        }
    }
    /* An unmanaged no-share VM's fixed cores: its load on one thread. */
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_use[kc] == 3 && st->core_fixed[kc]) {
            unsigned di = st->core_dom[kc];
            double r = st->core_fixed[kc] * g;
            uint32_t f = misfit_need_khz(st, in, di, (uint32_t)
                                         (r > POL_CAPACITY_SCALE
                                          ? POL_CAPACITY_SCALE : r));

            st->iso_khz[di] = f > st->iso_khz[di] ? f : st->iso_khz[di];
        }
    }
}

/* Expected busy time 'load' (capacity units) on core 'kc' of plan 'p':
 * its first usable thread, then the siblings' SMT share. */
static void
core_load(struct pol_state *st, const struct cpuset *usable,
          const struct pol_plan *p, unsigned kc, double load)
{
    const struct pol_model *m = st->m;
    unsigned di = st->core_dom[kc];
    uint32_t tc = dom_cap_at(st, di, p->dom_freq_khz[di]);

    for (unsigned s = 0; s < st->core_nsib[kc] && tc; s++) {
        unsigned c = st->core_cpu[kc][s];
        double t = s ? (double) tc * (m->smt_capacity_pct - 100) / 100 : tc;
        double u;

        if (!cpuset_has(usable, c) || t <= 0) {
            continue;
        }
        u = load < t ? load : t;
        st->busy_ppm[c] = (uint32_t) (u * 1e6 / t);
        load -= u;
    }
}

void
iso_busy(struct pol_state *st, const struct pol_input *in,
         const struct cpuset *usable, struct pol_plan *p)
{
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_use[kc] == 3 && st->core_fixed[kc]) {
            core_load(st, usable, p, kc, st->core_fixed[kc]);
        }
    }
    /* A group's average load, shared evenly over its cores. */
    for (size_t v = 0; st->n_iso && v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        double avg = 0;

        if (st->vm_class[v] != C_ISOLATED || !st->iso_n[v]) {
            continue;
        }
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            avg += in->vcpus[vm->first_vcpu + j].load.avg_cap;
        }
        for (uint32_t j = 0; j < st->iso_n[v] && j < vm->n_vcpus; j++) {
            core_load(st, usable, p, st->iso_core[vm->first_vcpu + j],
                      avg / st->iso_n[v]);
        }
    }
}

bool
iso_trim(struct pol_state *st, const struct pol_input *in,
         const struct cpuset *usable, struct pol_plan *p)
{
    const struct pol_config *cfg = &st->cfg;
    bool any = false;

    for (size_t v = 0; st->n_iso && in->cpu_busy_ppm && v < in->n_vms; v++) {
        const struct pol_vm *vm = &in->vms[v];
        bool save;
        double g, budget = 0;
        uint16_t cand[POL_MAX_CPUS];
        unsigned n = 0;

        if (st->vm_class[v] != C_ISOLATED) {
            continue;
        }
        save = vm->policy.kind == POL_POWERSAVE
               || active_until(vm->hints.batch_until_ns, in->now_ns);
        g = 100.0 / (100 - (save ? cfg->powersave_headroom_pct
                                 : cfg->headroom_pct));
        /* Its recent demand: per vCPU the lesser of its average and its
         * last period (a whole core while warming up), as the pool's. */
        for (uint32_t j = 0; j < vm->n_vcpus; j++) {
            const struct pol_load *ld = &in->vcpus[vm->first_vcpu + j].load;

            budget += ld->n_samples < cfg->warmup_samples
                      ? POL_CAPACITY_SCALE
                      : (ld->avg_cap < ld->last_cap ? ld->avg_cap
                                                    : ld->last_cap) * g;
            if (j < st->iso_n[v]) {
                cand[n++] = st->iso_core[vm->first_vcpu + j];
            }
        }
        any |= trim_cores(st, in, usable, cand, n, budget, p);
    }
    return any;
}

void
iso_explain(const struct pol_state *st, const struct pol_input *in,
            size_t vm, char *buf, size_t len)
{
    size_t at = strlen(buf);
    double per, worth, cost;

    if (!st || vm >= in->n_vms || vm >= st->max_vcpus || at + 1 >= len) {
        return;
    }
    switch ((enum smt_how) st->vm_smt[vm]) {
    case SMT_GROUP:
        per = st->iso_n[vm] ? (double) st->iso_cap[vm] / st->iso_n[vm] : 1;
        worth = st->iso_need[vm] / per;
        cost = st->iso_n[vm] - worth;
        snprintf(buf + at, len - at,
                 "  SMT isolation: %u whole core%s of its own (no other "
                 "VM on their sibling threads) for a need of %.1f "
                 "core%s; isolation cost %.1f core%s.",
                 st->iso_n[vm], st->iso_n[vm] == 1 ? "" : "s", worth,
                 worth == 1.0 ? "" : "s", cost > 0 ? cost : 0.0,
                 cost > 0 && cost <= 1.0 ? "" : "s");
        break;
    case SMT_OWN:
        snprintf(buf + at, len - at,
                 "  SMT isolation: its own cores are whole cores; "
                 "isolation cost no core.");
        break;
    case SMT_KERNEL:
        snprintf(buf + at, len - at,
                 "  SMT isolation: by the kernel's core scheduling "
                 "(sched_core); it shares the pool, which counts no SMT "
                 "gain between VMs.");
        break;
    case SMT_FIXED:
        snprintf(buf + at, len - at,
                 "  SMT isolation: its fixed cores are kept out of the "
                 "packed set.");
        break;
    case SMT_NO_CORE:
        snprintf(buf + at, len - at,
                 "  SMT isolation NOT held: no free core was left for it, "
                 "so it shares cores with other VMs.");
        break;
    case SMT_SHARES:
    default:
        break;
    }
}
