/* sim/trace_planetlab.c -- Reader for the CloudSim PlanetLab traces.
 *
 * One file per VM, 288 lines of one integer percent each (5-minute
 * samples over 24 h).  Each file becomes one single-vCPU VM whose value is
 * the percent of that vCPU busy at the model's nominal frequency.  The
 * parser is strict: digits only (a trailing CR is tolerated), value in
 * [0, 100], exactly 288 lines; anything else is "FILE:LINE: reason". */

#include <config.h>

#include "sim/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/util.h"

#define PL_LINES 288
#define PL_INTERVAL_S 300

/* Writes "FILE:LINE: WHAT 'TEXT'" for line 'l' into 'err', the line's
 * text escaped and cut short (trace_esc()). */
static int
pl_bad(const char *file, const char *text, const struct trace_line *l,
       const char *what, char *err, size_t errlen)
{
    char q[96];

    trace_esc(q, sizeof q, text + l->off, l->len, 20);
    snprintf(err, errlen, "%s:%zu: %s '%s'", file, l->no, what, q);
    return -EINVAL;
}

int
trace_planetlab_parse(const char *file, const char *text, size_t len,
                      uint32_t *pct, size_t n_lines, char *err,
                      size_t errlen)
{
    struct trace_line l = { 0, 0, 0 };
    size_t pos = 0;

    if (len == 0) {
        snprintf(err, errlen, "%s:1: empty file", file);
        return -EINVAL;
    }
    while (trace_next_line(text, len, &pos, &l)) {
        uint32_t v = 0;

        if (l.no > n_lines) {
            snprintf(err, errlen, "%s:%zu: extra line: expected %zu lines",
                     file, l.no, n_lines);
            return -EINVAL;
        }
        if (l.len == 0) {
            snprintf(err, errlen, "%s:%zu: empty line", file, l.no);
            return -EINVAL;
        }
        for (size_t i = l.off; i < l.off + l.len; i++) {
            char c = text[i];

            if (c < '0' || c > '9') {
                return pl_bad(file, text, &l, "not an integer percent:",
                              err, errlen);
            }
            if (v <= 1000) {
                v = v * 10 + (uint32_t) (c - '0');
            }
        }
        if (v > 100) {
            return pl_bad(file, text, &l, "out of range [0, 100]:", err,
                          errlen);
        }
        pct[l.no - 1] = v;
    }
    if (l.no < n_lines) {
        snprintf(err, errlen, "%s:%zu: truncated: %zu lines, expected %zu",
                 file, l.no, l.no, n_lines);
        return -EINVAL;
    }
    return 0;
}

static bool
pl_probe(const char *dir)
{
    /* The fallback format: anything that is not Bitbrains. */
    return true;
}

/* trace_file_fn for pl_load(): file 'i' becomes VM 'i' of the set. */
static int
pl_file(void *set_, size_t i, size_t n, const char *name, const char *path,
        char *text, size_t len, char *err, size_t errlen)
{
    struct trace_set *set = set_;
    struct trace_vm *vm;
    uint32_t pct[PL_LINES];
    /* The whole file is validated even if fewer intervals are used: a
     * broken file is rejected, not half-read. */
    int rc = trace_planetlab_parse(path, text, len, pct, PL_LINES, err,
                                   errlen);

    if (rc) {
        return rc;
    }
    if (i == 0) {
        set->vms = xcalloc(n, sizeof *set->vms);
    }
    vm = &set->vms[i];
    set->n_vms = i + 1;
    vm->name = xstrdup(name);
    vm->n_vcpus = 1;
    vm->demand_ppm = xcalloc(set->n_intervals, sizeof *vm->demand_ppm);
    for (size_t k = 0; k < set->n_intervals; k++) {
        vm->demand_ppm[k] = pct[k] * 10000;
    }
    return 0;
}

static int
pl_load(const char *dir, const struct trace_opts *opts,
        struct trace_set *set, char *err, size_t errlen)
{
    int rc;

    memset(set, 0, sizeof *set);
    set->n_intervals = opts->max_intervals
                       && opts->max_intervals < PL_LINES
                       ? opts->max_intervals : PL_LINES;
    set->interval_s = PL_INTERVAL_S;
    rc = trace_load_files(dir, NULL, "trace files", opts, pl_file, set,
                          err, errlen);
    if (rc < 0) {
        trace_set_free(set);
        return rc;
    }
    return 0;
}

const struct trace_reader trace_planetlab = {
    .name = "planetlab",
    .probe = pl_probe,
    .load = pl_load,
};
