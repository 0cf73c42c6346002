/* tests/unit/test-log.c -- Log lines and the text escapes behind them.
 *
 * Whatever a client, a guest or the hypervisor puts in a string, a log
 * message stays one line of printable UTF-8: newlines cannot forge a
 * second entry and escape sequences cannot reach a terminal. */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager/log.h"
#include "manager/util.h"

#define LOG_MODULE "test"

/* Runs one LOG_WARN with 'arg' and returns what reached stderr. */
static char *
logged(const char *arg)
{
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    char *text;
    long n;

    assert_non_null(tmp);
    fflush(stderr);
    dup2(fileno(tmp), STDERR_FILENO);
    log_init("test-log", false, LOG_LVL_INFO);
    LOG_WARN("client uid 1000: unknown command '%s'", arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    n = ftell(tmp);
    assert_true(n > 0);
    text = calloc(1, (size_t) n + 1);
    rewind(tmp);
    assert_int_equal(fread(text, 1, (size_t) n, tmp), (size_t) n);
    fclose(tmp);
    return text;
}

static void
test_forged_line(void **state)
{
    char *t = logged("x\ntest-log: info: cmds: uid 0 set the host-wide "
                     "override on\r\x1b[2K\x9b\x7f\xc2\x9b\\");

    /* One line, ending in the one newline log_msg adds. */
    assert_non_null(strchr(t, '\n'));
    assert_int_equal(strchr(t, '\n') - t, (long) strlen(t) - 1);
    assert_null(strchr(t, '\r'));
    assert_null(strchr(t, '\x1b'));
    assert_non_null(strstr(t, "'x\\ntest-log: info: cmds: uid 0 set the "
                           "host-wide override on\\r\\x1b[2K\\x9b\\x7f"
                           "\\xc2\\x9b\\\\'"));
    free(t);
}

static void
test_escape(void **state)
{
    char out[64];
    char *d;

    /* Printable UTF-8 passes unchanged. */
    assert_string_equal(util_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94"
                                    "\x8b", out, sizeof out),
                        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\x8b");
    assert_string_equal(util_escape("a\tb\x01", out, sizeof out),
                        "a\\tb\\x01");
    /* A right-to-left override, a byte-order mark, a zero-width space
     * and a soft hyphen print as nothing or reorder the line: escaped;
     * the characters next to them in the table are not. */
    assert_string_equal(util_escape("ok \xe2\x80\xae""fed \xef\xbb\xbf"
                                    "\xe2\x80\x8b""a\xc2\xad""b", out,
                                    sizeof out),
                        "ok \\xe2\\x80\\xae""fed \\xef\\xbb\\xbf"
                        "\\xe2\\x80\\x8b""a\\xc2\\xad""b");
    assert_string_equal(util_escape("\xe2\x80\x90\xe2\x80\xaf\xc2\xae",
                                    out, sizeof out),
                        "\xe2\x80\x90\xe2\x80\xaf\xc2\xae");
    assert_true(util_utf8_hidden("\xe2\x81\xa6", 3));       /* LRI */
    assert_true(util_utf8_hidden("\xd8\x9c", 2));            /* ALM */
    assert_false(util_utf8_hidden("\xe2\x82\xac", 3));      /* Euro */
    assert_false(util_utf8_hidden("a", 1));
    /* Truncated, overlong, surrogate and out-of-range sequences. */
    assert_string_equal(util_escape("\xe2\x82 \xc0\xaf \xed\xa0\x80 "
                                    "\xf4\x90\x80\x80", out, sizeof out),
                        "\\xe2\\x82 \\xc0\\xaf \\xed\\xa0\\x80 "
                        "\\xf4\\x90\\x80\\x80");
    /* Truncation never splits an escape or a character. */
    assert_string_equal(util_escape("ab\x1b", out, 5), "ab");
    assert_string_equal(util_escape("a\xc3\xa9", out, 3), "a");
    d = util_escape_dup("\xff\xff\xff");
    assert_string_equal(d, "\\xff\\xff\\xff");
    free(d);
    assert_true(util_utf8_valid("", 0));
    assert_false(util_utf8_valid("a\xff", 2));
}

static void
test_replace(void **state)
{
    size_t n;
    char *r = util_utf8_replace("a\xff\0b\xe2\x82", 6, &n);

    assert_int_equal(n, 1 + 3 + 1 + 1 + 6);
    assert_memory_equal(r, "a\xef\xbf\xbd\0b\xef\xbf\xbd\xef\xbf\xbd", n);
    free(r);
}

/* The code point of a valid sequence of each length: what
 * util_utf8_hidden() looks up and vpowerctl --json writes as \uXXXX. */
static void
test_codepoint(void **state)
{
    assert_int_equal(util_utf8_codepoint("A", 1), 0x41);
    assert_int_equal(util_utf8_codepoint("\x7f", 1), 0x7f);
    assert_int_equal(util_utf8_codepoint("\xc2\x9b", 2), 0x9b);      /* CSI */
    assert_int_equal(util_utf8_codepoint("\xc2\xad", 2), 0xad);      /* SHY */
    assert_int_equal(util_utf8_codepoint("\xd8\x9c", 2), 0x61c);     /* ALM */
    assert_int_equal(util_utf8_codepoint("\xe2\x80\x8b", 3), 0x200b);
    assert_int_equal(util_utf8_codepoint("\xe2\x80\xae", 3), 0x202e);
    assert_int_equal(util_utf8_codepoint("\xef\xbb\xbf", 3), 0xfeff);
    assert_int_equal(util_utf8_codepoint("\xef\xbf\xbb", 3), 0xfffb);
    assert_int_equal(util_utf8_codepoint("\xf0\x9f\x94\x8b", 4), 0x1f50b);
    assert_int_equal(util_utf8_codepoint("\xf4\x8f\xbf\xbf", 4), 0x10ffff);
    /* Every two- and three-byte sequence (the BMP above ASCII, where
     * all that util_utf8_unprintable() names beyond C0 and DEL lies)
     * decodes to the code point it encodes. */
    for (uint32_t cp = 0x80; cp < 0x10000; cp++) {
        char b[3];
        size_t k;

        if (cp >= 0xd800 && cp <= 0xdfff) {
            continue;
        }
        if (cp < 0x800) {
            b[0] = (char) (0xc0 | cp >> 6);
            b[1] = (char) (0x80 | (cp & 0x3f));
            k = 2;
        } else {
            b[0] = (char) (0xe0 | cp >> 12);
            b[1] = (char) (0x80 | (cp >> 6 & 0x3f));
            b[2] = (char) (0x80 | (cp & 0x3f));
            k = 3;
        }
        assert_int_equal(util_utf8_len(b, k), k);
        assert_int_equal(util_utf8_codepoint(b, k), cp);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forged_line),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_replace),
        cmocka_unit_test(test_codepoint),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
