/* sim/trace.c -- Reader registry and helpers shared by trace readers.
 *
 * Directory listing is sorted with strcmp() so that "the first N VMs"
 * means the same files on every machine and locale; names are used as
 * opaque strings (PlanetLab has names with spaces). */

#include <config.h>

#include "sim/trace.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
        char path[4096];
        struct stat st;
        size_t len = strlen(de->d_name);

        if (de->d_name[0] == '.' || (suffix && (len < slen ||
            strcmp(de->d_name + len - slen, suffix)))) {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (stat(path, &st) || !S_ISREG(st.st_mode)) {
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            v = realloc(v, cap * sizeof *v);
            if (!v) {
                abort();
            }
        }
        v[n] = strdup(de->d_name);
        if (!v[n]) {
            abort();
        }
        n++;
    }
    closedir(d);
    if (n) {
        qsort(v, n, sizeof *v, cmp_names);
    }
    *names = v;
    return (int) n;
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
    char path[4096];

    snprintf(path, sizeof path, "%s/%s", dir, name);
    return trace_read_path(path, max, text, len, err, errlen);
}

int
trace_read_path(const char *path, size_t max, char **text, size_t *len,
                char *err, size_t errlen)
{
    /* Bounded: a huge file (or one growing while read) is an error, not
     * an allocation that takes the machine down. */
    size_t bound = max ? max : TRACE_MAX_FILE_BYTES;
    int r = util_read_file(path, bound, text, len);

    if (r == -EFBIG) {
        snprintf(err, errlen, "%s: larger than %zu bytes", path, bound);
    } else if (r == -EIO) {
        snprintf(err, errlen, "%s: read error", path);
    } else if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
    }
    return r;
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

    if (K == 0 || n0 > SIZE_MAX / K / 2 || n0 * K > (1u << 20)) {
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
