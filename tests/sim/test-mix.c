/* tests/sim/test-mix.c -- Per-VM policy assignment: --policy-mix gives
 * exact, seeded counts; --policy-file maps trace names (and their
 * --repeat copies) and rejects bad lines with FILE:LINE. */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/mix.h"
#include "tests/sim/check.h"

static size_t
count(const struct pol_vm_policy *p, size_t n, enum pol_kind k)
{
    size_t c = 0;

    for (size_t i = 0; i < n; i++) {
        c += p[i].kind == k;
    }
    return c;
}

static void
test_parse(void)
{
    struct mix_spec s;
    char err[256];

    CHECK(mix_parse("performance=10%,powersave=30%", &s, err,
                    sizeof err) == 0);
    CHECK(s.pct_centi[POL_PERFORMANCE] == 1000);
    CHECK(s.pct_centi[POL_POWERSAVE] == 3000);
    CHECK(s.pct_centi[POL_BALANCED] == 0);
    CHECK(mix_parse("performance=12.5", &s, err, sizeof err) == 0
          && s.pct_centi[POL_PERFORMANCE] == 1250);
    CHECK(mix_parse("fast=10%", &s, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "unknown policy 'fast'") != NULL);
    CHECK(mix_parse("performance=60%,powersave=50%", &s, err,
                    sizeof err) == -EINVAL);
    CHECK(mix_parse("performance=-1%", &s, err, sizeof err) == -EINVAL);
    CHECK(mix_parse("performance=10%x", &s, err, sizeof err) == -EINVAL);
    CHECK(mix_parse("performance", &s, err, sizeof err) == -EINVAL);
    CHECK(mix_parse("performance=1%,performance=2%", &s, err,
                    sizeof err) == -EINVAL);
    CHECK(mix_parse("", &s, err, sizeof err) == -EINVAL);
}

static void
test_assign(void)
{
    struct mix_spec s;
    struct pol_vm_policy a[200], b[200], c[200];
    char err[256];
    bool same = true, differ = false;

    CHECK(mix_parse("performance=10%,powersave=30%", &s, err,
                    sizeof err) == 0);
    mix_assign(&s, 200, 1, a);
    mix_assign(&s, 200, 1, b);
    mix_assign(&s, 200, 2, c);
    CHECK(count(a, 200, POL_PERFORMANCE) == 20);
    CHECK(count(a, 200, POL_POWERSAVE) == 60);
    CHECK(count(a, 200, POL_BALANCED) == 120);
    CHECK(count(c, 200, POL_PERFORMANCE) == 20);
    for (int i = 0; i < 200; i++) {
        same &= a[i].kind == b[i].kind;
        differ |= a[i].kind != c[i].kind;
    }
    CHECK(same && differ);

    /* 20 Bitbrains VMs: 10 % is exactly 2. */
    mix_assign(&s, 20, 1, a);
    CHECK(count(a, 20, POL_PERFORMANCE) == 2);
    CHECK(count(a, 20, POL_POWERSAVE) == 6);
    /* Rounding: 10 % of 7 = 0.7 -> 1; 30 % of 7 = 2.1 -> 2. */
    mix_assign(&s, 7, 1, a);
    CHECK(count(a, 7, POL_PERFORMANCE) == 1);
    CHECK(count(a, 7, POL_POWERSAVE) == 2);
    /* Halves never over-fill: 50 % + 50 % of 3 is 3 in all. */
    CHECK(mix_parse("performance=50%,powersave=50%", &s, err,
                    sizeof err) == 0);
    mix_assign(&s, 3, 1, a);
    CHECK(count(a, 3, POL_BALANCED) == 0);
    CHECK(count(a, 3, POL_PERFORMANCE) + count(a, 3, POL_POWERSAVE) == 3);
}

static void
test_file(void)
{
    const char *src = getenv("VPOWER_SRCDIR");
    char dir[1024], path[1200], err[512];
    struct trace_vm vms[3] = {
        { "62.csv", 8, NULL }, { "7.csv", 1, NULL }, { "62.csv@1", 8, NULL },
    };
    struct trace_set ts = { 3, vms, 1, 300, 0, 0 };
    struct pol_vm_policy p[3];

    snprintf(dir, sizeof dir, "%s/tests/sim/data/pol", src ? src : ".");
    snprintf(path, sizeof path, "%s/ok", dir);
    CHECK(mix_load_file(path, &ts, p, err, sizeof err) == 0);
    CHECK(p[0].kind == POL_PERFORMANCE && p[0].latency_us == 50);
    CHECK(p[1].kind == POL_POWERSAVE && p[1].latency_us == 0);
    CHECK(p[2].kind == POL_PERFORMANCE);       /* --repeat copy. */

#define BAD(NAME, WANT)                                                 \
    do {                                                                \
        snprintf(path, sizeof path, "%s/%s", dir, NAME);                \
        err[0] = '\0';                                                  \
        CHECK(mix_load_file(path, &ts, p, err, sizeof err) < 0);        \
        if (!strstr(err, WANT)) {                                       \
            fprintf(stderr, "  %s: got '%s', want '%s'\n", NAME, err,   \
                    WANT);                                              \
            fail_count++;                                               \
        }                                                               \
        CHECK(p[0].kind == POL_BALANCED);                               \
    } while (0)
    BAD("unknown-vm", "/unknown-vm:2: no VM named 'nope.csv'");
    BAD("bad-kind", "/bad-kind:1: unknown policy 'fast'");
    BAD("bad-lat", "/bad-lat:2: bad latency 'abc'");
    BAD("twice", "/twice:2: VM '62.csv' named twice");
    BAD("missing", "/missing: No such file");
#undef BAD
}

/* A policy file that is a FIFO or a directory is refused by kind, and a
 * FIFO is not waited on (the alarm in main() fails a reader that
 * blocks); an empty file leaves every VM balanced. */
static void
test_file_kind(void)
{
    char tmpl[] = "/tmp/vpower-test-mix.XXXXXX", path[64], err[512];
    char *dir = mkdtemp(tmpl);
    struct trace_vm vms[1] = { { "a", 1, NULL } };
    struct trace_set ts = { 1, vms, 1, 300, 0, 0 };
    struct pol_vm_policy p[1];
    FILE *f;

    CHECK(dir != NULL);
    if (!dir) {
        return;
    }
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(mix_load_file(path, &ts, p, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "/fifo: a FIFO, not a regular file") != NULL);
    CHECK(unlink(path) == 0);
    CHECK(mix_load_file(dir, &ts, p, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, ": a directory, not a regular file") != NULL);
    snprintf(path, sizeof path, "%s/empty", dir);
    f = fopen(path, "w");
    CHECK(f != NULL && fclose(f) == 0);
    p[0].kind = POL_PERFORMANCE;
    CHECK(mix_load_file(path, &ts, p, err, sizeof err) == 0);
    CHECK(p[0].kind == POL_BALANCED);
    CHECK(unlink(path) == 0);
    CHECK(rmdir(dir) == 0);
}

int
main(void)
{
    test_parse();
    test_assign();
    test_file();
    alarm(60);
    test_file_kind();
    return fail_count ? 1 : 0;
}
