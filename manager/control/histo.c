/* manager/control/histo.c -- Fixed-bucket latency histograms (histo.h).
 *
 * The daemon adds samples, the control socket's status reply carries
 * histo_to_json(), and vpower-exporter renders that object as a
 * Prometheus histogram (manager/control/metrics.c).  Counters only: no clock,
 * no allocation except the JSON copy. */

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
    h->count++;
    h->sum_ns = h->sum_ns + ns < h->sum_ns ? UINT64_MAX : h->sum_ns + ns;
    if (ns > h->max_ns) {
        h->max_ns = ns;
    }
}

uint64_t
histo_quantile_ns(const struct histo *h, double q)
{
    uint64_t rank, seen = 0;

    if (!h->count) {
        return 0;
    }
    q = q > 1.0 ? 1.0 : q;
    /* The rank of the q-quantile among the sorted samples, 1-based. */
    rank = (uint64_t) (q * (double) h->count + 0.999999);
    rank = rank < 1 ? 1 : rank > h->count ? h->count : rank;
    for (unsigned b = 0; b < HISTO_N_BOUNDS; b++) {
        seen += h->bucket[b];
        if (seen >= rank) {
            uint64_t hi = (uint64_t) histo_bounds_us[b] * 1000;

            return hi < h->max_ns ? hi : h->max_ns;
        }
    }
    return h->max_ns;
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
    return o;
}
