/* manager/calibrate/calib.h -- Measuring a host's energy model.
 *
 * vpower-calibrate turns the generic model manager/inputs/hostmodel.c builds
 * from sysfs (topology, cpufreq points -- a grid where the driver lists
 * none --, cpuidle states) into a measured one.  It puts the host in a
 * sequence of states -- every core idle with every idle state allowed
 * (package idle); n cores held in one idle state; n cores busy at one
 * frequency -- reads the host meter over each, and fits the model's
 * powers to the readings by least squares (calib_lsq.h).
 *
 * Every side effect goes through a table: frequency limits and idle
 * state limits through the host driver (drv_host_ops: sysfs or dummy),
 * energy through a meter (meter.h), and busy loops, the clock and
 * sleeping through 'struct calib_ops' (calib_loops.c: real pinned
 * threads; a test: a simulated host).  Nothing here reads the clock or
 * sysfs directly, so a test runs a whole calibration in virtual time.
 *
 * What total power cannot tell apart.  Every core always contributes one
 * term (busy at a point, or one idle state), so the meter sees
 *   floor + sum over awake packages (uncore_active - uncore_idle)
 *         + sum over cores (their term - deepest idle power)
 * where floor = platform + sum of uncore_idle + cores x deepest idle.
 * The deepest state's core power and the split of the floor between
 * platform and package idle change no prediction of the energy function
 * (policy/energy.c) and are not measurable this way: they are ASSUMED
 * (struct calib_opts) and labelled so in the file; everything else is
 * measured.  The restriction: every frequency domain must list the same
 * operating points (one core type), since a point is set on all CPUs. */

#ifndef VPOWER_CALIB_H
#define VPOWER_CALIB_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "manager/drivers/drv.h"
#include "policy/cpuset.h"

struct meter;
struct pol_model;

/* The parts of the world calibration drives that are not the host
 * driver or the meter.  Every function gets the table's 'aux'. */
struct calib_ops {
    /* Starts one thread spinning 100 % busy on each CPU of 'cpus',
     * pinned to it, and returns once all are pinned and running.  0, or
     * a negative errno with 'err' naming the CPU (nothing left
     * running). */
    int (*busy_start)(void *aux, const struct cpuset *cpus, char *err,
                      size_t errlen);
    void (*busy_stop)(void *aux);           /* Stops and joins them. */
    uint64_t (*now_ns)(void *aux);          /* Monotonic time. */
    void (*sleep_ns)(void *aux, uint64_t ns);
    /* True once the user asked to stop (a signal); checked after every
     * sleep.  NULL: never. */
    bool (*cancelled)(void *aux);
};

/* Settings of one calibration. */
struct calib_opts {
    uint64_t point_ns;          /* Time spent in each state; the first
                                 * CALIB_SETTLE_PCT % is not measured. */
    uint64_t sample_ns;         /* Meter read interval (a wrapping
                                 * counter must be read more often than
                                 * it wraps). */
    uint32_t deepest_idle_mw;   /* ASSUMED core power in the deepest
                                 * idle state. */
    uint32_t package_idle_mw;   /* ASSUMED uncore power per package in
                                 * package idle. */
    const char *name;           /* Model name written to the file. */
    FILE *progress;             /* One line per point; NULL: quiet. */
};

#define CALIB_SETTLE_PCT 20
#define CALIB_MAX_POINTS 512

enum calib_kind {
    CALIB_ALL_IDLE,             /* No loop, no limit: package idle. */
    CALIB_IDLE_STATE,           /* 'cores' held in idle state 'index'. */
    CALIB_BUSY,                 /* 'cores' busy at OPP 'index'. */
};

/* One measured state and what the fit makes of it. */
struct calib_point {
    enum calib_kind kind;
    unsigned index;             /* OPP or idle state index. */
    unsigned n_cores;           /* Physical cores in 'cpus'. */
    struct cpuset cpus;         /* Loop CPUs (one per core) or, for
                                 * CALIB_IDLE_STATE, every thread of the
                                 * cores. */
    bool measured;              /* A meter delta was taken. */
    double measured_mw;         /* Meter energy / time. */
    double fit_mw;              /* The fitted model's value. */
};

struct calib;

/* Plans a calibration of the host behind 'host_ops'/'host' (topology
 * files below 'topo_root', which may be NULL: every CPU its own core in
 * package 0), read through 'meter' (not owned), with 'ops'/'aux' for
 * loops and time ('ops' NULL: plan only, for a dry run).  0 and '*out'
 * (calib_destroy()), or a negative errno with the reason in 'err'. */
int calib_create(const struct drv_host_ops *host_ops, struct drv_host *host,
                 const char *topo_root, struct meter *meter,
                 const struct calib_ops *ops, void *aux,
                 const struct calib_opts *opts, struct calib **out,
                 char *err, size_t errlen);
void calib_destroy(struct calib *);          /* NULL is fine. */

/* Number of points planned and the total time they take, ns. */
size_t calib_n_points(const struct calib *);
uint64_t calib_total_ns(const struct calib *);

/* Measures every point.  Frequency and idle limits it sets are put back
 * to what they were before it returns, on success and on error (a crash
 * is covered by the caller's journal, see vpower-calibrate.c).  0, or a
 * negative errno with 'err' naming the point and the cause. */
int calib_run(struct calib *, char *err, size_t errlen);

/* Fits the model to the measured points.  0, -EDOM when the points
 * cannot separate the unknowns, -EINVAL when a point was not measured,
 * -EIO when the meter counted nothing at all (a dead or wrong meter). */
int calib_fit(struct calib *, char *err, size_t errlen);

/* The fitted model (valid after calib_fit()) and the points. */
const struct pol_model *calib_model(const struct calib *);
const struct calib_point *calib_points(const struct calib *, size_t *n);

/* Frequency of operating point 'index' (of every domain), kHz. */
uint32_t calib_opp_khz(const struct calib *, unsigned index);

/* "14 cores busy at 1000000 kHz" and the like, into 'buf'. */
void calib_describe(const struct calib *, const struct calib_point *,
                    char *buf, size_t len);

/* Writes the fitted model as an energy-model file (docs/energy-model.md)
 * in which every number carries a comment saying whether it was measured
 * (with its fit error) or assumed.  0 or -EIO. */
int calib_write(const struct calib *, FILE *);

#endif /* manager/calibrate/calib.h */
