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
    /* What the reader changed. */
    size_t n_clamped;         /* Rows whose usage exceeded the VM's
                               * provisioned capacity, clamped to it. */
    size_t n_absent;          /* Rows of a VM that did not exist (0
                               * cores), treated as no demand. */
};

/* Aggregate shape of a trace set, for comparing runs on different
 * traces side by side. */
struct trace_shape {
    size_t n_vms, n_vcpus;
    double mean_cores;        /* Mean over intervals of the summed demand
                               * of all VMs, in nominal vCPUs (cores). */
    double peak_cores;        /* Largest interval's summed demand. */
};

/* What the caller wants from a reader. */
struct trace_opts {
    size_t max_vms;           /* 0 = all files; else the first max_vms in
                               * byte (C locale) name order; fewer files
                               * than that is an error. */
    size_t max_intervals;     /* 0 = the format's default (one day). */
    uint64_t seed;            /* For readers with seeded spreading. */
    size_t max_file_bytes;    /* Largest file accepted (0 =
                               * TRACE_MAX_FILE_BYTES); bigger files are
                               * rejected with "FILE: larger than N
                               * bytes" before they are parsed. */
};

#define TRACE_MAX_FILE_BYTES ((size_t) 256 << 20)

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

/* Lists the entries of 'dir' whose names do not start with '.' and, if
 * 'suffix' is not NULL, end in it, sorted by strcmp().  What each entry
 * is gets checked when it is read (trace_read_file()), so an entry that
 * is not a regular file is refused by name, never skipped.  '*names' is
 * a malloc'ed array of malloc'ed strings (free with trace_names_free()).
 * Returns the count, or a negative errno with "DIR: reason" in 'err'. */
int trace_list_dir(const char *dir, const char *suffix, char ***names,
                   char *err, size_t errlen);
void trace_names_free(char **names, size_t n);

/* Called by trace_load_files() for file 'i' of the 'n' selected:
 * 'name' is its name in the directory, 'path' "DIR/NAME" for messages,
 * 'text' its 'len' bytes after any byte-order mark (NUL-terminated; the
 * callee may change them).  Returns 0, or a negative errno with
 * "PATH:LINE: reason" in 'err'. */
typedef int trace_file_fn(void *ctx, size_t i, size_t n, const char *name,
                          const char *path, char *text, size_t len,
                          char *err, size_t errlen);

/* The file loop of the readers: selects the files of 'dir', reads each
 * (trace_read_file_max() with opts->max_file_bytes) and hands it to 'fn'
 * with 'ctx' in name order, stopping at the first error.  The selection
 * is trace_list_dir() of 'dir' and 'suffix', the first opts->max_vms of
 * them (all if 0); none, or fewer than requested, is -ENOENT with "DIR:
 * N WHAT, M requested".  Returns the number of files read (>= 1), or a
 * negative errno with the message of the failing step in 'err'. */
int trace_load_files(const char *dir, const char *suffix, const char *what,
                     const struct trace_opts *opts, trace_file_fn *fn,
                     void *ctx, char *err, size_t errlen);

/* Reads the whole file 'dir'/'name' into a malloc'ed NUL-terminated
 * buffer '*text' of '*len' bytes.  Returns 0 or a negative errno with
 * "FILE: reason" in 'err'.  Only regular files (or symbolic links to
 * them) are read: a directory, FIFO, socket or device is refused with
 * -EINVAL and "FILE: a FIFO, not a regular file" (a FIFO is never waited
 * on), a symbolic link to nothing with -ENOENT and "FILE: a dangling
 * symbolic link to 'TARGET'".  Files above TRACE_MAX_FILE_BYTES give
 * -EFBIG; trace_read_file_max() takes the bound ('max' 0 = default). */
int trace_read_file(const char *dir, const char *name, char **text,
                    size_t *len, char *err, size_t errlen);
int trace_read_file_max(const char *dir, const char *name, size_t max,
                        char **text, size_t *len, char *err,
                        size_t errlen);
/* The same for the file at 'path' as given ("PATH: reason" in 'err'):
 * for inputs named on the command line rather than found in a trace
 * directory, with the same refusals.  Reads until end of file (bounded
 * by 'max', 0 = default). */
int trace_read_path(const char *path, size_t max, char **text,
                    size_t *len, char *err, size_t errlen);

/* One line of a text, as trace_next_line() finds it. */
struct trace_line {
    size_t off;               /* Offset of its first byte in the text. */
    size_t len;               /* Bytes, without the '\n' that ends it and
                               * a '\r' before that '\n'. */
    size_t no;                /* Line number, from 1. */
};

/* The line loop of the text readers: moves 'l' to the next line of
 * 'text' ('len' bytes, may hold NUL bytes) after position '*pos' (0 for
 * the first line), and advances '*pos' past it.  A last line without a
 * '\n' is a line; an empty text has none.  Returns false at the end.
 * Start with 'l' zeroed. */
bool trace_next_line(const char *text, size_t len, size_t *pos,
                     struct trace_line *l);

/* Writes into 'out' (room for 'outlen' >= 8 bytes; always terminated) a
 * printable rendering of the first 'cap' of the 'n' bytes at 's', for
 * messages that quote input: valid UTF-8 stays as it is except control
 * characters (C0, DEL, C1) and the invisible and bidirectional
 * formatting characters (util_utf8_unprintable()), which become "\xNN"
 * byte by byte, as does every byte that is not part of valid UTF-8 (NUL
 * included); "..." follows when bytes were left out (beyond 'cap', or
 * 'out' full).
 * Printable ASCII, the backslash included, is kept: escaping an escaped
 * text changes nothing, and the result is for people, not for parsing
 * back.  Returns 'out'. */
const char *trace_esc(char *out, size_t outlen, const char *s, size_t n,
                      size_t cap);

/* Length of the UTF-8 byte-order mark at the start of 'text' (3), or 0.
 * Spreadsheet exports of CSV traces start with one; it is not data, so
 * the text readers skip it before the first line. */
size_t trace_bom_len(const char *text, size_t len);

/* ---- Spreading a VM's demand over its vCPUs (sim/trace.c) ----------
 *
 * Traces of multi-vCPU VMs give the VM's total ('busy' vCPUs, 0..n).
 * Real guests do not keep every vCPU equally busy, so the total is split
 * with weights drawn from Dirichlet(1, ..., 1) (independent Exp(1)
 * draws, normalised) from 'r': each vCPU gets busy * w_i, capped at one
 * full vCPU (1e6 ppm) with the excess given to the uncapped vCPUs in
 * proportion to their weights, repeated until nothing is left over.  The
 * sum is preserved exactly up to rounding to ppm (busy is clamped to
 * [0, n] first).  'n' <= TRACE_MAX_VCPUS. */
#define TRACE_MAX_VCPUS 256
struct rng;
void trace_spread(struct rng *r, double busy, uint32_t n,
                  uint32_t *out_ppm);

/* Repeats the VMs of 'set' K times in place (K >= 1; 1 = unchanged) to
 * scale a small set up.  Copy 0 is the original; copy k >= 1 of VM i is
 * named "NAME@k" and differs from the original in three seeded ways
 * (from 'seed', k and i): its intervals are rotated by an offset drawn
 * uniformly from [1, n_intervals - 1] (circularly: the loaded window is
 * treated as one repeating period), each interval's VM total is spread
 * over its vCPUs again with trace_spread() from its own stream, and its
 * bursts differ because the simulator keys bursts by VM index.  Returns
 * 0 or -EINVAL (K == 0, or more than TRACE_MAX_VMS VMs). */
#define TRACE_MAX_VMS ((size_t) 1 << 20)
int trace_set_repeat(struct trace_set *set, unsigned K, uint64_t seed);

/* Computes the shape of 'set' into 'out'. */
void trace_set_shape(const struct trace_set *set, struct trace_shape *out);

#endif /* sim/trace.h */
