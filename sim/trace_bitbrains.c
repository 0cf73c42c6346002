/* sim/trace_bitbrains.c -- Reader for Bitbrains GWA-T-12 VM traces.
 *
 * One ';'-separated CSV file per multi-vCPU VM (header line, then rows of
 * "Timestamp; CPU cores; CPU capacity provisioned [MHZ]; CPU usage [MHZ];
 * CPU usage [%]; ...").  Timestamps are Unix seconds despite the header.
 * The traps listed in the data set's README are handled as documented in
 * docs/simulator.md:
 *  - rows with 0 cores (VM did not exist) are absent: demand 0;
 *  - usage above the provisioned capacity (up to 106 %) is clamped to the
 *    VM's full demand (every vCPU busy);
 *  - rows are aligned on a common grid of 300 s intervals starting at the
 *    earliest timestamp of all loaded files (rounded to the nearest slot;
 *    rows falling into the same slot are averaged); a gap inside a file
 *    holds the previous value, intervals before a file's first or after
 *    its last row, and slots of 0-core rows, are absent;
 *  - the VM's busy vCPUs (usage MHz / (provisioned MHz / cores)) are
 *    spread over its vCPUs with seeded Dirichlet(1) weights redrawn every
 *    interval, capped at one vCPU each with the excess moved to the
 *    others, so a 2-busy-vCPU VM with 8 vCPUs is not 8 x 25 %.
 * Malformed rows (missing fields, text in number fields, negative values,
 * timestamps not increasing) reject the whole set with FILE:LINE. */

#include <config.h>

#include "sim/trace.h"
#include "sim/rng.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/util.h"

#define BB_INTERVAL_S 300
#define BB_DEFAULT_INTERVALS 288
#define BB_MAX_VCPUS TRACE_MAX_VCPUS
/* Unix seconds: anything past year 2100 is not a Bitbrains timestamp
 * (and a double that large would not convert to int64_t). */
#define BB_MAX_TS 4102444800.0

/* One parsed file before alignment. */
struct bb_file {
    char *name;               /* File name (owned until it moves to the
                               * VM). */
    size_t n_rows;
    int64_t *ts;              /* Unix seconds. */
    uint32_t *cores;          /* 0 = absent. */
    double *busy;             /* Busy vCPUs, 0..cores. */
    uint32_t max_cores;
    size_t n_clamped;         /* Rows with usage > provisioned. */
    size_t n_absent;          /* Rows with 0 cores. */
};

static bool
bb_probe(const char *dir)
{
    char err[256], **names, *text;
    size_t len;
    bool yes = false;
    int n = trace_list_dir(dir, ".csv", &names, err, sizeof err);

    if (n <= 0) {
        trace_names_free(names, 0);
        return false;
    }
    if (!trace_read_file(dir, names[0], &text, &len, err, sizeof err)) {
        yes = !strncmp(text + trace_bom_len(text, len), "Timestamp", 9);
        free(text);
    }
    trace_names_free(names, (size_t) n);
    return yes;
}

/* Parses field 'f' (trimmed) as a finite double. */
static bool
parse_num(const char *f, double *out)
{
    char *end;

    while (*f == ' ' || *f == '\t') {
        f++;
    }
    if (!*f) {
        return false;
    }
    *out = strtod(f, &end);
    while (*end == ' ' || *end == '\t' || *end == '\r') {
        end++;
    }
    return !*end && isfinite(*out);
}

/* Most ';'-separated fields a header or row may have. */
#define BB_MAX_FIELDS 16

/* Reads the header line 'row': it must start with "Timestamp"; sets
 * '*n_hdr' to its number of ';'-separated fields (5 to BB_MAX_FIELDS). */
static int
bb_header(const char *file, const char *row, size_t *n_hdr, char *err,
          size_t errlen)
{
    if (strncmp(row, "Timestamp", 9)) {
        snprintf(err, errlen, "%s:1: missing 'Timestamp' header", file);
        return -EINVAL;
    }
    *n_hdr = 1;
    for (const char *c = row; *c; c++) {
        *n_hdr += *c == ';';
    }
    /* The five columns read here come first; GWA-T-12 files have 11. */
    if (*n_hdr < 5 || *n_hdr > BB_MAX_FIELDS) {
        snprintf(err, errlen, "%s:1: header has %zu fields, expected 5 to "
                 "%d", file, *n_hdr, BB_MAX_FIELDS);
        return -EINVAL;
    }
    return 0;
}

static int
bb_parse(const char *file, char *text, size_t len, struct bb_file *bf,
         char *err, size_t errlen)
{
    struct trace_line l = { 0, 0, 0 };
    size_t pos = 0, cap = 0, n_hdr = 0;
    char *save = NULL;

    memset(bf, 0, sizeof *bf);
    while (trace_next_line(text, len, &pos, &l)) {
        char *row = text + l.off;
        char *fields[BB_MAX_FIELDS];
        size_t nf = 0;
        double v[5];

        if (memchr(row, '\0', l.len)) {
            snprintf(err, errlen, "%s:%zu: NUL byte in the line", file,
                     l.no);
            return -EINVAL;
        }
        row[l.len] = '\0';
        if (l.no == 1) {
            int rc = bb_header(file, row, &n_hdr, err, errlen);

            if (rc) {
                return rc;
            }
            continue;
        }
        if (row[0] == '\0') {
            snprintf(err, errlen, "%s:%zu: empty line", file, l.no);
            return -EINVAL;
        }
        for (char *f = strtok_r(row, ";", &save); f;
             f = strtok_r(NULL, ";", &save)) {
            if (nf < BB_MAX_FIELDS) {
                fields[nf] = f;
            }
            nf++;                 /* All of them, for the message. */
        }
        if (nf != n_hdr) {
            snprintf(err, errlen, "%s:%zu: %zu fields, expected %zu", file,
                     l.no, nf, n_hdr);
            return -EINVAL;
        }
        for (int i = 0; i < 5; i++) {
            if (!parse_num(fields[i], &v[i])) {
                snprintf(err, errlen, "%s:%zu: field %d is not a number",
                         file, l.no, i + 1);
                return -EINVAL;
            }
            if (v[i] < 0) {
                snprintf(err, errlen, "%s:%zu: field %d is negative",
                         file, l.no, i + 1);
                return -EINVAL;
            }
        }
        if (v[0] > BB_MAX_TS) {
            snprintf(err, errlen, "%s:%zu: timestamp %.0f is not Unix "
                     "seconds before 2100", file, l.no, v[0]);
            return -EINVAL;
        }
        if (v[1] != floor(v[1]) || v[1] > BB_MAX_VCPUS) {
            snprintf(err, errlen, "%s:%zu: CPU cores %g out of range "
                     "[0, %d]", file, l.no, v[1], BB_MAX_VCPUS);
            return -EINVAL;
        }
        if (v[1] > 0 && v[2] <= 0) {
            snprintf(err, errlen, "%s:%zu: zero provisioned capacity",
                     file, l.no);
            return -EINVAL;
        }
        if (bf->n_rows && (int64_t) v[0] <= bf->ts[bf->n_rows - 1]) {
            snprintf(err, errlen, "%s:%zu: timestamp not increasing", file,
                     l.no);
            return -EINVAL;
        }
        if (bf->n_rows == cap) {
            cap = cap ? 2 * cap : 1024;
            bf->ts = realloc(bf->ts, cap * sizeof *bf->ts);
            bf->cores = realloc(bf->cores, cap * sizeof *bf->cores);
            bf->busy = realloc(bf->busy, cap * sizeof *bf->busy);
            if (!bf->ts || !bf->cores || !bf->busy) {
                abort();
            }
        }
        bf->ts[bf->n_rows] = (int64_t) v[0];
        bf->cores[bf->n_rows] = (uint32_t) v[1];
        if (v[1] > 0) {
            double b = v[3] / (v[2] / v[1]);

            /* Up to 106 % in the data set: the VM's full demand. */
            bf->n_clamped += b > v[1];
            bf->busy[bf->n_rows] = b > v[1] ? v[1] : b;
            if (v[1] > bf->max_cores) {
                bf->max_cores = (uint32_t) v[1];
            }
        } else {
            bf->n_absent++;
            bf->busy[bf->n_rows] = 0;
        }
        bf->n_rows++;
    }
    if (bf->n_rows == 0) {
        snprintf(err, errlen, "%s:%zu: no data rows", file,
                 l.no ? l.no : 1);
        return -EINVAL;
    }
    return 0;
}

static void
bb_free(struct bb_file *bf)
{
    free(bf->name);
    free(bf->ts);
    free(bf->cores);
    free(bf->busy);
}

/* The files of one load, parsed, before alignment. */
struct bb_files {
    struct bb_file *bf;       /* [n] (owned). */
    size_t n;
    int64_t t0;               /* Earliest timestamp of all files. */
};

/* trace_file_fn for bb_load(): parses file 'i' into fs->bf[i]. */
static int
bb_file_read(void *fs_, size_t i, size_t n, const char *name,
             const char *path, char *text, size_t len, char *err,
             size_t errlen)
{
    struct bb_files *fs = fs_;
    int rc;

    if (i == 0) {
        fs->bf = xcalloc(n, sizeof *fs->bf);
        fs->n = n;
    }
    rc = bb_parse(path, text, len, &fs->bf[i], err, errlen);
    if (rc) {
        return rc;
    }
    fs->bf[i].name = xstrdup(name);
    if (fs->bf[i].ts[0] < fs->t0) {
        fs->t0 = fs->bf[i].ts[0];
    }
    return 0;
}

/* Aligns file 'bf' (file 'i' of the set) on the set's grid of intervals
 * from 't0' into 'vm', which takes the file's name. */
static void
bb_align(struct bb_file *bf, size_t i, int64_t t0, size_t n_int,
         uint64_t seed, struct trace_vm *vm)
{
    double *sum = xcalloc(n_int, sizeof *sum);
    uint32_t *cnt = xcalloc(n_int, sizeof *cnt);
    uint32_t *cores = xcalloc(n_int, sizeof *cores);
    bool *absent = xcalloc(n_int, sizeof *absent);
    int64_t first = -1, last = -1;

    vm->name = bf->name;
    bf->name = NULL;
    vm->n_vcpus = bf->max_cores ? bf->max_cores : 1;
    vm->demand_ppm = xcalloc(n_int * vm->n_vcpus, sizeof *vm->demand_ppm);
    for (size_t r = 0; r < bf->n_rows; r++) {
        int64_t k = (bf->ts[r] - t0 + BB_INTERVAL_S / 2) / BB_INTERVAL_S;

        if (k < 0 || (size_t) k >= n_int) {
            continue;
        }
        if (!bf->cores[r]) {
            absent[k] = true;            /* The VM did not exist. */
            continue;
        }
        sum[k] += bf->busy[r];
        cnt[k]++;
        cores[k] = bf->cores[r];
        first = first < 0 ? k : first;
        last = k;
    }
    /* Hold the previous value across gaps inside the file. */
    for (int64_t k = first + 1; first >= 0 && k <= last; k++) {
        if (!cnt[k] && !absent[k] && cnt[k - 1]) {
            sum[k] = sum[k - 1] / cnt[k - 1];
            cnt[k] = 1;
            cores[k] = cores[k - 1];
        }
    }
    for (size_t k = 0; k < n_int; k++) {
        struct rng r;

        if (!cnt[k]) {
            continue;
        }
        rng_init(&r, seed ^ UINT64_C(0xb17b4a1), i, k);
        trace_spread(&r, sum[k] / cnt[k], cores[k],
                     &vm->demand_ppm[k * vm->n_vcpus]);
    }
    free(sum);
    free(cnt);
    free(cores);
    free(absent);
}

static int
bb_load(const char *dir, const struct trace_opts *opts,
        struct trace_set *set, char *err, size_t errlen)
{
    struct bb_files fs = { NULL, 0, INT64_MAX };
    int rc = trace_load_files(dir, ".csv", ".csv files", opts,
                              bb_file_read, &fs, err, errlen);

    memset(set, 0, sizeof *set);
    if (rc > 0) {
        set->n_vms = (size_t) rc;
        set->vms = xcalloc(set->n_vms, sizeof *set->vms);
        set->n_intervals = opts->max_intervals ? opts->max_intervals
                                               : BB_DEFAULT_INTERVALS;
        set->interval_s = BB_INTERVAL_S;
        for (size_t i = 0; i < set->n_vms; i++) {
            set->n_clamped += fs.bf[i].n_clamped;
            set->n_absent += fs.bf[i].n_absent;
            bb_align(&fs.bf[i], i, fs.t0, set->n_intervals, opts->seed,
                     &set->vms[i]);
        }
    }
    for (size_t i = 0; i < fs.n; i++) {
        bb_free(&fs.bf[i]);
    }
    free(fs.bf);
    return rc < 0 ? rc : 0;
}

const struct trace_reader trace_bitbrains = {
    .name = "bitbrains",
    .probe = bb_probe,
    .load = bb_load,
};
