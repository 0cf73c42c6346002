/* sim/trace.h -- VM utilisation traces and the readers that load them.
 *
 * A trace set is the simulator's only workload input: per VM, per vCPU
 * and per fixed interval (300 s for both supported sources), the demand
 * in ppm of one vCPU busy at the model's nominal (highest non-turbo)
 * frequency of its biggest core type.  Each file format has one reader
 * behind the small 'struct trace_reader' table; readers reject malformed
 * input with "FILE:LINE: reason" and never return a half-read set. */

#ifndef VPOWER_SIM_TRACE_H
#define VPOWER_SIM_TRACE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One VM of a trace set. */
struct trace_vm {
    char *name;               /* File name (owned); may contain spaces. */
    uint32_t n_vcpus;         /* >= 1. */
    uint32_t *demand_ppm;     /* [n_intervals * n_vcpus] (owned): vCPU v
                               * of interval i is [i * n_vcpus + v];
                               * 0..1000000 of one nominal vCPU. */
};

/* A loaded trace: every VM has exactly 'n_intervals' intervals. */
struct trace_set {
    size_t n_vms;
    struct trace_vm *vms;     /* [n_vms] (owned), in file-name order. */
    size_t n_intervals;
    uint32_t interval_s;      /* Seconds per interval (300). */
};

/* What the caller wants from a reader. */
struct trace_opts {
    size_t max_vms;           /* 0 = all files; else the first max_vms in
                               * byte (C locale) name order; fewer files
                               * than that is an error. */
    size_t max_intervals;     /* 0 = the format's default (one day). */
    uint64_t seed;            /* For readers with seeded spreading. */
};

/* A reader: one per file format. */
struct trace_reader {
    const char *name;         /* "planetlab", "bitbrains". */
    /* True if directory 'dir' looks like this format (cheap check). */
    bool (*probe)(const char *dir);
    /* Loads 'dir' into 'set' (caller-owned, freed with trace_set_free()
     * also on error).  Returns 0, or a negative errno with a message
     * "FILE:LINE: reason" (or "DIR: reason") in 'err'. */
    int (*load)(const char *dir, const struct trace_opts *opts,
                struct trace_set *set, char *err, size_t errlen);
};

extern const struct trace_reader trace_planetlab;
extern const struct trace_reader trace_bitbrains;

/* Finds the reader called 'name', or probes 'dir' when 'name' is "auto".
 * Returns NULL if none matches. */
const struct trace_reader *trace_reader_find(const char *name,
                                             const char *dir);

/* Releases everything 'set' owns and zeroes it.  NULL-safe. */
void trace_set_free(struct trace_set *set);

/* Parses one PlanetLab file's text 'text' ('len' bytes, need not be NUL
 * terminated) named 'file' into 'pct' (room for 'n_lines' values).
 * Exactly 'n_lines' lines of one integer in [0, 100] each.  Returns 0, or
 * -EINVAL with "FILE:LINE: reason" in 'err'. */
int trace_planetlab_parse(const char *file, const char *text, size_t len,
                          uint32_t *pct, size_t n_lines,
                          char *err, size_t errlen);

/* ---- Helpers shared by the readers (sim/trace.c) ----------------- */

/* Lists the regular files of 'dir' whose names do not start with '.' and,
 * if 'suffix' is not NULL, end in it, sorted by strcmp().  '*names' is a
 * malloc'ed array of malloc'ed strings (free with trace_names_free()).
 * Returns the count, or a negative errno with "DIR: reason" in 'err'. */
int trace_list_dir(const char *dir, const char *suffix, char ***names,
                   char *err, size_t errlen);
void trace_names_free(char **names, size_t n);

/* Reads the whole file 'dir'/'name' into a malloc'ed NUL-terminated
 * buffer '*text' of '*len' bytes.  Returns 0 or a negative errno with
 * "FILE: reason" in 'err'. */
int trace_read_file(const char *dir, const char *name, char **text,
                    size_t *len, char *err, size_t errlen);

#endif /* sim/trace.h */
