/* policy/plan.c -- Plans: the complete target state, and their diff.
 *
 * pol_decide() writes a whole target state into a 'struct pol_plan'; the
 * manager keeps the plan it applied last and calls pol_plan_diff() to get
 * the few actions that move the host from one to the other, in an order
 * that never strands a vCPU (online before pinning onto a CPU, offline
 * only after everything left it). */

#include "policy/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pol_plan *
pol_plan_create(size_t max_vms, size_t max_vcpus)
{
    struct pol_plan *p = calloc(1, sizeof *p);

    if (!p) {
        return NULL;
    }
    p->max_vms = max_vms;
    p->max_vcpus = max_vcpus;
    p->vcpu_allowed = calloc(max_vcpus ? max_vcpus : 1,
                             sizeof *p->vcpu_allowed);
    p->vcpu_vm = calloc(max_vcpus ? max_vcpus : 1, sizeof *p->vcpu_vm);
    p->vm_emulator = calloc(max_vms ? max_vms : 1, sizeof *p->vm_emulator);
    p->vm_reason = calloc(max_vms ? max_vms : 1, sizeof *p->vm_reason);
    if (!p->vcpu_allowed || !p->vcpu_vm || !p->vm_emulator
        || !p->vm_reason) {
        pol_plan_destroy(p);
        return NULL;
    }
    memset(p->idle_limit, -1, sizeof p->idle_limit);
    return p;
}

void
pol_plan_destroy(struct pol_plan *p)
{
    if (p) {
        free(p->vcpu_allowed);
        free(p->vcpu_vm);
        free(p->vm_emulator);
        free(p->vm_reason);
        free(p);
    }
}

void
pol_plan_copy(struct pol_plan *dst, const struct pol_plan *src)
{
    size_t nv = src->n_vcpus < dst->max_vcpus ? src->n_vcpus
                                              : dst->max_vcpus;
    size_t nm = src->n_vms < dst->max_vms ? src->n_vms : dst->max_vms;

    if (dst == src) {
        return;
    }
    dst->n_vms = nm;
    dst->n_vcpus = nv;
    dst->active = src->active;
    dst->offline = src->offline;
    memcpy(dst->dom_freq_khz, src->dom_freq_khz, sizeof dst->dom_freq_khz);
    memcpy(dst->idle_limit, src->idle_limit, sizeof dst->idle_limit);
    memcpy(dst->vcpu_allowed, src->vcpu_allowed,
           nv * sizeof *src->vcpu_allowed);
    memcpy(dst->vcpu_vm, src->vcpu_vm, nv * sizeof *src->vcpu_vm);
    memcpy(dst->vm_emulator, src->vm_emulator, nm * sizeof *src->vm_emulator);
    memcpy(dst->vm_reason, src->vm_reason, nm * sizeof *src->vm_reason);
    dst->next_interval_ns = src->next_interval_ns;
    dst->est_power_mw = src->est_power_mw;
}

/* Appends one action (the fields 'a' does not name are 0); counts even
 * when full so the caller learns it. */
static void
emit(struct pol_action *acts, size_t max, size_t *n, struct pol_action a)
{
    if (*n < max) {
        acts[*n] = a;
    }
    (*n)++;
}

int
pol_plan_diff(const struct pol_plan *cur, const struct pol_plan *next,
              struct pol_action *acts, size_t max)
{
    size_t n = 0;

    /* 1. Online CPUs that leave the offline set. */
    CPUSET_FOREACH (c, &cur->offline) {
        if (!cpuset_has(&next->offline, (unsigned) c)) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_ONLINE, .cpu = (uint32_t) c });
        }
    }
    /* 2. Pins: vCPUs, then emulator threads. */
    for (size_t i = 0; i < next->n_vcpus; i++) {
        if (i < cur->n_vcpus
            && cpuset_equal(&cur->vcpu_allowed[i], &next->vcpu_allowed[i])) {
            continue;
        }
        emit(acts, max, &n, (struct pol_action) {
            .type = POL_A_PIN_VCPU, .vm = next->vcpu_vm[i],
            .vcpu = (uint32_t) i, .set = next->vcpu_allowed[i] });
    }
    for (size_t i = 0; i < next->n_vms; i++) {
        if (i < cur->n_vms
            && cpuset_equal(&cur->vm_emulator[i], &next->vm_emulator[i])) {
            continue;
        }
        emit(acts, max, &n, (struct pol_action) {
            .type = POL_A_PIN_EMULATOR, .vm = (uint32_t) i,
            .set = next->vm_emulator[i] });
    }
    /* 3. Frequencies (0 = leave alone) and idle limits. */
    for (unsigned d = 0; d < POL_MAX_DOMAINS; d++) {
        if (next->dom_freq_khz[d] && next->dom_freq_khz[d]
                                     != cur->dom_freq_khz[d]) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_SET_FREQ, .domain = d,
                .khz = next->dom_freq_khz[d] });
        }
    }
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        if (next->idle_limit[c] != cur->idle_limit[c]) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_IDLE_LIMIT, .cpu = c,
                .state = next->idle_limit[c] });
        }
    }
    /* 4. Offline last, when nothing runs there any more. */
    CPUSET_FOREACH (c, &next->offline) {
        if (!cpuset_has(&cur->offline, (unsigned) c)) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_OFFLINE, .cpu = (uint32_t) c });
        }
    }
    if (n > max) {
        return -ENOSPC;
    }
    return (int) n;
}
