/* manager/attrib.h -- Splits the host's energy of one interval among VMs.
 *
 * vpowerd knows the host's energy per decision interval (RAPL/powercap
 * when present, else pol_energy_power_mw() times the interval).  This
 * module answers "which VM used it": pure arithmetic on the interval's
 * samples, no I/O, no clock, so unit tests can check its one invariant
 * (the shares sum to the host total) on random inputs.  The rule, argued
 * in docs/metrics.md ("Energy attribution"):
 *
 *   1. Busy energy.  Each vCPU's run time is weighed by the model's busy
 *      power of the core at the operating point it ran on (its CPU's
 *      domain frequency), not by plain CPU time: a second at 3 GHz costs
 *      more than a second at 1 GHz, and a big core more than a little one.
 *      These weights sum to B; the host energy E pays min(E, B) of them,
 *      split in proportion.
 *   2. Static energy.  The rest R = E - min(E, B) is idle, cluster,
 *      uncore and platform power (plus the model's error).  It is the
 *      price of keeping cores awake, which is what consolidation saves,
 *      so it is split by the active cores each VM holds: every active CPU
 *      carries R / n_active, shared equally among the VMs that have a vCPU
 *      allowed on it.  Active CPUs that no VM may use -- and everything
 *      when there are no VMs -- go to the "_host" pseudo-VM.
 *
 * Hence sum(vm_joules) + host_joules == E up to rounding (unit tests
 * require 0.1 %, the arithmetic gives ~1e-12). */

#ifndef VPOWER_ATTRIB_H
#define VPOWER_ATTRIB_H 1

#include <stddef.h>
#include <stdint.h>

#include "policy/cpuset.h"
#include "policy/model.h"

/* One vCPU's observation over the interval. */
struct attrib_vcpu {
    size_t vm;                    /* Index of its VM, < n_vms. */
    int cpu;                      /* Host CPU it ran on; -1 unknown (the
                                   * nominal point of domain 0 is used). */
    uint64_t busy_ns;             /* Run time in the interval (clamped to
                                   * interval_ns). */
    const struct cpuset *allowed; /* Where it may run (its applied pin);
                                   * NULL = every active CPU. Not owned. */
};

struct attrib_input {
    const struct pol_model *model;      /* Not owned; required. */
    const uint32_t *dom_freq_khz;       /* [POL_MAX_DOMAINS] frequency each
                                         * domain ran at, 0 = nominal
                                         * (e.g. plan->dom_freq_khz);
                                         * NULL = all nominal. */
    const struct cpuset *active;        /* CPUs kept awake for guests
                                         * (plan->active); NULL = CPUs
                                         * 0..model->n_cpus-1. */
    uint64_t interval_ns;               /* Length of the interval, > 0. */
    size_t n_vms;
    const struct attrib_vcpu *vcpus;    /* [n_vcpus], not owned. */
    size_t n_vcpus;
    double host_joules;                 /* Host energy in the interval,
                                         * finite and >= 0. */
};

struct attrib_result {
    double busy_joules;      /* Part split by busy energy (rule 1). */
    double static_joules;    /* Part split by held cores (rule 2), VMs'
                              * and _host's together. */
    double host_joules;      /* Part of the "_host" pseudo-VM. */
};

/* Writes into 'vm_joules' (caller-owned, room for in->n_vms; overwritten,
 * not accumulated) each VM's share of in->host_joules, and the _host part
 * and the split into 'res' (may be NULL).  Returns 0; -EINVAL if 'in' or
 * its model is NULL, interval_ns is 0 or a vCPU names a VM >= n_vms;
 * -ERANGE if host_joules is negative or not finite; -ENOMEM.  On error
 * every output is 0 (nothing is attributed, so sums still hold). */
int attrib_split(const struct attrib_input *in, double *vm_joules,
                 struct attrib_result *res);

/* The same, and each VM's busy part (rule 1: its own work at its
 * operating points) into 'vm_busy_joules' (caller-owned, room for
 * in->n_vms, or NULL); the rest of its share, vm_joules - vm_busy_joules,
 * is its part of keeping cores awake (rule 2).  On error every output
 * is 0. */
int attrib_split_parts(const struct attrib_input *in, double *vm_joules,
                       double *vm_busy_joules, struct attrib_result *res);

#endif /* manager/attrib.h */
