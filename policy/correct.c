/* policy/correct.c -- Fitting the model's busy and static power to a
 * meter, and the rescaled model (see correct.h).
 *
 * vpowerd's model check (manager/modelcheck.c) calls this once per
 * interval with a meter, so a model that is wrong by a factor in its
 * idle or its busy terms is put right while vpowerd runs; the simulator
 * runs the same code against a hidden true model.  Two unknowns, one
 * equation per interval: a 2 x 2 system of normal equations over
 * exponentially weighted sums, with a ridge term towards the common
 * scale so that intervals which do not tell the parts apart leave both
 * scales at what they agree on. */

#include <config.h>

#include "policy/correct.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* The ridge weight relative to the data's own: small enough not to bias
 * a fit the data supports, large enough to fix the direction it does
 * not. */
#define RIDGE 1e-4

/* The least 1 - cos^2 of the angle between the intervals' busy and
 * static energies for which the two scales are fitted apart; below it,
 * both are the common scale. */
#define SEPARABLE 1e-3

void
pol_correct_init(struct pol_correct *c)
{
    memset(c, 0, sizeof *c);
    c->busy_scale = c->idle_scale = 1.0;
}

static double
clamp_scale(double s)
{
    if (!isfinite(s)) {
        return 1.0;
    }
    return s < POL_CORRECT_MIN ? POL_CORRECT_MIN
           : s > POL_CORRECT_MAX ? POL_CORRECT_MAX : s;
}

bool
pol_correct_update(struct pol_correct *c, double busy_j, double static_j,
                   double meter_j, double keep)
{
    double k, a11, a12, a22, r1, r2, det, a, s;

    if (!isfinite(busy_j) || !isfinite(static_j) || !isfinite(meter_j)
        || busy_j < 0 || static_j < 0 || meter_j < 0
        || busy_j + static_j <= 0) {
        return false;
    }
    if (!(keep > 0 && keep <= 1)) {
        keep = 1;
    }
    c->sbb = c->sbb * keep + busy_j * busy_j;
    c->sbs = c->sbs * keep + busy_j * static_j;
    c->sss = c->sss * keep + static_j * static_j;
    c->sbm = c->sbm * keep + busy_j * meter_j;
    c->ssm = c->ssm * keep + static_j * meter_j;
    c->sm = c->sm * keep + meter_j;
    c->st = c->st * keep + busy_j + static_j;
    c->n++;

    k = clamp_scale(c->sm / c->st);
    /* Each scale's pull is relative to its own data, so a part that is
     * small beside the other is not pinned to the common scale. */
    a11 = c->sbb * (1 + RIDGE);
    a12 = c->sbs;
    a22 = c->sss * (1 + RIDGE);
    r1 = c->sbm + RIDGE * c->sbb * k;
    r2 = c->ssm + RIDGE * c->sss * k;
    det = a11 * a22 - a12 * a12;
    /* det / (a11 a22) is 1 - cos^2 of the angle between the busy and
     * static series: near 0 they move together, and the split between
     * the scales would follow the meter's noise. */
    if (!(det > SEPARABLE * a11 * a22)) {
        c->busy_scale = c->idle_scale = k;
        return true;
    }
    a = (r1 * a22 - a12 * r2) / det;
    s = (a11 * r2 - a12 * r1) / det;
    /* On a bound, the other scale is refitted with that one fixed. */
    if (clamp_scale(a) != a) {
        a = clamp_scale(a);
        s = (r2 - a12 * a) / a22;
    } else if (clamp_scale(s) != s) {
        s = clamp_scale(s);
        a = (r1 - a12 * s) / a11;
    }
    c->busy_scale = clamp_scale(a);
    c->idle_scale = clamp_scale(s);
    return true;
}

static uint32_t
scale_mw(uint32_t mw, double s)
{
    double v = (double) mw * s;

    return v >= (double) UINT32_MAX ? UINT32_MAX
           : v <= 0 ? 0 : (uint32_t) lround(v);
}

void
pol_correct_apply(const struct pol_model *base, double busy_scale,
                  double idle_scale, bool platform, struct pol_model *out)
{
    if (out != base) {
        memcpy(out, base, sizeof *out);
    }
    for (unsigned di = 0; di < out->n_domains && di < POL_MAX_DOMAINS;
         di++) {
        struct pol_domain *d = &out->domains[di];

        for (unsigned i = 0; i < d->n_opps && i < POL_MAX_OPPS; i++) {
            d->opps[i].busy_mw = scale_mw(d->opps[i].busy_mw, busy_scale);
            d->opps[i].cluster_mw = scale_mw(d->opps[i].cluster_mw,
                                             idle_scale);
        }
        for (unsigned i = 0; i < d->n_idle && i < POL_MAX_IDLE; i++) {
            d->idle[i].power_mw = scale_mw(d->idle[i].power_mw, idle_scale);
        }
        d->cluster_active_mw = scale_mw(d->cluster_active_mw, idle_scale);
        d->cluster_idle_mw = scale_mw(d->cluster_idle_mw, idle_scale);
    }
    for (unsigned i = 0; i < out->n_pkgs && i < POL_MAX_PKGS; i++) {
        out->pkgs[i].uncore_active_mw = scale_mw(out->pkgs[i]
                                                 .uncore_active_mw,
                                                 idle_scale);
        out->pkgs[i].uncore_idle_mw = scale_mw(out->pkgs[i].uncore_idle_mw,
                                               idle_scale);
    }
    if (platform) {
        out->platform_mw = scale_mw(out->platform_mw, idle_scale);
    }
}

void
pol_correct_busy_only(const struct pol_model *base, struct pol_model *out)
{
    pol_correct_apply(base, 1.0, 0.0, true, out);
}
