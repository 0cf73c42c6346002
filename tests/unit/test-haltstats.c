/* tests/unit/test-haltstats.c -- manager/haltstats on the fixtures in
 * tests/fixtures/kvm (see the README there: the TCG domstats output is
 * real, the KVM formats are constructed because this machine has no
 * KVM). */

#include <config.h>

#include "manager/inputs/haltstats.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *
fixture(const char *rel, char *buf, size_t len)
{
    const char *src = getenv("VPOWER_SRCDIR");
    snprintf(buf, len, "%s/tests/fixtures/kvm/%s",
             src ? src : VPOWER_ABS_SRCDIR, rel);
    return buf;
}

/* Feeds every "  name=value" line of a `virsh domstats` dump with an
 * integer value to halt_stats_field(), as the libvirt driver does with
 * typed parameters.  Returns the number of halt fields stored. */
static int
feed_domstats(const char *file, struct halt_stats *h, unsigned max)
{
    char path[1024], line[256];
    FILE *f = fopen(fixture(file, path, sizeof path), "r");
    assert_non_null(f);
    int stored = 0;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        unsigned long long v;
        if (sscanf(line, " %127[^=]=%llu", name, &v) == 2) {
            int r = halt_stats_field(h, max, name, v);
            assert_true(r >= 0);
            stored += r;
        }
    }
    fclose(f);
    return stored;
}

static void
test_adjusted_busy(void **st)
{
    (void) st;
    assert_int_equal(halt_adjusted_busy_ns(1000, 100, 50), 850);
    assert_int_equal(halt_adjusted_busy_ns(1000, 0, 0), 1000);
    /* Poll sampled a little later than busy: never negative. */
    assert_int_equal(halt_adjusted_busy_ns(1000, 900, 200), 0);
    assert_int_equal(halt_adjusted_busy_ns(0, 0, 0), 0);
    assert_int_equal(halt_adjusted_busy_ns(5, UINT64_MAX, 2), 0);
}

static void
test_libvirt_kvm(void **st)
{
    (void) st;
    struct halt_stats h[4];
    memset(h, 0, sizeof h);
    assert_int_equal(feed_domstats("domstats-vcpu-kvm.txt", h, 4), 6);
    assert_true(h[0].valid);
    assert_int_equal(h[0].wait_ns, 39912334455ULL);
    assert_int_equal(h[0].poll_success_ns, 812345678ULL);
    assert_int_equal(h[0].poll_fail_ns, 201234567ULL);
    assert_true(h[1].valid);
    assert_int_equal(h[1].poll_fail_ns, 144444333ULL);
    assert_false(h[2].valid);
}

static void
test_libvirt_tcg(void **st)
{
    (void) st;
    struct halt_stats h[4];
    memset(h, 0, sizeof h);
    assert_int_equal(feed_domstats("domstats-vcpu-tcg.txt", h, 4), 0);
    assert_false(h[0].valid);
    assert_false(h[1].valid);
}

static void
test_field_errors(void **st)
{
    (void) st;
    struct halt_stats h[2];
    memset(h, 0, sizeof h);
    assert_int_equal(halt_stats_field(h, 2, "vcpu.current", 2), 0);
    assert_int_equal(halt_stats_field(h, 2, "cpu.haltpoll.success.time",
                                      9), 0);
    assert_int_equal(halt_stats_field(h, 2, "vcpu.1.halt_wait_ns.cur", 9),
                     0);
    assert_int_equal(halt_stats_field(h, 2, "vcpu.2.halt_wait_ns.sum", 9),
                     -ENOSPC);
    assert_int_equal(halt_stats_field(h, 2, "vcpu.2.time", 9), 0);
    assert_int_equal(halt_stats_field(h, 2, "vcpu.1x.halt_wait_ns.sum",
                                      9), -EINVAL);
    assert_false(h[1].valid);
}

static void
test_debugfs(void **st)
{
    (void) st;
    char root[1024], dir[1200];
    fixture("debugfs/kvm", root, sizeof root);
    assert_int_equal(halt_debugfs_find(root, 4242, dir, sizeof dir), 0);
    assert_non_null(strstr(dir, "/4242-12"));
    struct halt_stats h;
    assert_int_equal(halt_debugfs_read(dir, &h), 0);
    assert_true(h.valid);
    assert_int_equal(h.wait_ns, 91234567890ULL);
    assert_int_equal(h.poll_success_ns, 1234567890ULL);
    assert_int_equal(h.poll_fail_ns, 345678901ULL);

    /* 424 must not match 4242-12. */
    assert_int_equal(halt_debugfs_find(root, 424, dir, sizeof dir),
                     -ENOENT);
    assert_int_equal(halt_debugfs_find(root, 5151, dir, sizeof dir), 0);
    assert_int_equal(halt_debugfs_read(dir, &h), -EINVAL);
    char nope[1100];
    snprintf(nope, sizeof nope, "%s/none", root);
    assert_int_equal(halt_debugfs_find(nope, 1, dir, sizeof dir), -ENOENT);
    snprintf(nope, sizeof nope, "%s/4242-12/vcpu0", root);
    assert_int_equal(halt_debugfs_read(nope, &h), -ENOENT);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adjusted_busy),
        cmocka_unit_test(test_libvirt_kvm),
        cmocka_unit_test(test_libvirt_tcg),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_debugfs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
