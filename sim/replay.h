/* sim/replay.h -- Replaying vpowerd's decisions through the policy code.
 *
 * A vpowerd recording (see docs/record-format.md) holds, per decision,
 * what the daemon measured (each vCPU's busy and ready time over the
 * period, where it ran and at what frequency), the input it gave
 * pol_decide() and the plan it got back.  The replayer is the format-free
 * half of `vpower-sim --trace-format record`: it keeps one pol_state and
 * one pol_load per vCPU, exactly as the daemon does (pol_load_update()
 * with the recorded observation, then pol_decide()), and compares each
 * plan with the recorded one field by field (--verify-plans).  The reader
 * that turns a recording file into 'struct replay_decision's lives in
 * sim/trace_record.c. */

#ifndef VPOWER_SIM_REPLAY_H
#define VPOWER_SIM_REPLAY_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* One vCPU's observation since the previous decision. */
struct replay_obs {
    uint32_t vm;              /* Index into replay_decision.vms. */
    uint32_t idx;             /* Guest vCPU number. */
    int32_t cpu;              /* Host CPU it ran on, -1 unknown. */
    uint32_t freq_khz;        /* Its domain's frequency, 0 unknown. */
    uint64_t busy_ns, ready_ns;
    uint64_t interval_ns;     /* 0 = no sample (first decision). */
};

/* One decision as recorded. */
struct replay_decision {
    uint64_t now_ns;
    const struct pol_vm *vms;         /* policy, hints, vCPU ranges. */
    size_t n_vms;
    const struct replay_obs *obs;     /* [n_vcpus], in pol_input order. */
    size_t n_vcpus;
    struct cpuset managed, online;
    bool override_performance;
    uint32_t thermal_cap_khz[POL_MAX_DOMAINS];
    const struct pol_plan *recorded;  /* The daemon's plan, or NULL. */
};

struct replay;

/* Creates a replayer for model 'm' (borrowed) and config 'c' (copied).
 * Returns NULL if the policy state cannot be created. */
struct replay *replay_create(const struct pol_model *m,
                             const struct pol_config *c);
void replay_destroy(struct replay *);         /* NULL is fine. */

/* Folds the observations of 'd' into the vCPUs' loads (keyed by VM id
 * and vCPU number, so VMs may come and go between decisions), runs
 * pol_decide() into 'out' (room for d->n_vms and d->n_vcpus).  If
 * d->recorded is set, compares: returns 0 if identical, 1 if not (with
 * the first differing field in 'what'), or a negative errno if
 * pol_decide() fails (message in 'what'). */
int replay_step(struct replay *r, const struct replay_decision *d,
                struct pol_plan *out, char *what, size_t whatlen);

/* Compares two plans on everything vpowerd acts on: sizes, active and
 * offline CPUs, each domain's frequency, each CPU's idle limit, each
 * vCPU's allowed set, each VM's emulator set and reason, and the next
 * interval.  Returns true if identical, else false with the first
 * difference described in 'what' ("vcpu 3 allowed 0-3 live, 0-1
 * replayed"). */
bool replay_plan_equal(const struct pol_model *m, const struct pol_plan *live,
                       const struct pol_plan *sim, char *what,
                       size_t whatlen);

#endif /* sim/replay.h */
