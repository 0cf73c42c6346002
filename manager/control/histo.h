/* manager/control/histo.h -- Latency histograms with fixed millisecond
 * buckets.
 *
 * vpowerd times what a guest waits for (a hint read from its channel
 * until the last action of the plan it caused has returned) and exports
 * the distribution as a Prometheus histogram through its status reply
 * and vpower-exporter (docs/metrics.md).  A histogram is a plain struct
 * of counters: adding a sample is a few integer operations and no
 * allocation, so the daemon may do it on its hot path.  The bucket
 * bounds are fixed (0.25 ms to 100 ms, HISTO_BOUNDS_US) so every
 * vpowerd exports the same series and scrapes can be aggregated.  The
 * latest HISTO_RECENT samples are kept as well, for exact quantiles in
 * the status reply (the buckets alone give only their bounds). */

#ifndef VPOWER_HISTO_H
#define VPOWER_HISTO_H 1

#include <stdint.h>

struct json_object;

#define HISTO_N_BOUNDS 9
#define HISTO_RECENT 4096           /* Samples kept for exact quantiles. */

/* Upper bounds of the buckets in microseconds, ascending; a last,
 * implicit bucket holds everything above the last bound (+Inf). */
extern const uint32_t histo_bounds_us[HISTO_N_BOUNDS];

struct histo {
    uint64_t bucket[HISTO_N_BOUNDS + 1]; /* Samples per bucket (not
                                          * cumulative); the last is
                                          * above the last bound. */
    uint64_t count;                      /* Samples added. */
    uint64_t sum_ns;                     /* Their sum, saturating. */
    uint64_t max_ns;                     /* The largest one. */
    uint64_t recent_ns[HISTO_RECENT];    /* The latest min(count,
                                          * HISTO_RECENT) samples, a
                                          * ring: the next goes to
                                          * count % HISTO_RECENT. */
};

/* Zeroes 'h'.  A zero-initialised struct is an empty histogram too. */
void histo_reset(struct histo *h);

/* Adds one sample of 'ns' nanoseconds.  A sample equal to a bound falls
 * into that bound's bucket (Prometheus "le"). */
void histo_add(struct histo *h, uint64_t ns);

/* Upper bound in ns of the bucket holding the 'q'-quantile (0 < q <= 1,
 * clamped) of the samples: an over-estimate by at most the bucket width.
 * In the last bucket, and whenever it is smaller, 'max_ns'.  0 when
 * empty. */
uint64_t histo_quantile_ns(const struct histo *h, double q);

/* The exact 'q'-quantile (0 < q <= 1, clamped; nearest rank) of the
 * latest min(count, HISTO_RECENT) samples, in ns; 0 when empty.  Sorts
 * a copy: allocates, for status replies, not for the hot path. */
uint64_t histo_recent_ns(const struct histo *h, double q);

/* 'h' as the JSON object the status reply carries and metrics_render()
 * turns into a Prometheus histogram: {"le": [bounds in s], "cumulative":
 * [samples <= each bound], "count": n, "sum": seconds, "max": seconds,
 * "window": samples the next two cover, "p50", "p99": their exact
 * quantiles in seconds (histo_recent_ns)}.
 * Returns a new reference (caller puts it); aborts on out-of-memory. */
struct json_object *histo_to_json(const struct histo *h);

#endif /* manager/control/histo.h */
