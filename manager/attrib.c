/* manager/attrib.c -- Per-VM energy attribution (see attrib.h).
 *
 * Called once per decision interval by vpowerd's cycle with the vCPU
 * samples it has just taken; the exporter only reports the accumulated
 * result.  Two passes: busy energy by operating-point-weighted run time,
 * then static energy by held active cores.  The only allocation is one
 * scratch array per call (n_vms stamps), so the held-core count stays
 * O(n_active * n_vcpus) without quadratic VM scans. */

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

/* Rule 2: adds each VM's share of 'r' joules by held active CPUs into
 * 'vm_joules'; returns the part left to _host. */
static double
split_static(const struct attrib_input *in, double r, double *vm_joules,
             size_t *stamp)
{
    struct cpuset all;
    const struct cpuset *active = in->active;
    unsigned n_active, n_cpus = in->model->n_cpus;
    double per_cpu, host = 0;

    if (!active) {
        cpuset_zero(&all);
        for (unsigned c = 0; c < n_cpus && c < POL_MAX_CPUS; c++) {
            cpuset_set(&all, c);
        }
        active = &all;
    }
    n_active = cpuset_count(active);
    if (!n_active || !in->n_vms || r <= 0) {
        return r > 0 ? r : 0;
    }
    per_cpu = r / n_active;
    CPUSET_FOREACH(c, active) {
        size_t holders = 0;

        /* Stamp each VM once per CPU: c + 1 marks "holds c". */
        for (size_t i = 0; i < in->n_vcpus; i++) {
            const struct attrib_vcpu *v = &in->vcpus[i];

            if (v->allowed && !cpuset_has(v->allowed, (unsigned) c)) {
                continue;
            }
            if (stamp[v->vm] != (size_t) c + 1) {
                stamp[v->vm] = (size_t) c + 1;
                holders++;
            }
        }
        if (!holders) {
            host += per_cpu;
            continue;
        }
        for (size_t vm = 0; vm < in->n_vms; vm++) {
            if (stamp[vm] == (size_t) c + 1) {
                vm_joules[vm] += per_cpu / (double) holders;
            }
        }
    }
    return host;
}

int
attrib_split(const struct attrib_input *in, double *vm_joules,
             struct attrib_result *res)
{
    double e, b = 0, e_busy, r, host;
    size_t *stamp;

    zero_out(in, vm_joules, res);
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

    /* Rule 2. */
    r = e - e_busy;
    stamp = in->n_vms ? calloc(in->n_vms, sizeof *stamp) : NULL;
    if (in->n_vms && !stamp) {
        zero_out(in, vm_joules, res);
        return -ENOMEM;
    }
    host = split_static(in, r, vm_joules, stamp);
    free(stamp);
    if (res) {
        res->busy_joules = e_busy;
        res->static_joules = r;
        res->host_joules = host;
    }
    return 0;
}
