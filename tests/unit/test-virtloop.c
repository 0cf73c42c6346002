/* tests/unit/test-virtloop.c -- libvirt's event implementation on sched,
 * driven through libvirt's public virEvent* calls as libvirt itself
 * drives it: handles report readiness with libvirt's fd, one fd may be
 * watched twice, a handle watching nothing stays quiet after a hang-up,
 * timeouts repeat, stop and restart, ids of one kind never reach the
 * other, and free callbacks run from the loop, never inside the remove
 * (or from virtloop_flush() when the loop does not turn again). */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include <libvirt/libvirt.h>

#include "manager/drivers/virtloop.h"
#include "manager/sched.h"

static struct sched *loop;

struct seen {
    int n;                      /* Callbacks so far. */
    int watch;                  /* Last id passed back. */
    int fd;                     /* Last fd passed back. */
    int events;                 /* Last VIR_EVENT_HANDLE_* mask. */
    int quit_after;             /* Quit the loop at this count, 0 never. */
    int remove_self;            /* Handle: remove itself when called. */
    int n_freed;                /* Free callbacks run. */
};

static void
handle_cb(int watch, int fd, int events, void *opaque)
{
    struct seen *s = opaque;

    s->n++;
    s->watch = watch;
    s->fd = fd;
    s->events = events;
    if (s->remove_self) {
        assert_int_equal(virEventRemoveHandle(watch), 0);
        /* Not freed inside the remove. */
        assert_int_equal(s->n_freed, 0);
    }
    if (s->n == s->quit_after) {
        sched_quit(loop, 0);
    }
}

static void
timeout_cb(int timer, void *opaque)
{
    struct seen *s = opaque;

    s->n++;
    s->watch = timer;
    if (s->n == s->quit_after) {
        sched_quit(loop, 0);
    }
}

static void
free_cb(void *opaque)
{
    struct seen *s = opaque;

    s->n_freed++;
}

static void
stop_cb(void *aux)
{
    sched_quit(loop, 1);
}

/* Runs the loop until a callback quits it (returns 0) or 'ms' pass
 * (returns 1). */
static int
run_for(unsigned ms)
{
    uint64_t t = sched_add_timer(loop, (uint64_t) ms * 1000000u, stop_cb,
                                 NULL);
    int r = sched_run(loop);

    sched_del_timer(loop, t);
    return r;
}

static void
test_handle_readable(void **state)
{
    struct seen a = { .quit_after = 1 };
    int p[2];
    int w;

    (void) state;
    assert_int_equal(pipe(p), 0);
    w = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, handle_cb, &a,
                          free_cb);
    assert_true(w > 0);
    assert_int_equal(run_for(50), 1);      /* Nothing to read yet. */
    assert_int_equal(a.n, 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    assert_int_equal(run_for(2000), 0);
    assert_int_equal(a.watch, w);
    assert_int_equal(a.fd, p[0]);           /* libvirt's fd, not a dup. */
    assert_true(a.events & VIR_EVENT_HANDLE_READABLE);
    assert_int_equal(virEventRemoveHandle(w), 0);
    assert_int_equal(a.n_freed, 0);
    assert_int_equal(virEventRemoveHandle(w), -1);
    run_for(10);
    assert_int_equal(a.n_freed, 1);
    close(p[0]);
    close(p[1]);
}

static void
test_handle_twice_and_quiet(void **state)
{
    struct seen a = { 0 }, b = { 0 };
    int p[2];
    int wa, wb;

    (void) state;
    assert_int_equal(pipe(p), 0);
    wa = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, handle_cb, &a,
                           NULL);
    wb = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, handle_cb, &b,
                           NULL);
    assert_true(wa > 0 && wb > 0 && wa != wb);
    assert_int_equal(write(p[1], "x", 1), 1);
    run_for(50);
    assert_true(a.n > 0);
    assert_true(b.n > 0);
    assert_int_equal(b.watch, wb);

    /* Watching nothing: a hung-up pipe must not wake the loop. */
    virEventUpdateHandle(wa, 0);
    virEventUpdateHandle(wb, 0);
    close(p[1]);
    a.n = b.n = 0;
    run_for(50);
    assert_int_equal(a.n, 0);
    assert_int_equal(b.n, 0);
    /* Watching again: the hang-up is reported. */
    virEventUpdateHandle(wa, VIR_EVENT_HANDLE_READABLE);
    a.quit_after = 1;
    assert_int_equal(run_for(2000), 0);
    assert_true(a.events & (VIR_EVENT_HANDLE_HANGUP
                            | VIR_EVENT_HANDLE_READABLE));
    assert_int_equal(virEventRemoveHandle(wa), 0);
    assert_int_equal(virEventRemoveHandle(wb), 0);
    close(p[0]);
}

static void
test_handle_removes_itself(void **state)
{
    struct seen a = { .remove_self = 1 };
    int p[2];

    (void) state;
    assert_int_equal(pipe(p), 0);
    assert_true(virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE,
                                  handle_cb, &a, free_cb) > 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    run_for(50);
    assert_int_equal(a.n, 1);               /* Gone after the first. */
    assert_int_equal(a.n_freed, 1);
    close(p[0]);
    close(p[1]);
}

static void
test_timeouts(void **state)
{
    struct seen t = { .quit_after = 3 }, h = { 0 };
    int p[2];
    int id, wh;

    (void) state;
    id = virEventAddTimeout(5, timeout_cb, &t, free_cb);
    assert_true(id > 0);
    assert_int_equal(run_for(2000), 0);     /* Repeats: three times. */
    assert_int_equal(t.watch, id);

    virEventUpdateTimeout(id, -1);          /* Off. */
    t.n = 0;
    run_for(50);
    assert_int_equal(t.n, 0);
    virEventUpdateTimeout(id, 0);           /* Every loop turn. */
    t.quit_after = 2;
    assert_int_equal(run_for(2000), 0);

    /* A handle's id is no timeout's and the other way round. */
    assert_int_equal(pipe(p), 0);
    wh = virEventAddHandle(p[0], VIR_EVENT_HANDLE_READABLE, handle_cb, &h,
                           NULL);
    assert_true(wh > 0 && wh != id);
    assert_int_equal(virEventRemoveTimeout(wh), -1);
    assert_int_equal(virEventRemoveHandle(id), -1);
    assert_int_equal(virEventRemoveHandle(wh), 0);

    /* Removed with the loop never turning again: the flush frees. */
    assert_int_equal(virEventRemoveTimeout(id), 0);
    assert_int_equal(t.n_freed, 0);
    virtloop_flush();
    assert_int_equal(t.n_freed, 1);
    run_for(10);
    assert_int_equal(t.n_freed, 1);         /* Not twice. */
    close(p[0]);
    close(p[1]);
}

static void
test_one_loop(void **state)
{
    struct sched *other = sched_create();

    (void) state;
    assert_int_equal(virtloop_register(loop), 0);
    assert_int_equal(virtloop_register(other), -EBUSY);
    sched_destroy(other);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handle_readable),
        cmocka_unit_test(test_handle_twice_and_quiet),
        cmocka_unit_test(test_handle_removes_itself),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_one_loop),
    };
    int r;

    loop = sched_create();
    if (virtloop_register(loop) < 0) {
        return 99;
    }
    r = cmocka_run_group_tests(tests, NULL, NULL);
    sched_destroy(loop);
    return r;
}
