/* manager/calibrate/calib.c -- Measuring a host's energy model.
 *
 * See calib.h for what is measured and what is assumed.  The plan: one
 * package-idle point first and last (drift shows as their difference),
 * then for each count n of CALIB_COUNTS fractions of the cores: the
 * first n cores held in each idle state but the deepest, and busy at
 * each operating point.  Cores are taken in CPU order, so on a
 * multi-package host the small counts wake only the first package and
 * the fit can separate each package's wake-up power. */

#include <config.h>

#include "manager/calibrate/calib.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "manager/calibrate/calib_lsq.h"
#include "manager/inputs/hostmodel.h"
#include "manager/drivers/meter.h"
#include "manager/util.h"
#include "policy/model.h"

/* Fractions (in quarters) of the cores used for idle and busy points;
 * three counts give a slope and a check of linearity. */
static const unsigned calib_quarters[] = { 1, 2, 4 };

struct calib_orig {             /* One CPU's limits before calibration. */
    bool has_freq, has_idle;
    uint32_t min_khz, max_khz;   /* As found. */
    uint32_t cur_min, cur_max;   /* As set now. */
    unsigned n_idle;
    bool disabled[DRV_MAX_IDLE]; /* As found. */
    bool cur_dis[DRV_MAX_IDLE];  /* As set now. */
};

struct calib {
    const struct drv_host_ops *hops;
    struct drv_host *host;
    struct meter *meter;
    const struct calib_ops *ops;
    void *aux;
    struct calib_opts opts;
    struct pol_model *model;     /* Skeleton, then the fit. */
    unsigned n_cpus;
    struct calib_orig *orig;     /* [n_cpus] */
    unsigned n_cores;
    unsigned *core_cpu;          /* [n_cores]: first CPU of each core. */
    struct calib_point *points;
    size_t n_points;
    double drift_mw;             /* Last package-idle point - first. */
    double rms_mw;               /* Fit residual over all points. */
    bool fitted;
};

static int
check_homogeneous(const struct pol_model *m, char *err, size_t errlen)
{
    const struct pol_domain *d0 = &m->domains[0];

    for (unsigned i = 1; i < m->n_domains; i++) {
        const struct pol_domain *d = &m->domains[i];

        if (d->n_opps != d0->n_opps || d->n_idle != d0->n_idle) {
            snprintf(err, errlen, "frequency domain %u lists %u points and "
                     "%u idle states, domain 0 %u and %u: calibration "
                     "needs one core type", i, d->n_opps, d->n_idle,
                     d0->n_opps, d0->n_idle);
            return -ENOTSUP;
        }
        for (unsigned k = 0; k < d->n_opps; k++) {
            if (d->opps[k].freq_khz != d0->opps[k].freq_khz) {
                snprintf(err, errlen, "frequency domain %u point %u is "
                         "%" PRIu32 " kHz, domain 0's %" PRIu32 ": "
                         "calibration needs one core type", i, k,
                         d->opps[k].freq_khz, d0->opps[k].freq_khz);
                return -ENOTSUP;
            }
        }
    }
    return 0;
}

/* Reads the limits of every CPU so that calib_restore() can put them
 * back. */
static int
save_limits(struct calib *c, char *err, size_t errlen)
{
    for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
        struct calib_orig *o = &c->orig[cpu];
        struct drv_freq f;
        struct drv_idle id;
        bool online = true;
        int r = c->hops->is_online(c->host, cpu, &online);

        if (r == 0 && !online) {
            snprintf(err, errlen, "cpu%u is offline: bring every CPU "
                     "online to calibrate (an offline core cannot run a "
                     "loop, and its idle power is not the model's)", cpu);
            return -EBUSY;
        }
        r = c->hops->get_freq(c->host, cpu, &f);
        if (r == 0) {
            o->has_freq = true;
            o->min_khz = o->cur_min = f.min_khz;
            o->max_khz = o->cur_max = f.max_khz;
        } else if (r != -ENOTSUP && r != -ENOENT) {
            snprintf(err, errlen, "cpu%u: cannot read its frequency "
                     "limits: %s", cpu, strerror(-r));
            return r;
        }
        r = c->hops->get_idle(c->host, cpu, &id);
        if (r == 0) {
            o->has_idle = true;
            o->n_idle = id.n_states;
            for (unsigned s = 0; s < id.n_states; s++) {
                o->disabled[s] = o->cur_dis[s] = id.disabled[s];
            }
        } else if (r != -ENOTSUP && r != -ENOENT) {
            snprintf(err, errlen, "cpu%u: cannot read its idle states: "
                     "%s", cpu, strerror(-r));
            return r;
        }
    }
    return 0;
}

static void
add_point(struct calib *c, enum calib_kind kind, unsigned index,
          unsigned n_cores)
{
    struct calib_point *p = &c->points[c->n_points++];

    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->index = index;
    p->n_cores = n_cores;
    cpuset_zero(&p->cpus);
    for (unsigned i = 0; i < n_cores; i++) {
        unsigned first = c->core_cpu[i];

        if (kind == CALIB_BUSY) {
            cpuset_set(&p->cpus, first);
            continue;
        }
        for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
            if (c->model->cpu_core[cpu] == c->model->cpu_core[first]) {
                cpuset_set(&p->cpus, cpu);
            }
        }
    }
}

static int
plan_points(struct calib *c, char *err, size_t errlen)
{
    const struct pol_domain *d = &c->model->domains[0];
    unsigned counts[ARRAY_SIZE(calib_quarters)], n_counts = 0;
    size_t need;

    for (size_t i = 0; i < ARRAY_SIZE(calib_quarters); i++) {
        unsigned n = (c->n_cores * calib_quarters[i] + 3) / 4;

        n = n ? n : 1;
        if (!n_counts || counts[n_counts - 1] != n) {
            counts[n_counts++] = n;
        }
    }
    need = 2 + n_counts * (d->n_opps + (d->n_idle ? d->n_idle - 1 : 0));
    if (need > CALIB_MAX_POINTS) {
        snprintf(err, errlen, "%zu points needed, at most %d", need,
                 CALIB_MAX_POINTS);
        return -E2BIG;
    }
    c->points = xcalloc(need, sizeof *c->points);
    add_point(c, CALIB_ALL_IDLE, 0, 0);
    for (unsigned i = 0; i < n_counts; i++) {
        for (unsigned s = 0; s + 1 < d->n_idle; s++) {
            add_point(c, CALIB_IDLE_STATE, s, counts[i]);
        }
        for (unsigned k = 0; k < d->n_opps; k++) {
            add_point(c, CALIB_BUSY, k, counts[i]);
        }
    }
    add_point(c, CALIB_ALL_IDLE, 0, 0);
    return 0;
}

static void
find_cores(struct calib *c)
{
    c->core_cpu = xcalloc(c->n_cpus ? c->n_cpus : 1, sizeof *c->core_cpu);
    for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
        bool seen = false;

        for (unsigned i = 0; i < c->n_cores && !seen; i++) {
            seen = c->model->cpu_core[c->core_cpu[i]]
                   == c->model->cpu_core[cpu];
        }
        if (!seen) {
            c->core_cpu[c->n_cores++] = cpu;
        }
    }
}

int
calib_create(const struct drv_host_ops *host_ops, struct drv_host *host,
             const char *topo_root, struct meter *meter,
             const struct calib_ops *ops, void *aux,
             const struct calib_opts *opts, struct calib **out,
             char *err, size_t errlen)
{
    struct calib *c = XNEW(struct calib);
    size_t n_cols;
    int r;

    memset(c, 0, sizeof *c);
    c->hops = host_ops;
    c->host = host;
    c->meter = meter;
    c->ops = ops;
    c->aux = aux;
    c->opts = *opts;
    c->model = xcalloc(1, sizeof *c->model);
    if (!opts->point_ns || !opts->sample_ns) {
        snprintf(err, errlen, "time per point and meter interval must be "
                 "above 0");
        r = -EINVAL;
        goto fail;
    }
    r = hostmodel_build(host_ops, host, topo_root, c->model, err, errlen);
    if (r < 0 || (r = check_homogeneous(c->model, err, errlen)) < 0) {
        goto fail;
    }
    c->n_cpus = c->model->n_cpus;
    c->orig = xcalloc(c->n_cpus, sizeof *c->orig);
    find_cores(c);
    n_cols = 1 + c->model->n_pkgs + c->model->domains[0].n_opps
             + c->model->domains[0].n_idle;
    if (n_cols > CALIB_LSQ_MAX_COLS) {
        snprintf(err, errlen, "%zu unknowns to fit, at most %d", n_cols,
                 CALIB_LSQ_MAX_COLS);
        r = -E2BIG;
        goto fail;
    }
    if ((r = save_limits(c, err, errlen)) < 0
        || (r = plan_points(c, err, errlen)) < 0) {
        goto fail;
    }
    *out = c;
    return 0;

fail:
    calib_destroy(c);
    return r;
}

void
calib_destroy(struct calib *c)
{
    if (c) {
        free(c->model);
        free(c->orig);
        free(c->core_cpu);
        free(c->points);
        free(c);
    }
}

size_t
calib_n_points(const struct calib *c)
{
    return c->n_points;
}

uint64_t
calib_total_ns(const struct calib *c)
{
    return c->n_points * c->opts.point_ns;
}

const struct pol_model *
calib_model(const struct calib *c)
{
    return c->fitted ? c->model : NULL;
}

uint32_t
calib_opp_khz(const struct calib *c, unsigned index)
{
    const struct pol_domain *d = &c->model->domains[0];

    return index < d->n_opps ? d->opps[index].freq_khz : 0;
}

const struct calib_point *
calib_points(const struct calib *c, size_t *n)
{
    *n = c->n_points;
    return c->points;
}

/* Sets 'cpu''s frequency range and idle-state disables to the wanted
 * ones, writing only what differs from what is set now. */
static int
set_cpu(struct calib *c, unsigned cpu, uint32_t min_khz, uint32_t max_khz,
        const bool *dis, char *err, size_t errlen)
{
    struct calib_orig *o = &c->orig[cpu];
    int r;

    if (o->has_freq && (o->cur_min != min_khz || o->cur_max != max_khz)) {
        r = c->hops->set_freq_range(c->host, cpu, min_khz, max_khz);
        if (r < 0) {
            snprintf(err, errlen, "cpu%u: cannot set frequency range "
                     "%" PRIu32 "-%" PRIu32 " kHz: %s", cpu, min_khz,
                     max_khz, strerror(-r));
            return r;
        }
        o->cur_min = min_khz;
        o->cur_max = max_khz;
    }
    for (unsigned s = 0; o->has_idle && s < o->n_idle; s++) {
        if (o->cur_dis[s] == dis[s]) {
            continue;
        }
        r = c->hops->set_idle_disable(c->host, cpu, s, dis[s]);
        if (r < 0) {
            snprintf(err, errlen, "cpu%u: cannot %s idle state %u: %s",
                     cpu, dis[s] ? "disable" : "enable", s, strerror(-r));
            return r;
        }
        o->cur_dis[s] = dis[s];
    }
    return 0;
}

/* Puts the host in the state of point 'p' (frequency and idle limits;
 * loops are started by the caller). */
static int
apply_point(struct calib *c, const struct calib_point *p, char *err,
            size_t errlen)
{
    uint32_t f = c->model->domains[0].opps[p->index].freq_khz;

    for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
        const struct calib_orig *o = &c->orig[cpu];
        bool dis[DRV_MAX_IDLE];
        bool held = p->kind == CALIB_IDLE_STATE
                    && cpuset_has(&p->cpus, cpu);
        int r;

        for (unsigned s = 0; s < DRV_MAX_IDLE; s++) {
            dis[s] = held && s != p->index;
        }
        r = p->kind == CALIB_BUSY
            ? set_cpu(c, cpu, f, f, dis, err, errlen)
            : set_cpu(c, cpu, o->min_khz, o->max_khz, dis, err, errlen);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

/* Puts back every limit calibration changed; the first error is
 * returned (into 'err' when it is empty) but every CPU is tried. */
static int
restore(struct calib *c, char *err, size_t errlen)
{
    char e[256];
    int first = 0;

    for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
        const struct calib_orig *o = &c->orig[cpu];
        int r = set_cpu(c, cpu, o->min_khz, o->max_khz, o->disabled, e,
                        sizeof e);

        if (r < 0 && !first) {
            first = r;
            if (!*err) {
                snprintf(err, errlen, "restoring: %s", e);
            }
        }
    }
    return first;
}

void
calib_describe(const struct calib *c, const struct calib_point *p,
               char *buf, size_t len)
{
    const struct pol_domain *d = &c->model->domains[0];

    switch (p->kind) {
    case CALIB_ALL_IDLE:
        snprintf(buf, len, "all cores idle (package idle)");
        break;
    case CALIB_IDLE_STATE:
        snprintf(buf, len, "%u core%s idle in %s", p->n_cores,
                 p->n_cores == 1 ? "" : "s", d->idle[p->index].name);
        break;
    case CALIB_BUSY:
        snprintf(buf, len, "%u core%s busy at %" PRIu32 " kHz",
                 p->n_cores, p->n_cores == 1 ? "" : "s",
                 d->opps[p->index].freq_khz);
        break;
    }
}

static int
read_meter(struct calib *c, uint64_t *t_ns, uint64_t *e_uj, char *err,
           size_t errlen)
{
    *t_ns = c->ops->now_ns(c->aux);
    return meter_read_uj(c->meter, *t_ns, e_uj, err, errlen);
}

/* Holds the state of point 'p' until 'start' + point_ns, 'start' being
 * when the host began to change into it (setting limits and starting
 * loops counts against the point, so the run keeps its time bound);
 * reads the meter every sample_ns after the settling time and stores
 * the mean power. */
static int
measure(struct calib *c, struct calib_point *p, uint64_t start, char *err,
        size_t errlen)
{
    uint64_t settle_end = start + c->opts.point_ns * CALIB_SETTLE_PCT / 100;
    uint64_t end = start + c->opts.point_ns;
    uint64_t t0, t1, e0, e1, now = c->ops->now_ns(c->aux);
    int r;

    if (now < settle_end) {
        c->ops->sleep_ns(c->aux, settle_end - now);
    }
    if (c->ops->cancelled && c->ops->cancelled(c->aux)) {
        snprintf(err, errlen, "interrupted");
        return -EINTR;
    }
    if ((r = read_meter(c, &t0, &e0, err, errlen)) < 0) {
        return r;
    }
    /* At least one interval, even when changing state took the whole
     * point. */
    for (t1 = t0, e1 = e0; t1 < end || t1 == t0;) {
        uint64_t left = end > t1 ? end - t1 : c->opts.sample_ns;

        c->ops->sleep_ns(c->aux, left < c->opts.sample_ns
                                 ? left : c->opts.sample_ns);
        if (c->ops->cancelled && c->ops->cancelled(c->aux)) {
            snprintf(err, errlen, "interrupted");
            return -EINTR;
        }
        if ((r = read_meter(c, &t1, &e1, err, errlen)) < 0) {
            return r;
        }
    }
    p->measured_mw = (double) (e1 - e0) * 1e6 / (double) (t1 - t0);
    p->measured = true;
    return 0;
}

int
calib_run(struct calib *c, char *err, size_t errlen)
{
    char what[96], e[METER_ERR_LEN];
    int r = 0;

    *err = '\0';
    for (size_t i = 0; i < c->n_points && r == 0; i++) {
        struct calib_point *p = &c->points[i];
        uint64_t start = c->ops->now_ns(c->aux);

        calib_describe(c, p, what, sizeof what);
        r = apply_point(c, p, e, sizeof e);
        if (r == 0 && p->kind == CALIB_BUSY) {
            r = c->ops->busy_start(c->aux, &p->cpus, e, sizeof e);
            if (r == 0) {
                r = measure(c, p, start, e, sizeof e);
                c->ops->busy_stop(c->aux);
            }
        } else if (r == 0) {
            r = measure(c, p, start, e, sizeof e);
        }
        if (r < 0) {
            snprintf(err, errlen, "point %zu (%s): %s", i + 1, what, e);
        } else if (c->opts.progress) {
            fprintf(c->opts.progress, "[%zu/%zu] %-36s %9.2f W  "
                    "(%.0f s left)\n", i + 1, c->n_points, what,
                    p->measured_mw / 1000,
                    (double) ((c->n_points - i - 1) * c->opts.point_ns)
                    / 1e9);
            fflush(c->opts.progress);
        }
    }
    {
        int rr = restore(c, err, errlen);

        return r < 0 ? r : rr;
    }
}

/* Column layout of the fit: the floor, one wake-up term per package,
 * one busy term per point, one term per idle state but the deepest. */
static size_t
col_opp(const struct calib *c, unsigned k)
{
    return 1 + c->model->n_pkgs + k;
}

static size_t
col_idle(const struct calib *c, unsigned s)
{
    return 1 + c->model->n_pkgs + c->model->domains[0].n_opps + s;
}

static size_t
n_cols(const struct calib *c)
{
    const struct pol_domain *d = &c->model->domains[0];

    return col_idle(c, 0) + (d->n_idle ? d->n_idle - 1 : 0);
}

static void
fill_row(const struct calib *c, const struct calib_point *p, double *row)
{
    memset(row, 0, n_cols(c) * sizeof *row);
    row[0] = 1;
    if (p->kind == CALIB_ALL_IDLE) {
        return;
    }
    for (unsigned k = 0; k < c->model->n_pkgs; k++) {
        struct cpuset both;

        cpuset_and(&both, &c->model->pkgs[k].cpus, &p->cpus);
        row[1 + k] = cpuset_empty(&both) ? 0 : 1;
    }
    row[p->kind == CALIB_BUSY ? col_opp(c, p->index)
                              : col_idle(c, p->index)] = p->n_cores;
}

static uint32_t
to_mw(double mw)
{
    return mw <= 0 ? 0 : mw >= 1e8 ? 100000000u : (uint32_t) (mw + 0.5);
}

/* Turns the solution 'x' into the model's powers. */
static void
store_fit(struct calib *c, const double *x)
{
    struct pol_model *m = c->model;
    double deep = c->opts.deepest_idle_mw, pidle = c->opts.package_idle_mw;

    m->platform_mw = to_mw(x[0] - m->n_pkgs * pidle - c->n_cores * deep);
    for (unsigned k = 0; k < m->n_pkgs; k++) {
        m->pkgs[k].uncore_idle_mw = to_mw(pidle);
        m->pkgs[k].uncore_active_mw = to_mw(pidle + x[1 + k]);
    }
    for (unsigned i = 0; i < m->n_domains; i++) {
        struct pol_domain *d = &m->domains[i];

        for (unsigned k = 0; k < d->n_opps; k++) {
            d->opps[k].busy_mw = to_mw(deep + x[col_opp(c, k)]);
            if (!d->opps[k].busy_mw) {
                d->opps[k].busy_mw = 1;      /* The parser wants > 0. */
            }
        }
        for (unsigned s = 0; s < d->n_idle; s++) {
            d->idle[s].power_mw = to_mw(s + 1 < d->n_idle
                                        ? deep + x[col_idle(c, s)] : deep);
        }
        d->cluster_active_mw = d->cluster_idle_mw = 0;
        for (unsigned k = 0; k < d->n_opps; k++) {
            d->opps[k].cluster_mw = 0;
        }
    }
}

int
calib_fit(struct calib *c, char *err, size_t errlen)
{
    size_t cols = n_cols(c), n = c->n_points;
    double *a = xcalloc(n * cols, sizeof *a), *b = xcalloc(n, sizeof *b);
    double x[CALIB_LSQ_MAX_COLS], ss = 0;
    bool moved = false;
    int r = 0;

    for (size_t i = 0; i < n && r == 0; i++) {
        if (!c->points[i].measured) {
            snprintf(err, errlen, "point %zu was not measured", i + 1);
            r = -EINVAL;
        }
        fill_row(c, &c->points[i], &a[i * cols]);
        b[i] = c->points[i].measured_mw;
        moved |= b[i] > 0;
    }
    if (r == 0 && !moved) {
        snprintf(err, errlen, "the meter %s counted no energy over any "
                 "point", c->meter->info.name);
        r = -EIO;
    }
    if (r == 0 && (r = calib_lsq_solve(a, b, n, cols, x)) < 0) {
        snprintf(err, errlen, "the %zu points cannot separate the %zu "
                 "unknowns (%s)", n, cols,
                 r == -EDOM ? "a host with one core cannot be calibrated"
                 : "bad size");
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        double f = 0;

        for (size_t j = 0; j < cols; j++) {
            f += a[i * cols + j] * x[j];
        }
        c->points[i].fit_mw = f;
        ss += (f - b[i]) * (f - b[i]);
    }
    if (r == 0) {
        c->rms_mw = sqrt(ss / (double) n);
        c->drift_mw = b[n - 1] - b[0];
        store_fit(c, x);
        c->fitted = true;
    }
    free(a);
    free(b);
    return r;
}

/* Relative error of the fit over the points of one kind and index:
 * the largest |fit - meter| / meter, in percent. */
static double
worst_err_pct(const struct calib *c, enum calib_kind kind, unsigned index)
{
    double worst = 0;

    for (size_t i = 0; i < c->n_points; i++) {
        const struct calib_point *p = &c->points[i];
        double e;

        if (p->kind != kind || (kind != CALIB_ALL_IDLE && p->index != index)
            || p->measured_mw <= 0) {
            continue;
        }
        e = fabs(p->fit_mw - p->measured_mw) * 100 / p->measured_mw;
        worst = e > worst ? e : worst;
    }
    return worst;
}

static void
write_header(const struct calib *c, FILE *f)
{
    const struct meter_info *mi = &c->meter->info;
    char what[96];

    fprintf(f, "# %s -- written by vpower-calibrate; format: "
            "docs/energy-model.md.\n", c->opts.name);
    fprintf(f, "# Meter: %s (%s, covers: %s).  %zu points of %.1f s, "
            "first %d %% of each\n# not measured.  Fit rms error "
            "%.1f mW; package-idle drift first to last point %.1f mW.\n",
            mi->name, meter_kind_name(mi->kind),
            meter_scope_name(mi->scope), c->n_points,
            (double) c->opts.point_ns / 1e9, CALIB_SETTLE_PCT, c->rms_mw,
            c->drift_mw);
    fprintf(f, "# measured = fitted to the meter; assumed = not "
            "measurable from total power\n# (the deepest idle state's "
            "core power and the package-idle part of the\n# all-idle "
            "floor change no prediction); sysfs = read from cpufreq, "
            "cpuidle,\n# topology.\n#\n# Points (meter W, fit W, "
            "error):\n");
    for (size_t i = 0; i < c->n_points; i++) {
        const struct calib_point *p = &c->points[i];

        calib_describe(c, p, what, sizeof what);
        fprintf(f, "#  %3zu %-36s %9.3f %9.3f %+6.2f %%\n", i + 1, what,
                p->measured_mw / 1000, p->fit_mw / 1000,
                p->measured_mw > 0
                ? (p->fit_mw - p->measured_mw) * 100 / p->measured_mw : 0);
    }
}

/* The smt line: the t-th thread of every core, one list per t.  False
 * when cores have different thread counts (no smt line then). */
static bool
write_smt(const struct calib *c, FILE *f)
{
    struct cpuset lists[4];
    unsigned threads = 0;
    char buf[4096];

    for (unsigned i = 0; i < c->n_cores; i++) {
        unsigned t = 0;

        for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
            if (c->model->cpu_core[cpu]
                == c->model->cpu_core[c->core_cpu[i]]) {
                if (t == 4 || (i && t >= threads)) {
                    return false;
                }
                if (!i) {
                    cpuset_zero(&lists[t]);
                }
                cpuset_set(&lists[t++], cpu);
            }
        }
        if (!i) {
            threads = t;
        } else if (t != threads) {
            return false;
        }
    }
    if (threads < 2) {
        return true;
    }
    fprintf(f, "# sysfs: thread siblings.\nsmt");
    for (unsigned t = 0; t < threads; t++) {
        cpuset_format(&lists[t], buf, sizeof buf);
        fprintf(f, " %s", buf);
    }
    fprintf(f, "\n# assumed: throughput of a core with all threads "
            "busy.\nsmt-capacity %u\n", c->model->smt_capacity_pct);
    return true;
}

static void
write_domain_body(const struct calib *c, const struct pol_domain *d,
                  FILE *f)
{
    fprintf(f, "    # KHZ (sysfs) CAPACITY (assumed: linear in "
            "frequency) BUSY_MW (measured:\n    # fit slope + assumed "
            "deepest idle power); worst fit error of its points.\n");
    for (unsigned k = 0; k < d->n_opps; k++) {
        const struct pol_opp *o = &d->opps[k];

        fprintf(f, "    opp %7" PRIu32 " %4" PRIu32 " %6" PRIu32 "%s"
                "   # measured, error <= %.2f %%\n", o->freq_khz,
                o->capacity, o->busy_mw, o->turbo ? " turbo" : "",
                worst_err_pct(c, CALIB_BUSY, k));
    }
    fprintf(f, "    # NAME EXIT_US RESIDENCY_US (sysfs) MW\n");
    for (unsigned s = 0; s < d->n_idle; s++) {
        const struct pol_idle_state *st = &d->idle[s];

        fprintf(f, "    idle %s %" PRIu32 " %" PRIu32 " %" PRIu32,
                st->name, st->exit_latency_us, st->target_residency_us,
                st->power_mw);
        if (s + 1 < d->n_idle) {
            fprintf(f, "   # measured, error <= %.2f %%\n",
                    worst_err_pct(c, CALIB_IDLE_STATE, s));
        } else {
            fprintf(f, "   # assumed (deepest state)\n");
        }
    }
}

/* True when every domain is exactly the threads of one core. */
static bool
per_core_domains(const struct calib *c)
{
    if (c->model->n_domains != c->n_cores) {
        return false;
    }
    for (unsigned cpu = 0; cpu < c->n_cpus; cpu++) {
        for (unsigned o = 0; o < c->n_cpus; o++) {
            bool same_core = c->model->cpu_core[o] == c->model->cpu_core[cpu];
            bool same_dom = c->model->cpu_domain[o]
                            == c->model->cpu_domain[cpu];

            if (same_core != same_dom) {
                return false;
            }
        }
    }
    return true;
}

int
calib_write(const struct calib *c, FILE *f)
{
    const struct pol_model *m = c->model;
    char buf[4096];

    if (!c->fitted) {
        return -EINVAL;
    }
    write_header(c, f);
    fprintf(f, "name %s\n# sysfs: possible CPUs.\ncpus %u\n", c->opts.name,
            m->n_cpus);
    if (!write_smt(c, f)) {
        fprintf(f, "# cores with different thread counts: no smt line, "
                "every CPU is taken as its own core.\n");
    }
    fprintf(f, "# measured: all-idle floor (error <= %.2f %%) minus the "
            "assumed package idle\n# and deepest idle powers%s.\n"
            "platform %" PRIu32 "\n", worst_err_pct(c, CALIB_ALL_IDLE, 0),
            m->platform_mw ? "" : " (came out negative: 0)",
            m->platform_mw);
    fprintf(f, "# ACTIVE_MW measured (wake-up power + assumed IDLE_MW); "
            "IDLE_MW assumed.\n");
    for (unsigned k = 0; k < m->n_pkgs; k++) {
        cpuset_format(&m->pkgs[k].cpus, buf, sizeof buf);
        fprintf(f, "package %u %s %" PRIu32 " %" PRIu32 "\n", k, buf,
                m->pkgs[k].uncore_active_mw, m->pkgs[k].uncore_idle_mw);
    }
    if (per_core_domains(c)) {
        fprintf(f, "# sysfs: one cpufreq policy per core.\n"
                "domain 0-%u per-core\n", m->n_cpus - 1);
        write_domain_body(c, &m->domains[0], f);
    } else {
        for (unsigned i = 0; i < m->n_domains; i++) {
            cpuset_format(&m->domains[i].cpus, buf, sizeof buf);
            fprintf(f, "# sysfs: cpufreq policy.\ndomain %s\n", buf);
            write_domain_body(c, &m->domains[i], f);
        }
    }
    return ferror(f) ? -EIO : 0;
}
