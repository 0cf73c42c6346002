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
    BL_HWP_BALPERF,    /* intel_pstate active, HWP, EPP balance_performance,
                        * turbo; floating. */
    BL_HWP_BALPOWER,   /* The same with EPP balance_power. */
    BL_TUNED_VHOST,    /* tuned virtual-host: performance, EPP 0, turbo. */
    BL_SCHED_NOTURBO,  /* schedutil with turbo off (no_turbo / boost 0). */
    BL_N_KINDS
};

/* "performance", "schedutil", "powersave", "dpdk-vmpm", "nova-offline",
 * "hwp-balperf", "hwp-balpower", "tuned-vhost", "sched-noturbo". */
const char *baseline_name(enum baseline_kind);

/* Whether 'kind''s frequency follows the load within a step: a governor
 * or hardware that re-evaluates every few milliseconds (schedutil, HWP)
 * settles within a 1 s step on the frequency the step's own load asks
 * for; baseline_step_freqs() gives it. */
bool baseline_follows_step(enum baseline_kind kind);

/* The frequencies 'kind' settles on for the coming step of host 'h'
 * (schedutil places vCPUs with baseline_eas_place() first),
 * whose vCPUs get the new demands 'demand' (as for exec_step()): its
 * rule applied to the per-CPU utilisation exec_probe_util() measures at
 * its own choice, iterated to the fixed point (at most a few rounds;
 * if it does not settle, the higher of the last two choices, so the
 * step is served).  Written into 'dom_freq_khz' (one per domain).
 * For kinds that do not follow the step, baseline_freqs(). */
void baseline_step_freqs(enum baseline_kind kind, struct exec_host *h,
                         const float *demand, uint32_t *dom_freq_khz);

/* Energy-aware placement on a model whose CPUs differ in capacity
 * (Arm big.LITTLE; a no-op on symmetric models), as the kernel's
 * find_energy_efficient_cpu() does at each wake-up, for the schedutil
 * row (baseline_step_freqs() calls it first; sched-noturbo keeps the
 * scheduler's default placement, so on a model without turbo points it
 * is schedutil without EAS).  If a CPU is
 * overutilized (utilisation above 80 % of its capacity), EAS is off and
 * the load balancer moves each misfit vCPU (one that does not fit its
 * CPU with a 20 % margin) to the CPU of its set with more capacity and
 * the most spare.  Otherwise each vCPU in
 * turn, with its last step's work as its utilisation, goes to the
 * candidate (its previous CPU, and per domain the CPU of its set with
 * the most spare capacity that fits it with a 20 % margin) where the
 * energy model's estimate grows least: the point schedutil would pick
 * for the domain's busiest CPU, its power per unit of capacity times
 * the domain's summed utilisation.  Ties keep the previous CPU.  Moves
 * go through exec_set_home(), so they are charged. */
void baseline_eas_place(struct exec_host *h);

/* The frequency 'kind''s rule picks for domain 'd' of 'm' when the
 * busiest CPU of the domain has utilisation 'util' (capacity units:
 * busy fraction times the CPU's capacity at the frequency it ran at).
 * schedutil: 1.25 * max_freq * util / capacity at max_freq, max_freq
 * the highest point, turbo included (cpuinfo.max_freq), then the lowest
 * point at or above (CPUFREQ_RELATION_L); with turbo off the same
 * against the highest non-turbo point, never above it.  HWP: the
 * lowest point at which 'util' would keep the CPU at most EPP/255 busy,
 * turbo included.  tuned: the highest point.  Others: their fixed
 * choice.  Exposed for the unit tests. */
uint32_t baseline_rule_khz(enum baseline_kind kind, const struct pol_model *m,
                           unsigned d, double util);

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
