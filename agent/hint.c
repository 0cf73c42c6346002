/* agent/hint.c -- libvpowerhint (see vpowerhint.h).
 *
 * Speaks the guest channel format of gchproto.h in both modes: to the
 * agent over a SOCK_SEQPACKET socket (the agent renumbers and forwards)
 * and straight to the virtio-serial port (a byte stream, so replies are
 * parsed with the same resyncing reader the host uses).  Each call
 * writes one hint and, unless the timeout is 0, reads until the ACK
 * carrying that hint's sequence number arrives. */

#include <config.h>

#include "agent/vpowerhint.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/gchproto.h"
#include "agent/port.h"

struct vph {
    int fd;
    int is_port;
    int timeout_ms;
    uint32_t seq;
    uint64_t last_rtt_ns;
    size_t in_len;
    uint8_t in[2 * GCH_MAX_MSG];
};

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static struct vph *
vph_new(int fd, int is_port)
{
    struct vph *h = calloc(1, sizeof *h);

    if (h) {
        h->fd = fd;
        h->is_port = is_port;
        h->timeout_ms = 2000;
        h->seq = (uint32_t) now_ns();   /* Distinct across reopen. */
    }
    return h;
}

struct vph *
vph_open(const char *path, int *err)
{
    struct sockaddr_un sun;
    struct vph *h;
    int fd;

    if (!path) {
        path = GCH_AGENT_SOCK;
    }
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof sun.sun_path) {
        *err = -ENAMETOOLONG;
        return NULL;
    }
    strcpy(sun.sun_path, path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = -errno;
        return NULL;
    }
    if (connect(fd, (struct sockaddr *) &sun, sizeof sun) < 0) {
        *err = -errno;
        close(fd);
        return NULL;
    }
    h = vph_new(fd, 0);
    if (!h) {
        *err = -ENOMEM;
        close(fd);
    }
    return h;
}

/* Writes all of 'buf', waiting for POLLOUT at most until 'deadline'. */
static int
write_all(struct vph *h, const uint8_t *buf, size_t len, uint64_t deadline)
{
    while (len > 0) {
        ssize_t n = write(h->fd, buf, len);

        if (n > 0) {
            buf += n;
            len -= (size_t) n;
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            struct pollfd p = { .fd = h->fd, .events = POLLOUT };
            uint64_t now = now_ns();

            if (now >= deadline) {
                return -ETIMEDOUT;
            }
            poll(&p, 1, (int) ((deadline - now) / 1000000u) + 1);
            continue;
        }
        return n < 0 ? -errno : -EIO;
    }
    return 0;
}

/* Reads until a message of 'type' (and, for ACKs, with 'seq') arrives
 * or 'deadline' passes. */
static int
read_until(struct vph *h, unsigned type, uint32_t seq, uint64_t deadline,
           struct gch_msg *out)
{
    for (;;) {
        struct pollfd p = { .fd = h->fd, .events = POLLIN };
        uint64_t now;
        ssize_t n;
        int r;

        while (h->in_len > 0) {
            r = gch_decode(h->in, h->in_len, out);
            if (r == GCH_E_SHORT) {
                break;
            }
            if (r < 0) {
                size_t skip = gch_resync(h->in, h->in_len);

                memmove(h->in, h->in + skip, h->in_len - skip);
                h->in_len -= skip;
                continue;
            }
            memmove(h->in, h->in + r, h->in_len - (size_t) r);
            h->in_len -= (size_t) r;
            if (out->hdr.type == type
                && (type != GCH_T_ACK || out->hdr.seq == seq)) {
                return 0;
            }
        }
        now = now_ns();
        if (now >= deadline) {
            return -ETIMEDOUT;
        }
        r = poll(&p, 1, (int) ((deadline - now) / 1000000u) + 1);
        if (r < 0 && errno != EINTR) {
            return -errno;
        }
        if (r <= 0) {
            continue;
        }
        if (p.revents & POLLIN) {
            n = read(h->fd, h->in + h->in_len, sizeof h->in - h->in_len);
            if (n == 0) {
                return -ECONNRESET;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return -errno;
            }
            if (n > 0) {
                h->in_len += (size_t) n;
            }
        } else if (p.revents & (POLLHUP | POLLERR)) {
            /* A port without a host connection reports POLLHUP. */
            return h->is_port ? -ENOTCONN : -ECONNRESET;
        }
    }
}

struct vph *
vph_open_port(const char *path, int *err)
{
    char found[64];
    struct gch_msg m, reply;
    uint8_t buf[GCH_MAX_MSG];
    struct vph *h;
    long n;
    int fd, len, r;

    if (!path) {
        r = port_find(NULL, found, sizeof found);
        if (r < 0) {
            *err = r;
            return NULL;
        }
        path = found;
    }
    fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *err = -errno;
        return NULL;
    }
    h = vph_new(fd, 1);
    if (!h) {
        close(fd);
        *err = -ENOMEM;
        return NULL;
    }
    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_HELLO;
    m.hdr.seq = ++h->seq;
    m.u.hello.min_version = GCH_VERSION;
    m.u.hello.max_version = GCH_VERSION;
    m.u.hello.caps = GCH_CAP_LATENCY | GCH_CAP_BATCH | GCH_CAP_BOOST
                     | GCH_CAP_IDLE;
    n = sysconf(_SC_NPROCESSORS_ONLN);
    m.u.hello.n_vcpus = n > 0 ? (uint32_t) n : 1;
    strcpy(m.u.hello.agent_version, "hint-" PACKAGE_VERSION);
    len = gch_encode(&m, buf, sizeof buf);
    r = len < 0 ? -EINVAL
        : write_all(h, buf, (size_t) len, now_ns() + 1000000000u);
    if (r == 0) {
        r = read_until(h, GCH_T_HELLO_ACK, 0,
                       now_ns() + (uint64_t) h->timeout_ms * 1000000u,
                       &reply);
        if (r == -ETIMEDOUT) {
            r = -ENOTCONN;
        }
    } else if (r == -ETIMEDOUT) {
        r = -ENOTCONN;          /* Nobody on the host end reads. */
    }
    if (r < 0) {
        vph_close(h);
        *err = r;
        return NULL;
    }
    return h;
}

void
vph_close(struct vph *h)
{
    if (h) {
        close(h->fd);
        free(h);
    }
}

void
vph_set_timeout(struct vph *h, int timeout_ms)
{
    h->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms;
}

uint64_t
vph_last_rtt_ns(const struct vph *h)
{
    return h->last_rtt_ns;
}

static int
send_hint(struct vph *h, unsigned type, uint32_t value)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m, ack;
    uint64_t t0;
    int len, r;

    memset(&m, 0, sizeof m);
    m.hdr.type = (uint8_t) type;
    m.hdr.seq = ++h->seq;
    m.u.value = value;
    len = gch_encode(&m, buf, sizeof buf);
    if (len < 0) {
        return -EINVAL;
    }
    t0 = now_ns();
    r = write_all(h, buf, (size_t) len, t0 + 1000000000u);
    if (r < 0 || h->timeout_ms == 0) {
        return r == -ETIMEDOUT ? -ENOTCONN : r;
    }
    r = read_until(h, GCH_T_ACK, m.hdr.seq,
                   t0 + (uint64_t) h->timeout_ms * 1000000u, &ack);
    if (r < 0) {
        return r;
    }
    h->last_rtt_ns = now_ns() - t0;
    switch (ack.u.ack.status) {
    case GCH_S_APPLIED: return 0;
    case GCH_S_RATE_LIMITED: return -EAGAIN;
    case GCH_S_INVALID: return -EINVAL;
    case GCH_S_NO_HELLO: return -ENOTCONN;
    default: return -EOPNOTSUPP;
    }
}

int
vph_latency_begin(struct vph *h, uint32_t latency_us)
{
    return send_hint(h, GCH_T_LATENCY_BEGIN, latency_us);
}

int
vph_latency_end(struct vph *h)
{
    return send_hint(h, GCH_T_LATENCY_END, 0);
}

int
vph_batch(struct vph *h, uint32_t ms)
{
    return send_hint(h, GCH_T_BATCH, ms);
}

int
vph_boost(struct vph *h, uint32_t ms)
{
    return send_hint(h, GCH_T_BOOST, ms);
}

int
vph_idle(struct vph *h, uint32_t ms)
{
    return send_hint(h, GCH_T_IDLE, ms);
}

const char *
vph_strerror(int err)
{
    switch (err) {
    case 0: return "applied";
    case -ENOENT: return "no vpower agent or channel in this guest";
    case -ECONNREFUSED: return "the vpower agent is not running";
    case -ETIMEDOUT: return "the host did not acknowledge the hint in time";
    case -EAGAIN: return "the host rate-limited the hint";
    case -EINVAL: return "argument out of range";
    case -ENOTCONN:
        return "the host has not answered the handshake (is vpowerd "
               "running and managing this VM?)";
    case -EOPNOTSUPP: return "the host does not act on this hint";
    case -EBUSY: return "the port is in use (by the agent?)";
    default: return strerror(-err);
    }
}
