/* sim/baseline.h -- Plans of the baselines vpower is compared with.
 *
 * Each baseline is modelled from its documented behaviour (sources and
 * details in docs/baselines.md) and expressed as a 'struct pol_plan', so
 * it runs through the same execution model and energy accounting as
 * vpower.  The simulator asks for a whole plan at vpower's instants and,
 * for the baselines that run on clocks of their own (schedutil, DPDK's
 * monitor), for new frequencies at every step in between.  They see only
 * what a real implementation would see: per-CPU utilisation measured by
 * the execution model. */

#ifndef VPOWER_SIM_BASELINE_H
#define VPOWER_SIM_BASELINE_H 1

#include "policy/policy.h"
#include "sim/exec.h"

enum baseline_kind {
    BL_PERFORMANCE,    /* cpufreq performance: nominal freq, floating. */
    BL_SCHEDUTIL,      /* schedutil formula per cpufreq policy, floating. */
    BL_POWERSAVE,      /* cpufreq powersave: lowest freq, floating. */
    BL_DPDK,           /* DPDK vm_power_manager: 1:1 pins, per-core freq. */
    BL_NOVA,           /* Nova dedicated pins, unused cores offline. */
    BL_N_KINDS
};

/* "performance", "schedutil", "powersave", "dpdk-vmpm", "nova-offline". */
const char *baseline_name(enum baseline_kind);

/* Writes baseline 'kind''s plan for host 'h' (its model, vCPU count and
 * the utilisation it measured since the last decision) into 'plan',
 * which must have room for h->n_vms and h->n_vcpus. */
void baseline_plan(enum baseline_kind kind, const struct exec_host *h,
                   struct pol_plan *plan);

/* The frequency part of baseline_plan(): writes 'kind''s frequency for
 * every domain of h->m into 'dom_freq_khz'.  Its pinning and active set
 * never depend on measurements, so between whole plans this is all that
 * changes. */
void baseline_freqs(enum baseline_kind kind, const struct exec_host *h,
                    uint32_t *dom_freq_khz);

#endif /* sim/baseline.h */
