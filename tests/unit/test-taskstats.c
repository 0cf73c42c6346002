/* tests/unit/test-taskstats.c -- manager/taskstats on recorded netlink
 * replies, a fixture /proc tree and the real kernel.
 *
 * The recorded datagrams in tests/fixtures/netlink/ come from this
 * machine's kernel (see the README there); messages the kernel would
 * only send when something is wrong (short stats, wrong pid) are built
 * here with libnl from the recorded one. */

#include <config.h>

#include "manager/inputs/taskstats.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#define REC_FAMILY 31
#define REC_TID 25802

static size_t
load(const char *name, unsigned char *buf, size_t len)
{
    char path[1024];
    const char *src = getenv("VPOWER_SRCDIR");
    snprintf(path, sizeof path, "%s/tests/fixtures/netlink/%s",
             src ? src : VPOWER_ABS_SRCDIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, len, f);
    fclose(f);
    assert_true(n > 0);
    return n;
}

static void
test_recorded_reply(void **st)
{
    (void) st;
    unsigned char buf[4096];
    size_t n = load("taskstats-reply.bin", buf, sizeof buf);
    uint64_t run = 0, delay = 0;
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, n, REC_FAMILY,
                                     REC_TID, &run, &delay), 0);
    assert_int_equal(run, 365637374ULL);
    assert_int_equal(delay, 1151414549ULL);

    /* Another thread's reply, another family, a cut datagram. */
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, n, REC_FAMILY,
                                     REC_TID + 1, &run, &delay), -EPROTO);
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, n, 32,
                                     REC_TID, &run, &delay), -EPROTO);
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, n - 100,
                                     REC_FAMILY, REC_TID, &run, &delay),
                     -EPROTO);
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, 10,
                                     REC_FAMILY, REC_TID, &run, &delay),
                     -EPROTO);
}

static void
test_recorded_esrch(void **st)
{
    (void) st;
    unsigned char buf[256];
    size_t n = load("taskstats-esrch.bin", buf, sizeof buf);
    uint64_t run, delay;
    assert_int_equal(ts_parse_reply((struct nlmsghdr *) buf, n, REC_FAMILY,
                                     999999, &run, &delay), -ESRCH);
}

/* Builds a reply with a stats attribute of 'stats_len' bytes. */
static struct nl_msg *
build_reply(uint32_t tid, size_t stats_len, uint8_t cmd)
{
    struct nl_msg *m = nlmsg_alloc();
    assert_non_null(genlmsg_put(m, 0, 1, REC_FAMILY, 0, 0, cmd, 16));
    struct nlattr *nest = nla_nest_start(m, TASKSTATS_TYPE_AGGR_PID);
    nla_put_u32(m, TASKSTATS_TYPE_PID, tid);
    unsigned char stats[1024];
    memset(stats, 0, sizeof stats);
    struct taskstats ts;
    memset(&ts, 0, sizeof ts);
    ts.version = 16;
    ts.cpu_delay_total = 7;
    ts.cpu_run_virtual_total = 11;
    memcpy(stats, &ts, sizeof ts);
    nla_put(m, TASKSTATS_TYPE_STATS, (int) stats_len, stats);
    nla_nest_end(m, nest);
    nla_put_flag(m, TASKSTATS_TYPE_NULL);
    return m;
}

static void
test_built_replies(void **st)
{
    (void) st;
    uint64_t run = 0, delay = 0;
    struct nl_msg *m = build_reply(42, sizeof(struct taskstats),
                                   TASKSTATS_CMD_NEW);
    struct nlmsghdr *h = nlmsg_hdr(m);
    assert_int_equal(ts_parse_reply(h, h->nlmsg_len, REC_FAMILY, 42, &run,
                                     &delay), 0);
    assert_int_equal(run, 11);
    assert_int_equal(delay, 7);
    nlmsg_free(m);

    /* An old kernel's struct that stops before cpu_run_virtual_total. */
    m = build_reply(42, offsetof(struct taskstats, cpu_run_virtual_total),
                    TASKSTATS_CMD_NEW);
    h = nlmsg_hdr(m);
    assert_int_equal(ts_parse_reply(h, h->nlmsg_len, REC_FAMILY, 42, &run,
                                     &delay), -EPROTO);
    nlmsg_free(m);

    /* A request echoed back is not a reply. */
    m = build_reply(42, sizeof(struct taskstats), TASKSTATS_CMD_GET);
    h = nlmsg_hdr(m);
    assert_int_equal(ts_parse_reply(h, h->nlmsg_len, REC_FAMILY, 42, &run,
                                     &delay), -EPROTO);
    nlmsg_free(m);
}

static void
test_schedstat_parse(void **st)
{
    (void) st;
    uint64_t r, w, s;
    assert_int_equal(ts_parse_schedstat("365637374 1151414549 146\n", &r,
                                        &w, &s), 0);
    assert_int_equal(r, 365637374ULL);
    assert_int_equal(w, 1151414549ULL);
    assert_int_equal(s, 146);
    assert_int_equal(ts_parse_schedstat("0 0 0", &r, &w, NULL), 0);
    assert_int_equal(ts_parse_schedstat("1 2\n", &r, &w, &s), -EINVAL);
    assert_int_equal(ts_parse_schedstat("1 2 3 4\n", &r, &w, &s), -EINVAL);
    assert_int_equal(ts_parse_schedstat("-1 2 3\n", &r, &w, &s), -EINVAL);
    assert_int_equal(ts_parse_schedstat("x", &r, &w, &s), -EINVAL);
    assert_int_equal(ts_parse_schedstat(
        "99999999999999999999999 2 3", &r, &w, &s), -EINVAL);
}

static void
test_comm(void **st)
{
    (void) st;
    unsigned v;
    assert_int_equal(vcpu_parse_comm("CPU 0/KVM", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(vcpu_parse_comm("CPU 12/TCG\n", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(vcpu_parse_comm("CPU 1", &v), -EINVAL);
    assert_int_equal(vcpu_parse_comm("CPU x/KVM", &v), -EINVAL);
    assert_int_equal(vcpu_parse_comm("CPU 3/", &v), -EINVAL);
    assert_int_equal(vcpu_parse_comm("qemu-system-x86", &v), -EINVAL);
    assert_int_equal(vcpu_parse_comm("IO mon_iothread", &v), -EINVAL);
}

/* ---- fixture /proc -------------------------------------------------- */

static char root[256];

static void
put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int
setup_proc(void **st)
{
    (void) st;
    snprintf(root, sizeof root, "%s/vp-ts-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        return -1;
    }
    /* QEMU pid 100: main thread, two vCPUs (TCG and KVM names), an I/O
     * thread and a worker. */
    put("100/task/100/comm", "qemu-system-x86\n");
    put("100/task/101/comm", "CPU 1/TCG\n");
    put("100/task/102/comm", "CPU 0/KVM\n");
    put("100/task/103/comm", "IO mon_iothread\n");
    put("100/task/104/comm", "worker\n");
    put("200/task/200/comm", "qemu-system-x86\n");
    put("300/task/301/comm", "CPU 9/KVM\n");
    put("self/schedstat", "1 2 3\n");
    put("101/task/101/schedstat", "5000 700 3\n");
    put("102/task/102/schedstat", "garbage\n");
    put("sys/kernel/task_delayacct", "0\n");
    put("run/vm1.pid", "100\n");
    put("run/bad.pid", "100x\n");
    return 0;
}

static int
teardown_proc(void **st)
{
    (void) st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void
test_vcpu_tids(void **st)
{
    (void) st;
    pid_t tids[4];
    unsigned n = 99;
    assert_int_equal(vcpu_tids_at(root, 100, tids, 4, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(tids[0], 102);
    assert_int_equal(tids[1], 101);
    assert_int_equal(vcpu_tids_at(root, 200, tids, 4, &n), -ESRCH);
    assert_int_equal(vcpu_tids_at(root, 300, tids, 4, &n), -ENOSPC);
    assert_int_equal(vcpu_tids_at(root, 400, tids, 4, &n), -ENOENT);
}

static void
test_schedstat_source(void **st)
{
    (void) st;
    char err[256];
    struct ts_source *s = ts_open(TS_SCHEDSTAT, root, err, sizeof err);
    assert_non_null(s);
    assert_string_equal(ts_name(s), "schedstat");
    uint64_t run, delay;
    assert_int_equal(ts_read(s, 101, &run, &delay), 0);
    assert_int_equal(run, 5000);
    assert_int_equal(delay, 700);
    assert_int_equal(ts_read(s, 102, &run, &delay), -EPROTO);
    assert_int_equal(ts_read(s, 555, &run, &delay), -ESRCH);
    assert_int_equal(ts_read(s, 0, &run, &delay), -EINVAL);
    ts_close(s);

    char bad[300];
    snprintf(bad, sizeof bad, "%s/nonexistent", root);
    assert_null(ts_open(TS_SCHEDSTAT, bad, err, sizeof err));
    assert_non_null(strstr(err, "schedstat"));
}

static void
test_pidfile_and_delayacct(void **st)
{
    (void) st;
    char run[300];
    snprintf(run, sizeof run, "%s/run", root);
    pid_t pid = 0;
    assert_int_equal(qemu_pid_of(run, "vm1", &pid), 0);
    assert_int_equal(pid, 100);
    assert_int_equal(qemu_pid_of(run, "bad", &pid), -EINVAL);
    assert_int_equal(qemu_pid_of(run, "../x", &pid), -EINVAL);
    assert_int_equal(qemu_pid_of(run, "nope", &pid), -ENOENT);
    assert_int_equal(ts_delayacct_state(root), 0);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/nonexistent", root);
    assert_int_equal(ts_delayacct_state(bad), -ENOENT);
}

/* The real kernel: whichever source TS_AUTO picks must see this very
 * thread's run time grow while it spins, and both sources must agree on
 * the delay of a thread that does not run (this one, between reads). */
static void
test_real_kernel(void **st)
{
    (void) st;
    char err[256];
    struct ts_source *a = ts_open(TS_AUTO, NULL, err, sizeof err);
    if (!a) {
        print_message("no source on this kernel: %s\n", err);
        skip();
    }
    print_message("TS_AUTO picked %s%s%s\n", ts_name(a),
                  ts_fallback_reason(a)[0] ? ": " : "",
                  ts_fallback_reason(a));
    pid_t me = getpid();
    uint64_t r1, d1, r2, d2;
    assert_int_equal(ts_read(a, me, &r1, &d1), 0);
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < 30000000; i++) {
        x += i;
    }
    assert_int_equal(ts_read(a, me, &r2, &d2), 0);
    assert_true(r2 > r1);
    assert_true(d2 >= d1);
    assert_int_equal(ts_read(a, 0x3fffffff, &r1, &d1), -ESRCH);

    struct ts_source *s = ts_open(TS_SCHEDSTAT, NULL, err, sizeof err);
    assert_non_null(s);
    uint64_t rs, ds;
    assert_int_equal(ts_read(s, me, &rs, &ds), 0);
    assert_true(rs >= r2);
    ts_close(s);
    ts_close(a);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_reply),
        cmocka_unit_test(test_recorded_esrch),
        cmocka_unit_test(test_built_replies),
        cmocka_unit_test(test_schedstat_parse),
        cmocka_unit_test(test_comm),
        cmocka_unit_test(test_vcpu_tids),
        cmocka_unit_test(test_schedstat_source),
        cmocka_unit_test(test_pidfile_and_delayacct),
        cmocka_unit_test(test_real_kernel),
    };
    return cmocka_run_group_tests(tests, setup_proc, teardown_proc);
}
