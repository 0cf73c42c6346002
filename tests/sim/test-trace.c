/* tests/sim/test-trace.c -- Trace readers accept good input exactly and
 * reject every malformed file with "FILE:LINE: reason".
 *
 * Fixtures live in tests/sim/data/: pl-ok (three PlanetLab files, one
 * name with spaces), pl-bad (one trap per file), pl-dirbad (a good file
 * and a bad one: the set must not be half-read), bb-* (Bitbrains). */

#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "sim/burst.h"
#include "sim/trace.h"
#include "tests/sim/check.h"

static char datadir[1024];

static void
path_of(char *buf, size_t len, const char *sub)
{
    snprintf(buf, len, "%s/%s", datadir, sub);
}

/* Parses pl-bad/'name' and checks the error names 'file:line'. */
static void
expect_pl_error(const char *name, const char *prefix, const char *reason)
{
    char dir[4096], err[512], *text;
    size_t len;
    uint32_t pct[288];
    int rc;

    path_of(dir, sizeof dir, "pl-bad");
    rc = trace_read_file(dir, name, &text, &len, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        return;
    }
    err[0] = '\0';
    rc = trace_planetlab_parse(name, text, len, pct, 288, err, sizeof err);
    free(text);
    CHECK(rc < 0);
    if (strncmp(err, prefix, strlen(prefix)) || !strstr(err, reason)) {
        fprintf(stderr, "  %s: got '%s', want '%s...%s'\n", name, err,
                prefix, reason);
        fail_count++;
    }
}

static void
test_planetlab_ok(void)
{
    const struct trace_reader *rd;
    struct trace_opts o = { 2, 0, 1 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    path_of(dir, sizeof dir, "pl-ok");
    rd = trace_reader_find("auto", dir);
    CHECK(rd == &trace_planetlab);
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    /* The first two in byte order, the spaced name included. */
    CHECK(ts.n_vms == 2);
    CHECK(ts.n_intervals == 288);
    CHECK(ts.interval_s == 300);
    CHECK(!strcmp(ts.vms[0].name, "a_vm"));
    CHECK(!strcmp(ts.vms[1].name, "b vm_ with space"));
    CHECK(ts.vms[1].n_vcpus == 1);
    CHECK(ts.vms[0].demand_ppm[0] == 30000);      /* "3" -> 3 %. */
    CHECK(ts.vms[1].demand_ppm[0] == 500000);
    CHECK(ts.vms[1].demand_ppm[1] == 570000);
    trace_set_free(&ts);

    o.max_vms = 4;                                /* Only 3 files. */
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0 && ts.n_vms == 0);

    o.max_vms = 3;
    o.max_intervals = 24;                         /* 2 hours. */
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0 && ts.n_intervals == 24 && ts.n_vms == 3);
    trace_set_free(&ts);
}

static void
test_planetlab_bad(void)
{
    struct trace_opts o = { 0, 0, 1 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    expect_pl_error("text", "text:5:", "not an integer");
    expect_pl_error("range", "range:7:", "out of range");
    expect_pl_error("truncated", "truncated:200:", "truncated");
    expect_pl_error("empty", "empty:1:", "empty file");
    expect_pl_error("extra", "extra:289:", "extra line");
    expect_pl_error("emptyline", "emptyline:10:", "empty line");
    expect_pl_error("negative", "negative:3:", "not an integer");
    expect_pl_error("float", "float:12:", "not an integer");

    /* A bad file anywhere in the selection rejects the whole set. */
    path_of(dir, sizeof dir, "pl-dirbad");
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0);
    CHECK(ts.n_vms == 0 && ts.vms == NULL);
    CHECK(strstr(err, "/pl-dirbad/b bad:42: not an integer") != NULL);
    /* ...but selecting only the good one works. */
    o.max_vms = 1;
    rc = trace_planetlab.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0 && ts.n_vms == 1);
    trace_set_free(&ts);
}

static void
expect_bb_error(const char *sub, const char *prefix, const char *reason)
{
    struct trace_opts o = { 0, 0, 1 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    int rc;

    path_of(dir, sizeof dir, sub);
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc < 0);
    CHECK(ts.n_vms == 0);
    if (!strstr(err, prefix) || !strstr(err, reason)) {
        fprintf(stderr, "  %s: got '%s', want '%s...%s'\n", sub, err,
                prefix, reason);
        fail_count++;
    }
}

static void
test_bitbrains(void)
{
    struct trace_opts o = { 0, 4, 7 };
    struct trace_set ts;
    char dir[4096], err[512] = "";
    const struct trace_vm *vm;
    uint64_t sum;
    bool equal = true;
    int rc;

    path_of(dir, sizeof dir, "bb-ok");
    CHECK(trace_reader_find("auto", dir) == &trace_bitbrains);
    rc = trace_bitbrains.load(dir, &o, &ts, err, sizeof err);
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    CHECK(ts.n_vms == 2 && ts.n_intervals == 4);
    vm = &ts.vms[0];                           /* "62.csv" < "7.csv". */
    CHECK(!strcmp(vm->name, "62.csv"));
    CHECK(vm->n_vcpus == 8);
    /* Interval 0: 10400 MHz of 2600 MHz vCPUs = 4 busy vCPUs, spread
     * unequally but summing to 4. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[v];
        CHECK(vm->demand_ppm[v] <= 1000000);
        equal &= vm->demand_ppm[v] == 500000;
    }
    CHECK(sum > 3999990 && sum < 4000010);
    CHECK(!equal);
    /* Interval 1: 105.8 % is clamped to all 8 vCPUs busy. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[8 + v];
    }
    CHECK(sum > 7999990 && sum < 8000010);
    /* Interval 2: a 0-core row = absent (not held over); the next row is
     * interval 4, outside the 4 loaded, so 2 and 3 are absent. */
    sum = 0;
    for (uint32_t v = 0; v < 8; v++) {
        sum += vm->demand_ppm[16 + v];
    }
    CHECK(sum == 0);
    /* The second file starts one interval later: absent before. */
    CHECK(ts.vms[1].demand_ppm[0] == 0);
    CHECK(ts.vms[1].demand_ppm[1] == 500000);
    trace_set_free(&ts);

    expect_bb_error("bb-text", "/bb-text/x.csv:2:", "not a number");
    expect_bb_error("bb-fields", "/bb-fields/x.csv:2:", "fields");
    expect_bb_error("bb-order", "/bb-order/x.csv:3:", "not increasing");
    expect_bb_error("bb-empty", "/bb-empty/x.csv:1:", "no data rows");
}

static void
test_burst(void)
{
    float a[300], b[300], c[300];
    double sum = 0;
    bool differ = false, same = true;

    burst_fill(1, 5, 3, 123400, 2.0, 300, a);
    burst_fill(1, 5, 3, 123400, 2.0, 300, b);
    burst_fill(2, 5, 3, 123400, 2.0, 300, c);
    for (int i = 0; i < 300; i++) {
        sum += a[i];
        same &= a[i] == b[i];
        differ |= a[i] != c[i];
        CHECK(a[i] >= 0 && a[i] <= 1.0f);
    }
    CHECK(same);
    CHECK(differ);
    CHECK(sum / 300 > 0.1233 && sum / 300 < 0.1235);
    burst_fill(1, 5, 3, 990000, 2.0, 300, a);
    sum = 0;
    for (int i = 0; i < 300; i++) {
        sum += a[i];
    }
    CHECK(sum / 300 > 0.9899 && sum / 300 < 0.9901);
}

int
main(void)
{
    const char *src = getenv("VPOWER_SRCDIR");

    snprintf(datadir, sizeof datadir, "%s/tests/sim/data",
             src ? src : ".");
    test_planetlab_ok();
    test_planetlab_bad();
    test_bitbrains();
    test_burst();
    return fail_count ? 1 : 0;
}
