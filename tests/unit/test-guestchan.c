/* tests/unit/test-guestchan.c -- Host end of the guest channel against a
 * hostile "guest" on the other end of a socketpair.
 *
 * The real guestchan.c and sched loop run; the daemon is replaced by stub
 * gch_ops (hint, count_error) that record what policy would have
 * been told.  Checks: the handshake, acks carrying the hint's seq,
 * garbage / oversized / unknown / out-of-range / pre-hello messages
 * counted and ignored with the stream recovering right after them, a
 * 10,000-message flood held to the token bucket with memory bounded and
 * another VM's hints untouched, detaching from inside hint(), and
 * reconnecting to a listening socket after the peer closes. */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
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

#include "agent/gchproto.h"
#include "manager/guestchan.h"
#include "manager/log.h"
#include "manager/sched.h"

/* ---- daemon stubs ---------------------------------------------------- */

#define MAX_CALLS 20000
struct call {
    struct vpd_vm *vm;
    enum vpd_hint_kind kind;
    uint32_t arg;
    char text[128];
    uint64_t read_ns;
};
static struct call calls[MAX_CALLS];
static size_t n_calls;
static uint64_t n_guest_errors;
static int detach_in_hint;
static uint64_t fake_now_ns;    /* Advances 1 us per reading. */

static void
stub_hint(struct vpd *d, struct vpd_vm *vm, enum vpd_hint_kind kind,
          uint32_t arg, const char *text, uint64_t read_ns)
{
    if (n_calls < MAX_CALLS) {
        calls[n_calls].read_ns = read_ns;
        calls[n_calls].vm = vm;
        calls[n_calls].kind = kind;
        calls[n_calls].arg = arg;
        snprintf(calls[n_calls].text, sizeof calls[n_calls].text, "%s",
                 text);
    }
    n_calls++;
    vm->hints_total[kind]++;
    if (detach_in_hint) {
        gch_detach(d, vm);
    }
}

static void
stub_count_error(struct vpd *d, enum vpd_err_kind kind)
{
    (void) d;
    if (kind == VPD_E_GUEST) {
        n_guest_errors++;
    }
}

static uint64_t
stub_now_ns(struct vpd *d)
{
    (void) d;
    fake_now_ns += 1000;
    return fake_now_ns;
}

/* The daemon's entry points, as the channel sees them. */
static const struct gch_ops stub_ops = {
    .hint = stub_hint,
    .now_ns = stub_now_ns,
    .count_error = stub_count_error,
};

/* ---- fixture --------------------------------------------------------- */

struct fx {
    struct vpd d;
    struct vpd_vm vm1, vm2;
    int g1, g2;                 /* Guest ends. */
    uint32_t seq;
};

static void
quit_cb(void *aux)
{
    sched_quit(aux, 0);
}

/* Runs the loop for 'ms' milliseconds. */
static void
pump(struct fx *f, unsigned ms)
{
    sched_add_timer(f->d.sched, (uint64_t) ms * 1000000u, quit_cb,
                    f->d.sched);
    sched_run(f->d.sched);
}

static int
setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    int sv[2];

    log_init("test-guestchan", false, LOG_LVL_ERR);
    f->d.sched = sched_create();
    f->d.conf.hint_rate = 20;
    snprintf(f->vm1.dom.name, sizeof f->vm1.dom.name, "vm1");
    f->vm1.n_vcpus = 2;
    snprintf(f->vm2.dom.name, sizeof f->vm2.dom.name, "vm2");
    f->vm2.n_vcpus = 1;
    f->vm1.next = &f->vm2;
    f->d.vms = &f->vm1;
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    gch_attach_fd(&f->d, &f->vm1, sv[0], &stub_ops);
    f->g1 = sv[1];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    gch_attach_fd(&f->d, &f->vm2, sv[0], &stub_ops);
    f->g2 = sv[1];
    fcntl(f->g1, F_SETFL, O_NONBLOCK);
    fcntl(f->g2, F_SETFL, O_NONBLOCK);
    n_calls = 0;
    n_guest_errors = 0;
    detach_in_hint = 0;
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    struct fx *f = *state;

    gch_detach(&f->d, &f->vm1);
    gch_detach(&f->d, &f->vm2);
    close(f->g1);
    close(f->g2);
    sched_destroy(f->d.sched);
    free(f);
    return 0;
}

static void
put_raw(int fd, const void *buf, size_t len)
{
    assert_int_equal(write(fd, buf, len), (ssize_t) len);
}

static uint32_t
put(struct fx *f, int fd, unsigned type, uint32_t value)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m;
    int len;

    memset(&m, 0, sizeof m);
    m.hdr.type = (uint8_t) type;
    m.hdr.seq = ++f->seq;
    if (type == GCH_T_HELLO) {
        m.u.hello.min_version = m.u.hello.max_version = 1;
        m.u.hello.caps = GCH_CAP_ALL;
        m.u.hello.n_vcpus = 2;
        strcpy(m.u.hello.agent_version, "test");
    } else {
        m.u.value = value;
    }
    len = gch_encode(&m, buf, sizeof buf);
    assert_true(len > 0);
    put_raw(fd, buf, (size_t) len);
    return m.hdr.seq;
}

/* Reads every message the host sent to 'fd' into 'out' (max 'max'). */
static size_t
get_all(int fd, struct gch_msg *out, size_t max)
{
    static uint8_t buf[1 << 20];
    size_t len = 0, off = 0, n = 0;
    ssize_t r;

    while ((r = read(fd, buf + len, sizeof buf - len)) > 0) {
        len += (size_t) r;
    }
    while (off < len) {
        struct gch_msg m;
        int k = gch_decode(buf + off, len - off, &m);

        assert_true(k > 0);     /* The host only sends valid messages. */
        if (n < max) {
            out[n] = m;
        }
        n++;
        off += (size_t) k;
    }
    return n;
}

static const struct gch_msg *
find_ack(const struct gch_msg *m, size_t n, uint32_t seq)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (m[i].hdr.type == GCH_T_ACK && m[i].hdr.seq == seq) {
            return &m[i];
        }
    }
    return NULL;
}

static void
hello(struct fx *f, int fd)
{
    struct gch_msg m[8];
    size_t n;

    put(f, fd, GCH_T_HELLO, 0);
    pump(f, 5);
    n = get_all(fd, m, 8);
    assert_int_equal(n, 1);
    assert_int_equal(m[0].hdr.type, GCH_T_HELLO_ACK);
    assert_int_equal(m[0].u.hello_ack.version, GCH_VERSION);
    assert_int_equal(m[0].u.hello_ack.hint_rate, 20);
}

/* ---- tests ----------------------------------------------------------- */

static void
test_handshake_and_ack(void **state)
{
    struct fx *f = *state;
    struct gch_msg m[8];
    const struct gch_msg *a;
    struct gch_info info;
    uint32_t seq;
    size_t n;

    put(f, f->g1, GCH_T_HELLO, 0);
    pump(f, 5);
    n = get_all(f->g1, m, 8);
    assert_int_equal(n, 1);
    assert_int_equal(m[0].hdr.type, GCH_T_HELLO_ACK);
    assert_int_equal(m[0].u.hello_ack.n_vcpus, 2);
    assert_int_equal(m[0].u.hello_ack.burst, GCH_BURST_MAX);
    assert_int_equal(gch_info(&f->vm1, &info), 0);
    assert_true(info.hello);
    assert_string_equal(info.agent_version, "test");

    seq = put(f, f->g1, GCH_T_LATENCY_BEGIN, 200);
    pump(f, 5);
    assert_int_equal(n_calls, 1);
    assert_ptr_equal(calls[0].vm, &f->vm1);
    assert_int_equal(calls[0].kind, VPD_HINT_LATENCY_BEGIN);
    assert_int_equal(calls[0].arg, 200);
    assert_string_equal(calls[0].text, "latency-begin 200 us");
    n = get_all(f->g1, m, 8);
    assert_int_equal(n, 1);
    a = find_ack(m, n, seq);
    assert_non_null(a);
    assert_int_equal(a->u.ack.status, GCH_S_APPLIED);
    assert_int_equal(a->u.ack.type, GCH_T_LATENCY_BEGIN);

    put(f, f->g1, GCH_T_LATENCY_END, 0);
    put(f, f->g1, GCH_T_BATCH, 0);
    put(f, f->g1, GCH_T_BOOST, 500);
    put(f, f->g1, GCH_T_IDLE, 2000);
    pump(f, 5);
    assert_int_equal(n_calls, 5);
    /* Read together, so timed from the same reading of the owner's
     * clock, a later one than the first hint's. */
    assert_true(calls[0].read_ns > 0);
    assert_true(calls[1].read_ns > calls[0].read_ns);
    assert_true(calls[4].read_ns == calls[1].read_ns);
    assert_int_equal(calls[1].kind, VPD_HINT_LATENCY_END);
    assert_int_equal(calls[2].kind, VPD_HINT_BATCH);
    assert_int_equal(calls[3].kind, VPD_HINT_BOOST);
    assert_int_equal(calls[3].arg, 500);
    assert_int_equal(calls[4].kind, VPD_HINT_IDLE);
    assert_int_equal(calls[4].arg, 2000);
    assert_int_equal(get_all(f->g1, m, 8), 4);
    assert_int_equal(f->vm1.hints_rejected, 0);
    assert_int_equal(n_guest_errors, 0);
}

static void
test_hint_before_hello(void **state)
{
    struct fx *f = *state;
    struct gch_msg m[8];
    const struct gch_msg *a;
    uint32_t seq;
    size_t n;

    seq = put(f, f->g1, GCH_T_BOOST, 100);
    pump(f, 5);
    assert_int_equal(n_calls, 0);
    assert_int_equal(f->vm1.hints_rejected, 1);
    assert_int_equal(n_guest_errors, 1);
    n = get_all(f->g1, m, 8);
    a = find_ack(m, n, seq);
    assert_non_null(a);
    assert_int_equal(a->u.ack.status, GCH_S_NO_HELLO);
}

static void
test_garbage_then_valid(void **state)
{
    struct fx *f = *state;
    uint8_t junk[3000];
    size_t i;

    hello(f, f->g1);
    for (i = 0; i < sizeof junk; i++) {
        junk[i] = (uint8_t) (i * 7 + 3);    /* Never "VPG1". */
    }
    junk[sizeof junk - 2] = 'V';            /* Partial magic at the end. */
    junk[sizeof junk - 1] = 'P';
    put_raw(f->g1, junk, sizeof junk);
    pump(f, 5);
    assert_int_equal(f->vm1.hints_rejected, 1);   /* One garbage run. */
    /* The stream recovers at the next real message. */
    put(f, f->g1, GCH_T_BOOST, 50);
    pump(f, 5);
    assert_int_equal(n_calls, 1);
    assert_int_equal(calls[0].arg, 50);
    assert_int_equal(f->vm2.hints_rejected, 0);
}

static void
test_oversized_and_bad_header(void **state)
{
    struct fx *f = *state;
    uint8_t h[GCH_HDR_LEN + 4] = {
        'V', 'P', 'G', '1', 1, GCH_T_BOOST, 0, 0, 0, 0, 0, 1, 0xff, 0xff,
        0, 0, 0, 0, 0, 1
    };
    struct gch_msg m[8];
    uint64_t before;
    uint32_t seq;
    size_t n;

    hello(f, f->g1);
    put_raw(f->g1, h, sizeof h);            /* Length 65535. */
    pump(f, 5);
    assert_int_equal(f->vm1.hints_rejected, 1);
    before = f->vm1.hints_rejected;
    h[12] = 0;
    h[13] = 4;
    h[5] = 200;                             /* Unknown type, sane length. */
    put_raw(f->g1, h, sizeof h);
    h[5] = GCH_T_BOOST;
    h[4] = 9;                               /* Future version. */
    put_raw(f->g1, h, sizeof h);
    h[4] = 1;
    h[6] = 1;                               /* Flags set. */
    put_raw(f->g1, h, sizeof h);
    h[6] = 0;
    h[19] = 0;                              /* boost 0 ms: bad field. */
    put_raw(f->g1, h, sizeof h);
    seq = put(f, f->g1, GCH_T_IDLE, 1000);
    pump(f, 5);
    assert_int_equal(f->vm1.hints_rejected, before + 4);
    assert_int_equal(n_guest_errors, f->vm1.hints_rejected);
    assert_int_equal(n_calls, 1);
    assert_int_equal(calls[0].kind, VPD_HINT_IDLE);
    n = get_all(f->g1, m, 8);
    assert_non_null(find_ack(m, n, seq));
    /* The bad-field message was well framed: answered as invalid. */
    assert_non_null(find_ack(m, n, 1));
    assert_int_equal(find_ack(m, n, 1)->u.ack.status, GCH_S_INVALID);
}

static void
put_util(struct fx *f, int fd, uint16_t first, uint16_t n, uint32_t *seq)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m;
    unsigned i;
    int len;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_UTIL;
    m.hdr.seq = *seq = ++f->seq;
    m.u.util.interval_ms = 5000;
    m.u.util.pressure_some_ppm = GCH_PRESSURE_NONE;
    m.u.util.n = n;
    for (i = 0; i < n; i++) {
        m.u.util.v[i].vcpu = (uint16_t) (first + i);
        m.u.util.v[i].busy_permille = (uint16_t) (300 + 200 * i);
    }
    len = gch_encode(&m, buf, sizeof buf);
    assert_true(len > 0);
    put_raw(fd, buf, (size_t) len);
}

static void
test_vcpu_range(void **state)
{
    struct fx *f = *state;
    struct gch_msg m[8];
    uint32_t bad, good, other;
    size_t n;

    hello(f, f->g1);
    put_util(f, f->g1, 1, 2, &bad);         /* vCPUs 1, 2 of a 2-vCPU VM. */
    put_util(f, f->g1, 0, 2, &good);        /* 0, 1: fine. */
    put_util(f, f->g1, 2000, 1, &other);    /* Far out of range. */
    pump(f, 5);
    assert_int_equal(n_calls, 1);
    assert_int_equal(calls[0].kind, VPD_HINT_UTIL);
    assert_int_equal(calls[0].arg, 400);    /* Mean of 300 and 500. */
    assert_ptr_equal(calls[0].vm, &f->vm1);
    assert_int_equal(f->vm1.hints_rejected, 2);
    n = get_all(f->g1, m, 8);
    assert_int_equal(find_ack(m, n, bad)->u.ack.status, GCH_S_INVALID);
    assert_int_equal(find_ack(m, n, good)->u.ack.status, GCH_S_APPLIED);
    assert_int_equal(find_ack(m, n, other)->u.ack.status, GCH_S_INVALID);
    /* vm2 has one vCPU: vCPU 1 does not exist for it. */
    hello(f, f->g2);
    put_util(f, f->g2, 1, 1, &bad);
    pump(f, 5);
    assert_int_equal(n_calls, 1);
    assert_int_equal(f->vm2.hints_rejected, 1);
}

static void
test_flood(void **state)
{
    struct fx *f = *state;
    static struct gch_msg m[16];
    uint8_t one[GCH_MAX_MSG];
    struct gch_info info;
    struct mallinfo2 mi0, mi1;
    uint64_t t0, t1;
    size_t sent = 0, hints_vm1, i, n, max_in = 0;
    uint32_t seq2;
    struct gch_msg msg;
    int len;

    hello(f, f->g1);
    hello(f, f->g2);
    memset(&msg, 0, sizeof msg);
    msg.hdr.type = GCH_T_BOOST;
    msg.u.value = 10;
    mi0 = mallinfo2();
    t0 = clk_now_ns();
    while (sent < 10000) {
        msg.hdr.seq = (uint32_t) (100000 + sent);
        len = gch_encode(&msg, one, sizeof one);
        if (write(f->g1, one, (size_t) len) == len) {
            sent++;
            continue;
        }
        assert_int_equal(errno, EAGAIN);    /* Socket full: let it drain. */
        pump(f, 1);
        gch_info(&f->vm1, &info);
        max_in = info.in_buffered > max_in ? info.in_buffered : max_in;
        (void) get_all(f->g1, m, 16);
    }
    /* Meanwhile the other VM gives one hint. */
    seq2 = put(f, f->g2, GCH_T_LATENCY_BEGIN, 100);
    for (i = 0; i < 20; i++) {
        pump(f, 2);
        (void) get_all(f->g1, m, 16);
    }
    t1 = clk_now_ns();
    mi1 = mallinfo2();

    hints_vm1 = 0;
    for (i = 0; i < n_calls && i < MAX_CALLS; i++) {
        hints_vm1 += calls[i].vm == &f->vm1;
    }
    /* Held to burst + rate * elapsed (+1 for rounding). */
    assert_true(hints_vm1 >= 1);
    assert_true(hints_vm1 <= GCH_BURST_MAX + 20 * (t1 - t0) / 1000000000u
                             + 1);
    assert_int_equal(f->vm1.hints_rejected + hints_vm1, 10000);
    assert_int_equal(n_guest_errors, f->vm1.hints_rejected);
    /* Memory: fixed buffers only. */
    gch_info(&f->vm1, &info);
    assert_true(max_in <= GCH_IN_CAP);
    assert_true(info.in_buffered < GCH_MAX_MSG);
    assert_true(info.out_buffered <= GCH_OUT_CAP);
    assert_true(mi1.uordblks < mi0.uordblks + 16384);
    /* The other VM: applied, nothing rejected. */
    assert_int_equal(f->vm2.hints_rejected, 0);
    assert_int_equal(f->vm2.hints_total[VPD_HINT_LATENCY_BEGIN], 1);
    n = get_all(f->g2, m, 16);
    assert_non_null(find_ack(m, n, seq2));
    assert_int_equal(find_ack(m, n, seq2)->u.ack.status, GCH_S_APPLIED);
    fprintf(stderr, "flood: 10000 sent, %zu applied, %" PRIu64
            " rejected in %.2f s, max %zu bytes buffered\n", hints_vm1,
            f->vm1.hints_rejected, (t1 - t0) / 1e9, max_in);
}

static void
test_detach_inside_hint(void **state)
{
    struct fx *f = *state;

    hello(f, f->g1);
    detach_in_hint = 1;
    put(f, f->g1, GCH_T_BOOST, 10);
    put(f, f->g1, GCH_T_BOOST, 10);         /* Must not be read. */
    pump(f, 5);
    assert_int_equal(n_calls, 1);
    assert_null(f->vm1.gch);
}

static void
test_eof(void **state)
{
    struct fx *f = *state;
    struct gch_info info;

    hello(f, f->g1);
    close(f->g1);
    f->g1 = socket(AF_UNIX, SOCK_STREAM, 0);    /* For teardown. */
    pump(f, 5);
    assert_int_equal(gch_info(&f->vm1, &info), 0);
    assert_false(info.connected);
    assert_false(info.hello);
}

static void
test_reconnect(void **state)
{
    struct fx *f = *state;
    struct sockaddr_un sun;
    struct vpd_vm vm3;
    struct gch_info info;
    struct gch_msg m[4];
    int lfd, c1, c2;

    memset(&vm3, 0, sizeof vm3);
    snprintf(vm3.dom.name, sizeof vm3.dom.name, "vm3");
    vm3.n_vcpus = 1;
    snprintf(vm3.dom.agent_path, sizeof vm3.dom.agent_path,
             "/tmp/test-guestchan.%d.sock", (int) getpid());
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    strcpy(sun.sun_path, vm3.dom.agent_path);
    unlink(sun.sun_path);

    /* Nobody listens yet: attach must not fail, just retry. */
    gch_attach(&f->d, &vm3, &stub_ops);
    pump(f, 20);
    gch_info(&vm3, &info);
    assert_false(info.connected);

    lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(lfd, (struct sockaddr *) &sun, sizeof sun), 0);
    assert_int_equal(listen(lfd, 1), 0);
    fcntl(lfd, F_SETFL, O_NONBLOCK);
    pump(f, 400);                       /* Backoff is 100, 200 ms. */
    c1 = accept(lfd, NULL, NULL);
    assert_true(c1 >= 0);
    gch_info(&vm3, &info);
    assert_true(info.connected);
    assert_int_equal(info.n_connects, 1);
    fcntl(c1, F_SETFL, O_NONBLOCK);
    put(f, c1, GCH_T_HELLO, 0);
    pump(f, 5);
    assert_int_equal(get_all(c1, m, 4), 1);

    /* QEMU side goes away (guest reboot with chardev reset). */
    close(c1);
    pump(f, 5);
    gch_info(&vm3, &info);
    assert_false(info.connected);
    pump(f, 300);
    c2 = accept(lfd, NULL, NULL);
    assert_true(c2 >= 0);
    gch_info(&vm3, &info);
    assert_true(info.connected);
    assert_int_equal(info.n_connects, 2);
    assert_false(info.hello);           /* New session: hello again. */

    gch_detach(&f->d, &vm3);
    assert_null(vm3.gch);
    close(c2);
    close(lfd);
    unlink(sun.sun_path);
}

static void
test_rate_zero(void **state)
{
    struct fx *f = *state;
    struct gch_msg m[4];

    f->d.conf.hint_rate = 0;
    gch_set_rate(&f->d);
    put(f, f->g1, GCH_T_HELLO, 0);
    pump(f, 5);
    assert_int_equal(f->vm1.hints_rejected, 1);
    assert_int_equal(get_all(f->g1, m, 4), 1);
    assert_int_equal(m[0].u.ack.status, GCH_S_RATE_LIMITED);
    assert_int_equal(n_calls, 0);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_handshake_and_ack, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hint_before_hello, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_garbage_then_valid, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_oversized_and_bad_header, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_vcpu_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach_inside_hint, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_eof, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reconnect, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_zero, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
