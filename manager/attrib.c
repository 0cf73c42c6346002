/* manager/attrib.c -- Per-VM energy attribution (see attrib.h).
 *
 * Called once per decision interval by vpowerd's cycle with the vCPU
 * samples it has just taken; the exporter only reports the accumulated
 * result.  Two passes: busy energy by operating-point-weighted run time,
 * then static energy by held active cores.  The only allocation is one
 * scratch array per call (each VM's held set, the union of its vCPUs'
 * allowed sets), so the held-core count costs a set union per vCPU and
 * a walk over each VM's held CPUs. */

#include <config.h>

#include "manager/attrib.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
zero_out(const struct attrib_input *in, double *vm_joules,
         struct attrib_result *res)
{
    if (in && vm_joules) {
        for (size_t i = 0; i < in->n_vms; i++) {
            vm_joules[i] = 0;
        }
    }
    if (res) {
        memset(res, 0, sizeof *res);
    }
}

#define ATTRIB_MAX_KINDS 64

/* Adds one to holders[c] for each CPU c of 's' (its first 'words'
 * words). */
static void
count_holders(const struct cpuset *s, unsigned words, unsigned *holders)
{
    for (unsigned w = 0; w < words; w++) {
        for (uint64_t x = s->w[w]; x; x &= x - 1) {
            holders[w * 64 + (unsigned) __builtin_ctzll(x)]++;
        }
    }
}

/* Sum over the CPUs c of 's' of per_cpu / holders[c]. */
static double
set_share(const struct cpuset *s, unsigned words, const unsigned *holders,
          double per_cpu)
{
    double sh = 0;

    for (unsigned w = 0; w < words; w++) {
        for (uint64_t x = s->w[w]; x; x &= x - 1) {
            sh += per_cpu / holders[w * 64 + (unsigned) __builtin_ctzll(x)];
        }
    }
    return sh;
}

static uint64_t
set_hash(const struct cpuset *s, unsigned words)
{
    uint64_t h = 0;

    for (unsigned w = 0; w < words; w++) {
        h = (h ^ s->w[w]) * UINT64_C(0x100000001b3);
    }
    return h;
}

/* Rule 2: adds each VM's share of 'r' joules by held active CPUs into
 * 'vm_joules'; returns the part left to _host.  'held' is scratch for
 * n_vms sets, 'kind' for n_vms indices and 'share' for n_vms values: a
 * VM holds the union of its vCPUs' allowed sets, and VMs holding the
 * same set (a shared pool) share one computation. */
static double
split_static(const struct attrib_input *in, double r, double *vm_joules,
             struct cpuset *held, size_t *kind, double *share)
{
    struct cpuset all;
    const struct cpuset *active = in->active;
    unsigned n_active, n_cpus = in->model->n_cpus;
    unsigned words = (n_cpus + 63) / 64;
    unsigned holders[POL_MAX_CPUS];
    uint64_t *hash = (uint64_t *) share;
    double per_cpu, host = 0;
    size_t n_kinds = 0;

    cpuset_zero(&all);
    for (unsigned c = 0; c < n_cpus && c < POL_MAX_CPUS; c++) {
        cpuset_set(&all, c);
    }
    words = words > CPUSET_WORDS ? CPUSET_WORDS : words;
    if (!active) {
        active = &all;
    }
    n_active = cpuset_count(active);
    if (!n_active || !in->n_vms || r <= 0) {
        return r > 0 ? r : 0;
    }
    per_cpu = r / n_active;
    for (size_t i = 0; i < in->n_vcpus; i++) {
        const struct attrib_vcpu *v = &in->vcpus[i];
        const struct cpuset *a = v->allowed ? v->allowed : &all;

        for (unsigned w = 0; w < words; w++) {
            held[v->vm].w[w] |= a->w[w] & active->w[w];
        }
    }
    /* Distinct held sets move to the front of 'held' (their hashes to
     * the front of 'share'); kind[vm] names the VM's. */
    memset(holders, 0, sizeof holders);
    for (size_t vm = 0; vm < in->n_vms; vm++) {
        struct cpuset h = held[vm];
        uint64_t hh = set_hash(&h, words);
        size_t k = 0;

        /* Pools are few: past ATTRIB_MAX_KINDS sets, every further VM
         * is its own kind (the search would cost more than it saves). */
        while (k < n_kinds && k < ATTRIB_MAX_KINDS
               && (hash[k] != hh
                   || memcmp(held[k].w, h.w, words * sizeof h.w[0]))) {
            k++;
        }
        k = k < ATTRIB_MAX_KINDS ? k : n_kinds;
        if (k == n_kinds) {
            held[n_kinds] = h;
            hash[n_kinds++] = hh;
        }
        kind[vm] = k;
        count_holders(&h, words, holders);
    }
    CPUSET_FOREACH(c, active) {
        if (!holders[c]) {
            host += per_cpu;
        }
    }
    for (size_t k = 0; k < n_kinds; k++) {
        share[k] = set_share(&held[k], words, holders, per_cpu);
    }
    for (size_t vm = 0; vm < in->n_vms; vm++) {
        vm_joules[vm] += share[kind[vm]];
    }
    return host;
}

int
attrib_split(const struct attrib_input *in, double *vm_joules,
             struct attrib_result *res)
{
    return attrib_split_parts(in, vm_joules, NULL, res);
}

int
attrib_split_parts(const struct attrib_input *in, double *vm_joules,
                   double *vm_busy_joules, struct attrib_result *res)
{
    double e, b = 0, e_busy, r, host;
    struct cpuset *held;
    size_t *kind;
    double *share;

    zero_out(in, vm_joules, res);
    zero_out(in, vm_busy_joules, NULL);
    if (!in || !in->model || !in->interval_ns
        || (in->n_vms && !vm_joules) || (in->n_vcpus && !in->vcpus)) {
        return -EINVAL;
    }
    e = in->host_joules;
    if (!isfinite(e) || e < 0) {
        return -ERANGE;
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        if (in->vcpus[i].vm >= in->n_vms) {
            return -EINVAL;
        }
    }

    /* Rule 1: weights in joules at the model's busy power. */
    for (size_t i = 0; i < in->n_vcpus; i++) {
        const struct attrib_vcpu *v = &in->vcpus[i];
        uint64_t ns = v->busy_ns < in->interval_ns ? v->busy_ns
                                                   : in->interval_ns;
        uint32_t f = 0;
        double w;

        if (in->dom_freq_khz && v->cpu >= 0
            && (unsigned) v->cpu < in->model->n_cpus
            && v->cpu < POL_MAX_CPUS
            && in->model->cpu_domain[v->cpu] < POL_MAX_DOMAINS) {
            f = in->dom_freq_khz[in->model->cpu_domain[v->cpu]];
        }
        w = (double) ns * 1e-9
            * pol_model_busy_mw(in->model, v->cpu, f) * 1e-3;
        vm_joules[v->vm] += w;
        b += w;
    }
    e_busy = b < e ? b : e;
    if (b > 0) {
        double k = e_busy / b;

        for (size_t vm = 0; vm < in->n_vms; vm++) {
            vm_joules[vm] *= k;
        }
    }
    for (size_t vm = 0; vm_busy_joules && vm < in->n_vms; vm++) {
        vm_busy_joules[vm] = vm_joules[vm];
    }

    /* Rule 2. */
    r = e - e_busy;
    held = in->n_vms ? calloc(in->n_vms, sizeof *held) : NULL;
    kind = in->n_vms ? calloc(in->n_vms, sizeof *kind) : NULL;
    share = in->n_vms ? calloc(in->n_vms, sizeof *share) : NULL;
    if (in->n_vms && (!held || !kind || !share)) {
        free(held);
        free(kind);
        free(share);
        zero_out(in, vm_joules, res);
        zero_out(in, vm_busy_joules, NULL);
        return -ENOMEM;
    }
    host = split_static(in, r, vm_joules, held, kind, share);
    free(held);
    free(kind);
    free(share);
    if (res) {
        res->busy_joules = e_busy;
        res->static_joules = r;
        res->host_joules = host;
    }
    return 0;
}
