/* sim/equal.c -- vpower against the rivals that serve, at equal service. */

#include <config.h>

#include "sim/equal.h"

#include <math.h>
#include <string.h>

#include "manager/conf.h"

bool
equal_serves(const struct sim_result *res, int p)
{
    const struct sim_row *r = &res->rows[p];

    return p >= SIM_P_PERFORMANCE && p <= SIM_P_LAST_BASELINE && r->ran
           && !r->refused && r->unmet_pct <= EQUAL_SERVES_UNMET_PCT;
}

/* The least late work (% of the demand) of the serving rivals; < 0 if
 * none serves. */
static double
target_late_pct(const struct sim_result *res)
{
    double t = -1;

    for (int p = SIM_P_PERFORMANCE; p <= SIM_P_LAST_BASELINE; p++) {
        if (equal_serves(res, p) && (t < 0 || res->rows[p].late_pct < t)) {
            t = res->rows[p].late_pct;
        }
    }
    return t;
}

int
equal_run(const struct sim_opts *o, const struct sim_result *res,
          struct sim_result *served, uint32_t *headroom_pct, char *err,
          size_t errlen)
{
    double target = target_late_pct(res);
    struct sim_opts so = *o;
    struct vpd_conf c;
    uint32_t h;

    memset(served, 0, sizeof *served);
    *headroom_pct = 0;
    if (target < 0 || !res->rows[SIM_P_VPOWER].ran
        || res->rows[SIM_P_VPOWER].late_pct <= target + EQUAL_LATE_TOL_PCT) {
        return 0;
    }
    conf_defaults(&c);
    h = o->headroom_pct ? o->headroom_pct : c.headroom_pct;
    so.mask = 1u << SIM_P_VPOWER;
    while (h < EQUAL_MAX_PCT) {
        int rc;

        h = h + EQUAL_STEP_PCT < EQUAL_MAX_PCT ? h + EQUAL_STEP_PCT
                                               : EQUAL_MAX_PCT;
        so.headroom_pct = h;
        sim_result_free(served);
        memset(served, 0, sizeof *served);
        rc = sim_run(&so, served, err, errlen);
        if (rc) {
            return rc;
        }
        *headroom_pct = h;
        if (served->rows[SIM_P_VPOWER].late_pct
            <= target + EQUAL_LATE_TOL_PCT) {
            break;
        }
    }
    return 0;
}

const struct sim_row *
equal_vpower_row(const struct sim_result *res,
                 const struct sim_result *served)
{
    if (served && served->rows[SIM_P_VPOWER].ran) {
        return &served->rows[SIM_P_VPOWER];
    }
    return &res->rows[SIM_P_VPOWER];
}

/* vpower's row 'v' against serving rival 'p' of 'res', into 'c'. */
static void
equal_pair(const struct sim_result *res, const struct sim_row *v, int p,
           struct equal_cmp *c)
{
    const struct sim_row *r = &res->rows[p];
    double dl = v->late_core_s - r->late_core_s;
    double ev = v->energy_j + v->left_finish_j;
    double er = r->energy_j + r->left_finish_j;

    c->rival = p;
    c->vpower_late_j = dl > 0 ? dl * res->late_j_per_core_s : 0;
    c->rival_late_j = dl < 0 ? -dl * res->late_j_per_core_s : 0;
    c->vpower_j = ev + c->vpower_late_j;
    c->rival_j = er + c->rival_late_j;
    /* Less than a millisecond of one core's work is no difference. */
    c->breakeven_j_per_core_s = dl > 1e-3 ? (er - ev) / dl : NAN;
}

bool
equal_compare(const struct sim_result *res, const struct sim_result *served,
              struct equal_cmp *c)
{
    const struct sim_row *v = equal_vpower_row(res, served);
    struct equal_cmp t;

    c->rival = -1;
    for (int p = SIM_P_PERFORMANCE; v->ran && p <= SIM_P_LAST_BASELINE;
         p++) {
        if (!equal_serves(res, p)) {
            continue;
        }
        equal_pair(res, v, p, &t);
        if (t.rival_j > 0 && (c->rival < 0 || t.vpower_j * c->rival_j
                                              > c->vpower_j * t.rival_j)) {
            *c = t;
        }
    }
    return c->rival >= 0;
}
