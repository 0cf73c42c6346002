/* tests/unit/test-num.c -- the one decimal parser (policy/num.c). */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "policy/num.h"

static void
test_accepts(void **state)
{
    uint64_t v = 7;

    (void) state;
    assert_int_equal(num_parse_u64("0", 10, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(num_parse_u64("0010", 10, &v), 0);
    assert_int_equal(v, 10);
    assert_int_equal(num_parse_u64("18446744073709551615", UINT64_MAX, &v),
                     0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(num_parse_u64("4294967295", UINT32_MAX, &v), 0);
    assert_true(v == UINT32_MAX);
}

static void
test_refuses_text(void **state)
{
    static const char *const bad[] = {
        "", " 1", "1 ", "+1", "-1", "0x10", "1.5", "1e3", "12a", "\n1",
        "1\n", "\xef\xbc\x91",
    };
    uint64_t v = 7;

    (void) state;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(num_parse_u64(bad[i], UINT64_MAX, &v), -EINVAL);
        assert_int_equal(v, 7);     /* Untouched on error. */
    }
    assert_int_equal(num_parse_u64(NULL, 1, &v), -EINVAL);
}

static void
test_range(void **state)
{
    uint64_t v = 7;

    (void) state;
    assert_int_equal(num_parse_u64("11", 10, &v), -ERANGE);
    assert_int_equal(num_parse_u64("7", 5, &v), -ERANGE);
    assert_int_equal(num_parse_u64("18446744073709551616", UINT64_MAX, &v),
                     -ERANGE);
    assert_int_equal(num_parse_u64("99999999999999999999999", UINT64_MAX,
                                   &v), -ERANGE);
    assert_int_equal(num_parse_u64("4294967296", UINT32_MAX, &v), -ERANGE);
    /* Too big and then text: the text is what is wrong. */
    assert_int_equal(num_parse_u64("99999999999999999999999x", UINT64_MAX,
                                   &v), -EINVAL);
    assert_int_equal(v, 7);
}

static void
test_line(void **state)
{
    uint64_t v = 7;

    (void) state;
    assert_int_equal(num_parse_line("2400000\n", UINT64_MAX, &v), 0);
    assert_int_equal(v, 2400000);
    assert_int_equal(num_parse_line("5 \n", UINT64_MAX, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(num_parse_line("5\nx", UINT64_MAX, &v), -EINVAL);
    assert_int_equal(num_parse_line("\n", UINT64_MAX, &v), -EINVAL);
    assert_int_equal(num_parse_line("70\n", 69, &v), -ERANGE);
    assert_int_equal(v, 5);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_refuses_text),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_line),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
