/* manager/cycle.c -- One decision cycle (see cycle.h). */

#include <config.h>

#include "manager/cycle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/attrib.h"
#include "manager/hkset.h"
#include "manager/inputs/haltstats.h"
#include "manager/log.h"
#include "manager/modelcheck.h"
#include "manager/util.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "vpowerd"

#define OFFLINE_MAX_TRIES 3

/* The empty set, to copy from (see input_vms). */
static const struct cpuset no_cpus;

/* Counts a run-time error (vpd.n_errors, exported as a metric). */
static void
count_error(struct vpd *d, enum vpd_err_kind k)
{
    d->n_errors[k]++;
}

void
cycle_create(struct vpd *d, const struct cycle_clock *clock,
             const struct cycle_hooks *hooks)
{
    struct cycle *cy = XNEW(struct cycle);

    cy->clock = *clock;
    if (hooks) {
        cy->hooks = *hooks;
    }
    cy->hv_up = true;
    d->cyc = cy;
    d->ready_source = d->hv_ops->name;
}

void
cycle_destroy(struct vpd *d)
{
    struct cycle *cy = d->cyc;

    pol_plan_destroy(d->plan);
    pol_plan_destroy(d->applied);
    d->plan = d->applied = NULL;
    if (!cy) {
        return;
    }
    pol_plan_destroy(cy->baseline);
    free(cy->pvms);
    free(cy->pvm_fixed);
    free(cy->pvcpus);
    free(cy->vm_of);
    free(cy->vcpu_of);
    free(cy->attr_vcpus);
    free(cy->vm_j);
    free(cy->vm_busy_j);
    free(cy->acts);
    free(cy->st);
    free(cy->st_src);
    free(cy);
    d->cyc = NULL;
}

uint64_t
cycle_now_ns(const struct vpd *d)
{
    return d->cyc->clock.now_ns(d->cyc->clock.aux);
}

/* ---- Originals ------------------------------------------------------ */

/* Saves 'cpu''s frequency range, idle disables and online state the
 * first time the cycle is about to change one of them. */
static int
save_cpu_freq(struct vpd *d, unsigned cpu)
{
    struct cycle_orig *o = &d->cyc->orig[cpu];
    struct drv_freq f;
    int r;

    if (o->freq_saved) {
        return 0;
    }
    r = d->host_ops->get_freq(d->host, cpu, &f);
    if (r < 0) {
        return r;
    }
    o->min_khz = f.min_khz;
    o->max_khz = f.max_khz;
    o->freq_saved = true;
    return 0;
}

static int
save_cpu_idle(struct vpd *d, unsigned cpu)
{
    struct cycle_orig *o = &d->cyc->orig[cpu];
    struct drv_idle id;
    int r;

    if (o->idle_saved) {
        return 0;
    }
    r = d->host_ops->get_idle(d->host, cpu, &id);
    if (r < 0) {
        return r;
    }
    o->n_idle = id.n_states;
    memcpy(o->disabled, id.disabled, sizeof o->disabled);
    o->idle_saved = true;
    return 0;
}

static int
save_cpu_online(struct vpd *d, unsigned cpu, bool online)
{
    struct cycle *cy = d->cyc;
    struct cycle_orig *o = &cy->orig[cpu];
    int r;

    if (o->online_saved) {
        return 0;
    }
    if (cy->hooks.save_online) {
        r = cy->hooks.save_online(cy->hooks.aux, cpu, online);
        if (r < 0) {
            return r;
        }
    }
    o->online = online;
    o->online_saved = true;
    return 0;
}

/* ---- Sampling ------------------------------------------------------- */

static void
sample_host(struct vpd *d, uint64_t interval_ns)
{
    struct cycle *cy = d->cyc;
    uint64_t interval_us = interval_ns / 1000;

    CPUSET_FOREACH (c, &cy->managed) {
        struct vpd_cpu *vc = &d->cpus[c];
        struct cycle_orig *o = &cy->orig[c];
        struct drv_freq f;
        uint64_t idle_us = 0;
        uint32_t khz, ppm;

        cy->busy_ppm[c] = UINT32_MAX;       /* Unknown until measured. */
        if (!vc->online) {
            cy->busy_ppm[c] = 0;
            continue;
        }
        vc->freq_khz = d->host_ops->get_freq(d->host, (unsigned) c, &f) == 0
                       ? f.cur_khz : 0;
        cy->ran_khz[c] = vc->freq_khz;
        /* An average over the interval where one is measured (APERF/
         * MPERF); 0 is the policy's "nominal". */
        if (cy->hooks.ran_khz
            && cy->hooks.ran_khz(cy->hooks.aux, (unsigned) c, &khz)) {
            cy->ran_khz[c] = khz;
        }
        if (d->host_ops->busy_ppm
            && d->host_ops->busy_ppm(d->host, (unsigned) c, &ppm) == 0) {
            cy->busy_ppm[c] = ppm > 1000000u ? 1000000u : ppm;
            vc->nonidle_us += (uint64_t) cy->busy_ppm[c] * interval_us
                              / 1000000u;
            continue;
        }
        if (d->host_ops->get_idle(d->host, (unsigned) c, &vc->idle) < 0) {
            o->idle_valid = false;
            continue;
        }
        for (unsigned s = 0; s < vc->idle.n_states; s++) {
            idle_us += vc->idle.time_us[s];
        }
        /* Residencies that never moved on any CPU (fixture trees) say
         * nothing: the vCPU-based estimate stands in.  Once some CPU's
         * has moved, the counters are live, and one standing still is a
         * CPU that never idled: fully busy (a host saturated since the
         * daemon started, whose cores would otherwise read as idle). */
        if (o->idle_valid && interval_us
            && (idle_us > o->last_idle_us || cy->idle_live)) {
            uint64_t di = idle_us > o->last_idle_us
                          ? idle_us - o->last_idle_us : 0;
            uint64_t busy = di >= interval_us ? 0 : interval_us - di;

            vc->nonidle_us += busy;
            cy->busy_ppm[c] = (uint32_t) (busy * 1000000u / interval_us);
            cy->idle_live = cy->idle_live || di > 0;
        }
        o->last_idle_us = idle_us;
        o->idle_valid = true;
    }
}

void
cycle_drop_vm(struct vpd *d, struct vpd_vm *gone)
{
    const struct cycle_hooks *h = &d->cyc->hooks;

    for (struct vpd_vm **p = &d->vms; *p; p = &(*p)->next) {
        if (*p == gone) {
            *p = gone->next;
            d->n_vms--;
            d->cyc->applied_stale = true;
            if (h->vm_gone) {
                h->vm_gone(h->aux, gone);
            }
            if (d->cyc->hint_vm == gone) {
                d->cyc->hint_vm = NULL;
            }
            free(gone->hint_apply);
            free(gone->vcpus);
            free(gone);
            return;
        }
    }
}

/* Samples 'vm''s vCPUs: the driver gives the CPU each ran on, halt-poll
 * time and run and ready time; the vcpu_counters hook may replace run and
 * ready time with a finer source.  src[i] says which where there is that
 * hook or 'all_src'; otherwise every counter is the driver's and 'src'
 * is left as it was (setting it is a memset call per VM).  Returns the
 * driver's result.  Inline: sample_vms() reads every VM each period. */
static inline int
read_vcpus(struct vpd *d, struct vpd_vm *vm, struct drv_vcpu_stat *st,
           uint8_t *src, bool all_src, size_t max, size_t *n)
{
    struct cycle *cy = d->cyc;
    int r;

    /* Drivers fill what they know; fields appended to drv_vcpu_stat later
     * (has_halt...) must read as "not available" from older drivers. */
    memset(st, 0, max * sizeof *st);
    r = d->hv_ops->vcpu_stats(d->hv, vm->dom.uuid, st, max, n);
    if (r < 0) {
        return r;
    }
    if (cy->hooks.vcpu_counters || all_src) {
        size_t got = *n < max ? *n : max;

        for (size_t i = 0; i < got; i++) {
            src[i] = CYCLE_SRC_DRV;
        }
        if (cy->hooks.vcpu_counters) {
            cy->hooks.vcpu_counters(cy->hooks.aux, vm, st, src, got);
        }
    }
    return 0;
}

int
cycle_read_vcpus(struct vpd *d, struct vpd_vm *vm, struct drv_vcpu_stat *st,
                 uint8_t *src, size_t max, size_t *n)
{
    return read_vcpus(d, vm, st, src, true, max, n);
}

/* Folds vCPU 'vc''s new counters 'st' into its load.  Returns false if
 * the counters came from a new source (re-primed, no sample). */
static bool
sample_vcpu(struct vpd *d, struct vpd_vcpu *vc, const struct drv_vcpu_stat *st,
            uint8_t src, uint64_t interval_ns)
{
    struct cycle *cy = d->cyc;
    uint64_t busy, ready, poll;
    uint32_t khz = 0;
    bool here = st->cpu >= 0 && st->cpu < (int) d->n_cpus;

    vc->cpu = st->cpu;
    if (src != vc->src) {
        vc->src = src;
        vc->last_time_ns = st->time_ns;
        vc->last_delay_ns = st->delay_ns;
        vc->last_halt_ns = st->halt_poll_ns;
        return false;
    }
    busy = st->time_ns >= vc->last_time_ns ? st->time_ns - vc->last_time_ns
                                           : 0;
    ready = st->has_delay && st->delay_ns >= vc->last_delay_ns
            ? st->delay_ns - vc->last_delay_ns : 0;
    if (st->has_halt && st->halt_poll_ns >= vc->last_halt_ns) {
        /* Halt polling is the host spinning for wake-up latency, not
         * guest work. */
        poll = st->halt_poll_ns - vc->last_halt_ns;
        busy = halt_adjusted_busy_ns(busy, poll, 0);
        if (here) {
            cy->poll_ns[st->cpu] += poll;
        }
    }
    if (here) {
        khz = cy->ran_khz[st->cpu];
    }
    pol_load_update(&vc->load, &d->model, st->cpu, khz, busy, ready,
                    interval_ns);
    vc->busy_ns = busy;
    vc->ready_ns = ready;
    vc->sampled = true;
    vc->busy_total_ns += busy;
    vc->ready_total_ns += ready;
    vc->last_time_ns = st->time_ns;
    vc->last_delay_ns = st->delay_ns;
    vc->last_halt_ns = st->halt_poll_ns;
    return true;
}

/* What status calls ready_source: the one in use, both if VMs differ
 * (e.g. a domain whose QEMU pid file is missing). */
static void
set_ready_source(struct vpd *d, unsigned n_fine, unsigned n_drv)
{
    struct cycle *cy = d->cyc;
    const char *fine = cy->hooks.fine_name ? cy->hooks.fine_name : "?";

    if (n_fine && n_drv) {
        snprintf(cy->ready_src, sizeof cy->ready_src, "%s+%s", fine,
                 d->hv_ops->name);
        d->ready_source = cy->ready_src;
    } else if (n_fine) {
        d->ready_source = fine;
    } else if (n_drv) {
        d->ready_source = d->hv_ops->name;
    }
}

static void
sample_vms(struct vpd *d, uint64_t interval_ns)
{
    struct cycle *cy = d->cyc;
    struct vpd_vm *vm, *next;
    /* Whether st_src says whose each counter is (read_vcpus). */
    bool has_src = cy->hooks.vcpu_counters != NULL;
    unsigned n_fine = 0, n_drv = 0;

    for (vm = d->vms; vm; vm = next) {
        size_t n = 0;
        int r;

        next = vm->next;
        if (vm->n_vcpus > cy->cap_st) {
            cy->cap_st = vm->n_vcpus;
            cy->st = xrealloc(cy->st, cy->cap_st * sizeof *cy->st);
            cy->st_src = xrealloc(cy->st_src, cy->cap_st);
        }
        r = read_vcpus(d, vm, cy->st, cy->st_src, false, vm->n_vcpus, &n);
        if (r == -ENOENT) {
            LOG_INFO("domain %s gone", vm->dom.name);
            cycle_drop_vm(d, vm);
            continue;
        }
        if (r < 0) {
            count_error(d, VPD_E_LIBVIRT);
            n = 0;
        }
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            uint8_t src = has_src && i < n ? cy->st_src[i] : CYCLE_SRC_DRV;

            vm->vcpus[i].sampled = false;
            if (i < n && sample_vcpu(d, &vm->vcpus[i], &cy->st[i], src,
                                     interval_ns)) {
                n_fine += src == CYCLE_SRC_FINE;
                n_drv += src == CYCLE_SRC_DRV;
            }
        }
    }
    /* The same correction on the CPUs' busy share (cpuidle residency
     * counts polling as busy): the policy sizes pool cores' points from
     * it, and polling is not load. */
    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        if (cy->poll_ns[c] && cy->busy_ppm[c] != UINT32_MAX
            && interval_ns) {
            uint64_t sub = cy->poll_ns[c] * 1000000u / interval_ns;

            cy->busy_ppm[c] = cy->busy_ppm[c] > sub
                              ? (uint32_t) (cy->busy_ppm[c] - sub) : 0;
        }
        cy->poll_ns[c] = 0;
    }
    set_ready_source(d, n_fine, n_drv);
}

/* ---- Building the input --------------------------------------------- */

static void
ensure_capacity(struct vpd *d, size_t n_vms, size_t n_vcpus)
{
    struct cycle *cy = d->cyc;
    size_t cv = cy->cap_vms, cc = cy->cap_vcpus;
    struct pol_plan *np, *na, *nb;

    if (n_vms <= cv && n_vcpus <= cc && d->plan) {
        return;
    }
    while (cv < n_vms || cv < 8) {
        cv = cv ? 2 * cv : 8;
    }
    while (cc < n_vcpus || cc < 16) {
        cc = cc ? 2 * cc : 16;
    }
    cy->pvms = xrealloc(cy->pvms, cv * sizeof *cy->pvms);
    cy->pvm_fixed = xrealloc(cy->pvm_fixed, cv * sizeof *cy->pvm_fixed);
    for (size_t i = cy->cap_vms; i < cv; i++) {
        cy->pvm_fixed[i] = true;        /* New slots hold garbage. */
    }
    cy->vm_of = xrealloc(cy->vm_of, cv * sizeof *cy->vm_of);
    cy->pvcpus = xrealloc(cy->pvcpus, cc * sizeof *cy->pvcpus);
    cy->vcpu_of = xrealloc(cy->vcpu_of, cc * sizeof *cy->vcpu_of);
    cy->attr_vcpus = xrealloc(cy->attr_vcpus, cc * sizeof *cy->attr_vcpus);
    cy->vm_j = xrealloc(cy->vm_j, cv * sizeof *cy->vm_j);
    cy->vm_busy_j = xrealloc(cy->vm_busy_j, cv * sizeof *cy->vm_busy_j);
    np = pol_plan_create(cv, cc);
    na = pol_plan_create(cv, cc);
    nb = pol_plan_create(cv, cc);
    if (d->applied) {
        /* Host-level state in force carries over; VM parts are rebuilt
         * from the VMs each cycle. */
        na->active = d->applied->active;
        na->offline = d->applied->offline;
        memcpy(na->dom_freq_khz, d->applied->dom_freq_khz,
               sizeof na->dom_freq_khz);
        memcpy(na->idle_limit, d->applied->idle_limit,
               sizeof na->idle_limit);
    } else {
        memset(na->idle_limit, -1, sizeof na->idle_limit);
    }
    pol_plan_destroy(d->plan);
    pol_plan_destroy(d->applied);
    pol_plan_destroy(cy->baseline);
    d->plan = np;
    d->applied = na;
    cy->applied_stale = true;
    cy->baseline = nb;
    cy->cap_vms = cv;
    cy->cap_vcpus = cc;
}

/* Fills the input's VM and vCPU arrays from the registry, and d->applied's
 * VM part from what each VM has in force now (in the same order).  A slot
 * that holds the same VM or vCPU as at the last build already holds its
 * set (cycle.applied_stale), so only moved ones are copied. */
static void
input_vms(struct vpd *d, size_t *n_vms, size_t *n_vcpus)
{
    struct cycle *cy = d->cyc;
    struct pol_plan *a = d->applied;
    bool stale = cy->applied_stale;
    size_t nv = 0, nc = 0;

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        struct pol_vm *p = &cy->pvms[nv];

        /* Field by field, 'fixed' copied from an empty set: GCC turns
         * a clear of the struct or the set into a string store whose
         * start-up cost, once per VM, exceeds the copy.  The copy itself
         * is the dearest field, so a slot known empty is left so. */
        p->id = (uint32_t) vm->dom.id;
        p->policy = vm->policy;
        p->hints = vm->hints;
        p->unmanaged = vm->unmanaged || vm->migr_frozen;
        if (vm->migr_frozen) {
            /* Migrating: planned around where its vCPUs are allowed. */
            p->fixed = no_cpus;
            for (unsigned i = 0; i < vm->n_vcpus; i++) {
                cpuset_or(&p->fixed, &p->fixed, &vm->vcpus[i].applied);
            }
            cy->pvm_fixed[nv] = true;
        } else if (vm->dom.static_pinning || vm->unmanaged) {
            cpuset_and(&p->fixed, &vm->dom.static_cpus, &cy->managed);
            if (vm->unmanaged && cpuset_empty(&p->fixed)) {
                p->fixed = vm->dom.static_cpus;
            }
            cy->pvm_fixed[nv] = true;
        } else if (cy->pvm_fixed[nv]) {
            p->fixed = no_cpus;
            cy->pvm_fixed[nv] = false;
        }
        p->first_vcpu = (uint32_t) nc;
        p->n_vcpus = vm->n_vcpus;
        if (stale || cy->vm_of[nv] != vm) {
            a->vm_emulator[nv] = vm->emu_applied;
        }
        cy->vm_of[nv] = vm;
        a->vm_reason[nv] = (uint8_t) vm->reason;
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            struct pol_vcpu *pc = &cy->pvcpus[nc];
            struct vpd_vcpu *vc = &vm->vcpus[i];

            pc->vm = (uint32_t) nv;
            pc->idx = vc->idx;
            pc->load = vc->load;
            pc->cpu = vc->cpu;
            if (stale || cy->vcpu_of[nc] != vc) {
                a->vcpu_allowed[nc] = vc->applied;
            }
            cy->vcpu_of[nc] = vc;
            a->vcpu_vm[nc] = (uint32_t) nv;
            nc++;
        }
        nv++;
    }
    a->n_vms = nv;
    a->n_vcpus = nc;
    cy->applied_stale = false;
    *n_vms = nv;
    *n_vcpus = nc;
}

static void
build_input(struct vpd *d, struct pol_input *in)
{
    struct cycle *cy = d->cyc;
    size_t total = 0;

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        total += vm->n_vcpus;
    }
    ensure_capacity(d, d->n_vms, total);
    memset(in, 0, sizeof *in);
    input_vms(d, &in->n_vms, &in->n_vcpus);
    /* Host work is demand too: its CPU pressure spreads like a VM's
     * ready time (in the input, so the policy stays pure and a
     * recording shows what it was given). */
    hkset_demand(d, cy->pvcpus, in->n_vcpus);
    in->vms = cy->pvms;
    in->vcpus = cy->pvcpus;
    in->managed = cy->managed;
    /* CPUs we parked offline stay ours to wake (pol_input.online). */
    cpuset_and(&in->online, &d->applied->offline, &cy->managed);
    cpuset_or(&in->online, &in->online, &cy->online);
    in->now_ns = cycle_now_ns(d);
    in->sched_core = d->sched_core;
    in->override_performance = d->override_performance;
    if (cy->hooks.thermal_caps) {
        cy->hooks.thermal_caps(cy->hooks.aux, &d->model,
                               in->thermal_cap_khz);
    }
    /* Per-CPU busy and frequency, exactly as the recorder's C lines
     * write them, so a replay gives the policy the same input. */
    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        bool known = d->cpus[c].managed && d->cpus[c].online;

        cy->in_busy[c] = !known ? UINT32_MAX
                         : cy->busy_ppm[c] != UINT32_MAX ? cy->busy_ppm[c]
                         : 0;
        cy->in_khz[c] = known ? cy->ran_khz[c] : 0;
    }
    in->cpu_busy_ppm = cy->in_busy;
    in->cpu_ran_khz = cy->in_khz;
    memcpy(d->thermal_cap_khz, in->thermal_cap_khz,
           sizeof d->thermal_cap_khz);
}

void
cycle_prime(struct vpd *d)
{
    struct pol_input in;

    build_input(d, &in);
    sample_host(d, 0);
    d->cyc->last_sample_ns = cycle_now_ns(d);
}

/* ---- Applying ------------------------------------------------------- */

static int
apply_freq(struct vpd *d, unsigned dom, uint32_t khz)
{
    struct cycle *cy = d->cyc;
    int ret = 0;

    if (dom >= d->model.n_domains) {
        return -EINVAL;
    }
    CPUSET_FOREACH (c, &d->model.domains[dom].cpus) {
        struct drv_freq f;
        int r;

        if (!cpuset_has(&cy->managed, (unsigned) c) || !d->cpus[c].online) {
            continue;
        }
        r = save_cpu_freq(d, (unsigned) c);
        if (r == 0) {
            r = d->host_ops->get_freq(d->host, (unsigned) c, &f);
        }
        if (r == 0) {
            /* The target is a ceiling; the kernel governor chooses below
             * it (a floor would defeat the governor's own idling). */
            uint32_t lo = f.hw_min_khz ? f.hw_min_khz : f.min_khz;
            uint32_t hi = khz;

            if (f.hw_max_khz && hi > f.hw_max_khz) {
                hi = f.hw_max_khz;
            }
            if (hi < lo) {
                hi = lo;
            }
            r = d->host_ops->set_freq_range(d->host, (unsigned) c, lo, hi);
        }
        if (r == -ENOTSUP) {
            r = 0;                  /* No cpufreq on this CPU. */
        }
        if (r < 0 && !ret) {
            ret = r;
        }
    }
    return ret;
}

static int
apply_idle(struct vpd *d, unsigned cpu, int limit)
{
    struct drv_idle id;
    int r, ret = 0;

    r = save_cpu_idle(d, cpu);
    if (r == 0) {
        r = d->host_ops->get_idle(d->host, cpu, &id);
    }
    if (r < 0) {
        return r == -ENOTSUP || r == -ENOENT ? 0 : r;
    }
    for (unsigned s = 0; s < id.n_states; s++) {
        /* Deeper than the limit: disabled; with no limit, as found. */
        bool want = limit >= 0 ? (int) s > limit
                               : d->cyc->orig[cpu].disabled[s];

        if (id.disabled[s] != want) {
            r = d->host_ops->set_idle_disable(d->host, cpu, s, want);
            if (r < 0 && !ret) {
                ret = r;
            }
        }
    }
    return ret;
}

int
cycle_set_online(struct vpd *d, unsigned cpu, bool online)
{
    int r;

    if (!online && cpu == 0) {
        return -EPERM;              /* Never CPU0. */
    }
    r = save_cpu_online(d, cpu, d->cpus[cpu].online);
    if (r == 0) {
        r = d->host_ops->set_online(d->host, cpu, online);
    }
    if (r == 0) {
        d->cpus[cpu].online = online;
        if (online) {
            cpuset_set(&d->cyc->online, cpu);
        } else {
            cpuset_clr(&d->cyc->online, cpu);
        }
    }
    return r;
}

static void
action_failed(struct vpd *d, int r, enum vpd_err_kind kind, const char *what)
{
    LOG_WARN_RL("%s failed: %s (continuing with the rest of the plan)",
                what, strerror(-r));
    count_error(d, kind);
}

void
cycle_check_jobs(struct vpd *d)
{
    d->cyc->check_jobs = d->hv_ops->migr_job != NULL;
}

/* Whether a migration runs on 'vm' now, asked once per execution when
 * the decision was not preceded by the period's refresh
 * (cycle_check_jobs) and the driver's pins of 'vm' would wait behind
 * it.  A VM that cannot be asked counts as not migrating, and other jobs
 * do not count, as in that refresh. */
static bool
job_running(struct vpd *d, struct vpd_vm *vm)
{
    struct cycle *cy = d->cyc;
    enum drv_job job = DRV_JOB_NONE;

    if (!cy->check_jobs || (d->hv_ops->pin_may_wait
                            && !d->hv_ops->pin_may_wait(d->hv,
                                                        vm->dom.uuid))) {
        return false;
    }
    if (vm->job_seq != cy->exec_seq) {
        vm->job_seq = cy->exec_seq;
        vm->job_running = d->hv_ops->migr_job(d->hv, vm->dom.uuid, &job) == 0
                          && (job == DRV_JOB_MIGR_OUT
                              || job == DRV_JOB_MIGR_IN);
        if (vm->job_running) {
            /* Rate-limited: a migrating VM's hints keep asking. */
            LOG_RL(LOG_LVL_INFO, "domain %s is migrating: its pins wait "
                   "for the period", vm->dom.name);
        }
    }
    return vm->job_running;
}

/* A pin of a vCPU (x->vcpu) or of an emulator (x->vcpu == UINT32_MAX). */
static void
exec_pin(struct vpd *d, const struct pol_action *x)
{
    struct cycle *cy = d->cyc;
    struct pol_plan *a = d->applied;
    bool emu = x->type == POL_A_PIN_EMULATOR;
    struct vpd_vcpu *vc = NULL;
    struct vpd_vm *vm;
    char what[160];
    int r;

    if (x->vm >= a->n_vms || (!emu && x->vcpu >= a->n_vcpus)) {
        return;
    }
    vm = cy->vm_of[x->vm];
    if (vm->unmanaged || vm->migr_frozen || cpuset_empty(&x->set)
        || !cpuset_subset(&x->set, &cy->managed) || job_running(d, vm)) {
        return;
    }
    if (emu) {
        r = d->hv_ops->pin_emulator(d->hv, vm->dom.uuid, &x->set);
    } else {
        vc = cy->vcpu_of[x->vcpu];
        r = d->hv_ops->pin_vcpu(d->hv, vm->dom.uuid, vc->idx, &x->set);
    }
    if (r == 0) {
        /* d->applied's slots follow (cycle.applied_stale). */
        if (emu) {
            vm->emu_applied = a->vm_emulator[x->vm] = x->set;
        } else {
            vc->applied = a->vcpu_allowed[x->vcpu] = x->set;
        }
        d->n_actions[x->type]++;
    } else if (r != -ENOENT) {
        if (emu) {
            snprintf(what, sizeof what, "pinning %s emulator", vm->dom.name);
        } else {
            snprintf(what, sizeof what, "pinning %s vCPU %u", vm->dom.name,
                     vc->idx);
        }
        action_failed(d, r, VPD_E_LIBVIRT, what);
    }
}

/* A host action: online, offline, frequency, idle limit. */
static void
exec_host(struct vpd *d, const struct pol_action *x)
{
    struct cycle *cy = d->cyc;
    struct pol_plan *a = d->applied;
    char what[160];
    int r = 0;

    switch (x->type) {
    case POL_A_ONLINE:
        if (!cpuset_has(&cy->managed, x->cpu)) {
            return;
        }
        r = cycle_set_online(d, x->cpu, true);
        if (r < 0) {
            snprintf(what, sizeof what, "onlining cpu%u", x->cpu);
        } else {
            cpuset_clr(&a->offline, x->cpu);
            cy->offline_tries[x->cpu] = 0;
        }
        break;
    case POL_A_SET_FREQ:
        r = apply_freq(d, x->domain, x->khz);
        if (r < 0) {
            snprintf(what, sizeof what, "setting domain %u to %u kHz",
                     x->domain, x->khz);
        } else {
            a->dom_freq_khz[x->domain] = x->khz;
            if (x->domain < POL_MAX_DOMAINS) {
                d->dom_freq_changes[x->domain]++;
            }
        }
        break;
    case POL_A_IDLE_LIMIT:
        if (!cpuset_has(&cy->managed, x->cpu) || !d->cpus[x->cpu].online) {
            return;
        }
        r = apply_idle(d, x->cpu, x->state);
        if (r < 0) {
            snprintf(what, sizeof what, "idle limit %d on cpu%u", x->state,
                     x->cpu);
        } else {
            a->idle_limit[x->cpu] = (int8_t) x->state;
        }
        break;
    case POL_A_OFFLINE:
        if (x->cpu == 0 || !cpuset_has(&cy->managed, x->cpu)) {
            return;
        }
        r = cycle_set_online(d, x->cpu, false);
        if (r == 0) {
            cpuset_set(&a->offline, x->cpu);
        } else {
            /* EBUSY is retried on later cycles, a few times. */
            cy->offline_tries[x->cpu]++;
            snprintf(what, sizeof what, "offlining cpu%u (try %u)", x->cpu,
                     cy->offline_tries[x->cpu]);
        }
        break;
    default:
        return;
    }
    if (r < 0) {
        action_failed(d, r, VPD_E_SYSFS, what);
    } else {
        d->n_actions[x->type]++;
    }
}

static void
execute(struct vpd *d, const struct pol_action *acts, size_t n)
{
    d->cyc->exec_seq++;
    for (size_t i = 0; i < n; i++) {
        if (acts[i].type == POL_A_PIN_VCPU
            || acts[i].type == POL_A_PIN_EMULATOR) {
            exec_pin(d, &acts[i]);
        } else {
            exec_host(d, &acts[i]);
        }
    }
}

/* In dry-run mode, pretend the plan is in force so the log shows what
 * each decision would change. */
static void
pretend(struct vpd *d)
{
    struct cycle *cy = d->cyc;
    const struct pol_plan *p = d->plan;

    for (size_t i = 0; i < p->n_vms; i++) {
        cy->vm_of[i]->emu_applied = p->vm_emulator[i];
    }
    for (size_t i = 0; i < p->n_vcpus; i++) {
        cy->vcpu_of[i]->applied = p->vcpu_allowed[i];
    }
    cy->applied_stale = true;
    d->applied->active = p->active;
    d->applied->offline = p->offline;
    memcpy(d->applied->dom_freq_khz, p->dom_freq_khz,
           sizeof p->dom_freq_khz);
    memcpy(d->applied->idle_limit, p->idle_limit, sizeof p->idle_limit);
}

/* ---- Logging and energy --------------------------------------------- */

/* Each vCPU's load and reason, at debug level. */
static void
log_vcpus(const struct vpd *d)
{
    const struct cycle *cy = d->cyc;
    const struct pol_plan *p = d->plan;

    for (size_t i = 0; i < p->n_vcpus; i++) {
        const struct vpd_vcpu *vc = cy->vcpu_of[i];

        LOG_DEBUG("  %s/%u: avg %u peak %u cap, ready %u ppm, cpu %d, "
                  "reason %s", cy->vm_of[p->vcpu_vm[i]]->dom.name,
                  vc->idx, vc->load.avg_cap, vc->load.peak_cap,
                  vc->load.ready_ppm, vc->cpu,
                  pol_reason_text(p->vm_reason[p->vcpu_vm[i]]));
    }
}

/* One concise line: active CPUs, frequencies, each VM's allowed set
 * (info when something changed or in a dry run, else debug). */
static void
log_decision(struct vpd *d, int n_acts)
{
    struct cycle *cy = d->cyc;
    const struct pol_plan *p = d->plan;
    enum log_level lvl = d->dry_run || n_acts > 0 ? LOG_LVL_INFO
                                                  : LOG_LVL_DEBUG;
    char line[1024], set[128];
    size_t len;

    if (!log_enabled(lvl)) {
        return;
    }
    len = (size_t) snprintf(line, sizeof line, "%sdecision: active %s",
                            d->dry_run ? "dry-run " : "",
                            cpuset_label(&p->active, set, sizeof set));
    if (!cpuset_empty(&p->offline) && len < sizeof line) {
        len += (size_t) snprintf(line + len, sizeof line - len,
                                 " offline %s",
                                 cpuset_label(&p->offline, set, sizeof set));
    }
    for (unsigned dm = 0; dm < d->model.n_domains && len < sizeof line;
         dm++) {
        if (p->dom_freq_khz[dm]) {
            len += (size_t) snprintf(line + len, sizeof line - len,
                                     " f%u=%" PRIu32 "MHz", dm,
                                     p->dom_freq_khz[dm] / 1000);
        }
    }
    for (size_t i = 0; i < p->n_vms && len < sizeof line; i++) {
        struct cpuset u;

        cpuset_zero(&u);
        for (size_t k = 0; k < p->n_vcpus; k++) {
            if (p->vcpu_vm[k] == i) {
                cpuset_or(&u, &u, &p->vcpu_allowed[k]);
            }
        }
        len += (size_t) snprintf(line + len, sizeof line - len, " %s=%s",
                                 cy->vm_of[i]->dom.name,
                                 cpuset_label(&u, set, sizeof set));
    }
    if (len < sizeof line) {
        snprintf(line + len, sizeof line - len, " (%d actions, %" PRIu32
                 " mW)", n_acts, p->est_power_mw);
    }
    log_msg(lvl, LOG_MODULE, "%s", line);
    if (log_enabled(LOG_LVL_DEBUG)) {
        log_vcpus(d);
    }
}

/* Whether CPU 'c''s busy share for the energy estimate comes from the
 * vCPU loads on it: unmeasured, or not managed. */
static bool
busy_from_vcpus(const struct cycle *cy, unsigned c)
{
    return cy->busy_ppm[c] == UINT32_MAX || !cpuset_has(&cy->managed, c);
}

/* Per-CPU busy for the energy estimate: measured residency where the host
 * gives one, else the vCPU loads on that CPU (summed only when some CPU
 * needs them: a walk of every vCPU). */
static void
busy_estimate(struct vpd *d)
{
    struct cycle *cy = d->cyc;
    uint32_t from_vcpus[POL_MAX_CPUS];
    bool needed = false;

    for (unsigned c = 0; c < d->n_cpus && !needed; c++) {
        needed = busy_from_vcpus(cy, c);
    }
    if (!needed) {
        return;
    }
    memset(from_vcpus, 0, sizeof(uint32_t) * d->n_cpus);
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            int c = vm->vcpus[i].cpu;

            if (c >= 0 && (unsigned) c < d->n_cpus) {
                uint64_t ppm = (uint64_t) vm->vcpus[i].load.avg_cap
                               * 1000000u / POL_CAPACITY_SCALE;

                from_vcpus[c] = (uint32_t) (from_vcpus[c] + ppm > 1000000u
                                            ? 1000000u : from_vcpus[c] + ppm);
            }
        }
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        if (busy_from_vcpus(cy, c)) {
            cy->busy_ppm[c] = from_vcpus[c];
        }
    }
}

/* The same load with every managed core awake at nominal frequency and
 * shallow idle: what the host would draw without vpower. */
static uint32_t
baseline_power(struct vpd *d)
{
    struct cycle *cy = d->cyc;
    struct pol_plan *b = cy->baseline;
    uint64_t total = 0;
    unsigned n = cpuset_count(&cy->managed);

    /* Only the host part counts for the energy function. */
    b->active = cy->managed;
    cpuset_zero(&b->offline);
    for (unsigned dm = 0; dm < d->model.n_domains; dm++) {
        const struct pol_domain *pd = &d->model.domains[dm];

        b->dom_freq_khz[dm] = pd->opps[pd->nominal_opp].freq_khz;
    }
    memset(b->idle_limit, 0, sizeof b->idle_limit);
    /* Spread: the same total busy evenly over all managed cores. */
    CPUSET_FOREACH (c, &cy->managed) {
        total += cy->busy_ppm[c];
    }
    CPUSET_FOREACH (c, &cy->managed) {
        uint64_t v = n ? total / n : 0;

        cy->base_ppm[c] = (uint32_t) (v > 1000000u ? 1000000u : v);
    }
    return pol_energy_power_mw(&d->model, b, cy->base_ppm);
}

/* Splits the interval's host energy 'joules' among the VMs by what their
 * vCPUs ran and the active cores they hold (manager/attrib.h); the part
 * no VM holds goes to the "_host" pseudo-VM.  Runs after this cycle's
 * decision, so the input's arrays (vm_of, vcpu_of, d->applied's
 * vcpu_vm) still list the registry's VMs and vCPUs in order. */
static void
attribute_energy(struct vpd *d, double joules, uint64_t interval_ns)
{
    struct cycle *cy = d->cyc;
    const struct pol_plan *a = d->applied;
    struct attrib_vcpu *av = cy->attr_vcpus;
    struct attrib_input ai;
    struct attrib_result ar;

    for (size_t k = 0; k < a->n_vcpus; k++) {
        const struct vpd_vcpu *vc = cy->vcpu_of[k];
        const struct vpd_vm *vm = cy->vm_of[a->vcpu_vm[k]];
        const struct cpuset *allowed = vm->unmanaged ? &vm->dom.static_cpus
                                                     : &vc->applied;

        av[k].vm = a->vcpu_vm[k];
        av[k].cpu = vc->cpu;
        av[k].busy_ns = vc->sampled ? vc->busy_ns : 0;
        av[k].allowed = cpuset_empty(allowed) ? NULL : allowed;
    }
    memset(&ai, 0, sizeof ai);
    ai.model = &d->model;
    ai.dom_freq_khz = a->dom_freq_khz;
    ai.active = &a->active;
    ai.interval_ns = interval_ns;
    ai.n_vms = a->n_vms;
    ai.vcpus = av;
    ai.n_vcpus = a->n_vcpus;
    ai.host_joules = joules;
    if (attrib_split_parts(&ai, cy->vm_j, cy->vm_busy_j, &ar) == 0) {
        for (size_t vi = 0; vi < a->n_vms; vi++) {
            cy->vm_of[vi]->energy_j += cy->vm_j[vi];
            cy->vm_of[vi]->energy_busy_j += cy->vm_busy_j[vi];
        }
        d->unattributed_energy_j += ar.host_joules;
    }
}

/* The interval's estimated energy, its baseline and the split of the
 * host's energy: the meter's 'measured_j' where there is one (NULL:
 * none), else the estimate. */
static void
account(struct vpd *d, uint64_t interval, uint64_t now,
        const double *measured_j)
{
    struct cycle *cy = d->cyc;
    double dt = (double) interval / 1e9;
    uint32_t base;

    d->est_power_mw = pol_energy_power_mw(&d->model, d->plan, cy->busy_ppm);
    base = baseline_power(d);
    if (d->last_cycle_ns && interval) {
        double e = d->est_power_mw / 1000.0 * dt;
        double b = base / 1000.0 * dt;

        d->host_energy_j += measured_j ? *measured_j : e;
        d->baseline_energy_j += b;
        /* Exported as a counter: never decreases. */
        d->saved_energy_j += b > e ? b - e : 0.0;
        attribute_energy(d, measured_j ? *measured_j : e, interval);
    }
    d->last_cycle_ns = now;
}

/* The plan a hint of 'vm' (NULL: not known) caused is in effect: its
 * read-to-applied time, host-wide and the VM's own. */
static void
hint_applied(struct vpd *d, struct vpd_vm *vm, uint64_t read_ns)
{
    uint64_t now = cycle_now_ns(d);
    uint64_t ns = now > read_ns ? now - read_ns : 0;

    histo_add(&d->cyc->hint_apply, ns);
    if (vm) {
        if (!vm->hint_apply) {
            vm->hint_apply = XNEW(struct histo);
        }
        histo_add(vm->hint_apply, ns);
    }
}

void
cycle_hint(struct vpd *d, struct vpd_vm *vm, uint64_t read_ns)
{
    d->cyc->hint_pending = true;
    d->cyc->hint_read_ns = read_ns;
    d->cyc->hint_vm = vm;
}

/* vpowerd's own threads follow the set host work may use: a power
 * manager that wakes the CPUs it frees defeats itself.  The host driver
 * is called only when the set changes. */
static void
self_follow(struct vpd *d)
{
    struct cycle *cy = d->cyc;
    struct cpuset set;
    char label[128];
    int r;

    if (!d->host_ops->confine_self || !d->applied) {
        return;
    }
    hkset_target(d, &set);
    if (cy->self_known && cpuset_equal(&set, &cy->self_set)) {
        return;
    }
    cy->self_known = true;
    cy->self_set = set;
    r = d->host_ops->confine_self(d->host, &set);
    if (r < 0) {
        LOG_WARN_RL("could not keep vpowerd's threads on CPUs %s: %s",
                    cpuset_label(&set, label, sizeof label), strerror(-r));
    } else {
        LOG_DEBUG("vpowerd's threads on CPUs %s",
                  cpuset_label(&set, label, sizeof label));
    }
}

/* Decides on the input 'in' and applies the plan.  Returns the number of
 * actions, or -errno if the policy refused the input. */
static int
decide_apply(struct vpd *d, struct pol_input *in)
{
    struct cycle *cy = d->cyc;
    bool hinted = cy->hint_pending;
    uint64_t read_ns = cy->hint_read_ns, t0 = 0;
    struct vpd_vm *hint_vm = cy->hint_vm;
    int n, r;

    /* A hint that arrives while this decision runs waits for the next. */
    cy->hint_pending = false;
    cy->hint_vm = NULL;
    build_input(d, in);
    if (cy->hooks.stopwatch_ns) {
        t0 = cy->hooks.stopwatch_ns(cy->hooks.aux);
    }
    r = pol_decide(d->pol, in, d->plan);
    if (cy->hooks.stopwatch_ns) {
        cy->decide_ns += cy->hooks.stopwatch_ns(cy->hooks.aux) - t0;
    }
    if (r < 0) {
        LOG_ERR_RL("policy refused the snapshot: %s", strerror(-r));
        return r;
    }
    /* CPUs that refused to go offline a few times stay online. */
    for (unsigned c = 0; c < d->n_cpus; c++) {
        if (cy->offline_tries[c] >= OFFLINE_MAX_TRIES) {
            cpuset_clr(&d->plan->offline, c);
        }
    }
    while ((n = pol_plan_diff(d->applied, d->plan, cy->acts,
                              cy->cap_acts)) == -ENOSPC) {
        cy->cap_acts = cy->cap_acts ? 2 * cy->cap_acts : 64;
        cy->acts = xrealloc(cy->acts, cy->cap_acts * sizeof *cy->acts);
    }
    if (n < 0) {
        n = 0;
    }
    log_decision(d, n);
    if (d->dry_run) {
        pretend(d);
    } else if (cy->hv_up || n) {
        execute(d, cy->acts, (size_t) n);
        d->applied->active = d->plan->active;
        if (hinted && n > 0) {
            hint_applied(d, hint_vm, read_ns);
        }
    }
    /* Host work follows the active set in force (or pretended). */
    hkset_follow(d);
    if (!d->dry_run) {
        self_follow(d);
    }
    for (size_t i = 0; i < in->n_vms; i++) {
        cy->vm_of[i]->reason = (enum pol_reason) d->plan->vm_reason[i];
    }
    d->n_decisions++;
    cy->have_plan = true;
    return n;
}

void
cycle_run(struct vpd *d, bool sample)
{
    struct cycle *cy = d->cyc;
    struct pol_input in;
    uint64_t now = cycle_now_ns(d), interval;
    double meter_j = 0;
    bool measured;

    if (cy->in_cycle) {
        cy->kick_pending = true;
        return;
    }
    cy->in_cycle = true;
    do {
        bool sampled = sample && cy->hv_up;

        cy->kick_pending = false;
        interval = now - cy->last_sample_ns;
        if (sampled) {
            sample_host(d, interval);
            sample_vms(d, interval);
            hkset_watch(d, now);
            cy->last_sample_ns = now;
        }
        if (sample) {
            /* Before deciding: the policy sizes pool cores' frequencies
             * from it, and the energy estimate below uses it too. */
            busy_estimate(d);
        }
        /* The period just ended against the meter, before deciding:
         * a corrected model is what this decision uses. */
        measured = sampled && d->mchk
                   && mchk_run(d->mchk, now, cy->have_plan ? d->applied
                                                           : NULL,
                               cy->busy_ppm, &d->model, &meter_j);
        if (decide_apply(d, &in) < 0) {
            break;
        }
        if (sample) {
            account(d, interval, now, measured ? &meter_j : NULL);
        }
        if (cy->hooks.decided) {
            cy->hooks.decided(cy->hooks.aux, &in, cy->vm_of, sampled,
                              interval, cy->ran_khz, cy->busy_ppm);
        }
        sample = false;
        now = cycle_now_ns(d);
    } while (cy->kick_pending);
    cy->check_jobs = false;
    cy->in_cycle = false;
}

uint64_t
cycle_next_delay_ns(const struct vpd *d)
{
    uint64_t lo = (uint64_t) d->conf.period_ms * 1000000u;
    uint64_t hi = (uint64_t) d->conf.max_period_ms * 1000000u;
    uint64_t ns = d->cyc->have_plan ? d->plan->next_interval_ns : 0;

    if (hi < lo) {
        hi = lo;
    }
    return ns < lo ? lo : ns > hi ? hi : ns;
}
