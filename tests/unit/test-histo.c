/* tests/unit/test-histo.c -- latency histograms (manager/control/histo.h): the
 * bucket a sample falls into (bounds inclusive), count, sum and max,
 * quantiles, and the JSON that vpower-exporter renders as the
 * vpower_hint_apply_seconds histogram, which it refuses when
 * inconsistent. */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "manager/control/histo.h"
#include "manager/control/metrics.h"

#define US 1000ull
#define MS 1000000ull

static void
test_buckets(void **state)
{
    struct histo h;

    (void) state;
    histo_reset(&h);
    assert_int_equal(histo_quantile_ns(&h, 0.5), 0);
    histo_add(&h, 250 * US);         /* On the first bound: first bucket. */
    histo_add(&h, 250 * US + 1);     /* Just above it: the second. */
    histo_add(&h, 3 * MS);           /* (2, 5] ms. */
    histo_add(&h, 100 * MS);         /* The last bound. */
    histo_add(&h, 150 * MS);         /* Above every bound. */
    assert_int_equal(h.bucket[0], 1);
    assert_int_equal(h.bucket[1], 1);
    assert_int_equal(h.bucket[4], 1);
    assert_int_equal(h.bucket[HISTO_N_BOUNDS - 1], 1);
    assert_int_equal(h.bucket[HISTO_N_BOUNDS], 1);
    assert_int_equal(h.count, 5);
    assert_int_equal(h.sum_ns, 500 * US + 1 + 253 * MS);
    assert_int_equal(h.max_ns, 150 * MS);
    for (unsigned b = 1; b < HISTO_N_BOUNDS; b++) {
        assert_true(histo_bounds_us[b] > histo_bounds_us[b - 1]);
    }
    assert_int_equal(histo_bounds_us[0], 250);
    assert_int_equal(histo_bounds_us[HISTO_N_BOUNDS - 1], 100000);
    histo_add(&h, UINT64_MAX);       /* The sum saturates. */
    assert_int_equal(h.sum_ns, UINT64_MAX);
}

static void
test_quantiles(void **state)
{
    struct histo h;

    (void) state;
    histo_reset(&h);
    for (int i = 0; i < 100; i++) {
        histo_add(&h, 300 * US);
    }
    histo_add(&h, 30 * MS);
    /* 100 of 101 samples in (0.25, 0.5] ms: p50 and p99 there. */
    assert_int_equal(histo_quantile_ns(&h, 0.5), 500 * US);
    assert_int_equal(histo_quantile_ns(&h, 0.99), 500 * US);
    /* The top sample: its bucket is (20, 50] ms, but it was 30 ms. */
    assert_int_equal(histo_quantile_ns(&h, 1.0), 30 * MS);
    assert_int_equal(histo_quantile_ns(&h, 2.0), 30 * MS);
    /* A quarter of samples above 0.5 ms moves p99 up. */
    for (int i = 0; i < 40; i++) {
        histo_add(&h, 1500 * US);
    }
    assert_int_equal(histo_quantile_ns(&h, 0.5), 500 * US);
    assert_int_equal(histo_quantile_ns(&h, 0.99), 2 * MS);
    /* In the last bucket, the maximum. */
    histo_reset(&h);
    histo_add(&h, 400 * MS);
    assert_int_equal(histo_quantile_ns(&h, 0.5), 400 * MS);
}

/* The latest HISTO_RECENT samples give exact quantiles; older ones
 * leave the window but stay in the buckets and the maximum. */
static void
test_recent(void **state)
{
    static struct histo h;
    struct json_object *j, *v;

    (void) state;
    histo_reset(&h);
    assert_int_equal(histo_recent_ns(&h, 0.5), 0);
    /* 1..100 us in reverse order: nearest rank, whatever the order. */
    for (int i = 100; i >= 1; i--) {
        histo_add(&h, (uint64_t) i * US);
    }
    assert_int_equal(histo_recent_ns(&h, 0.5), 50 * US);
    assert_int_equal(histo_recent_ns(&h, 0.99), 99 * US);
    assert_int_equal(histo_recent_ns(&h, 1.0), 100 * US);
    assert_int_equal(histo_recent_ns(&h, 0.001), 1 * US);
    /* The bucket estimate is the bound above. */
    assert_int_equal(histo_quantile_ns(&h, 0.5), 100 * US);
    j = histo_to_json(&h);
    assert_true(json_object_object_get_ex(j, "window", &v));
    assert_int_equal(json_object_get_int64(v), 100);
    assert_true(json_object_object_get_ex(j, "p99", &v));
    assert_true(json_object_get_double(v) > 98.9e-6
                && json_object_get_double(v) < 99.1e-6);
    json_object_put(j);
    /* A slow one, then a full window of fast ones pushes it out. */
    histo_add(&h, 7 * MS);
    for (int i = 0; i < HISTO_RECENT; i++) {
        histo_add(&h, 200 * US);
    }
    assert_int_equal(histo_recent_ns(&h, 1.0), 200 * US);
    assert_int_equal(h.max_ns, 7 * MS);
    assert_int_equal(h.count, 101 + HISTO_RECENT);
    j = histo_to_json(&h);
    assert_true(json_object_object_get_ex(j, "window", &v));
    assert_int_equal(json_object_get_int64(v), HISTO_RECENT);
    json_object_put(j);
}

/* The exposition of status {"hint_apply_seconds": j}; caller frees. */
static char *
render(struct json_object *j)
{
    struct json_object *st = json_object_new_object();
    struct metrics_self self = { .version = "t", .up = true };
    char *text;

    json_object_object_add(st, "hint_apply_seconds", j);
    text = metrics_render(st, NULL, &self, NULL);
    json_object_put(st);
    return text;
}

static void
test_exposition(void **state)
{
    struct histo h;
    struct json_object *j, *cum;
    char *text;

    (void) state;
    histo_reset(&h);
    histo_add(&h, 200 * US);
    histo_add(&h, 700 * US);
    histo_add(&h, 700 * US);
    histo_add(&h, 200 * MS);
    text = render(histo_to_json(&h));
    assert_non_null(strstr(text,
        "# TYPE vpower_hint_apply_seconds histogram\n"));
    assert_non_null(strstr(text,
        "vpower_hint_apply_seconds_bucket{le=\"0.00025\"} 1\n"
        "vpower_hint_apply_seconds_bucket{le=\"0.0005\"} 1\n"
        "vpower_hint_apply_seconds_bucket{le=\"0.001\"} 3\n"));
    assert_non_null(strstr(text,
        "vpower_hint_apply_seconds_bucket{le=\"0.1\"} 3\n"
        "vpower_hint_apply_seconds_bucket{le=\"+Inf\"} 4\n"
        "vpower_hint_apply_seconds_sum 0.2016\n"
        "vpower_hint_apply_seconds_count 4\n"));
    free(text);
    /* Counts that decrease: no family rather than a wrong one. */
    j = histo_to_json(&h);
    json_object_object_get_ex(j, "cumulative", &cum);
    json_object_array_put_idx(cum, 5, json_object_new_int(0));
    text = render(j);
    assert_null(strstr(text, "vpower_hint_apply_seconds"));
    free(text);
    /* Bounds that are not numbers, or missing count: none either. */
    j = histo_to_json(&h);
    json_object_object_get_ex(j, "le", &cum);
    json_object_array_put_idx(cum, 0, json_object_new_string("x"));
    text = render(j);
    assert_null(strstr(text, "vpower_hint_apply_seconds"));
    free(text);
    j = histo_to_json(&h);
    json_object_object_del(j, "count");
    text = render(j);
    assert_null(strstr(text, "vpower_hint_apply_seconds"));
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_recent),
        cmocka_unit_test(test_exposition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
