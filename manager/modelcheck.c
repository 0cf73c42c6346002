/* manager/modelcheck.c -- The model against the meter (see modelcheck.h).
 *
 * Each period: one meter read, three estimates of the plan that was in
 * force (the model in use, the original, the original's busy part), the
 * error, the trigger and, when correcting, the rescaled model.  The
 * original and its busy-only copy are made once, so a period costs a
 * few energy estimates and, when correcting, one model copy. */

#include <config.h>

#include "manager/modelcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/meter.h"
#include "manager/log.h"
#include "manager/util.h"
#include "policy/correct.h"

#define LOG_MODULE "model"

/* Weight of the previous periods in the fit, per period: about the last
 * hundred periods count. */
#define MCHK_KEEP 0.99

struct mchk {
    struct pol_model base;        /* The original model. */
    struct pol_model busy_only;   /* Its busy terms alone. */
    struct meter *meter;
    struct mchk_conf conf;
    struct pol_correct fit;
    bool have_read;
    uint64_t last_uj, last_ns;
    struct mchk_stats st;
};

struct mchk *
mchk_create(const struct pol_model *model, struct meter *meter,
            bool platform, const struct mchk_conf *conf)
{
    struct mchk *k = XNEW(struct mchk);

    k->base = *model;
    pol_correct_busy_only(model, &k->busy_only);
    k->meter = meter;
    k->conf = *conf;
    if (!k->conf.periods) {
        k->conf.periods = 1;
    }
    pol_correct_init(&k->fit);
    snprintf(k->st.meter, sizeof k->st.meter, "%s", meter->info.name);
    k->st.platform = platform;
    k->st.busy_scale = k->st.idle_scale = 1.0;
    return k;
}

void
mchk_destroy(struct mchk *k)
{
    if (k) {
        meter_close(k->meter);
        free(k);
    }
}

const struct mchk_stats *
mchk_stats(const struct mchk *k)
{
    return &k->st;
}

/* Counts a period beyond or within the bound; warns once per excursion
 * and starts correcting when configured. */
static void
judge(struct mchk *k)
{
    struct mchk_stats *st = &k->st;

    if (fabs(st->error) * 100.0 <= k->conf.bound_pct) {
        st->over = 0;
        return;
    }
    if (++st->over != k->conf.periods) {
        return;
    }
    st->warnings++;
    LOG_WARN("the energy model is off by %+.1f %% against meter %s "
             "(%.1f W estimated, %.1f W measured) for %u periods; %s",
             st->error * 100.0, st->meter, st->model_w, st->meter_w,
             st->over,
             k->conf.correct ? "correcting its busy and idle power "
                               "online (model_correction)"
                             : "model_correction is off");
    if (k->conf.correct && !st->correcting) {
        st->correcting = true;
    }
}

bool
mchk_run(struct mchk *k, uint64_t now_ns, const struct pol_plan *in_force,
         const uint32_t *busy_ppm, struct pol_model *model, double *meter_j)
{
    struct mchk_stats *st = &k->st;
    char err[METER_ERR_LEN];
    uint64_t uj;
    double dt, mj, use_w, base_w, busy_w, plat_w;
    int r;

    r = meter_read_uj(k->meter, now_ns, &uj, err, sizeof err);
    if (r < 0) {
        st->read_errors++;
        LOG_WARN_RL("meter %s: %s", st->meter, err);
        return false;
    }
    if (!k->have_read || now_ns <= k->last_ns) {
        k->have_read = true;
        k->last_uj = uj;
        k->last_ns = now_ns;
        return false;
    }
    dt = (double) (now_ns - k->last_ns) / 1e9;
    mj = (double) (uj - k->last_uj) / 1e6;
    k->last_uj = uj;
    k->last_ns = now_ns;
    *meter_j = mj;
    if (!in_force) {
        return true;
    }
    /* The platform's constant is outside a package meter's scope. */
    plat_w = st->platform ? 0 : k->base.platform_mw / 1000.0;
    use_w = pol_energy_power_mw(model, in_force, busy_ppm) / 1000.0
            - plat_w;
    base_w = pol_energy_power_mw(&k->base, in_force, busy_ppm) / 1000.0
             - plat_w;
    busy_w = pol_energy_power_mw(&k->busy_only, in_force, busy_ppm)
             / 1000.0;
    st->periods++;
    st->meter_j += mj;
    st->model_j += use_w * dt;
    st->meter_w = mj / dt;
    st->model_w = use_w;
    if (mj > 0) {
        st->error = (use_w * dt - mj) / mj;
        st->base_error = (base_w * dt - mj) / mj;
    }
    pol_correct_update(&k->fit, busy_w * dt,
                       (base_w - busy_w > 0 ? base_w - busy_w : 0) * dt, mj,
                       MCHK_KEEP);
    st->busy_scale = k->fit.busy_scale;
    st->idle_scale = k->fit.idle_scale;
    judge(k);
    if (st->correcting) {
        pol_correct_apply(&k->base, st->busy_scale, st->idle_scale,
                          st->platform, model);
        st->corrections++;
    }
    return true;
}
