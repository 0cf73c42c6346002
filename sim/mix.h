/* sim/mix.h -- Per-VM policies of a simulated host: --policy-mix and
 * --policy-file.
 *
 * vpowerd takes each VM's policy from its libvirt metadata; the simulator
 * takes it from here and hands it to pol_decide() in pol_vm.policy (the
 * baselines ignore it: they have no per-VM notion).  A mix spec
 * "performance=10%,powersave=30%" gives exact counts: each kind gets
 * round(pct x n / 100) VMs (largest remainders, never more than n in
 * all), chosen by a seeded shuffle; the rest is balanced.  A policy file
 * names VMs one per line: "NAME POLICY [LATENCY_US]" ('#' starts a
 * comment; NAME is the trace file name, and matches its --repeat copies
 * "NAME@k" too); VMs not named are balanced. */

#ifndef VPOWER_SIM_MIX_H
#define VPOWER_SIM_MIX_H 1

#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "sim/trace.h"

/* Percentages per policy kind, in 1/100 %; a kind not named is 0.  The
 * sum of named kinds is at most 100 %. */
struct mix_spec {
    uint32_t pct_centi[POL_N_KINDS];
};

/* Parses "KIND=PCT%[,KIND=PCT%]..." ('%' optional, PCT up to two
 * decimals).  Returns 0 or -EINVAL with a reason in 'err'. */
int mix_parse(const char *text, struct mix_spec *spec, char *err,
              size_t errlen);

/* Writes the default policy into each of 'n_vms' entries of 'out':
 * balanced, no latency bound, no floor, sharing SMT siblings (vpowerd's
 * default). */
void mix_default(size_t n_vms, struct pol_vm_policy *out);

/* Writes the policy of each of 'n_vms' VMs into 'out' (mix_default()
 * first) following 'spec', from 'seed'. */
void mix_assign(const struct mix_spec *spec, size_t n_vms, uint64_t seed,
                struct pol_vm_policy *out);

/* Reads policy file 'path' for the VMs of 'ts' into 'out' ([ts->n_vms],
 * mix_default() first).  Returns 0 or a negative errno with
 * "FILE:LINE: reason" in 'err' (unknown policy, unknown VM name, bad
 * latency, a VM named twice, over-long line). */
int mix_load_file(const char *path, const struct trace_set *ts,
                  struct pol_vm_policy *out, char *err, size_t errlen);

#endif /* sim/mix.h */
