/* tests/unit/test-cpuset.c -- cpuset bit operations and cpulist text.
 *
 * cpulists come from sysfs and users, so the parser is tested for strict
 * rejection as well as a seeded random parse/format round trip. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/cpuset.h"

static void
test_basic(void **state)
{
    struct cpuset a, b, c;

    (void) state;
    cpuset_zero(&a);
    assert_true(cpuset_empty(&a));
    cpuset_set(&a, 0);
    cpuset_set(&a, 63);
    cpuset_set(&a, 64);
    cpuset_set(&a, POL_MAX_CPUS - 1);
    cpuset_set(&a, POL_MAX_CPUS);          /* Ignored. */
    assert_int_equal(cpuset_count(&a), 4);
    assert_int_equal(cpuset_next(&a, 1), 63);
    assert_int_equal(cpuset_next(&a, 65), POL_MAX_CPUS - 1);
    assert_int_equal(cpuset_next(&a, POL_MAX_CPUS), -1);
    b = a;
    cpuset_clr(&b, 63);
    assert_true(cpuset_subset(&b, &a));
    assert_false(cpuset_subset(&a, &b));
    cpuset_andnot(&c, &a, &b);
    assert_int_equal(cpuset_count(&c), 1);
    assert_true(cpuset_has(&c, 63));
    cpuset_or(&c, &c, &b);
    assert_true(cpuset_equal(&c, &a));
    cpuset_and(&c, &a, &b);
    assert_true(cpuset_equal(&c, &b));
}

static void
test_parse_format(void **state)
{
    struct cpuset s;
    char buf[64];

    (void) state;
    assert_int_equal(cpuset_parse(&s, "0-3,8,10-11\n"), 0);
    assert_int_equal(cpuset_count(&s), 7);
    assert_int_equal(cpuset_format(&s, buf, sizeof buf), 11);
    assert_string_equal(buf, "0-3,8,10-11");
    assert_int_equal(cpuset_parse(&s, ""), 0);
    assert_true(cpuset_empty(&s));
    assert_int_equal(cpuset_parse(&s, "\n"), 0);
    assert_int_equal(cpuset_parse(&s, "1023"), 0);
    assert_true(cpuset_has(&s, 1023));
    /* Truncation keeps a terminated prefix and reports the length. */
    cpuset_parse(&s, "0-3,8,10-11");
    assert_int_equal(cpuset_format(&s, buf, 5), 11);
    assert_int_equal(strlen(buf), 4);
    /* The log form: an empty set is "-", others their cpulist. */
    assert_string_equal(cpuset_label(&s, buf, sizeof buf), "0-3,8,10-11");
    cpuset_zero(&s);
    assert_string_equal(cpuset_label(&s, buf, sizeof buf), "-");
}

static void
test_rejects(void **state)
{
    static const char *bad[] = {
        "1024", "3-1", "a", "1,", ",1", "1-", "-1", "1--2", "1 2", "0-3,x",
        "1,,2", "99999999", "1-1024", " 1", "1;2", "0x1", "+1",
    };
    struct cpuset s;

    (void) state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cpuset_zero(&s);
        cpuset_set(&s, 5);
        if (cpuset_parse(&s, bad[i]) != -22) {
            fail_msg("accepted '%s'", bad[i]);
        }
        assert_true(cpuset_has(&s, 5));     /* Unchanged on error. */
    }
    assert_int_equal(cpuset_parse(&s, NULL), -22);
}

static void
test_random_roundtrip(void **state)
{
    unsigned seed = 12345;

    (void) state;
    srand(seed);
    for (int i = 0; i < 500; i++) {
        struct cpuset a, b;
        char buf[8192];
        int n = rand() % 300;

        cpuset_zero(&a);
        for (int j = 0; j < n; j++) {
            cpuset_set(&a, (unsigned) (rand() % POL_MAX_CPUS));
        }
        cpuset_format(&a, buf, sizeof buf);
        if (cpuset_parse(&b, buf) || !cpuset_equal(&a, &b)) {
            fail_msg("seed %u case %d: '%s' did not round trip", seed, i,
                     buf);
        }
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic),
        cmocka_unit_test(test_parse_format),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_random_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
