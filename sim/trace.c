/* sim/trace.c -- Reader registry and helpers shared by trace readers.
 *
 * Directory listing is sorted with strcmp() so that "the first N VMs"
 * means the same files on every machine and locale; names are used as
 * opaque strings (PlanetLab has names with spaces). */

#include <config.h>

#include "sim/trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/util.h"
#include "sim/rng.h"

static const struct trace_reader *const readers[] = {
    &trace_bitbrains,           /* Probed first: it checks a header. */
    &trace_planetlab,
};

const struct trace_reader *
trace_reader_find(const char *name, const char *dir)
{
    size_t n = sizeof readers / sizeof readers[0];

    for (size_t i = 0; i < n; i++) {
        if (strcmp(name, "auto") ? !strcmp(name, readers[i]->name)
                                 : readers[i]->probe(dir)) {
            return readers[i];
        }
    }
    return NULL;
}

void
trace_set_free(struct trace_set *set)
{
    if (!set) {
        return;
    }
    for (size_t i = 0; i < set->n_vms; i++) {
        free(set->vms[i].name);
        free(set->vms[i].demand_ppm);
    }
    free(set->vms);
    memset(set, 0, sizeof *set);
}

static int
cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

void
trace_names_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++) {
        free(names[i]);
    }
    free(names);
}

int
trace_list_dir(const char *dir, const char *suffix, char ***names,
               char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **v = NULL;
    size_t n = 0, cap = 0;
    size_t slen = suffix ? strlen(suffix) : 0;

    *names = NULL;
    if (!d) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);

        if (de->d_name[0] == '.' || (suffix && (len < slen ||
            strcmp(de->d_name + len - slen, suffix)))) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            v = xrealloc(v, cap * sizeof *v);
        }
        v[n++] = xstrdup(de->d_name);
    }
    closedir(d);
    if (n) {
        qsort(v, n, sizeof *v, cmp_names);
    }
    *names = v;
    return (int) n;
}

/* The files a reader loads: trace_list_dir() of 'dir' and 'suffix', then
 * the first opts->max_vms of them (all if 0).  Sets '*names' (all the
 * '*n_names' entries, for trace_names_free()) and returns how many to
 * load (>= 1), or a negative errno with a message in 'err': listing
 * errors as trace_list_dir(), -ENOENT with "DIR: N WHAT, M requested"
 * when there are none or fewer than requested. */
static int
trace_select(const char *dir, const char *suffix, const char *what,
             const struct trace_opts *opts, char ***names,
             size_t *n_names, char *err, size_t errlen)
{
    int n = trace_list_dir(dir, suffix, names, err, errlen);
    size_t want;

    *n_names = 0;
    if (n < 0) {
        return n;
    }
    *n_names = (size_t) n;
    want = opts->max_vms ? opts->max_vms : (size_t) n;
    if (n == 0 || want > (size_t) n || want > INT_MAX) {
        snprintf(err, errlen, "%s: %d %s, %zu requested", dir, n, what,
                 want);
        return -ENOENT;
    }
    return (int) want;
}

int
trace_load_files(const char *dir, const char *suffix, const char *what,
                 const struct trace_opts *opts, trace_file_fn *fn,
                 void *ctx, char *err, size_t errlen)
{
    char **names;
    size_t n_names;
    int n = trace_select(dir, suffix, what, opts, &names, &n_names, err,
                         errlen);
    int rc = 0;

    for (int i = 0; i < n && !rc; i++) {
        char *text, path[4096];
        size_t len, b;

        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        rc = trace_read_file_max(dir, names[i], opts->max_file_bytes,
                                 &text, &len, err, errlen);
        if (!rc) {
            b = trace_bom_len(text, len);
            rc = fn(ctx, (size_t) i, (size_t) n, names[i], path, text + b,
                    len - b, err, errlen);
            free(text);
        }
    }
    trace_names_free(names, n_names);
    return rc ? rc : n;
}

int
trace_read_file(const char *dir, const char *name, char **text,
                size_t *len, char *err, size_t errlen)
{
    return trace_read_file_max(dir, name, 0, text, len, err, errlen);
}

int
trace_read_file_max(const char *dir, const char *name, size_t max,
                    char **text, size_t *len, char *err, size_t errlen)
{
    char path[4096], q[256];

    if ((size_t) snprintf(path, sizeof path, "%s/%s", dir, name)
        >= sizeof path) {
        /* The directory cut short, so that the reason fits. */
        snprintf(err, errlen, "%s/%s: path longer than %zu bytes",
                 trace_esc(q, sizeof q, dir, strlen(dir), 100), name,
                 sizeof path - 1);
        return -ENAMETOOLONG;
    }
    return trace_read_path(path, max, text, len, err, errlen);
}

/* What a file of type 'mode' is, for "PATH: a WHAT, not a regular
 * file". */
static const char *
file_kind(mode_t mode)
{
    return S_ISDIR(mode) ? "directory" : S_ISFIFO(mode) ? "FIFO"
           : S_ISSOCK(mode) ? "socket" : S_ISCHR(mode) ? "character device"
           : S_ISBLK(mode) ? "block device" : "special file";
}

/* Opens 'path' for reading if it is a regular file, without waiting on
 * a FIFO (O_NONBLOCK).  Returns the descriptor, or a negative errno with
 * "PATH: reason" in 'err'. */
static int
open_regular(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;

    if (fd < 0) {
        int e = errno;
        char target[256];
        ssize_t n;

        if (e == ENOENT && !lstat(path, &st) && S_ISLNK(st.st_mode)) {
            n = readlink(path, target, sizeof target - 1);
            target[n < 0 ? 0 : n] = '\0';
            snprintf(err, errlen, "%s: a dangling symbolic link to '%s'",
                     path, target);
        } else {
            snprintf(err, errlen, "%s: %s", path, strerror(e));
        }
        return -e;
    }
    if (fstat(fd, &st)) {
        int e = errno;

        snprintf(err, errlen, "%s: %s", path, strerror(e));
        close(fd);
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: a %s, not a regular file", path,
                 file_kind(st.st_mode));
        close(fd);
        return -EINVAL;
    }
    return fd;
}

int
trace_read_path(const char *path, size_t max, char **text, size_t *len,
                char *err, size_t errlen)
{
    /* Bounded: a huge file (or one growing while read) is an error, not
     * an allocation that takes the machine down. */
    size_t bound = max ? max : TRACE_MAX_FILE_BYTES;
    int fd = open_regular(path, err, errlen);
    int r;

    if (fd < 0) {
        return fd;
    }
    r = util_read_fd(fd, bound, text, len);
    if (r == -EFBIG) {
        snprintf(err, errlen, "%s: larger than %zu bytes", path, bound);
    } else if (r == -EIO) {
        snprintf(err, errlen, "%s: read error", path);
    } else if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
    }
    return r;
}

bool
trace_next_line(const char *text, size_t len, size_t *pos,
                struct trace_line *l)
{
    const char *nl;

    if (*pos >= len) {
        return false;
    }
    nl = memchr(text + *pos, '\n', len - *pos);
    l->off = *pos;
    l->len = (nl ? (size_t) (nl - text) : len) - *pos;
    l->no++;
    *pos += l->len + (nl != NULL);
    if (l->len && text[l->off + l->len - 1] == '\r') {
        l->len--;
    }
    return true;
}

const char *
trace_esc(char *out, size_t outlen, const char *s, size_t n, size_t cap)
{
    const unsigned char *u = (const unsigned char *) s;
    size_t i = 0, o = 0, m = n < cap ? n : cap;

    while (i < m) {
        size_t k = util_utf8_len(s + i, n - i);
        size_t step = k ? k : 1;
        bool ctl = util_utf8_unprintable(s + i, k);
        size_t need = !k || ctl ? 4 * step : k;

        /* Whole characters only; room for "..." and the NUL. */
        if (i + step > m || o + need + 4 > outlen) {
            break;
        }
        if (k && !ctl) {
            memcpy(out + o, u + i, k);
            o += k;
        } else {
            for (size_t j = 0; j < step; j++) {
                snprintf(out + o, 5, "\\x%02x", u[i + j]);
                o += 4;
            }
        }
        i += step;
    }
    if (i < n) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

size_t
trace_bom_len(const char *text, size_t len)
{
    return len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
}

void
trace_spread(struct rng *r, double busy, uint32_t n, uint32_t *out_ppm)
{
    double w[TRACE_MAX_VCPUS], d[TRACE_MAX_VCPUS];
    bool capped[TRACE_MAX_VCPUS];
    double left;

    if (n > TRACE_MAX_VCPUS) {
        abort();
    }
    busy = busy < 0 ? 0 : busy > n ? n : busy;
    left = busy;
    for (uint32_t i = 0; i < n; i++) {
        w[i] = rng_exp(r, 1.0);
        d[i] = 0;
        capped[i] = false;
    }
    /* Each round gives what is left to the uncapped vCPUs by weight; a
     * vCPU reaching 1.0 is capped and its excess goes round again.  At
     * most n rounds: every extra round caps one more vCPU. */
    for (uint32_t round = 0; round <= n && left > 1e-12; round++) {
        double sw = 0;
        bool again = false;

        for (uint32_t i = 0; i < n; i++) {
            sw += capped[i] ? 0 : w[i];
        }
        if (sw <= 0) {
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (capped[i]) {
                continue;
            }
            d[i] += left * w[i] / sw;
            if (d[i] >= 1.0) {
                capped[i] = true;
                again = true;
            }
        }
        left = busy;
        for (uint32_t i = 0; i < n; i++) {
            if (d[i] > 1.0) {
                d[i] = 1.0;
            }
            left -= d[i];
        }
        if (!again) {
            break;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        out_ppm[i] = (uint32_t) lround(d[i] * 1e6);
    }
}

int
trace_set_repeat(struct trace_set *set, unsigned K, uint64_t seed)
{
    size_t n0 = set->n_vms, ni = set->n_intervals;
    struct trace_vm *v;

    if (K == 0 || n0 > SIZE_MAX / K / 2 || n0 * K > TRACE_MAX_VMS) {
        return -EINVAL;
    }
    if (K == 1) {
        return 0;
    }
    v = realloc(set->vms, n0 * K * sizeof *v);
    if (!v) {
        abort();
    }
    set->vms = v;
    for (unsigned k = 1; k < K; k++) {
        for (size_t i = 0; i < n0; i++) {
            const struct trace_vm *src = &v[i];
            struct trace_vm *dst = &v[k * n0 + i];
            uint32_t nv = src->n_vcpus;
            struct rng r;
            size_t off;
            size_t len = strlen(src->name) + 16;

            rng_init(&r, seed ^ UINT64_C(0x5e9ea7), k, i);
            off = ni > 1 ? 1 + (size_t) (rng_uniform(&r) * (ni - 1)) : 0;
            if (off >= ni) {
                off = ni - 1;
            }
            dst->name = malloc(len);
            dst->demand_ppm = calloc(ni * nv, sizeof *dst->demand_ppm);
            if (!dst->name || !dst->demand_ppm) {
                abort();
            }
            snprintf(dst->name, len, "%s@%u", src->name, k);
            dst->n_vcpus = nv;
            for (size_t t = 0; t < ni; t++) {
                const uint32_t *s = &src->demand_ppm[((t + off) % ni) * nv];
                double busy = 0;

                for (uint32_t c = 0; c < nv; c++) {
                    busy += s[c] / 1e6;
                }
                if (nv == 1 || busy <= 0) {
                    memcpy(&dst->demand_ppm[t * nv], s, nv * sizeof *s);
                    continue;
                }
                rng_init(&r, seed ^ UINT64_C(0x5e9ea8),
                         ((uint64_t) k << 32) | i, t);
                trace_spread(&r, busy, nv, &dst->demand_ppm[t * nv]);
            }
        }
    }
    set->n_vms = n0 * K;
    return 0;
}

void
trace_set_shape(const struct trace_set *set, struct trace_shape *out)
{
    double sum = 0, peak = 0;

    memset(out, 0, sizeof *out);
    out->n_vms = set->n_vms;
    for (size_t i = 0; i < set->n_vms; i++) {
        out->n_vcpus += set->vms[i].n_vcpus;
    }
    for (size_t t = 0; t < set->n_intervals; t++) {
        double tot = 0;

        for (size_t i = 0; i < set->n_vms; i++) {
            const struct trace_vm *vm = &set->vms[i];

            for (uint32_t c = 0; c < vm->n_vcpus; c++) {
                tot += vm->demand_ppm[t * vm->n_vcpus + c] / 1e6;
            }
        }
        sum += tot;
        peak = tot > peak ? tot : peak;
    }
    out->mean_cores = set->n_intervals ? sum / set->n_intervals : 0;
    out->peak_cores = peak;
}
