/* tests/unit/test-proto.c -- The control protocol's parser and formats.
 *
 * Every malformed request class must map to exactly one error code (the
 * daemon's replies and vpowerctl's exit codes depend on it), the id must
 * survive into error replies, and what the client formats the daemon
 * must parse back unchanged. */

#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "manager/control/proto.h"

static enum proto_err
parse(const char *line, struct proto_request *req)
{
    char err[512];
    enum proto_err e = proto_parse_request(line, strlen(line), req, err,
                                           sizeof err);

    /* Every error says something. */
    if (e != PROTO_OK) {
        assert_true(strlen(err) > 0);
    }
    return e;
}

static enum proto_err
code(const char *line)
{
    struct proto_request req;

    return parse(line, &req);
}

static void
test_good_requests(void **state)
{
    struct proto_request r;

    assert_int_equal(parse("{\"version\":1,\"id\":7,\"cmd\":\"status\","
                           "\"args\":{}}\n", &r), PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_STATUS);
    assert_int_equal(r.id, 7);
    /* args may be left out where a command takes none. */
    assert_int_equal(parse("{\"version\":1,\"id\":0,\"cmd\":\"list\"}", &r),
                     PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_LIST);
    assert_int_equal(parse("{\"version\":1,\"id\":1,\"cmd\":\"version\"}\r\n",
                           &r), PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_VERSION);
    assert_int_equal(parse("{\"version\":1,\"id\":2,\"cmd\":\"get-policy\","
                           "\"args\":{\"vm\":\"web\"}}", &r), PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_GET_POLICY);
    assert_string_equal(r.vm, "web");
    assert_int_equal(parse("{\"version\":1,\"id\":3,\"cmd\":\"explain\","
                           "\"args\":{\"vm\":\"3\"}}", &r), PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_EXPLAIN);
    assert_string_equal(r.vm, "3");
    assert_int_equal(parse("  {\"cmd\":\"set-policy\",\"id\":4,\"version\":1,"
                           "\"args\":{\"vm\":\"db\",\"policy\":\"performance\","
                           "\"latency_us\":50,\"min_freq_khz\":1200000,"
                           "\"never_offline\":true,\"share_smt\":false}} ",
                           &r), PROTO_OK);
    assert_int_equal(r.cmd, PROTO_CMD_SET_POLICY);
    assert_string_equal(r.vm, "db");
    assert_int_equal(r.policy.kind, POL_PERFORMANCE);
    assert_int_equal(r.policy.latency_us, 50);
    assert_int_equal(r.policy.min_freq_khz, 1200000);
    assert_true(r.policy.never_offline);
    assert_false(r.policy.share_smt);
    /* Absent options are reset, not merged. */
    assert_int_equal(parse("{\"version\":1,\"id\":5,\"cmd\":\"set-policy\","
                           "\"args\":{\"vm\":\"db\",\"policy\":\"powersave\"}}",
                           &r), PROTO_OK);
    assert_int_equal(r.policy.kind, POL_POWERSAVE);
    assert_int_equal(r.policy.latency_us, 0);
    assert_int_equal(r.policy.min_freq_khz, 0);
    assert_false(r.policy.never_offline);
    assert_true(r.policy.share_smt);        /* Absent: may share. */
    assert_int_equal(parse("{\"version\":1,\"id\":6,\"cmd\":\"override\","
                           "\"args\":{\"mode\":\"performance\"}}", &r),
                     PROTO_OK);
    assert_true(r.override_on);
    assert_int_equal(parse("{\"version\":1,\"id\":9007199254740991,"
                           "\"cmd\":\"override\",\"args\":{\"mode\":\"off\"}}",
                           &r), PROTO_OK);
    assert_false(r.override_on);
    assert_int_equal(r.id, PROTO_MAX_ID);
    assert_true(proto_cmd_is_write(PROTO_CMD_SET_POLICY));
    assert_true(proto_cmd_is_write(PROTO_CMD_OVERRIDE));
    assert_false(proto_cmd_is_write(PROTO_CMD_STATUS));
    assert_false(proto_cmd_is_write(PROTO_CMD_GET_POLICY));
}

static void
test_not_json(void **state)
{
    static const char *const bad[] = {
        "", "\n", "hello", "{", "{\"version\":1", "{'version':1}",
        "{\"version\":1,\"id\":1,\"cmd\":\"status\"} trailing",
        "{\"version\":1,\"id\":1,\"cmd\":\"status\"}{}",
        "{\"version\":1,\"id\":1,\"cmd\":\"status\",}",
        "[1,2,3]", "42", "\"status\"", "null", "true",
    };
    struct proto_request r;
    char nul[] = "{\"version\":1,\"id\":1,\"cmd\":\"status\"}\0x";
    char err[256];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(code(bad[i]), PROTO_E_BAD_REQUEST);
    }
    assert_int_equal(proto_parse_request(nul, sizeof nul - 1, &r, err,
                                         sizeof err), PROTO_E_BAD_REQUEST);
    assert_non_null(strstr(err, "NUL"));
}

static void
test_too_long(void **state)
{
    struct proto_request r;
    size_t n = PROTO_MAX_LINE + 10;
    char *line = malloc(n + 1);
    char err[256];
    int k;

    assert_non_null(line);
    k = snprintf(line, n + 1, "{\"version\":1,\"id\":1,\"cmd\":\"get-policy\","
                 "\"args\":{\"vm\":\"");
    memset(line + k, 'a', n - (size_t) k);
    memcpy(line + n - 4, "\"}}\n", 4);
    line[n] = '\0';
    assert_int_equal(proto_parse_request(line, n, &r, err, sizeof err),
                     PROTO_E_BAD_REQUEST);
    assert_non_null(strstr(err, "longer"));
    free(line);
}

static void
test_top_level_fields(void **state)
{
    struct proto_request r;

    /* Unknown field. */
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"status\","
                          "\"extra\":1}"), PROTO_E_BAD_REQUEST);
    /* Missing fields. */
    assert_int_equal(code("{\"id\":1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":1}"), PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{}"), PROTO_E_BAD_REQUEST);
    /* Wrong types. */
    assert_int_equal(code("{\"version\":1,\"id\":\"1\",\"cmd\":\"status\"}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":-1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":1.5,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":9007199254740992,"
                          "\"cmd\":\"status\"}"), PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":7}"),
                     PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"status\","
                          "\"args\":[]}"), PROTO_E_BAD_REQUEST);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"status\","
                          "\"args\":null}"), PROTO_E_BAD_REQUEST);
    /* Version. */
    assert_int_equal(code("{\"version\":2,\"id\":1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_VERSION);
    assert_int_equal(code("{\"version\":0,\"id\":1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_VERSION);
    assert_int_equal(code("{\"version\":\"1\",\"id\":1,\"cmd\":\"status\"}"),
                     PROTO_E_BAD_VERSION);
    /* The id survives into errors found after it. */
    assert_int_equal(parse("{\"version\":2,\"id\":33,\"cmd\":\"status\"}", &r),
                     PROTO_E_BAD_VERSION);
    assert_int_equal(r.id, 33);
    /* Unknown command. */
    assert_int_equal(parse("{\"version\":1,\"id\":8,\"cmd\":\"reboot\"}", &r),
                     PROTO_E_UNKNOWN_COMMAND);
    assert_int_equal(r.id, 8);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"STATUS\"}"),
                     PROTO_E_UNKNOWN_COMMAND);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"stat\"}"),
                     PROTO_E_UNKNOWN_COMMAND);
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"\"}"),
                     PROTO_E_UNKNOWN_COMMAND);
}

static void
test_bad_args(void **state)
{
    static const char *const bad[] = {
        /* Arguments a command does not take. */
        "\"cmd\":\"status\",\"args\":{\"vm\":\"x\"}",
        "\"cmd\":\"get-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"x\"}",
        /* Missing required. */
        "\"cmd\":\"get-policy\",\"args\":{}",
        "\"cmd\":\"get-policy\"",
        "\"cmd\":\"explain\",\"args\":{}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\"}",
        "\"cmd\":\"set-policy\",\"args\":{\"policy\":\"balanced\"}",
        "\"cmd\":\"override\",\"args\":{}",
        /* Wrong types. */
        "\"cmd\":\"get-policy\",\"args\":{\"vm\":3}",
        "\"cmd\":\"get-policy\",\"args\":{\"vm\":null}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":1}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":\"50\"}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":50.0}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"never_offline\":1}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"share_smt\":\"yes\"}",
        "\"cmd\":\"override\",\"args\":{\"mode\":true}",
        /* Bad values. */
        "\"cmd\":\"get-policy\",\"args\":{\"vm\":\"\"}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"turbo\"}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"\"}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":0}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":-5}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":10000001}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"latency_us\":18446744073709551616}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"min_freq_khz\":0}",
        "\"cmd\":\"set-policy\",\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
        "\"min_freq_khz\":10000001}",
        "\"cmd\":\"override\",\"args\":{\"mode\":\"on\"}",
        "\"cmd\":\"override\",\"args\":{\"mode\":\"Performance\"}",
    };
    char line[1024];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        enum proto_err e;

        snprintf(line, sizeof line, "{\"version\":1,\"id\":1,%s}", bad[i]);
        e = code(line);
        if (e != PROTO_E_BAD_ARGUMENT) {
            fail_msg("%s: got %d, want bad-argument", line, (int) e);
        }
    }
    /* Upper bounds are inclusive. */
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"set-policy\","
                          "\"args\":{\"vm\":\"x\",\"policy\":\"balanced\","
                          "\"latency_us\":10000000,"
                          "\"min_freq_khz\":10000000}}"), PROTO_OK);
}

static void
test_vm_length(void **state)
{
    char line[PROTO_VM_LEN + 128];
    char name[PROTO_VM_LEN + 1];

    memset(name, 'v', PROTO_VM_LEN - 1);
    name[PROTO_VM_LEN - 1] = '\0';
    snprintf(line, sizeof line, "{\"version\":1,\"id\":1,\"cmd\":\"explain\","
             "\"args\":{\"vm\":\"%s\"}}", name);
    assert_int_equal(code(line), PROTO_OK);
    memset(name, 'v', PROTO_VM_LEN);
    name[PROTO_VM_LEN] = '\0';
    snprintf(line, sizeof line, "{\"version\":1,\"id\":1,\"cmd\":\"explain\","
             "\"args\":{\"vm\":\"%s\"}}", name);
    assert_int_equal(code(line), PROTO_E_BAD_ARGUMENT);
    /* An escaped NUL inside the name cannot smuggle a shorter name. */
    assert_int_equal(code("{\"version\":1,\"id\":1,\"cmd\":\"explain\","
                          "\"args\":{\"vm\":\"web\\u0000x\"}}"),
                     PROTO_E_BAD_ARGUMENT);
}

static void
test_deep_nesting(void **state)
{
    char line[4096];
    size_t n = 0;

    n += (size_t) snprintf(line, sizeof line,
                           "{\"version\":1,\"id\":1,\"cmd\":\"status\","
                           "\"args\":{\"x\":");
    for (int i = 0; i < 1000 && n < sizeof line - 16; i++) {
        line[n++] = '[';
    }
    line[n] = '\0';
    assert_int_equal(code(line), PROTO_E_BAD_REQUEST);
}

static void
test_roundtrip(void **state)
{
    struct proto_request in, out;
    char err[256];
    char *line;

    memset(&in, 0, sizeof in);
    in.id = 12;
    in.cmd = PROTO_CMD_SET_POLICY;
    snprintf(in.vm, sizeof in.vm, "vm \"quoted\" \\ name");
    in.policy.kind = POL_POWERSAVE;
    in.policy.latency_us = 100;
    in.policy.min_freq_khz = 800000;
    in.policy.share_smt = true;
    line = proto_format_request(&in);
    assert_non_null(strchr(line, '\n'));
    assert_int_equal(proto_parse_request(line, strlen(line), &out, err,
                                         sizeof err), PROTO_OK);
    assert_int_equal(out.id, 12);
    assert_int_equal(out.cmd, in.cmd);
    assert_string_equal(out.vm, in.vm);
    assert_memory_equal(&out.policy, &in.policy, sizeof in.policy);
    free(line);

    for (int c = 0; c < PROTO_N_COMMANDS; c++) {
        memset(&in, 0, sizeof in);
        in.id = c;
        in.cmd = (enum proto_cmd) c;
        snprintf(in.vm, sizeof in.vm, "g1");
        line = proto_format_request(&in);
        assert_int_equal(proto_parse_request(line, strlen(line), &out, err,
                                             sizeof err), PROTO_OK);
        assert_int_equal(out.cmd, c);
        free(line);
    }
}

static void
test_replies(void **state)
{
    struct json_object *res = json_object_new_object();
    struct proto_reply rep;
    char err[256];
    char *line;

    json_object_object_add(res, "x", json_object_new_int(5));
    line = proto_reply_ok(3, res);
    assert_int_equal(line[strlen(line) - 1], '\n');
    assert_int_equal(strchr(line, '\n') - line, (long) strlen(line) - 1);
    assert_int_equal(proto_parse_reply(line, strlen(line), &rep, err,
                                       sizeof err), 0);
    assert_true(rep.ok);
    assert_int_equal(rep.id, 3);
    assert_non_null(rep.result);
    proto_reply_free(&rep);
    free(line);

    line = proto_reply_error(-1, PROTO_E_UNKNOWN_VM, "no running domain "
                             "named 'x'\nsecond line");
    /* Still one line: the newline in the message is escaped. */
    assert_int_equal(strchr(line, '\n') - line, (long) strlen(line) - 1);
    assert_int_equal(proto_parse_reply(line, strlen(line), &rep, err,
                                       sizeof err), 0);
    assert_false(rep.ok);
    assert_int_equal(rep.id, -1);
    assert_int_equal(rep.code, PROTO_E_UNKNOWN_VM);
    assert_string_equal(rep.code_name, "unknown-vm");
    assert_non_null(strstr(rep.message, "no running domain"));
    proto_reply_free(&rep);
    free(line);

    for (int e = 1; e < PROTO_N_ERRS; e++) {
        assert_non_null(proto_err_name((enum proto_err) e));
        assert_int_equal(proto_err_parse(proto_err_name((enum proto_err) e)),
                         e);
    }
    assert_int_equal(proto_err_parse("from-the-future"), PROTO_E_INTERNAL);

    assert_int_equal(proto_parse_reply("{\"version\":2,\"id\":1,\"ok\":true,"
                                       "\"result\":{}}", 44, &rep, err,
                                       sizeof err), -EPROTO);
    assert_int_equal(proto_parse_reply("{\"version\":1,\"id\":1,\"ok\":true}",
                                       31, &rep, err, sizeof err), -EPROTO);
    assert_int_equal(proto_parse_reply("garbage", 7, &rep, err, sizeof err),
                     -EPROTO);
}

/* Requests must be UTF-8: a bad byte anywhere is refused, with the
 * field named and the id kept. */
static void
test_request_utf8(void **state)
{
    struct proto_request req;
    char err[512];
    static const char *const bad[][2] = {
        { "{\"version\":1,\"id\":4,\"cmd\":\"get-policy\","
          "\"args\":{\"vm\":\"a\xff\"}}", "field 'args.vm'" },
        { "{\"version\":1,\"id\":4,\"cmd\":\"st\xc3\"}",
          "field 'cmd'" },
        { "{\"version\":1,\"id\":4,\"cmd\":\"\xed\xa0\x80\"}",
          "field 'cmd'" },                        /* A surrogate. */
        { "{\"version\":1,\"id\":4,\"cmd\":\"\xc0\xaf\"}",
          "field 'cmd'" },                        /* Overlong '/'. */
        { "{\"version\":1,\"id\":4,\"cmd\":\"list\","
          "\"args\":{\"\xfe\":1}}", "a field name in 'args'" },
    };

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(proto_parse_request(bad[i][0], strlen(bad[i][0]),
                                             &req, err, sizeof err),
                         PROTO_E_BAD_REQUEST);
        assert_int_equal(req.id, 4);
        assert_non_null(strstr(err, bad[i][1]));
        assert_non_null(strstr(err, "is not valid UTF-8"));
    }
    /* Valid multi-byte text is fine. */
    assert_int_equal(code("{\"version\":1,\"id\":4,\"cmd\":"
                          "\"get-policy\",\"args\":{\"vm\":"
                          "\"caf\xc3\xa9-\xf0\x9f\x94\x8b\"}}"), PROTO_OK);
}

static bool
is_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *) s;

    while (*p) {
        int n = *p < 0x80 ? 0 : *p >= 0xc2 && *p < 0xe0 ? 1
                : *p >= 0xe0 && *p < 0xf0 ? 2 : *p >= 0xf0 && *p < 0xf5 ? 3
                : -1;

        if (n < 0) {
            return false;
        }
        for (p++; n > 0; n--, p++) {
            if ((*p & 0xc0) != 0x80) {
                return false;
            }
        }
    }
    return true;
}

/* Strings in replies come from outside (domain names, quoted input):
 * every reply line is valid UTF-8, invalid bytes shown as U+FFFD. */
static void
test_reply_utf8(void **state)
{
    struct json_object *res = json_object_new_object();
    char *line;

    json_object_object_add(res, "name",
                           json_object_new_string("vm\xff\xc3(\x1b[2J"));
    line = proto_reply_ok(1, res);
    assert_true(is_utf8(line));
    assert_non_null(strstr(line, "\"vm\xef\xbf\xbd\xef\xbf\xbd(\\u001b[2J\""));
    free(line);

    line = proto_reply_error(2, PROTO_E_UNKNOWN_VM, "no domain 'x\xe2\x82'");
    assert_true(is_utf8(line));
    assert_non_null(strstr(line, "'x\xef\xbf\xbd\xef\xbf\xbd'"));
    free(line);
}

static void
test_parse_u32(void **state)
{
    uint32_t v;

    assert_int_equal(proto_parse_u32("50", 1, 100, &v), 0);
    assert_int_equal(v, 50);
    assert_int_equal(proto_parse_u32("1", 1, 1, &v), 0);
    assert_int_equal(proto_parse_u32("", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32(" 5", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("+5", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("-5", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("5x", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("5 ", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("0x10", 1, 100, &v), -EINVAL);
    assert_int_equal(proto_parse_u32("0", 1, 100, &v), -ERANGE);
    assert_int_equal(proto_parse_u32("101", 1, 100, &v), -ERANGE);
    assert_int_equal(proto_parse_u32("99999999999999999999999", 1, 100, &v),
                     -ERANGE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_requests),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_top_level_fields),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_vm_length),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_replies),
        cmocka_unit_test(test_parse_u32),
        cmocka_unit_test(test_request_utf8),
        cmocka_unit_test(test_reply_utf8),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
