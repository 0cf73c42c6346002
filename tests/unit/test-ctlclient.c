/* tests/unit/test-ctlclient.c -- The control socket's client and the
 * result accessors its users share.
 *
 * A listening socket in a temporary directory stands in for vpowerd:
 * the kernel completes the connect from its backlog, so each test
 * scripts the daemon's side (a reply written ahead, a busy refusal and
 * close, silence, a half close) on the accepted end before the call. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "manager/control/ctlclient.h"
#include "manager/control/jsonget.h"
#include "manager/control/proto.h"

struct fixture {
    char dir[64];
    char path[128];
    int lfd;                        /* Listening. */
    int sfd;                        /* Accepted: the daemon's end. */
    struct ctlc c;
};

static int
setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sockaddr_un sa;

    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-ctlc.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/sock", f->dir);
    f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(f->lfd >= 0);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, f->path);
    assert_int_equal(bind(f->lfd, (struct sockaddr *) &sa, sizeof sa), 0);
    assert_int_equal(listen(f->lfd, 4), 0);
    assert_int_equal(ctlc_connect(&f->c, f->path, 200, 1 << 20), CTLC_OK);
    f->sfd = accept(f->lfd, NULL, NULL);
    assert_true(f->sfd >= 0);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fixture *f = *state;

    ctlc_close(&f->c);
    if (f->sfd >= 0) {
        close(f->sfd);
    }
    close(f->lfd);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void
daemon_says(struct fixture *f, const char *line)
{
    size_t n = strlen(line);

    assert_int_equal(write(f->sfd, line, n), (ssize_t) n);
}

static enum ctlc_err
call_status(struct fixture *f, struct proto_reply *rep)
{
    struct proto_request req;

    memset(&req, 0, sizeof req);
    req.cmd = PROTO_CMD_STATUS;
    return ctlc_call(&f->c, &req, rep);
}

static void
test_ok_reply(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;
    char got[256];
    ssize_t n;

    daemon_says(f, "{\"version\":1,\"id\":1,\"ok\":true,"
                "\"result\":{\"n\":7,\"s\":\"x\"}}\n");
    assert_int_equal(call_status(f, &rep), CTLC_OK);
    assert_true(rep.ok);
    assert_int_equal(jsonget_int(rep.result, "n", 0), 7);
    assert_string_equal(jsonget_str(rep.result, "s", "?"), "x");
    proto_reply_free(&rep);
    /* What the daemon received is the request line, id 1. */
    n = read(f->sfd, got, sizeof got - 1);
    assert_true(n > 0);
    got[n] = '\0';
    assert_non_null(strstr(got, "\"id\":1"));
    assert_non_null(strstr(got, "\"cmd\":\"status\""));
}

/* vpowerd refuses a connection over its limit with a null-id busy reply
 * and closes before reading: the caller sees busy, not EPIPE. */
static void
test_busy_before_read(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;

    daemon_says(f, "{\"version\":1,\"id\":null,\"ok\":false,\"error\":"
                "{\"code\":\"busy\",\"message\":\"too many clients\"}}\n");
    close(f->sfd);
    f->sfd = -1;
    assert_int_equal(call_status(f, &rep), CTLC_OK);
    assert_false(rep.ok);
    assert_int_equal(rep.code, PROTO_E_BUSY);
    assert_string_equal(rep.message, "too many clients");
    proto_reply_free(&rep);
}

static void
test_timeout(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;
    struct timespec a, b;
    double s;

    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(call_status(f, &rep), CTLC_E_TIMEOUT);
    clock_gettime(CLOCK_MONOTONIC, &b);
    s = (double) (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    assert_true(s >= 0.19 && s < 2.0);
    assert_non_null(strstr(ctlc_error(&f->c), "timed out"));
    assert_non_null(strstr(ctlc_error(&f->c), f->path));
}

static void
test_closed_without_reply(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;

    shutdown(f->sfd, SHUT_WR);
    assert_int_equal(call_status(f, &rep), CTLC_E_CLOSED);
    assert_non_null(strstr(ctlc_error(&f->c),
                           "closed the connection without a reply"));
}

static void
test_wrong_id(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;

    daemon_says(f, "{\"version\":1,\"id\":5,\"ok\":true,\"result\":{}}\n");
    assert_int_equal(call_status(f, &rep), CTLC_E_PROTO);
    assert_non_null(strstr(ctlc_error(&f->c), "expected 1"));
}

static void
test_reply_too_large(void **state)
{
    struct fixture *f = *state;
    struct proto_reply rep;
    char *big = malloc(1 << 16);

    assert_non_null(big);
    ctlc_close(&f->c);
    close(f->sfd);
    assert_int_equal(ctlc_connect(&f->c, f->path, 200, 1000), CTLC_OK);
    f->sfd = accept(f->lfd, NULL, NULL);
    memset(big, 'x', (1 << 16) - 1);
    big[(1 << 16) - 1] = '\0';
    daemon_says(f, big);
    free(big);
    assert_int_equal(call_status(f, &rep), CTLC_E_PROTO);
    assert_non_null(strstr(ctlc_error(&f->c), "larger than 1000 bytes"));
}

static void
test_connect_errors(void **state)
{
    struct ctlc c;
    char longpath[200];

    (void) state;
    assert_int_equal(ctlc_connect(&c, "/nonexistent/vpowerd.sock", 100,
                                  4096), CTLC_E_CONNECT);
    assert_non_null(strstr(ctlc_error(&c), "cannot connect to vpowerd at "
                           "/nonexistent/vpowerd.sock"));
    ctlc_close(&c);
    memset(longpath, 'a', sizeof longpath - 1);
    longpath[sizeof longpath - 1] = '\0';
    assert_int_equal(ctlc_connect(&c, longpath, 100, 4096), CTLC_E_PATH);
    assert_non_null(strstr(ctlc_error(&c), "too long"));
    ctlc_close(&c);
}

/* Absent and mistyped fields give the default, never a wrong value. */
static void
test_jsonget(void **state)
{
    struct json_object *o = json_tokener_parse(
        "{\"i\":3,\"d\":2.5,\"b\":true,\"s\":\"str\",\"a\":[1,2],"
        "\"si\":\"4\"}");
    double v = -1;

    (void) state;
    assert_int_equal(jsonget_int(o, "i", -1), 3);
    assert_int_equal(jsonget_int(o, "si", -1), -1);
    assert_int_equal(jsonget_int(o, "nope", -1), -1);
    assert_true(jsonget_num(o, "d", &v) && v == 2.5);
    assert_true(jsonget_num(o, "b", &v) && v == 1);
    assert_false(jsonget_num(o, "s", &v));
    assert_true(jsonget_num_or(o, "s", 9) == 9);
    assert_true(jsonget_bool(o, "b"));
    assert_false(jsonget_bool(o, "s"));
    assert_string_equal(jsonget_str(o, "s", "?"), "str");
    assert_string_equal(jsonget_str(o, "i", "?"), "?");
    assert_int_equal(jsonget_len(jsonget_arr(o, "a")), 2);
    assert_null(jsonget_arr(o, "s"));
    assert_int_equal(jsonget_len(NULL), 0);
    assert_null(jsonget_field(jsonget_arr(o, "a"), "x"));
    assert_string_equal(jsonget_str(NULL, "s", "d"), "d");
    json_object_put(o);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ok_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_busy_before_read, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_closed_without_reply, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_wrong_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_too_large, setup,
                                        teardown),
        cmocka_unit_test(test_connect_errors),
        cmocka_unit_test(test_jsonget),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
