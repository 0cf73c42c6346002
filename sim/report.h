/* sim/report.h -- Rendering simulation results: text, JSON, gnuplot.
 *
 * All three renderings print the same numbers.  Ratios and the captured
 * fraction are computed here from the rows: ratio to baseline B is
 * E / E_B; captured = (E_perf - E) / (E_perf - E_lower). */

#ifndef VPOWER_SIM_REPORT_H
#define VPOWER_SIM_REPORT_H 1

#include <stdio.h>

#include "sim/simrun.h"

/* Header of the run, copied into the outputs. */
struct report_info {
    const char *model;            /* Model file name. */
    const char *trace;            /* Trace directory. */
    const char *format;           /* Reader name. */
    unsigned long long seed;
};

/* Writes an aligned text table of the rows that ran to 'f'. */
void report_text(FILE *f, const struct report_info *ri,
                 const struct sim_result *res);

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
