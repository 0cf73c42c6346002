/* manager/inputs/taskstats.c -- vCPU thread run and ready time from TASKSTATS
 * generic netlink, with /proc schedstat as the fallback.
 *
 * The daemon's cycle calls ts_read() once per vCPU thread per period.
 * With taskstats each call is one TASKSTATS_CMD_GET request and one
 * reply on a private socket whose receive timeout (TS_NL_TIMEOUT_MS)
 * bounds how long the event loop can wait; replies to requests that
 * timed out earlier are recognised by their sequence number and
 * dropped.  The schedstat fallback reads the same two kernel counters
 * (se.sum_exec_runtime, sched_info.run_delay) from a small text file.
 * vcpu_tids() maps vCPU numbers to thread ids from QEMU's thread names. */

#include <config.h>

#include "manager/inputs/taskstats.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#define LOG_MODULE "taskstats"
#include "manager/log.h"

/* A reply older than the current request (its request timed out) is
 * dropped; this many datagrams are read at most per request. */
#define TS_MAX_DATAGRAMS 4

struct ts_source {
    enum ts_kind kind;
    char *proc_root;
    struct nl_sock *sock;        /* TS_TASKSTATS only. */
    int family;
    char fallback[160];
};

static int
ts_open_netlink(struct ts_source *s, char *err, size_t errlen)
{
    s->sock = nl_socket_alloc();
    if (!s->sock) {
        snprintf(err, errlen, "taskstats: cannot allocate netlink socket");
        return -ENOMEM;
    }
    int r = genl_connect(s->sock);
    if (r < 0) {
        snprintf(err, errlen, "taskstats: generic netlink connect: %s",
                 nl_geterror(r));
        goto fail;
    }
    s->family = genl_ctrl_resolve(s->sock, TASKSTATS_GENL_NAME);
    if (s->family < 0) {
        snprintf(err, errlen, "taskstats: family %s not available (%s); "
                 "kernel without CONFIG_TASKSTATS?", TASKSTATS_GENL_NAME,
                 nl_geterror(s->family));
        r = s->family;
        goto fail;
    }
    struct timeval tv = { 0, TS_NL_TIMEOUT_MS * 1000 };
    if (setsockopt(nl_socket_get_fd(s->sock), SOL_SOCKET, SO_RCVTIMEO,
                   &tv, sizeof tv) < 0) {
        snprintf(err, errlen, "taskstats: SO_RCVTIMEO: %s",
                 strerror(errno));
        r = -errno;
        goto fail;
    }
    return 0;

fail:
    nl_socket_free(s->sock);
    s->sock = NULL;
    return r < 0 ? -EPROTONOSUPPORT : r;
}

struct ts_source *
ts_open(enum ts_kind preferred, const char *proc_root, char *err,
        size_t errlen)
{
    struct ts_source *s = XNEW(struct ts_source);
    s->proc_root = xstrdup(proc_root ? proc_root : "/proc");
    if (preferred == TS_AUTO || preferred == TS_TASKSTATS) {
        char why[160];
        if (ts_open_netlink(s, why, sizeof why) == 0) {
            s->kind = TS_TASKSTATS;
            return s;
        }
        if (preferred == TS_TASKSTATS) {
            snprintf(err, errlen, "%s", why);
            ts_close(s);
            return NULL;
        }
        snprintf(s->fallback, sizeof s->fallback, "%s", why);
    }
    s->kind = TS_SCHEDSTAT;
    char path[512];
    snprintf(path, sizeof path, "%s/self/schedstat", s->proc_root);
    if (access(path, R_OK) < 0) {
        snprintf(err, errlen, "schedstat: %s: %s (kernel without "
                 "CONFIG_SCHED_INFO?)%s%s", path, strerror(errno),
                 s->fallback[0] ? "; " : "", s->fallback);
        ts_close(s);
        return NULL;
    }
    return s;
}

void
ts_close(struct ts_source *s)
{
    if (!s) {
        return;
    }
    if (s->sock) {
        nl_socket_free(s->sock);
    }
    free(s->proc_root);
    free(s);
}

const char *
ts_name(const struct ts_source *s)
{
    return s->kind == TS_TASKSTATS ? "taskstats" : "schedstat";
}

enum ts_kind
ts_kind_of(const struct ts_source *s)
{
    return s->kind;
}

const char *
ts_fallback_reason(const struct ts_source *s)
{
    return s->fallback;
}

int
ts_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns,
                   uint64_t *slices)
{
    uint64_t v[3];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        while (*p == ' ') {
            p++;
        }
        if (!isdigit((unsigned char) *p)) {
            return -EINVAL;
        }
        char *end;
        errno = 0;
        v[i] = strtoull(p, &end, 10);
        if (errno) {
            return -EINVAL;
        }
        p = end;
    }
    while (*p == ' ' || *p == '\n') {
        p++;
    }
    if (*p) {
        return -EINVAL;
    }
    *run_ns = v[0];
    *wait_ns = v[1];
    if (slices) {
        *slices = v[2];
    }
    return 0;
}

static int
ts_read_schedstat(struct ts_source *s, pid_t tid, uint64_t *run_ns,
                  uint64_t *delay_ns)
{
    char path[512], buf[128];
    snprintf(path, sizeof path, "%s/%d/task/%d/schedstat", s->proc_root,
             (int) tid, (int) tid);
    int r = sysfs_read_file(path, buf, sizeof buf);
    if (r == -ENOENT) {
        return -ESRCH;
    } else if (r < 0) {
        return r;
    }
    r = ts_parse_schedstat(buf, run_ns, delay_ns, NULL);
    if (r < 0) {
        LOG_WARN_RL("%s: not '<run> <wait> <slices>': '%.*s'", path,
                    (int) strcspn(buf, "\n"), buf);
        return -EPROTO;
    }
    return 0;
}

/* Copies the stats attribute into a zeroed struct: older kernels send a
 * shorter struct, newer ones a longer one; only the prefix we know is
 * used, and it must reach cpu_run_virtual_total.  That field, not
 * cpu_run_real_total, is the scheduler's exact se.sum_exec_runtime (the
 * same counter as schedstat's first field and libvirt's vcpu.N.time);
 * cpu_run_real_total is utime + stime, sampled at the tick. */
static int
ts_parse_stats(const struct nlattr *a, uint64_t *run_ns,
               uint64_t *delay_ns)
{
    struct taskstats ts;
    size_t need = offsetof(struct taskstats, cpu_run_virtual_total)
                  + sizeof ts.cpu_run_virtual_total;
    size_t len = (size_t) nla_len(a);
    if (len < need) {
        return -EPROTO;
    }
    memset(&ts, 0, sizeof ts);
    memcpy(&ts, nla_data(a), len < sizeof ts ? len : sizeof ts);
    if (ts.version == 0) {
        return -EPROTO;
    }
    *run_ns = ts.cpu_run_virtual_total;
    *delay_ns = ts.cpu_delay_total;
    return 0;
}

int
ts_parse_reply(const struct nlmsghdr *nlh, size_t len, int family,
               pid_t tid, uint64_t *run_ns, uint64_t *delay_ns)
{
    if (len > INT32_MAX || !nlmsg_ok(nlh, (int) len)) {
        return -EPROTO;
    }
    if (nlh->nlmsg_type == NLMSG_ERROR) {
        if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
            return -EPROTO;
        }
        const struct nlmsgerr *e = nlmsg_data(nlh);
        return e->error < 0 ? e->error : -EPROTO;
    }
    if (nlh->nlmsg_type != family
        || !genlmsg_valid_hdr((struct nlmsghdr *) nlh, 0)) {
        return -EPROTO;
    }
    const struct genlmsghdr *g = nlmsg_data(nlh);
    if (g->cmd != TASKSTATS_CMD_NEW) {
        return -EPROTO;
    }
    const struct nlattr *a;
    int rem;
    nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
                      rem) {
        if (nla_type(a) != TASKSTATS_TYPE_AGGR_PID) {
            continue;           /* TASKSTATS_TYPE_NULL padding etc. */
        }
        const struct nlattr *in;
        int rem2;
        bool pid_ok = false, got = false;
        nla_for_each_nested(in, a, rem2) {
            if (nla_type(in) == TASKSTATS_TYPE_PID
                && nla_len(in) >= 4) {
                pid_ok = nla_get_u32(in) == (uint32_t) tid;
            } else if (nla_type(in) == TASKSTATS_TYPE_STATS) {
                if (ts_parse_stats(in, run_ns, delay_ns) < 0) {
                    return -EPROTO;
                }
                got = true;
            }
        }
        return pid_ok && got ? 0 : -EPROTO;
    }
    return -EPROTO;
}

static int
ts_read_netlink(struct ts_source *s, pid_t tid, uint64_t *run_ns,
                uint64_t *delay_ns)
{
    struct nl_msg *msg = nlmsg_alloc();
    if (!msg) {
        return -ENOMEM;
    }
    if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, s->family, 0,
                     NLM_F_REQUEST, TASKSTATS_CMD_GET, TASKSTATS_VERSION)
        || nla_put_u32(msg, TASKSTATS_CMD_ATTR_PID, (uint32_t) tid) < 0) {
        nlmsg_free(msg);
        return -ENOMEM;
    }
    int r = nl_send_auto(s->sock, msg);
    uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
    nlmsg_free(msg);
    if (r < 0) {
        return -EIO;
    }
    for (int i = 0; i < TS_MAX_DATAGRAMS; i++) {
        struct sockaddr_nl from;
        unsigned char *buf = NULL;
        int n = nl_recv(s->sock, &from, &buf, NULL);
        if (n <= 0) {
            free(buf);
            /* nl_recv() maps EAGAIN (our SO_RCVTIMEO) to 0. */
            return n == 0 ? -ETIMEDOUT : -EIO;
        }
        struct nlmsghdr *h = (struct nlmsghdr *) buf;
        int rem = n;
        r = -EAGAIN;
        for (; nlmsg_ok(h, rem); h = nlmsg_next(h, &rem)) {
            if (h->nlmsg_seq != seq) {
                continue;       /* Late reply to a timed-out request. */
            }
            r = ts_parse_reply(h, (size_t) rem, s->family, tid, run_ns,
                               delay_ns);
            break;
        }
        free(buf);
        if (r != -EAGAIN) {
            return r;
        }
    }
    return -ETIMEDOUT;
}

int
ts_read(struct ts_source *s, pid_t tid, uint64_t *run_ns,
        uint64_t *delay_ns)
{
    if (tid <= 0) {
        return -EINVAL;
    }
    if (s->kind == TS_TASKSTATS) {
        return ts_read_netlink(s, tid, run_ns, delay_ns);
    }
    return ts_read_schedstat(s, tid, run_ns, delay_ns);
}

int
ts_delayacct_state(const char *proc_root)
{
    char path[512], buf[32];
    snprintf(path, sizeof path, "%s/sys/kernel/task_delayacct",
             proc_root ? proc_root : "/proc");
    int r = sysfs_read_file(path, buf, sizeof buf);
    if (r < 0) {
        return r;
    }
    if (buf[0] == '0' || buf[0] == '1') {
        return buf[0] - '0';
    }
    return -EINVAL;
}

/* ---- vCPU threads -------------------------------------------------- */

int
vcpu_parse_comm(const char *comm, unsigned *vcpu)
{
    if (strncmp(comm, "CPU ", 4) != 0
        || !isdigit((unsigned char) comm[4])) {
        return -EINVAL;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(comm + 4, &end, 10);
    if (errno || v > 65535 || *end != '/' || !end[1]) {
        return -EINVAL;
    }
    /* QEMU names them "CPU %d/%s" with the accelerator name ("KVM",
     * "TCG", "HVF"...); comm is cut at 15 chars, so only check that
     * something follows the slash. */
    *vcpu = (unsigned) v;
    return 0;
}

int
vcpu_tids_at(const char *proc_root, pid_t qemu_pid, pid_t *tids,
             unsigned max, unsigned *n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%d/task", proc_root ? proc_root
             : "/proc", (int) qemu_pid);
    DIR *d = opendir(path);
    if (!d) {
        return errno == ENOENT ? -ENOENT : -errno;
    }
    for (unsigned i = 0; i < max; i++) {
        tids[i] = 0;
    }
    unsigned hi = 0;
    bool any = false;
    int r = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end || tid <= 0) {
            continue;
        }
        char cpath[640], comm[64];
        snprintf(cpath, sizeof cpath, "%s/%ld/comm", path, tid);
        if (sysfs_read_file(cpath, comm, sizeof comm) < 0) {
            continue;           /* Thread exited meanwhile. */
        }
        comm[strcspn(comm, "\n")] = '\0';
        unsigned v;
        if (vcpu_parse_comm(comm, &v) < 0) {
            continue;
        }
        if (v >= max) {
            r = -ENOSPC;
            break;
        }
        tids[v] = (pid_t) tid;
        any = true;
        if (v + 1 > hi) {
            hi = v + 1;
        }
    }
    closedir(d);
    if (r < 0) {
        return r;
    }
    *n = hi;
    return any ? 0 : -ESRCH;
}

int
vcpu_tids(pid_t qemu_pid, pid_t *tids, unsigned max, unsigned *n)
{
    return vcpu_tids_at(NULL, qemu_pid, tids, max, n);
}

int
qemu_pid_of(const char *run_dir, const char *name, pid_t *pid)
{
    if (!name[0] || strchr(name, '/')) {
        return -EINVAL;
    }
    char path[512], buf[32];
    snprintf(path, sizeof path, "%s/%s.pid",
             run_dir ? run_dir : "/run/libvirt/qemu", name);
    int r = sysfs_read_file(path, buf, sizeof buf);
    if (r < 0) {
        return r;
    }
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    while (*end == '\n' || *end == ' ') {
        end++;
    }
    if (errno || end == buf || *end || v <= 0 || v > INT32_MAX) {
        return -EINVAL;
    }
    *pid = (pid_t) v;
    return 0;
}
