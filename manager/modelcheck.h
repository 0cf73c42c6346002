/* manager/modelcheck.h -- The energy model checked against a meter each
 * period, and corrected online if configured.
 *
 * vpowerd's decisions and reported energy come from its model.  When the
 * host has a whole-host meter (manager/drivers/meter.h), the cycle hands
 * this module, once per sampled period, the plan that was in force and
 * each CPU's busy share; the module reads the meter and compares its
 * energy over the same interval with the model's estimate.  Where the
 * meter does not cover the platform (a RAPL package or package+DRAM
 * sum), the model's platform_mw is left out of the comparison.
 *
 * When the error stays beyond 'bound_pct' for 'periods' periods in a
 * row, a warning is logged once (again only after the error has come
 * back within the bound); with 'correct' the model the cycle decides
 * with is then replaced each period by the original model with its busy
 * and static terms rescaled by the fit of policy/correct.h, so the
 * decisions and the estimate use the corrected model.  The fit is kept
 * from the first period whether or not correction is on, so it is ready
 * when it is needed.
 *
 * The meter's energy of the period is returned to the cycle, which
 * splits it among the VMs instead of the estimate.  No clock of its
 * own: times come from the caller. */

#ifndef VPOWER_MODELCHECK_H
#define VPOWER_MODELCHECK_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct meter;
struct mchk;

/* From vpowerd.conf (docs/configuration.md). */
struct mchk_conf {
    uint32_t bound_pct;           /* model_error_pct: |error| beyond this
                                   * counts as off. */
    uint32_t periods;             /* model_error_periods: off this many
                                   * periods in a row warns (and corrects). */
    bool correct;                 /* model_correction. */
};

/* What the check saw, for status and the exporter. */
struct mchk_stats {
    char meter[64];               /* The meter's name. */
    bool platform;                /* It covers the whole platform. */
    uint64_t periods;             /* Periods compared. */
    uint64_t read_errors;         /* Meter reads that failed. */
    double meter_j;               /* Measured energy of those periods. */
    double model_j;               /* The model's estimate of them (the
                                   * model in use then, corrected or not). */
    double meter_w, model_w;      /* Last period's average powers. */
    double error;                 /* Last period: (model - meter) / meter
                                   * of the model in use. */
    double base_error;            /* ... of the original model. */
    unsigned over;                /* Periods in a row beyond the bound. */
    uint64_t warnings;            /* Warnings logged. */
    bool correcting;              /* The cycle decides with the corrected
                                   * model. */
    uint64_t corrections;         /* Periods the model was rescaled. */
    double busy_scale, idle_scale;/* The fit (applied when correcting). */
};

/* Starts checking 'model' (copied: the original the corrections scale)
 * against 'meter' (owned from now on; meter_close() in mchk_destroy),
 * which covers the platform when 'platform'.  Never NULL. */
struct mchk *mchk_create(const struct pol_model *model, struct meter *meter,
                         bool platform, const struct mchk_conf *conf);
void mchk_destroy(struct mchk *);          /* NULL is fine. */

/* One sampled period ending at 'now_ns': reads the meter and, when a
 * previous read exists and 'in_force' (the plan of the period) is not
 * NULL, compares the meter's energy since that read with the estimate of
 * 'model' (the model in use) for 'in_force' at 'busy_ppm' (per CPU).
 * With correction triggered, rewrites 'model' as the original rescaled.
 * Returns true with the measured joules since the previous read in
 * '*meter_j', false when there is no measurement (first read, failed
 * read: logged rate-limited and counted). */
bool mchk_run(struct mchk *, uint64_t now_ns, const struct pol_plan *in_force,
              const uint32_t *busy_ppm, struct pol_model *model,
              double *meter_j);

const struct mchk_stats *mchk_stats(const struct mchk *);

#endif /* manager/modelcheck.h */
