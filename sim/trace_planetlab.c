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

#define PL_LINES 288
#define PL_INTERVAL_S 300

int
trace_planetlab_parse(const char *file, const char *text, size_t len,
                      uint32_t *pct, size_t n_lines, char *err,
                      size_t errlen)
{
    size_t pos = 0, line = 0;

    if (len == 0) {
        snprintf(err, errlen, "%s:1: empty file", file);
        return -EINVAL;
    }
    while (pos < len) {
        size_t start = pos, end;
        uint32_t v = 0;

        line++;
        while (pos < len && text[pos] != '\n') {
            pos++;
        }
        end = pos;
        if (pos < len) {
            pos++;                      /* Skip the newline. */
        }
        if (end > start && text[end - 1] == '\r') {
            end--;
        }
        if (line > n_lines) {
            snprintf(err, errlen, "%s:%zu: extra line: expected %zu lines",
                     file, line, n_lines);
            return -EINVAL;
        }
        if (end == start) {
            snprintf(err, errlen, "%s:%zu: empty line", file, line);
            return -EINVAL;
        }
        for (size_t i = start; i < end; i++) {
            char c = text[i];

            if (c < '0' || c > '9') {
                snprintf(err, errlen, "%s:%zu: not an integer percent: "
                         "'%.*s'", file, line,
                         (int) (end - start > 20 ? 20 : end - start),
                         text + start);
                return -EINVAL;
            }
            if (v <= 1000) {
                v = v * 10 + (uint32_t) (c - '0');
            }
        }
        if (v > 100) {
            snprintf(err, errlen, "%s:%zu: value %.*s out of range "
                     "[0, 100]", file, line,
                     (int) (end - start > 20 ? 20 : end - start),
                     text + start);
            return -EINVAL;
        }
        pct[line - 1] = v;
    }
    if (line < n_lines) {
        snprintf(err, errlen, "%s:%zu: truncated: %zu lines, expected %zu",
                 file, line, line, n_lines);
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

static int
pl_load(const char *dir, const struct trace_opts *opts,
        struct trace_set *set, char *err, size_t errlen)
{
    char **names;
    int n = trace_list_dir(dir, NULL, &names, err, errlen);
    size_t want, n_int;
    uint32_t pct[PL_LINES];
    int rc = 0;

    memset(set, 0, sizeof *set);
    if (n < 0) {
        return n;
    }
    want = opts->max_vms ? opts->max_vms : (size_t) n;
    if (n == 0 || want > (size_t) n) {
        snprintf(err, errlen, "%s: %d trace files, %zu requested", dir, n,
                 want);
        trace_names_free(names, (size_t) n);
        return -ENOENT;
    }
    n_int = opts->max_intervals && opts->max_intervals < PL_LINES
            ? opts->max_intervals : PL_LINES;
    set->vms = calloc(want, sizeof *set->vms);
    if (!set->vms) {
        abort();
    }
    set->n_intervals = n_int;
    set->interval_s = PL_INTERVAL_S;
    for (size_t i = 0; i < want; i++) {
        struct trace_vm *vm = &set->vms[i];
        char *text, path[4096];
        size_t len;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = trace_read_file(dir, names[i], &text, &len, err, errlen);
        if (rc) {
            break;
        }
        /* The whole file is validated even if fewer intervals are used:
         * a broken file is rejected, not half-read. */
        {
            size_t b = trace_bom_len(text, len);

            rc = trace_planetlab_parse(path, text + b, len - b, pct,
                                       PL_LINES, err, errlen);
        }
        free(text);
        if (rc) {
            break;
        }
        set->n_vms = i + 1;
        vm->name = names[i];
        names[i] = NULL;
        vm->n_vcpus = 1;
        vm->demand_ppm = malloc(n_int * sizeof *vm->demand_ppm);
        if (!vm->demand_ppm) {
            abort();
        }
        for (size_t k = 0; k < n_int; k++) {
            vm->demand_ppm[k] = pct[k] * 10000;
        }
    }
    trace_names_free(names, (size_t) n);
    if (rc) {
        trace_set_free(set);
    }
    return rc;
}

const struct trace_reader trace_planetlab = {
    .name = "planetlab",
    .probe = pl_probe,
    .load = pl_load,
};
