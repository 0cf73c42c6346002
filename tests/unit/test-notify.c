/* tests/unit/test-notify.c -- manager/notify against a datagram socket
 * bound where $NOTIFY_SOCKET points, on a real event loop: what READY=1
 * carries, keep-alives on the loop's timer, STATUS= only when it
 * changed and always on one line, nothing after STOPPING=1, and the
 * environment cases (no socket, a bad or foreign watchdog, an interval
 * too short to honour).  The whole daemon is tested by
 * tests/integration/015-vpowerd-notify.sh. */

#include <config.h>

#include "manager/notify.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager/sched.h"

#ifdef HAVE_LIBSYSTEMD

struct fixture {
    char dir[64];
    char path[108];
    int fd;
    struct sched *sched;
    char status[128];               /* What the status callback says. */
};

static void
status_cb(char *buf, size_t len, void *aux)
{
    struct fixture *f = aux;

    snprintf(buf, len, "%s", f->status);
}

static int
setup(void **st)
{
    struct fixture *f = calloc(1, sizeof *f);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };

    assert_non_null(f);
    snprintf(f->dir, sizeof f->dir, "/tmp/test-notify.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/notify", f->dir);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", f->path);
    f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *) &sa, sizeof sa), 0);
    f->sched = sched_create();
    assert_non_null(f->sched);
    snprintf(f->status, sizeof f->status, "managing: 1 VMs");
    setenv("NOTIFY_SOCKET", f->path, 1);
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    *st = f;
    return 0;
}

static int
teardown(void **st)
{
    struct fixture *f = *st;

    sched_destroy(f->sched);
    close(f->fd);
    unlink(f->path);
    rmdir(f->dir);
    free(f);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    return 0;
}

/* Next datagram into 'buf' ("" when none is waiting). */
static const char *
next_msg(struct fixture *f, char *buf, size_t len)
{
    ssize_t n = recv(f->fd, buf, len - 1, 0);

    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void
quit_cb(void *aux)
{
    sched_quit(aux, 0);
}

/* Runs the loop for 'ms' milliseconds. */
static void
run_for(struct fixture *f, unsigned ms)
{
    sched_add_timer(f->sched, (uint64_t) ms * 1000000u, quit_cb, f->sched);
    assert_int_equal(sched_run(f->sched), 0);
}

static void
test_no_socket(void **st)
{
    unsetenv("NOTIFY_SOCKET");
    setenv("WATCHDOG_USEC", "400000", 1);
    assert_null(notify_create(((struct fixture *) *st)->sched, status_cb,
                              *st));
    /* Every call takes the NULL it then gets. */
    notify_ready(NULL);
    notify_status(NULL);
    notify_stopping(NULL);
    assert_int_equal(notify_keepalive_ns(NULL), 0);
    notify_destroy(NULL);
}

static void
test_keepalives_on_the_loop(void **st)
{
    struct fixture *f = *st;
    struct notify *n;
    char buf[512];
    int ka = 0, status = 0;

    setenv("WATCHDOG_USEC", "40000", 1);
    n = notify_create(f->sched, status_cb, f);
    assert_non_null(n);
    assert_int_equal(notify_keepalive_ns(n), 20000000u);
    /* Nothing before READY=1: the start is systemd's start timeout's. */
    run_for(f, 50);
    assert_string_equal(next_msg(f, buf, sizeof buf), "");

    notify_ready(n);
    assert_string_equal(next_msg(f, buf, sizeof buf),
                        "READY=1\nWATCHDOG=1\nSTATUS=managing: 1 VMs");
    run_for(f, 110);
    while (*next_msg(f, buf, sizeof buf)) {
        /* The status did not change: keep-alives alone. */
        assert_string_equal(buf, "WATCHDOG=1");
        ka++;
    }
    assert_in_range(ka, 3, 6);

    /* A changed status goes out with the next keep-alive, on one line. */
    snprintf(f->status, sizeof f->status, "override\nperformance: 1 VMs");
    run_for(f, 50);
    while (*next_msg(f, buf, sizeof buf)) {
        if (strstr(buf, "STATUS=")) {
            assert_string_equal(buf, "WATCHDOG=1\n"
                                "STATUS=override performance: 1 VMs");
            status++;
        }
    }
    assert_int_equal(status, 1);

    /* notify_status() sends at once, and only a change. */
    notify_status(n);
    assert_string_equal(next_msg(f, buf, sizeof buf), "");
    snprintf(f->status, sizeof f->status, "dry run: 0 VMs");
    notify_status(n);
    assert_string_equal(next_msg(f, buf, sizeof buf),
                        "STATUS=dry run: 0 VMs");

    notify_stopping(n);
    assert_string_equal(next_msg(f, buf, sizeof buf),
                        "STOPPING=1\nSTATUS=restoring the host and exiting");
    run_for(f, 60);
    notify_status(n);
    notify_ready(n);
    assert_string_equal(next_msg(f, buf, sizeof buf), "");
    notify_destroy(n);
}

static void
test_watchdog_cases(void **st)
{
    struct fixture *f = *st;
    struct notify *n;
    char buf[512], pid[32];

    /* Not a number: no watchdog, but READY=1 and the status still go. */
    setenv("WATCHDOG_USEC", "soon", 1);
    n = notify_create(f->sched, status_cb, f);
    assert_non_null(n);
    assert_int_equal(notify_keepalive_ns(n), 0);
    notify_ready(n);
    assert_string_equal(next_msg(f, buf, sizeof buf),
                        "READY=1\nSTATUS=managing: 1 VMs");
    notify_destroy(n);

    /* Meant for another process. */
    setenv("WATCHDOG_USEC", "400000", 1);
    setenv("WATCHDOG_PID", "1", 1);
    n = notify_create(f->sched, status_cb, f);
    assert_int_equal(notify_keepalive_ns(n), 0);
    notify_destroy(n);

    /* Ours, by pid. */
    snprintf(pid, sizeof pid, "%ld", (long) getpid());
    setenv("WATCHDOG_PID", pid, 1);
    n = notify_create(f->sched, status_cb, f);
    assert_int_equal(notify_keepalive_ns(n), 200000000u);
    notify_destroy(n);

    /* Too short to honour: 10 ms, never a spinning loop. */
    setenv("WATCHDOG_USEC", "1", 1);
    n = notify_create(f->sched, status_cb, f);
    assert_int_equal(notify_keepalive_ns(n), 10000000u);
    notify_destroy(n);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keepalives_on_the_loop,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchdog_cases, setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* !HAVE_LIBSYSTEMD */

int
main(void)
{
    printf("SKIP: built without libsystemd\n");
    return 77;
}

#endif /* HAVE_LIBSYSTEMD */
