/* manager/guestchan.c -- Host end of the guest channel (see guestchan.h).
 *
 * One 'struct gch_conn' per VM with a channel, owned by vm->gch.  The fd
 * callback reads into a fixed buffer, decodes complete messages in
 * place, and for each one: checks it against this VM, charges the VM's
 * token bucket, calls the owner's ops->hint() and queues an ACK.
 * Framing errors resync on the next magic; a message whose header is
 * sane but whose content is not is skipped whole.  Nothing here
 * actuates: the owner (in vpowerd, daemon.c) does, inside ops->hint(). */

#include <config.h>

#include "manager/guestchan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/gchproto.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "gch"

struct gch_conn {
    struct vpd *d;
    const struct gch_ops *ops;      /* The owner's entry points. */
    struct vpd_vm *vm;              /* NULL once detached (zombie). */
    char path[DRV_PATH_LEN];        /* "" = adopted fd, no reconnect. */
    int fd;
    bool registered;                /* fd is in the sched loop. */
    bool want_out;                  /* EPOLLOUT requested. */
    uint64_t retry_timer;
    uint64_t backoff_ns;
    bool hello;
    bool in_garbage;                /* Counted this garbage run already. */
    bool dispatching;               /* Inside gch_on_fd(). */
    char agent_version[GCH_AGENT_VERSION_LEN + 1];
    /* Token bucket as time credit: each message costs 1e9/rate ns. */
    uint32_t rate, burst;
    uint64_t credit_ns, credit_at_ns;
    uint64_t n_msgs, n_acks_dropped, n_connects;
    uint64_t read_ns;               /* ops->now_ns() at the last read. */
    size_t in_len, out_len;
    uint8_t in[GCH_IN_CAP];
    uint8_t out[GCH_OUT_CAP];
};

_Static_assert(GCH_IN_CAP >= 2 * GCH_MAX_MSG, "room for a whole message");

static void gch_on_fd(int fd, uint32_t events, void *aux);
static void gch_connect(void *aux);

static const char *
vm_name(const struct gch_conn *c)
{
    return c->vm ? c->vm->dom.name : "?";
}

static void
set_rate(struct gch_conn *c, uint32_t rate)
{
    c->rate = rate;
    c->burst = rate < GCH_BURST_MAX ? (rate ? rate : 1) : GCH_BURST_MAX;
    if (rate) {
        c->credit_ns = (uint64_t) c->burst * (1000000000u / rate);
    } else {
        c->credit_ns = 0;
    }
    c->credit_at_ns = sched_now_ns(c->d->sched);
}

/* Takes one token; false when the VM is over its rate (or rate is 0). */
static bool
take_token(struct gch_conn *c)
{
    uint64_t now = sched_now_ns(c->d->sched), cost, cap;

    if (c->rate == 0) {
        return false;
    }
    cost = 1000000000u / c->rate;
    cap = cost * c->burst;
    if (now > c->credit_at_ns) {
        uint64_t add = now - c->credit_at_ns;

        c->credit_ns = add >= cap - c->credit_ns ? cap : c->credit_ns + add;
    }
    c->credit_at_ns = now;
    if (c->credit_ns < cost) {
        return false;
    }
    c->credit_ns -= cost;
    return true;
}

static void
update_events(struct gch_conn *c)
{
    bool want = c->out_len > 0;

    if (c->registered && want != c->want_out) {
        sched_mod_fd(c->d->sched, c->fd, EPOLLIN | (want ? EPOLLOUT : 0));
        c->want_out = want;
    }
}

static void
flush_out(struct gch_conn *c)
{
    while (c->out_len > 0 && c->fd >= 0) {
        ssize_t n = send(c->fd, c->out, c->out_len,
                         MSG_DONTWAIT | MSG_NOSIGNAL);

        if (n <= 0) {
            break;              /* EAGAIN: EPOLLOUT will call us; errors
                                 * show up on the read side as well. */
        }
        memmove(c->out, c->out + n, c->out_len - (size_t) n);
        c->out_len -= (size_t) n;
    }
    update_events(c);
}

/* Queues a host->guest message; drops it when the guest does not read
 * (QEMU stops reading the socket while no one in the guest has the port
 * open), so a silent guest cannot grow the daemon. */
static void
send_msg(struct gch_conn *c, const struct gch_msg *m)
{
    int len = gch_encode(m, c->out + c->out_len, sizeof c->out - c->out_len);

    if (len < 0) {
        c->n_acks_dropped++;
        return;
    }
    c->out_len += (size_t) len;
}

static void
send_ack(struct gch_conn *c, uint32_t seq, unsigned type, unsigned status)
{
    struct gch_msg m;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_ACK;
    m.hdr.seq = seq;
    m.u.ack.status = (uint8_t) status;
    m.u.ack.type = (uint8_t) type;
    send_msg(c, &m);
}

static void
reject(struct gch_conn *c)
{
    c->vm->hints_rejected++;
    c->ops->count_error(c->d, VPD_E_GUEST);
}

static void
close_fd(struct gch_conn *c)
{
    if (c->registered) {
        sched_del_fd(c->d->sched, c->fd);
        c->registered = false;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    c->want_out = false;
    c->hello = false;
    c->in_garbage = false;
    c->in_len = c->out_len = 0;
}

static void
schedule_reconnect(struct gch_conn *c)
{
    if (!c->path[0] || c->retry_timer) {
        return;
    }
    c->retry_timer = sched_add_timer(c->d->sched, c->backoff_ns,
                                     gch_connect, c);
    c->backoff_ns = c->backoff_ns * 2 > GCH_BACKOFF_MAX_NS
                    ? GCH_BACKOFF_MAX_NS : c->backoff_ns * 2;
}

static int
adopt_fd(struct gch_conn *c, int fd)
{
    int r;

    c->fd = fd;
    r = sched_add_fd(c->d->sched, fd, EPOLLIN, gch_on_fd, c);
    if (r < 0) {
        close(fd);
        c->fd = -1;
        return r;
    }
    c->registered = true;
    c->n_connects++;
    return 0;
}

static void
gch_connect(void *aux)
{
    struct gch_conn *c = aux;
    struct sockaddr_un sun;
    int fd, r;

    c->retry_timer = 0;
    if (c->fd >= 0) {
        return;
    }
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", c->path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        LOG_ERR_RL("%s: socket: %s", vm_name(c), strerror(errno));
        schedule_reconnect(c);
        return;
    }
    /* A UNIX connect completes at once or fails; EAGAIN means QEMU's
     * backlog is full, which is retried like a refusal. */
    if (connect(fd, (struct sockaddr *) &sun, sizeof sun) < 0) {
        LOG_DEBUG("%s: connect %s: %s; retrying in %" PRIu64 " ms",
                  vm_name(c), c->path, strerror(errno),
                  c->backoff_ns / 1000000u);
        close(fd);
        schedule_reconnect(c);
        return;
    }
    r = adopt_fd(c, fd);
    if (r < 0) {
        LOG_ERR_RL("%s: cannot watch guest channel: %s", vm_name(c),
                   strerror(-r));
        schedule_reconnect(c);
        return;
    }
    LOG_INFO("%s: connected to guest channel %s", vm_name(c), c->path);
}

static struct gch_conn *
conn_new(struct vpd *d, struct vpd_vm *vm, const struct gch_ops *ops)
{
    struct gch_conn *c = XNEW(struct gch_conn);

    c->d = d;
    c->ops = ops;
    c->vm = vm;
    c->fd = -1;
    c->backoff_ns = GCH_BACKOFF_MIN_NS;
    set_rate(c, d->conf.hint_rate);
    vm->gch = c;
    return c;
}

void
gch_attach(struct vpd *d, struct vpd_vm *vm, const struct gch_ops *ops)
{
    struct gch_conn *c;

    if (vm->gch || !vm->dom.agent_path[0]) {
        return;
    }
    c = conn_new(d, vm, ops);
    snprintf(c->path, sizeof c->path, "%s", vm->dom.agent_path);
    /* Connect from the loop, not from the caller's stack. */
    c->retry_timer = sched_add_timer(d->sched, 0, gch_connect, c);
}

void
gch_attach_fd(struct vpd *d, struct vpd_vm *vm, int fd,
              const struct gch_ops *ops)
{
    struct gch_conn *c;
    int r;

    if (vm->gch) {
        close(fd);
        return;
    }
    c = conn_new(d, vm, ops);
    r = adopt_fd(c, fd);
    if (r < 0) {
        LOG_ERR("%s: cannot watch guest channel: %s", vm->dom.name,
                strerror(-r));
    }
}

void
gch_detach(struct vpd *d, struct vpd_vm *vm)
{
    struct gch_conn *c = vm->gch;

    if (!c) {
        return;
    }
    vm->gch = NULL;
    if (c->retry_timer) {
        sched_del_timer(d->sched, c->retry_timer);
        c->retry_timer = 0;
    }
    close_fd(c);
    c->vm = NULL;
    if (!c->dispatching) {
        free(c);
    }
}

void
gch_set_rate(struct vpd *d)
{
    struct vpd_vm *vm;

    for (vm = d->vms; vm; vm = vm->next) {
        if (vm->gch) {
            set_rate(vm->gch, d->conf.hint_rate);
        }
    }
}

int
gch_info(const struct vpd_vm *vm, struct gch_info *out)
{
    const struct gch_conn *c = vm->gch;

    memset(out, 0, sizeof *out);
    if (!c) {
        return -ENOENT;
    }
    out->connected = c->fd >= 0;
    out->hello = c->hello;
    snprintf(out->agent_version, sizeof out->agent_version, "%s",
             c->agent_version);
    out->n_msgs = c->n_msgs;
    out->n_acks_dropped = c->n_acks_dropped;
    out->n_connects = c->n_connects;
    out->in_buffered = c->in_len;
    out->out_buffered = c->out_len;
    return 0;
}

static void
handle_hello(struct gch_conn *c, const struct gch_msg *m)
{
    struct gch_msg r;

    if (m->u.hello.min_version > GCH_VERSION) {
        LOG_WARN_RL("%s: guest agent speaks protocol %u..%u, host %u: "
                    "ignored", vm_name(c), m->u.hello.min_version,
                    m->u.hello.max_version, GCH_VERSION);
        reject(c);
        return;
    }
    if (!c->hello || strcmp(c->agent_version, m->u.hello.agent_version)) {
        LOG_INFO("%s: guest agent '%s' says hello (caps 0x%" PRIx32
                 ", %" PRIu32 " vCPUs seen by the guest, %u by the host)",
                 vm_name(c), m->u.hello.agent_version, m->u.hello.caps,
                 m->u.hello.n_vcpus, c->vm->n_vcpus);
    }
    c->hello = true;
    c->backoff_ns = GCH_BACKOFF_MIN_NS;
    memcpy(c->agent_version, m->u.hello.agent_version,
           sizeof c->agent_version);
    memset(&r, 0, sizeof r);
    r.hdr.type = GCH_T_HELLO_ACK;
    r.hdr.seq = m->hdr.seq;
    r.u.hello_ack.version = GCH_VERSION;
    r.u.hello_ack.caps = GCH_CAP_ALL;
    r.u.hello_ack.hint_rate = c->rate;
    r.u.hello_ack.burst = c->burst;
    r.u.hello_ack.n_vcpus = c->vm->n_vcpus;
    send_msg(c, &r);
}

/* Notes when the bytes now in c->in were read: the start of the host
 * side of every hint among them (messages read together wait for each
 * other's decisions, which is part of what their guest waits for). */
static void
stamp_read(struct gch_conn *c)
{
    c->read_ns = c->ops->now_ns ? c->ops->now_ns(c->d) : 0;
}

/* Validates 'm' against this VM and turns it into a policy input.
 * Returns false when the connection was detached meanwhile. */
static bool
handle_msg(struct gch_conn *c, const struct gch_msg *m)
{
    struct vpd_vm *vm = c->vm;
    enum vpd_hint_kind kind;
    char text[sizeof vm->last_hint];
    uint32_t arg = 0;
    unsigned i;

    c->n_msgs++;
    if (!take_token(c)) {
        LOG_WARN_RL("%s: guest exceeds hint_rate %" PRIu32 "/s: %s "
                    "ignored", vm->dom.name, c->rate,
                    gch_type_name(m->hdr.type));
        reject(c);
        send_ack(c, m->hdr.seq, m->hdr.type, GCH_S_RATE_LIMITED);
        return true;
    }
    switch (m->hdr.type) {
    case GCH_T_HELLO:
        handle_hello(c, m);
        return true;
    case GCH_T_HELLO_ACK: case GCH_T_ACK:
        LOG_WARN_RL("%s: guest sent host-only message %s: ignored",
                    vm->dom.name, gch_type_name(m->hdr.type));
        reject(c);
        return true;
    default:
        break;
    }
    if (!c->hello) {
        LOG_WARN_RL("%s: guest sent %s before hello: ignored",
                    vm->dom.name, gch_type_name(m->hdr.type));
        reject(c);
        send_ack(c, m->hdr.seq, m->hdr.type, GCH_S_NO_HELLO);
        return true;
    }
    switch (m->hdr.type) {
    case GCH_T_LATENCY_BEGIN:
        kind = VPD_HINT_LATENCY_BEGIN;
        arg = m->u.value;
        snprintf(text, sizeof text, "latency-begin %" PRIu32 " us", arg);
        break;
    case GCH_T_LATENCY_END:
        kind = VPD_HINT_LATENCY_END;
        snprintf(text, sizeof text, "latency-end");
        break;
    case GCH_T_BATCH:
        kind = VPD_HINT_BATCH;
        arg = m->u.value;
        snprintf(text, sizeof text, "batch %" PRIu32 " ms", arg);
        break;
    case GCH_T_BOOST:
        kind = VPD_HINT_BOOST;
        arg = m->u.value;
        snprintf(text, sizeof text, "boost %" PRIu32 " ms", arg);
        break;
    case GCH_T_IDLE:
        kind = VPD_HINT_IDLE;
        arg = m->u.value;
        snprintf(text, sizeof text, "idle %" PRIu32 " ms", arg);
        break;
    case GCH_T_UTIL: {
        unsigned sum = 0, max = 0;

        for (i = 0; i < m->u.util.n; i++) {
            /* The guest's own numbering, checked against the host's
             * count of this VM's vCPUs: no other index exists for it. */
            if (m->u.util.v[i].vcpu >= vm->n_vcpus) {
                LOG_WARN_RL("%s: guest names vCPU %u but has %u: util "
                            "ignored", vm->dom.name, m->u.util.v[i].vcpu,
                            vm->n_vcpus);
                reject(c);
                send_ack(c, m->hdr.seq, m->hdr.type, GCH_S_INVALID);
                return true;
            }
            sum += m->u.util.v[i].busy_permille;
            max = m->u.util.v[i].busy_permille > max
                  ? m->u.util.v[i].busy_permille : max;
        }
        kind = VPD_HINT_UTIL;
        arg = sum / m->u.util.n;
        if (m->u.util.pressure_some_ppm == GCH_PRESSURE_NONE) {
            snprintf(text, sizeof text, "util %u vCPUs mean %u.%u%% max "
                     "%u.%u%%", m->u.util.n, arg / 10, arg % 10, max / 10,
                     max % 10);
        } else {
            snprintf(text, sizeof text, "util %u vCPUs mean %u.%u%% max "
                     "%u.%u%% cpu pressure %" PRIu32 " ppm", m->u.util.n,
                     arg / 10, arg % 10, max / 10, max % 10,
                     m->u.util.pressure_some_ppm);
        }
        break;
    }
    default:
        return true;            /* gch_decode admitted no other type. */
    }
    LOG_DEBUG("%s: hint %s (seq %" PRIu32 ")", vm->dom.name, text,
              m->hdr.seq);
    c->ops->hint(c->d, vm, kind, arg, text, c->read_ns);
    if (!c->vm) {
        return false;           /* Detached while deciding. */
    }
    send_ack(c, m->hdr.seq, m->hdr.type, GCH_S_APPLIED);
    return true;
}

/* Consumes complete messages from the input buffer.  Returns false when
 * the connection was detached meanwhile. */
static bool
process_input(struct gch_conn *c)
{
    size_t off = 0;
    bool alive = true;

    while (alive && off < c->in_len) {
        const uint8_t *p = c->in + off;
        size_t avail = c->in_len - off;
        struct gch_hdr h;
        struct gch_msg m;
        int r;

        r = gch_decode_header(p, avail, &h);
        if (r == GCH_E_SHORT) {
            break;
        }
        if (r == GCH_E_MAGIC) {
            if (!c->in_garbage) {
                LOG_WARN_RL("%s: garbage on the guest channel (no "
                            "message start): skipped", vm_name(c));
                reject(c);
                c->in_garbage = true;
            }
            off += gch_resync(p, avail);
            continue;
        }
        c->in_garbage = false;
        if (r != GCH_OK && (r == GCH_E_LENGTH || h.length > GCH_MAX_PAYLOAD)) {
            /* The length cannot be trusted: resync on the next magic. */
            LOG_WARN_RL("%s: guest message type %u length %u: %s: skipped",
                        vm_name(c), h.type, h.length, gch_strerror(r));
            reject(c);
            off += gch_resync(p, avail);
            continue;
        }
        if (avail < GCH_HDR_LEN + (size_t) h.length) {
            break;              /* Wait for the rest (it fits: asserted). */
        }
        if (r != GCH_OK) {
            LOG_WARN_RL("%s: guest message type %u: %s: skipped",
                        vm_name(c), h.type, gch_strerror(r));
            reject(c);
            off += GCH_HDR_LEN + h.length;
            continue;
        }
        r = gch_decode_payload(&h, p + GCH_HDR_LEN, h.length, &m);
        off += GCH_HDR_LEN + h.length;
        if (r != GCH_OK) {
            LOG_WARN_RL("%s: guest %s message: %s: ignored", vm_name(c),
                        gch_type_name(h.type), gch_strerror(r));
            reject(c);
            if (h.type != GCH_T_ACK && h.type != GCH_T_HELLO_ACK) {
                send_ack(c, h.seq, h.type, GCH_S_INVALID);
            }
            continue;
        }
        alive = handle_msg(c, &m);
    }
    if (alive) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
    return alive;
}

int
gch_input(struct vpd *d, struct vpd_vm *vm, const void *buf, size_t len)
{
    struct gch_conn *c = vm->gch;
    const uint8_t *p = buf;
    bool alive = true;

    (void) d;
    if (!c) {
        return -ENOENT;
    }
    c->dispatching = true;
    stamp_read(c);
    while (alive && len > 0) {
        size_t n = sizeof c->in - c->in_len;

        n = n < len ? n : len;
        memcpy(c->in + c->in_len, p, n);
        c->in_len += n;
        p += n;
        len -= n;
        alive = process_input(c);
    }
    c->dispatching = false;
    if (!c->vm) {
        free(c);
        return -ENOENT;
    }
    return 0;
}

static void
lost(struct gch_conn *c, const char *why)
{
    LOG_INFO("%s: guest channel closed (%s); reconnecting", vm_name(c), why);
    close_fd(c);
    schedule_reconnect(c);
}

static void
gch_on_fd(int fd, uint32_t events, void *aux)
{
    struct gch_conn *c = aux;
    size_t budget = GCH_READ_BUDGET;

    (void) fd;
    c->dispatching = true;
    if (events & EPOLLOUT) {
        flush_out(c);
    }
    while (c->vm && c->fd >= 0 && budget > 0
           && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
        ssize_t n = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len,
                         MSG_DONTWAIT);

        if (n == 0) {
            lost(c, "end of file");
            break;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            lost(c, strerror(errno));
            break;
        }
        stamp_read(c);
        budget = (size_t) n >= budget ? 0 : budget - (size_t) n;
        c->in_len += (size_t) n;
        if (!process_input(c)) {
            break;
        }
    }
    /* Budget spent with data left: level-triggered epoll calls us again
     * after the other fds had their turn. */
    c->dispatching = false;
    if (!c->vm) {
        free(c);
        return;
    }
    if (c->fd >= 0) {
        flush_out(c);
    }
}
