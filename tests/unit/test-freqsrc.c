/* tests/unit/test-freqsrc.c -- manager/freqsrc on fixture MSR files and
 * a fixture cpufreq tree built at run time.
 *
 * A fixture "msr" file is a regular file read with pread() at offset =
 * MSR number, like /dev/cpu/N/msr.  In a regular file the 8 bytes at
 * 0xE7 (MPERF) and at 0xE8 (APERF) overlap in 7 bytes, so the two values
 * cannot be independent: with bytes c0..c8 at 0xE7..0xEF, MPERF is
 * c0..c7 and APERF c1..c8 (little endian).  The values below are chosen
 * with that in mind and the expected frequency computed from them. */

#include <config.h>

#include "manager/inputs/freqsrc.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static char root[256];

static void
put(const char *rel, const void *data, size_t len, long off)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, off ? "r+b" : "wb");
    if (!f) {
        f = fopen(path, "wb");
    }
    assert_non_null(f);
    assert_int_equal(fseek(f, off, SEEK_SET), 0);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void
puts_file(const char *rel, const char *text)
{
    put(rel, text, strlen(text), 0);
}

/* Writes bytes c[0..8] at offset 0xE7 of <root>/msr/<cpu>/msr. */
static void
put_msr(unsigned cpu, const uint8_t c[9])
{
    char rel[64];
    uint8_t page[0x100];
    memset(page, 0, sizeof page);
    memcpy(page + FREQSRC_MSR_MPERF, c, 9);
    snprintf(rel, sizeof rel, "msr/%u/msr", cpu);
    put(rel, page, sizeof page, 0);
}

static int
setup(void **st)
{
    (void) st;
    snprintf(root, sizeof root, "%s/vp-fs-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int
teardown(void **st)
{
    (void) st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void
path_of(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", root, rel);
}

static void
test_ratio(void **st)
{
    (void) st;
    uint32_t k;
    assert_int_equal(freqsrc_ratio_khz(150, 100, 2000000, &k), 0);
    assert_int_equal(k, 3000000);
    assert_int_equal(freqsrc_ratio_khz(50, 100, 2000000, &k), 0);
    assert_int_equal(k, 1000000);
    assert_int_equal(freqsrc_ratio_khz(0, 0, 2000000, &k), 0);
    assert_int_equal(k, 0);
    assert_int_equal(freqsrc_ratio_khz(900, 100, 2000000, &k), -ERANGE);
    assert_int_equal(k, 0);
    /* An hour at 3 GHz: the product overflows 64 bits, the result not. */
    uint64_t m = 3600ULL * 2000000000ULL;
    assert_int_equal(freqsrc_ratio_khz(m / 2 * 3, m, 2000000, &k), 0);
    assert_int_equal(k, 3000000);
}

static void
test_aperf_mperf(void **st)
{
    (void) st;
    char cpu[300], msr[300];
    path_of(cpu, sizeof cpu, "sys-am");
    path_of(msr, sizeof msr, "msr");
    puts_file("sys-am/cpu0/cpufreq/base_frequency", "2000000\n");
    uint8_t zero[9] = { 0 };
    put_msr(0, zero);
    put_msr(1, zero);

    struct freqsrc *s = freqsrc_open(cpu, msr, 2, 0);
    assert_string_equal(freqsrc_name(s), "aperf-mperf");
    uint32_t k = 1;
    assert_int_equal(freqsrc_read(s, 0, &k), 0);   /* Primes. */
    assert_int_equal(k, 0);
    assert_int_equal(freqsrc_read(s, 1, &k), 0);

    /* MPERF = 0x80 << 56, APERF = 0x40 << 56 | 0x80 << 48: ratio
     * (64 + 128/256) / 128 = 0.50390625 of 2 GHz. */
    uint8_t c[9] = { 0, 0, 0, 0, 0, 0, 0, 0x80, 0x40 };
    put_msr(0, c);
    assert_int_equal(freqsrc_read(s, 0, &k), 0);
    assert_int_equal(k, 1007812);
    /* Nothing moved since: idle throughout reads as nominal (0). */
    assert_int_equal(freqsrc_read(s, 0, &k), 0);
    assert_int_equal(k, 0);
    /* cpu1's counters went backwards by a garbage amount. */
    uint8_t g[9] = { 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff };
    put_msr(1, g);
    assert_int_equal(freqsrc_read(s, 1, &k), -ERANGE);
    assert_int_equal(k, 0);
    assert_int_equal(freqsrc_read(s, 2, &k), -EINVAL);
    freqsrc_close(s);

    /* An explicit base overrides sysfs. */
    s = freqsrc_open(cpu, msr, 1, 1000000);
    assert_int_equal(freqsrc_read(s, 0, &k), 0);
    put_msr(0, zero);
    freqsrc_close(s);
}

static void
test_msr_without_base(void **st)
{
    (void) st;
    char cpu[300], msr[300];
    path_of(cpu, sizeof cpu, "sys-nobase");
    path_of(msr, sizeof msr, "msr");
    puts_file("sys-nobase/cpu0/cpufreq/scaling_cur_freq", "1200000\n");
    uint8_t zero[9] = { 0 };
    put_msr(0, zero);
    /* No base_frequency, no cpuinfo_max_freq: the ratio has no scale. */
    struct freqsrc *s = freqsrc_open(cpu, msr, 1, 0);
    assert_string_equal(freqsrc_name(s), "cpufreq");
    freqsrc_close(s);
}

static void
test_cpufreq(void **st)
{
    (void) st;
    char cpu[300], msr[300];
    path_of(cpu, sizeof cpu, "sys-cf");
    path_of(msr, sizeof msr, "no-msr");
    puts_file("sys-cf/cpu0/cpufreq/scaling_cur_freq", "1200000\n");
    puts_file("sys-cf/cpu2/cpufreq/scaling_cur_freq", "fast\n");
    struct freqsrc *s = freqsrc_open(cpu, msr, 3, 0);
    assert_string_equal(freqsrc_name(s), "cpufreq");
    assert_int_equal(freqsrc_kind_of(s), FREQSRC_CPUFREQ);
    uint32_t k;
    assert_int_equal(freqsrc_read(s, 0, &k), 0);
    assert_int_equal(k, 1200000);
    assert_int_equal(freqsrc_read(s, 1, &k), -ENOTSUP);
    assert_int_equal(k, 0);
    assert_int_equal(freqsrc_read(s, 2, &k), -EINVAL);
    assert_int_equal(k, 0);
    freqsrc_close(s);
}

static void
test_nominal(void **st)
{
    (void) st;
    char cpu[300], msr[300];
    path_of(cpu, sizeof cpu, "sys-empty");
    path_of(msr, sizeof msr, "no-msr");
    struct freqsrc *s = freqsrc_open(cpu, msr, 2, 0);
    assert_string_equal(freqsrc_name(s), "nominal");
    uint32_t k = 5;
    assert_int_equal(freqsrc_read(s, 1, &k), 0);
    assert_int_equal(k, 0);
    freqsrc_close(s);
}

/* This machine: no msr driver and no cpufreq (documented in
 * docs/inputs.md), so "nominal"; elsewhere any source must read. */
static void
test_real(void **st)
{
    (void) st;
    struct freqsrc *s = freqsrc_open(NULL, NULL, 1, 0);
    print_message("real host frequency source: %s\n", freqsrc_name(s));
    uint32_t k;
    assert_int_equal(freqsrc_read(s, 0, &k), 0);
    freqsrc_close(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ratio),
        cmocka_unit_test(test_aperf_mperf),
        cmocka_unit_test(test_msr_without_base),
        cmocka_unit_test(test_cpufreq),
        cmocka_unit_test(test_nominal),
        cmocka_unit_test(test_real),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
