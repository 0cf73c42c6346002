/* tests/fuzz/fuzz-trace.c -- libFuzzer target for the simulator's trace
 * readers.
 *
 * A trace is untrusted input: an operator may be handed one by anybody
 * and run vpower-sim on it.  The readers load from the file system, so
 * this target writes each input into a private directory (made once per
 * process under $TMPDIR or /tmp, removed at exit) and calls the reader's
 * load on it, as vpower-sim does.  The first byte 'b' of the input picks
 * the reader and its options, the rest is file content:
 *
 *   b % 3         0 PlanetLab, 1 Bitbrains, 2 vpowerd recording
 *   b / 3 % 4     trace_opts.max_vms (0 = every file); for a
 *                 recording, non-zero: the target writes the hash of its
 *                 MT lines into its MODEL line (fix_model_hash())
 *   b / 12 % 2    1: a file bound of FUZZ_SMALL_FILE bytes (else the
 *                 reader's default)
 *   b / 24 % 2    1: a window of FUZZ_SHORT_WINDOW intervals (else the
 *                 format's day)
 *
 * so '0', '1' and '2' are the three readers with default options; the
 * corpus also uses '3' and '6' (PlanetLab, the first 1 or 2 files), '7'
 * (Bitbrains, 2 files), 'H' and 'I' (PlanetLab and Bitbrains over the
 * short window), '<' (PlanetLab with the small bound) and '5' (a
 * recording whose model hash the target fills in).  For the two
 * directory formats the content is split at each line "--8<--" into up
 * to FUZZ_MAX_FILES files, named in the order the readers sort them; an
 * empty content is an empty directory.  The recording is one file, read
 * through record_replay() (which runs every decision it holds through
 * the daemon's cycle and the policy).
 *
 * Checked: a load either succeeds or fails with a negative errno and a
 * NUL-terminated, non-empty message naming the directory or file
 * without control characters (input is quoted escaped); a loaded set
 * has the files asked for, in name order, the format's interval count,
 * 1 to TRACE_MAX_VCPUS vCPUs per VM and every demand within one vCPU,
 * and it survives trace_set_repeat() and trace_set_shape() as
 * vpower-sim uses them.  A replayed recording's counts add up and its
 * strings are terminated and escaped.  Built with clang
 * -fsanitize=fuzzer by `make fuzz-trace` / .ci/fuzz; replayed over the
 * committed corpus by make check. */

#include <config.h>

#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/record.h"
#include "manager/util.h"
#include "sim/replay.h"
#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Most files one input makes for a directory reader; further markers
 * stay in the last file's text. */
#define FUZZ_MAX_FILES 8
/* The line that separates two files of one input. */
#define FUZZ_CUT "--8<--\n"
/* Option values picked by the first byte (see the header). */
#define FUZZ_SMALL_FILE 1024
#define FUZZ_SHORT_WINDOW 12
/* Intervals both directory formats load by default: a day of 300 s. */
#define FUZZ_DAY 288
/* Largest input: a day of PlanetLab is about 1 KiB per VM, and the
 * recording replays one policy decision per few dozen bytes. */
#define FUZZ_MAX_INPUT (64 * 1024)

/* The private directory, "" until made.  Short, so that every path the
 * readers build from it fits and their messages quote it whole. */
static char fuzz_dir[256];

/* Removes the private directory with any file the target may have left
 * in it. */
static void
remove_dir(void)
{
    char p[300];

    for (unsigned i = 0; i < FUZZ_MAX_FILES; i++) {
        snprintf(p, sizeof p, "%s/vm%u", fuzz_dir, i);
        unlink(p);
        snprintf(p, sizeof p, "%s/%u.csv", fuzz_dir, i);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/rec", fuzz_dir);
    unlink(p);
    rmdir(fuzz_dir);
}

/* Makes the private directory for the process's first input. */
static void
make_dir(void)
{
    const char *tmp = getenv("TMPDIR");

    if (fuzz_dir[0]) {
        return;
    }
    if (!tmp || !tmp[0]) {
        tmp = "/tmp";
    }
    if ((size_t) snprintf(fuzz_dir, sizeof fuzz_dir,
                          "%s/vpower-fuzz-trace.XXXXXX", tmp)
        >= sizeof fuzz_dir) {
        fprintf(stderr, "fuzz-trace: TMPDIR '%s' is too long\n", tmp);
        abort();
    }
    if (!mkdtemp(fuzz_dir)) {
        perror("fuzz-trace: mkdtemp");
        abort();
    }
    atexit(remove_dir);
}

/* Writes 'n' bytes at 'p' to the private directory's file 'name'. */
static void
write_file(const char *name, const uint8_t *p, size_t n)
{
    char path[300];
    int fd;

    snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror(path);
        abort();
    }
    while (n) {
        ssize_t w = write(fd, p, n);

        if (w <= 0) {
            perror(path);
            abort();
        }
        p += w;
        n -= (size_t) w;
    }
    if (close(fd)) {
        perror(path);
        abort();
    }
}

/* Removes the private directory's file 'name', so that the next input
 * starts from an empty directory. */
static void
unlink_file(const char *name)
{
    char path[300];

    snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
    if (unlink(path)) {
        perror(path);
        abort();
    }
}

/* Aborts unless 's' (room for 'size' bytes) is NUL-terminated, valid
 * UTF-8 and free of what text for people escapes
 * (util_utf8_unprintable()): a message or name for a terminal. */
static void
check_text(const char *s, size_t size)
{
    const char *end = memchr(s, '\0', size);
    size_t k;

    if (!end) {
        abort();
    }
    for (const char *c = s; c < end; c += k) {
        k = util_utf8_len(c, (size_t) (end - c));
        if (!k || util_utf8_unprintable(c, k)) {
            abort();
        }
    }
}

/* Aborts unless a failed load returned a negative errno and a message
 * that starts with 'where' (the directory or the file). */
static void
check_error(int rc, const char *err, size_t errlen, const char *where)
{
    if (rc >= 0 || !err[0] || strncmp(err, where, strlen(where))) {
        abort();
    }
    check_text(err, errlen);
}

/* Aborts unless every VM of 'set' has 1..TRACE_MAX_VCPUS vCPUs and
 * every demand is at most one vCPU. */
static void
check_demand(const struct trace_set *set)
{
    struct trace_shape sh;

    for (size_t i = 0; i < set->n_vms; i++) {
        const struct trace_vm *vm = &set->vms[i];

        if (!vm->name || !vm->n_vcpus || vm->n_vcpus > TRACE_MAX_VCPUS
            || !vm->demand_ppm) {
            abort();
        }
        for (size_t k = 0; k < set->n_intervals * vm->n_vcpus; k++) {
            if (vm->demand_ppm[k] > 1000000) {
                abort();
            }
        }
    }
    trace_set_shape(set, &sh);
    if (sh.n_vms != set->n_vms || !isfinite(sh.mean_cores)
        || sh.mean_cores < 0 || sh.peak_cores < sh.mean_cores - 1e-9
        || sh.peak_cores > (double) sh.n_vcpus + 1e-9) {
        abort();
    }
}

/* Loads the 'n_files' files of 'names' written for 'rd' with 'opts'
 * and checks the outcome. */
static void
load_dir(const struct trace_reader *rd, const struct trace_opts *opts,
         char names[][32], size_t n_files)
{
    struct trace_set set;
    char err[512];
    size_t want = opts->max_vms ? opts->max_vms : n_files;
    int rc;

    /* "auto" probes every reader on the directory as vpower-sim does;
     * PlanetLab takes whatever Bitbrains does not. */
    if (!trace_reader_find("auto", fuzz_dir)) {
        abort();
    }
    memset(err, 0x55, sizeof err);
    rc = rd->load(fuzz_dir, opts, &set, err, sizeof err);
    if (rc) {
        check_error(rc, err, sizeof err, fuzz_dir);
        trace_set_free(&set);
        return;
    }
    if (!set.n_vms || set.n_vms != want || set.interval_s != 300
        || set.n_intervals != (opts->max_intervals ? opts->max_intervals
                                                   : FUZZ_DAY)) {
        abort();
    }
    for (size_t i = 0; i < set.n_vms; i++) {
        /* Each VM is its file, in name order. */
        if (strcmp(set.vms[i].name, names[i])) {
            abort();
        }
        if (rd == &trace_planetlab && set.vms[i].n_vcpus != 1) {
            abort();
        }
    }
    if (rd == &trace_planetlab && (set.n_clamped || set.n_absent)) {
        abort();
    }
    check_demand(&set);
    if (trace_set_repeat(&set, 2, opts->seed) || set.n_vms != 2 * want) {
        abort();
    }
    check_demand(&set);
    trace_set_free(&set);
    if (set.n_vms || set.vms || set.n_intervals) {
        abort();
    }
}

/* The directory formats: splits 'p' into files at FUZZ_CUT lines. */
static void
run_dir(const struct trace_reader *rd, const struct trace_opts *opts,
        const uint8_t *p, size_t n)
{
    char names[FUZZ_MAX_FILES][32];
    size_t n_files = 0;
    size_t cut = strlen(FUZZ_CUT);

    while (n) {
        const uint8_t *m = NULL;
        size_t len = n;

        if (n_files + 1 < FUZZ_MAX_FILES) {
            /* The cut starts a line: at the start or after a '\n',
             * which stays with the file before it. */
            if (n >= cut && !memcmp(p, FUZZ_CUT, cut)) {
                m = p;
            } else {
                m = memmem(p, n, "\n" FUZZ_CUT, cut + 1);
                m = m ? m + 1 : NULL;
            }
            len = m ? (size_t) (m - p) : n;
        }
        /* Names that sort in the order of the parts: "vm0".."vm7" or,
         * with the suffix Bitbrains lists, "0.csv".."7.csv". */
        if (rd == &trace_planetlab) {
            snprintf(names[n_files], sizeof names[n_files], "vm%zu",
                     n_files);
        } else {
            snprintf(names[n_files], sizeof names[n_files], "%zu.csv",
                     n_files);
        }
        write_file(names[n_files], p, len);
        n_files++;
        if (!m) {
            break;
        }
        p = m + cut;
        n -= len + cut;
    }
    load_dir(rd, opts, names, n_files);
    for (size_t i = 0; i < n_files; i++) {
        unlink_file(names[i]);
    }
}

/* The end of the line that starts at 'p' (its '\n' or 'end'). */
static uint8_t *
line_end(uint8_t *p, uint8_t *end)
{
    uint8_t *nl = memchr(p, '\n', (size_t) (end - p));

    return nl ? nl : end;
}

/* True if the line [p, e) starts with the token 'tok' (after spaces,
 * followed by a space or its end), as the recording reader splits it. */
static bool
first_token(const uint8_t *p, const uint8_t *e, const char *tok)
{
    size_t k = strlen(tok);

    while (p < e && *p == ' ') {
        p++;
    }
    return (size_t) (e - p) >= k && !memcmp(p, tok, k)
           && (p + k == e || p[k] == ' ');
}

/* A recording's model must match the FNV-1a hash on its MODEL line, so
 * a mutated model would never get past that check to pol_model_parse()
 * and the replay.  Writes the hash (rec_fnv1a64(), as vpowerd writes it
 * and sim/trace_record.c checks it) of the header's MT lines (the text
 * after "MT " plus '\n' each, up to the ME line) over the last token of
 * every MODEL line whose last token has 16 bytes. */
static void
fix_model_hash(uint8_t *buf, size_t n)
{
    uint8_t *end = buf + n, *p, *e;
    /* The model text is at most the input, each MT line 3 bytes shorter
     * and its '\n' at most one more. */
    char *mt = malloc(n + 1), hex[17];
    size_t len = 0;

    if (!mt) {
        abort();
    }
    /* The first line is the VPREC header, not part of the model. */
    for (p = line_end(buf, end); p < end; p = e) {
        p++;
        e = line_end(p, end);
        if (first_token(p, e, "ME")) {
            break;
        }
        if (e - p >= 3 && !memcmp(p, "MT ", 3)) {
            memcpy(mt + len, p + 3, (size_t) (e - p - 3));
            len += (size_t) (e - p - 3);
            mt[len++] = '\n';
        }
    }
    snprintf(hex, sizeof hex, "%016llx",
             (unsigned long long) rec_fnv1a64(mt, len));
    free(mt);
    for (p = line_end(buf, end); p < end; p = e) {
        p++;
        e = line_end(p, end);
        if (first_token(p, e, "ME")) {
            break;
        }
        if (first_token(p, e, "MODEL") && e - p >= 17 && e[-17] == ' '
            && !memchr(e - 16, ' ', 16)) {
            memcpy(e - 16, hex, 16);
        }
    }
}

/* The recording: one file, probed and replayed as vpower-sim does. */
static void
run_record(const struct trace_opts *opts, const uint8_t *p, size_t n,
           bool fix_hash)
{
    struct record_stats st;
    char path[300], err[512];
    uint8_t *copy = malloc(n + 1);
    int rc;

    if (!copy) {
        abort();
    }
    memcpy(copy, p, n);
    if (fix_hash) {
        fix_model_hash(copy, n);
    }
    snprintf(path, sizeof path, "%s/rec", fuzz_dir);
    write_file("rec", copy, n);
    if (record_probe(path) != (n >= 6 && !memcmp(copy, "VPREC ", 6))) {
        abort();
    }
    memset(err, 0x55, sizeof err);
    rc = record_replay(path, opts->max_file_bytes, &st, err, sizeof err);
    if (rc) {
        check_error(rc, err, sizeof err, path);
        if (st.blocks || st.same || st.differ) {
            abort();                /* Nothing counts as replayed. */
        }
    } else {
        if (st.same + st.differ != st.blocks
            || (st.differ && !st.first_line)) {
            abort();
        }
        check_text(st.model_src, sizeof st.model_src);
        check_text(st.first_what, sizeof st.first_what);
    }
    unlink_file("rec");
    free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_opts opts;
    unsigned b;

    if (size < 1 || size > FUZZ_MAX_INPUT) {
        return 0;
    }
    make_dir();
    b = data[0];
    memset(&opts, 0, sizeof opts);
    opts.max_vms = b / 3 % 4;
    opts.max_file_bytes = b / 12 % 2 ? FUZZ_SMALL_FILE : 0;
    opts.max_intervals = b / 24 % 2 ? FUZZ_SHORT_WINDOW : 0;
    opts.seed = 42;
    switch (b % 3) {
    case 0:
        run_dir(&trace_planetlab, &opts, data + 1, size - 1);
        break;
    case 1:
        run_dir(&trace_bitbrains, &opts, data + 1, size - 1);
        break;
    default:
        run_record(&opts, data + 1, size - 1, opts.max_vms != 0);
        break;
    }
    return 0;
}
