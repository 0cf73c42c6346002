/* manager/control/histo.c -- Fixed-bucket latency histograms (histo.h).
 *
 * The daemon adds samples, the control socket's status reply carries
 * histo_to_json(), and vpower-exporter renders that object as a
 * Prometheus histogram (manager/control/metrics.c).  Counters and a ring
 * of the latest samples: no clock; adding allocates nothing. */

#include <config.h>

#include "manager/control/histo.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

const uint32_t histo_bounds_us[HISTO_N_BOUNDS] = {
    250, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000,
};

void
histo_reset(struct histo *h)
{
    memset(h, 0, sizeof *h);
}

void
histo_add(struct histo *h, uint64_t ns)
{
    unsigned b = 0;

    while (b < HISTO_N_BOUNDS && ns > (uint64_t) histo_bounds_us[b] * 1000) {
        b++;
    }
    h->bucket[b]++;
    h->recent_ns[h->count % HISTO_RECENT] = ns;
    h->count++;
    h->sum_ns = h->sum_ns + ns < h->sum_ns ? UINT64_MAX : h->sum_ns + ns;
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

    return x < y ? -1 : x > y;
}

/* 1-based nearest rank of the 'q'-quantile among 'n' > 0 samples. */
static uint64_t
rank_of(double q, uint64_t n)
{
    uint64_t rank;

    q = q > 1.0 ? 1.0 : q;
    rank = (uint64_t) (q * (double) n + 0.999999);
    return rank < 1 ? 1 : rank > n ? n : rank;
}

uint64_t
histo_quantile_ns(const struct histo *h, double q)
{
    uint64_t rank, seen = 0;

    if (!h->count) {
        return 0;
    }
    rank = rank_of(q, h->count);
    for (unsigned b = 0; b < HISTO_N_BOUNDS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            uint64_t hi = (uint64_t) histo_bounds_us[b] * 1000;

            return hi < h->max_ns ? hi : h->max_ns;
        }
    }
    return h->max_ns;
}

uint64_t
histo_recent_ns(const struct histo *h, double q)
{
    size_t n = h->count < HISTO_RECENT ? (size_t) h->count : HISTO_RECENT;
    uint64_t *v, r;

    if (!n) {
        return 0;
    }
    v = malloc(n * sizeof *v);
    if (!v) {
        abort();
    }
    memcpy(v, h->recent_ns, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_u64);
    r = v[rank_of(q, n) - 1];
    free(v);
    return r;
}

struct json_object *
histo_to_json(const struct histo *h)
{
    struct json_object *o = json_object_new_object();
    struct json_object *le = json_object_new_array();
    struct json_object *cum = json_object_new_array();
    uint64_t seen = 0;

    if (!o || !le || !cum) {
        abort();
    }
    for (unsigned b = 0; b < HISTO_N_BOUNDS; b++) {
        seen += h->bucket[b];
        json_object_array_add(le, json_object_new_double(
                                  histo_bounds_us[b] / 1e6));
        json_object_array_add(cum, json_object_new_int64((int64_t) seen));
    }
    json_object_object_add(o, "le", le);
    json_object_object_add(o, "cumulative", cum);
    json_object_object_add(o, "count",
                           json_object_new_int64((int64_t) h->count));
    json_object_object_add(o, "sum", json_object_new_double(
                               (double) h->sum_ns / 1e9));
    json_object_object_add(o, "max", json_object_new_double(
                               (double) h->max_ns / 1e9));
    json_object_object_add(o, "window", json_object_new_int64(
                               (int64_t) (h->count < HISTO_RECENT
                                          ? h->count : HISTO_RECENT)));
    json_object_object_add(o, "p50", json_object_new_double(
                               (double) histo_recent_ns(h, 0.5) / 1e9));
    json_object_object_add(o, "p99", json_object_new_double(
                               (double) histo_recent_ns(h, 0.99) / 1e9));
    return o;
}
