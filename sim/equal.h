/* sim/equal.h -- vpower against the rivals that serve, at equal service.
 *
 * Comparing energies alone favours a policy that runs work later: vpower
 * runs part of the work after the step it was demanded in (late work,
 * sim_row.late_core_s), where schedutil and HWP, which follow the load
 * within milliseconds, run it in its step.  equal_run() replays the same
 * input with vpower alone and more headroom (vpowerd.conf headroom_pct,
 * EQUAL_STEP_PCT at a time up to EQUAL_MAX_PCT) until it runs at most
 * EQUAL_LATE_TOL_PCT % of the demand more late than the serving rival
 * that runs least late: an operator's setting, measured, not a policy
 * vpower does not have.  equal_compare() then sets that run against each
 * serving rival; late work still in excess on either side is charged at
 * sim_result.late_j_per_core_s.  docs/baselines.md, "Equal service". */

#ifndef VPOWER_SIM_EQUAL_H
#define VPOWER_SIM_EQUAL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/simrun.h"

#define EQUAL_SERVES_UNMET_PCT 1.0   /* A rival serves: at most this much
                                      * of the demand unmet, not refused. */
#define EQUAL_LATE_TOL_PCT 0.1       /* Late work within this (% of the
                                      * demand) of the rival's is equal. */
#define EQUAL_STEP_PCT 10u
#define EQUAL_MAX_PCT 90u            /* vpowerd.conf's upper limit. */

/* True if baseline 'p' ran in 'res' and serves. */
bool equal_serves(const struct sim_result *res, int p);

/* Replays 'o' with vpower alone and headroom raised from vpowerd's
 * default until its late work is within EQUAL_LATE_TOL_PCT of the least
 * late serving rival's in 'res' (or EQUAL_MAX_PCT is reached: the last
 * run counts).  '*headroom_pct' = the setting of 'served'; 0 = no
 * replay was needed (vpower already serves as the rivals, or no rival
 * serves) and 'served' is left empty.  'served' is the caller's; free it
 * with sim_result_free() in every case.  Returns 0 or a negative errno
 * with a message in 'err'. */
int equal_run(const struct sim_opts *o, const struct sim_result *res,
              struct sim_result *served, uint32_t *headroom_pct,
              char *err, size_t errlen);

struct equal_cmp {
    int rival;                    /* enum sim_pol; -1 = no rival serves
                                   * (or vpower did not run). */
    double vpower_j, rival_j;     /* Energies at equal service, J: run
                                   * energy + work left at the end
                                   * (sim_row.left_finish_j) + late
                                   * charge. */
    double vpower_late_j;         /* Of vpower_j: late work in excess of
                                   * the rival's, charged. */
    double rival_late_j;          /* Of rival_j: the same the other way. */
    double breakeven_j_per_core_s; /* The charge per nominal-core second
                                   * of late work at which the two are
                                   * equal; NAN if vpower ran no more
                                   * late work than the rival (by 1 ms
                                   * of one core); < 0 if vpower loses
                                   * even uncharged. */
};

/* vpower's row, from 'served' if it ran (equal_run()), else from 'res',
 * against each serving rival of 'res'; fills 'c' for the rival with the
 * highest vpower_j / rival_j.  Returns false (c->rival = -1) if vpower
 * did not run or no rival serves. */
bool equal_compare(const struct sim_result *res,
                   const struct sim_result *served, struct equal_cmp *c);

/* vpower's row of the comparison: 'served''s if it ran, else 'res''s. */
const struct sim_row *equal_vpower_row(const struct sim_result *res,
                                       const struct sim_result *served);

#endif /* sim/equal.h */
