/* sim/replay.c -- Replays recorded decisions through pol_load_update()
 * and pol_decide() and compares the plans (see replay.h). */

#include <config.h>

#include "sim/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A vCPU's load, remembered across decisions by (VM id, vCPU number). */
struct replay_load {
    uint64_t vm_key;
    uint32_t idx;
    bool seen;                        /* In the current decision. */
    struct pol_load load;
};

struct replay {
    const struct pol_model *m;
    struct pol_config cfg;
    struct pol_state *st;
    struct replay_load *loads;        /* Unsorted; recordings are small. */
    size_t n_loads, cap_loads;
    struct pol_vcpu *vcpus;
    size_t cap_vcpus;
};

struct replay *
replay_create(const struct pol_model *m, const struct pol_config *c)
{
    struct replay *r = calloc(1, sizeof *r);

    if (!r) {
        abort();
    }
    r->m = m;
    r->cfg = *c;
    r->st = pol_state_create(m, c);
    if (!r->st) {
        free(r);
        return NULL;
    }
    return r;
}

void
replay_destroy(struct replay *r)
{
    if (!r) {
        return;
    }
    pol_state_destroy(r->st);
    free(r->loads);
    free(r->vcpus);
    free(r);
}

static struct pol_load *
load_of(struct replay *r, uint64_t vm_key, uint32_t idx)
{
    for (size_t i = 0; i < r->n_loads; i++) {
        if (r->loads[i].vm_key == vm_key && r->loads[i].idx == idx) {
            r->loads[i].seen = true;
            return &r->loads[i].load;
        }
    }
    if (r->n_loads == r->cap_loads) {
        r->cap_loads = r->cap_loads ? 2 * r->cap_loads : 64;
        r->loads = realloc(r->loads, r->cap_loads * sizeof *r->loads);
        if (!r->loads) {
            abort();
        }
    }
    memset(&r->loads[r->n_loads], 0, sizeof r->loads[0]);
    r->loads[r->n_loads].vm_key = vm_key;
    r->loads[r->n_loads].idx = idx;
    r->loads[r->n_loads].seen = true;
    return &r->loads[r->n_loads++].load;
}

int
replay_step(struct replay *r, const struct replay_decision *d,
            struct pol_plan *out, char *what, size_t whatlen)
{
    struct pol_input in;
    int rc;

    if (d->n_vcpus > r->cap_vcpus) {
        r->cap_vcpus = d->n_vcpus;
        r->vcpus = realloc(r->vcpus, r->cap_vcpus * sizeof *r->vcpus);
        if (!r->vcpus) {
            abort();
        }
    }
    for (size_t v = 0; v < d->n_vcpus; v++) {
        const struct replay_obs *o = &d->obs[v];
        struct pol_load *l;

        if (o->vm >= d->n_vms) {
            snprintf(what, whatlen, "vcpu %zu names VM %u of %zu", v,
                     o->vm, d->n_vms);
            return -EINVAL;
        }
        l = load_of(r, d->vm_key ? d->vm_key[o->vm] : d->vms[o->vm].id,
                    o->idx);
        if (o->interval_ns) {
            pol_load_update(l, r->m, o->s_cpu, o->freq_khz, o->busy_ns,
                            o->ready_ns, o->interval_ns);
        }
        r->vcpus[v].vm = o->vm;
        r->vcpus[v].idx = o->idx;
        r->vcpus[v].load = *l;
        r->vcpus[v].cpu = o->cpu;
    }
    /* vCPUs not in this decision are gone (VM gone or shrunk). */
    for (size_t i = 0, j = 0; i < r->n_loads; i++) {
        if (r->loads[i].seen) {
            r->loads[i].seen = false;
            r->loads[j++] = r->loads[i];
        }
        if (i + 1 == r->n_loads) {
            r->n_loads = j;
            break;
        }
    }
    memset(&in, 0, sizeof in);
    in.vms = d->vms;
    in.n_vms = d->n_vms;
    in.vcpus = r->vcpus;
    in.n_vcpus = d->n_vcpus;
    in.managed = d->managed;
    in.online = d->online;
    in.now_ns = d->now_ns;
    in.override_performance = d->override_performance;
    memcpy(in.thermal_cap_khz, d->thermal_cap_khz,
           sizeof in.thermal_cap_khz);
    in.cpu_busy_ppm = d->cpu_busy_ppm;
    in.cpu_ran_khz = d->cpu_ran_khz;
    rc = pol_decide(r->st, &in, out);
    if (rc) {
        snprintf(what, whatlen, "pol_decide failed at %llu ns: %s",
                 (unsigned long long) d->now_ns, strerror(-rc));
        return rc;
    }
    if (d->recorded) {
        return replay_plan_equal(r->m, d->recorded, out, what, whatlen)
               ? 0 : 1;
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
