/* sim/replay.c -- Replays recorded decisions through the daemon's cycle
 * and compares the plans (see replay.h). */

#include <config.h>

#include "sim/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/conf.h"
#include "manager/cycle.h"
#include "manager/daemon.h"
#include "manager/log.h"
#include "manager/vmreg.h"
#include "sim/replayhost.h"
#include "sim/xalloc.h"

struct replay {
    struct vpd *d;                    /* The daemon's state. */
    struct replayhost *rh;            /* Its drivers. */
    const struct replay_decision *dec;/* The decision being replayed. */
    bool primed;
    /* The clock: 't_next' once (the sample instant cycle_run() reads
     * first), then 't_after' (pol_input.now_ns). */
    uint64_t t_next, t_after;
};

static uint64_t
replay_clock(void *aux)
{
    struct replay *r = aux;
    uint64_t t = r->t_next;

    r->t_next = r->t_after;
    return t;
}

/* A vCPU the recording shows without a sample in a sample block had its
 * counters re-primed: giving its counters a new source makes the cycle
 * do the same.  Every other vCPU keeps its source. */
static void
replay_counters(void *aux, struct vpd_vm *vm, struct drv_vcpu_stat *st,
                uint8_t *src, size_t n)
{
    struct replay *r = aux;
    const struct replay_decision *dec = r->dec;
    size_t i;

    (void) st;
    if (replayhost_vm_index(r->rh, vm->dom.uuid, &i) < 0) {
        return;
    }
    for (size_t k = 0; k < n && k < dec->vms[i].n_vcpus; k++) {
        const struct replay_obs *o = &dec->obs[dec->vms[i].first_vcpu + k];
        uint8_t was = vm->vcpus[k].src;

        if (dec->sample && !o->interval_ns) {
            src[k] = was == CYCLE_SRC_DRV ? CYCLE_SRC_FINE : CYCLE_SRC_DRV;
        } else {
            src[k] = was != CYCLE_SRC_NONE ? was : CYCLE_SRC_DRV;
        }
    }
}

static void
replay_caps(void *aux, const struct pol_model *m,
            uint32_t caps[POL_MAX_DOMAINS])
{
    const struct replay *r = aux;

    memcpy(caps, r->dec->thermal_cap_khz,
           m->n_domains * sizeof caps[0]);
}

struct replay *
replay_create(const struct pol_model *m, const struct pol_config *c)
{
    struct replay *r = sim_xcalloc(1, sizeof *r);
    const struct cycle_clock clock = { replay_clock, r };
    const struct cycle_hooks hooks = {
        .aux = r,
        .vcpu_counters = replay_counters,
        .fine_name = "replay",
        .thermal_caps = replay_caps,
    };
    struct vpd *d = sim_xcalloc(1, sizeof *d);

    r->d = d;
    /* The cycle logs each decision that acts at info level: a replay of
     * thousands of decisions reports differences, not actions. */
    log_set_level(LOG_LVL_WARN);
    conf_defaults(&d->conf);
    d->pcfg = *c;
    d->model = *m;
    d->pol = pol_state_create(&d->model, &d->pcfg);
    if (!d->pol) {
        free(d);
        free(r);
        return NULL;
    }
    r->rh = replayhost_create(&d->model);
    d->hv_ops = &replayhost_hv_ops;
    d->hv = replayhost_hv(r->rh);
    d->host_ops = &replayhost_host_ops;
    d->host = replayhost_host(r->rh);
    d->n_cpus = d->model.n_cpus;
    d->energy_source = "model";
    cycle_create(d, &clock, &hooks);
    for (unsigned cpu = 0; cpu < d->n_cpus; cpu++) {
        d->cpus[cpu].present = true;
    }
    return r;
}

void
replay_destroy(struct replay *r)
{
    if (!r) {
        return;
    }
    vmreg_clear(r->d);
    cycle_destroy(r->d);
    pol_state_destroy(r->d->pol);
    free(r->d);
    replayhost_destroy(r->rh);
    free(r);
}

/* Checks that each VM's vCPUs are its own, numbered from 0. */
static int
check_decision(const struct replay_decision *dec, char *what, size_t whatlen)
{
    for (size_t v = 0; v < dec->n_vcpus; v++) {
        if (dec->obs[v].vm >= dec->n_vms) {
            snprintf(what, whatlen, "vcpu %zu names VM %u of %zu", v,
                     dec->obs[v].vm, dec->n_vms);
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < dec->n_vms; i++) {
        const struct pol_vm *v = &dec->vms[i];

        if (v->first_vcpu > dec->n_vcpus
            || v->n_vcpus > dec->n_vcpus - v->first_vcpu) {
            snprintf(what, whatlen, "VM %zu's vCPUs outside the input", i);
            return -EINVAL;
        }
        for (uint32_t k = 0; k < v->n_vcpus; k++) {
            const struct replay_obs *o = &dec->obs[v->first_vcpu + k];

            if (o->vm != i || o->idx != k) {
                snprintf(what, whatlen, "vcpu %u of VM %zu is not its "
                         "vCPU %u", v->first_vcpu + k, i, k);
                return -EINVAL;
            }
        }
    }
    return 0;
}

/* The CPUs the recording manages and has online; the CPUs the cycle
 * parked offline itself stay offline. */
static void
set_cpus(struct replay *r)
{
    struct vpd *d = r->d;
    struct cycle *cy = d->cyc;

    cy->managed = r->dec->managed;
    cy->online = r->dec->online;
    if (d->applied) {
        CPUSET_FOREACH (c, &d->applied->offline) {
            cpuset_clr(&cy->online, (unsigned) c);
        }
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        d->cpus[c].managed = cpuset_has(&cy->managed, c);
        d->cpus[c].online = cpuset_has(&cy->online, c);
    }
}

/* Puts the registry's VMs in the recorded input order and sets what
 * the recording says of each: policy, hints, static pins, management. */
static int
set_vms(struct replay *r, char *what, size_t whatlen)
{
    struct vpd *d = r->d;
    const struct replay_decision *dec = r->dec;
    struct vpd_vm **tail = &d->vms, *rest = d->vms;

    for (size_t i = 0; i < dec->n_vms; i++) {
        char uuid[DRV_UUID_LEN];
        struct vpd_vm **p, *vm;

        replayhost_uuid(dec->vm_key ? dec->vm_key[i] : dec->vms[i].id,
                        uuid);
        for (p = &rest; *p && strcmp((*p)->dom.uuid, uuid); p = &(*p)->next) {
        }
        vm = *p;
        if (!vm || vm->n_vcpus != dec->vms[i].n_vcpus) {
            snprintf(what, whatlen, "VM %zu of the recording missing from "
                     "the registry (two VMs with one key?)", i);
            return -EINVAL;
        }
        *p = vm->next;
        vm->next = NULL;
        *tail = vm;
        tail = &vm->next;
        vm->policy = dec->vms[i].policy;
        vm->hints = dec->vms[i].hints;
        vm->unmanaged = dec->vms[i].unmanaged;
        vm->dom.static_pinning = !cpuset_empty(&dec->vms[i].fixed);
        vm->dom.static_cpus = dec->vms[i].fixed;
    }
    *tail = rest;
    return 0;
}

/* The interval the cycle samples over: the one the vCPUs' samples were
 * taken over (the daemon measures it around the vCPU reads), else the
 * block's. */
static uint64_t
sample_interval(const struct replay_decision *dec)
{
    for (size_t v = 0; v < dec->n_vcpus; v++) {
        if (dec->obs[v].interval_ns) {
            return dec->obs[v].interval_ns;
        }
    }
    return dec->interval_ns;
}

int
replay_step(struct replay *r, const struct replay_decision *dec,
            struct pol_plan *out, char *what, size_t whatlen)
{
    struct vpd *d = r->d;
    uint64_t n0 = d->n_decisions, ivl = sample_interval(dec);
    int rc;

    rc = check_decision(dec, what, whatlen);
    if (rc < 0) {
        return rc;
    }
    r->dec = dec;
    replayhost_set(r->rh, dec);
    set_cpus(r);
    d->override_performance = dec->override_performance;
    if (!r->primed) {
        r->t_next = r->t_after = dec->now_ns - ivl;
        cycle_prime(d);
        r->primed = true;
    }
    rc = vmreg_resync(d);
    if (rc == 0) {
        rc = set_vms(r, what, whatlen);
    } else {
        snprintf(what, whatlen, "listing the recorded VMs: %s",
                 strerror(-rc));
    }
    if (rc < 0) {
        return rc;
    }
    replayhost_advance(r->rh);
    r->t_next = dec->sample ? d->cyc->last_sample_ns + ivl : dec->now_ns;
    r->t_after = dec->now_ns;
    cycle_run(d, dec->sample);
    if (d->n_decisions == n0) {
        snprintf(what, whatlen, "pol_decide failed at %llu ns",
                 (unsigned long long) dec->now_ns);
        return -EINVAL;
    }
    pol_plan_copy(out, d->plan);
    if (dec->recorded) {
        return replay_plan_equal(&d->model, dec->recorded, d->plan, what,
                                 whatlen) ? 0 : 1;
    }
    return 0;
}

static bool
set_diff(const char *name, long i, const struct cpuset *a,
         const struct cpuset *b, char *what, size_t whatlen)
{
    char sa[256], sb[256];

    if (cpuset_equal(a, b)) {
        return false;
    }
    cpuset_format(a, sa, sizeof sa);
    cpuset_format(b, sb, sizeof sb);
    if (i < 0) {
        snprintf(what, whatlen, "%s '%s' live, '%s' replayed", name, sa,
                 sb);
    } else {
        snprintf(what, whatlen, "%s %ld '%s' live, '%s' replayed", name, i,
                 sa, sb);
    }
    return true;
}

bool
replay_plan_equal(const struct pol_model *m, const struct pol_plan *live,
                  const struct pol_plan *sim, char *what, size_t whatlen)
{
    if (live->n_vms != sim->n_vms || live->n_vcpus != sim->n_vcpus) {
        snprintf(what, whatlen, "size %zu VMs / %zu vCPUs live, %zu / %zu "
                 "replayed", live->n_vms, live->n_vcpus, sim->n_vms,
                 sim->n_vcpus);
        return false;
    }
    if (set_diff("active", -1, &live->active, &sim->active, what,
                 whatlen)) {
        return false;
    }
    if (!cpuset_subset(&live->offline, &sim->offline)) {
        set_diff("offline", -1, &live->offline, &sim->offline, what,
                 whatlen);
        return false;
    }
    for (unsigned d = 0; d < m->n_domains; d++) {
        if (live->dom_freq_khz[d] != sim->dom_freq_khz[d]) {
            snprintf(what, whatlen, "domain %u frequency %u kHz live, %u "
                     "replayed", d, live->dom_freq_khz[d],
                     sim->dom_freq_khz[d]);
            return false;
        }
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        if (live->idle_limit[c] != sim->idle_limit[c]) {
            snprintf(what, whatlen, "cpu %u idle limit %d live, %d "
                     "replayed", c, live->idle_limit[c], sim->idle_limit[c]);
            return false;
        }
    }
    for (size_t v = 0; v < live->n_vcpus; v++) {
        if (set_diff("vcpu allowed", (long) v, &live->vcpu_allowed[v],
                     &sim->vcpu_allowed[v], what, whatlen)) {
            return false;
        }
    }
    for (size_t i = 0; i < live->n_vms; i++) {
        if (set_diff("vm emulator", (long) i, &live->vm_emulator[i],
                     &sim->vm_emulator[i], what, whatlen)) {
            return false;
        }
        if (live->vm_reason[i] != sim->vm_reason[i]) {
            snprintf(what, whatlen, "vm %zu reason %s live, %s replayed",
                     i, pol_reason_text(live->vm_reason[i]),
                     pol_reason_text(sim->vm_reason[i]));
            return false;
        }
    }
    if (live->next_interval_ns != sim->next_interval_ns) {
        snprintf(what, whatlen, "next interval %llu ns live, %llu "
                 "replayed", (unsigned long long) live->next_interval_ns,
                 (unsigned long long) sim->next_interval_ns);
        return false;
    }
    return true;
}
