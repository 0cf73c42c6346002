/* policy/correct.h -- Online correction of the energy model against a
 * meter.
 *
 * The model's estimate of an interval splits into two parts that a
 * wrong model gets wrong in different ways: busy energy (each core's
 * operating-point power for the time it ran) and static energy (idle
 * states, cluster, uncore and, where the meter covers it, platform
 * power).  Given both parts of many intervals and the meter's energy
 * over the same intervals, pol_correct_update() fits one scale per part
 * (meter = busy_scale x busy + idle_scale x static) by least squares
 * with exponential forgetting; pol_correct_apply() writes the model
 * with both scales applied.  The fit is always made against the
 * uncorrected model's parts, so applying it feeds nothing back into it.
 *
 * When the load hardly changes the ratio of busy to static energy, the
 * two scales cannot be told apart: both are then the one common scale
 * (meter / model), the least-squares answer the data supports; a small
 * ridge term pulls a barely separable fit the same way.  Pure
 * arithmetic: no I/O, no clock, the state is the caller's. */

#ifndef VPOWER_POLICY_CORRECT_H
#define VPOWER_POLICY_CORRECT_H 1

#include <stdbool.h>
#include <stddef.h>

#include "policy/model.h"

/* Scales are kept within [POL_CORRECT_MIN, POL_CORRECT_MAX]: a meter
 * claiming more than that is broken or measures something else. */
#define POL_CORRECT_MIN 0.1
#define POL_CORRECT_MAX 10.0

/* The fit's state.  Zero it with pol_correct_init(). */
struct pol_correct {
    double sbb, sbs, sss;       /* Decayed sums of busy x busy, busy x
                                 * static, static x static (J^2). */
    double sbm, ssm;            /* ... busy x meter, static x meter. */
    double sm, st;              /* ... meter, busy + static (J). */
    unsigned n;                 /* Intervals added. */
    double busy_scale;          /* Current fit, 1 before any data. */
    double idle_scale;
};

void pol_correct_init(struct pol_correct *);

/* Adds one interval: the uncorrected model's busy and static energy
 * 'busy_j' and 'static_j' and the meter's 'meter_j' over the same time
 * (joules, finite, >= 0), with older intervals weighed down by 'keep'
 * (0 < keep <= 1; 1 forgets nothing), and refits busy_scale and
 * idle_scale.  An interval with a non-finite or negative value or no
 * model energy is ignored (returns false). */
bool pol_correct_update(struct pol_correct *, double busy_j,
                        double static_j, double meter_j, double keep);

/* Writes into 'out' the model 'base' with every busy power (operating
 * points' busy_mw) times 'busy_scale' and every static power (idle
 * states, cluster active/idle and per-point cluster power, uncore
 * active/idle, and platform_mw when 'platform') times 'idle_scale'.
 * Topology, frequencies, capacities and latencies are copied unchanged,
 * so every order the policy derives from the model stays valid.  'out'
 * may be 'base'. */
void pol_correct_apply(const struct pol_model *base, double busy_scale,
                       double idle_scale, bool platform,
                       struct pol_model *out);

/* Writes into 'out' the model 'base' with every static power zeroed
 * (platform included): pol_energy_power_mw() of it is the busy part of
 * base's estimate for the same plan and load. */
void pol_correct_busy_only(const struct pol_model *base,
                           struct pol_model *out);

#endif /* policy/correct.h */
