/* sim/report.h -- Rendering simulation results: text, JSON, gnuplot.
 *
 * All three renderings print the same numbers.  Ratios and the captured
 * fraction are computed here from the rows: ratio to baseline B is
 * E / E_B; captured = (E_perf - E) / (E_perf - E_lower). */

#ifndef VPOWER_SIM_REPORT_H
#define VPOWER_SIM_REPORT_H 1

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "sim/simrun.h"
#include "sim/trace.h"

/* Header of the run, copied into the outputs. */
struct report_info {
    const char *model;            /* Model file name. */
    const char *trace;            /* Trace directory. */
    const char *format;           /* Reader name. */
    unsigned long long seed;
    /* Zero = not shown. */
    const struct trace_shape *shape;   /* Header line + "shape" JSON. */
    const struct trace_set *ts;        /* VM names for per-VM output. */
    const struct pol_vm_policy *vm_policy; /* [ts->n_vms] or NULL. */
    bool per_vm;                       /* Print the per-VM table. */
    unsigned repeat;                   /* --repeat K (0/1 = none). */
    double balanced_energy_j;          /* vpower with every VM balanced,
                                        * same input (> 0 if run): the
                                        * mix's cost is the difference. */
    double balanced_unmet_pct;         /* Its unmet demand, to show when a
                                        * "cheaper" mix just serves less. */
    uint32_t halt_poll_ns;             /* The run's --halt-poll-ns. */
    const char *turbo;                 /* --turbo's WHEN (shown only when
                                        * given), or NULL. */
    double migration_cost_us, pin_cost_us; /* The run's --migration-cost. */
    const struct sim_result *served;   /* vpower replayed at the serving
                                        * rivals' service (sim/equal.h),
                                        * NULL or empty = not needed. */
    uint32_t served_headroom_pct;      /* Its headroom_pct (0 = none). */
};

/* The acceptance rule for performance VMs under a policy mix: a VM
 * passes if its ready p99 under vpower is at most REPORT_PERF_RATIO
 * times its p99 under the performance baseline, or at most
 * REPORT_PERF_FLOOR_PCT (% of the interval; 0.1 % = 0.3 s in 5 min),
 * below which ready time is noise of the 1 s step. */
#define REPORT_PERF_RATIO 1.2
#define REPORT_PERF_FLOOR_PCT 0.1
bool report_perf_vm_ok(double vpower_p99, double perf_p99);

/* Writes an aligned text table of the rows that ran to 'f'. */
void report_text(FILE *f, const struct report_info *ri,
                 const struct sim_result *res);

/* Writes the "signal effects" table: vpower with each input signal off
 * and on, from the variant rows of 'res' (SIM_P_VPOWER_NOHALT: halt
 * stats; SIM_P_VPOWER_NOCAP: thermal cap signal) and, if 'nocap' is not
 * NULL, the thermal cap scenario itself (vpower of 'nocap', run without
 * the cap, against vpower of 'res').  Signals whose rows did not run are
 * left out. */
void report_signals(FILE *f, const struct report_info *ri,
                    const struct sim_result *res,
                    const struct sim_result *nocap);

/* Writes the results as one JSON object (json-c, pretty) to 'f'.
 * Output is a pure function of 'ri' and 'res' (no timestamps, no wall
 * times), so equal runs give identical bytes.  Returns 0 or -EIO. */
int report_json(FILE *f, const struct report_info *ri,
                const struct sim_result *res);

/* Writes a self-contained gnuplot script (data inline) plotting power
 * and active CPUs per interval for each policy to 'path'; running it
 * produces 'path' with ".svg" appended.  Returns 0 or a negative errno. */
int report_plot(const char *path, const struct report_info *ri,
                const struct sim_result *res);

#endif /* sim/report.h */
