/* manager/control/ctlclient.c -- Connects to vpowerd's control socket,
 * sends requests and waits for their replies with a deadline.
 *
 * The socket is non-blocking once connected and every wait is a poll(2)
 * bounded by the call's deadline, so a daemon that stops answering costs
 * a caller at most its timeout, never a hang. */

#include <config.h>

#include "manager/control/ctlclient.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "manager/control/proto.h"
#include "manager/util.h"

static enum ctlc_err ctlc_fail(struct ctlc *c, enum ctlc_err kind,
                               const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum ctlc_err
ctlc_fail(struct ctlc *c, enum ctlc_err kind, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return kind;
}

static uint64_t
ctlc_now_ms(void)
{
    return util_clock_ns(CLOCK_MONOTONIC) / 1000000u;
}

/* Milliseconds left until 'deadline', at least 0. */
static int
ctlc_left_ms(uint64_t deadline)
{
    uint64_t now = ctlc_now_ms();

    return now >= deadline ? 0 : (int) (deadline - now);
}

enum ctlc_err
ctlc_connect(struct ctlc *c, const char *path, unsigned timeout_ms,
             size_t max_reply)
{
    struct sockaddr_un sa;
    struct timeval tv;

    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->path = path;
    c->timeout_ms = timeout_ms;
    c->next_id = 1;
    c->max_reply = max_reply;
    if (strlen(path) >= sizeof sa.sun_path) {
        return ctlc_fail(c, CTLC_E_PATH, "socket path %s is too long",
                         path);
    }
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        return ctlc_fail(c, CTLC_E_SYSTEM, "socket: %s", strerror(errno));
    }
    /* connect(2) on a full backlog waits up to the send timeout. */
    tv.tv_sec = (time_t) (timeout_ms / 1000);
    tv.tv_usec = (suseconds_t) (timeout_ms % 1000) * 1000;
    setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (connect(c->fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
        int e = errno;

        return ctlc_fail(c, e == EACCES || e == EPERM ? CTLC_E_PERM
                                                      : CTLC_E_CONNECT,
                         "cannot connect to vpowerd at %s: %s", path,
                         strerror(e));
    }
    if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0) {
        return ctlc_fail(c, CTLC_E_SYSTEM, "fcntl: %s", strerror(errno));
    }
    return CTLC_OK;
}

/* Waits for 'events' on the socket until 'deadline'.  1 ready, 0 timed
 * out, -errno. */
static int
ctlc_wait(struct ctlc *c, short events, uint64_t deadline)
{
    for (;;) {
        struct pollfd p = { c->fd, events, 0 };
        int ms = ctlc_left_ms(deadline), n;

        if (!ms) {
            return 0;
        }
        n = poll(&p, 1, ms);
        if (n >= 0) {
            return n;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

/* Sends 'line' whole.  0, or the errno that stopped it (ETIMEDOUT when
 * the deadline passed). */
static int
ctlc_send_all(struct ctlc *c, const char *line, uint64_t deadline)
{
    size_t off = 0, n = strlen(line);

    while (off < n) {
        ssize_t w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);
        int r;

        if (w >= 0) {
            off += (size_t) w;
            continue;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN) {
            return errno;
        }
        r = ctlc_wait(c, POLLOUT, deadline);
        if (r <= 0) {
            return r < 0 ? -r : ETIMEDOUT;
        }
    }
    return 0;
}

/* Reads until the buffer holds a '\n'.  Returns the line's length with
 * its '\n', or 0 with 'c->err' set and '*kind' the reason. */
static size_t
ctlc_read_line(struct ctlc *c, uint64_t deadline, int send_err,
               enum ctlc_err *kind)
{
    for (;;) {
        char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
        ssize_t r;
        int w;

        if (nl) {
            return (size_t) (nl - c->buf) + 1;
        }
        if (c->len >= c->max_reply) {
            *kind = ctlc_fail(c, CTLC_E_PROTO, "reply from vpowerd is "
                              "larger than %zu bytes", c->max_reply);
            return 0;
        }
        if (c->cap - c->len < 4096) {
            c->cap = c->cap ? 2 * c->cap : 65536;
            c->buf = xrealloc(c->buf, c->cap);
        }
        r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
        if (r > 0) {
            c->len += (size_t) r;
            continue;
        }
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0 && errno == EAGAIN) {
            w = ctlc_wait(c, POLLIN, deadline);
            if (w > 0) {
                continue;
            }
            errno = w < 0 ? -w : ETIMEDOUT;
        }
        if (send_err) {
            *kind = ctlc_fail(c, CTLC_E_SEND, "cannot send to vpowerd at "
                              "%s: %s", c->path, strerror(send_err));
        } else if (r < 0 && errno == ETIMEDOUT) {
            *kind = ctlc_fail(c, CTLC_E_TIMEOUT, "no reply from vpowerd "
                              "at %s: timed out", c->path);
        } else if (r < 0) {
            *kind = ctlc_fail(c, CTLC_E_CLOSED, "no reply from vpowerd at "
                              "%s: %s", c->path, strerror(errno));
        } else {
            *kind = ctlc_fail(c, CTLC_E_CLOSED, "vpowerd at %s closed the "
                              "connection without a reply", c->path);
        }
        return 0;
    }
}

enum ctlc_err
ctlc_call(struct ctlc *c, struct proto_request *req, struct proto_reply *rep)
{
    uint64_t deadline = ctlc_now_ms() + c->timeout_ms;
    enum ctlc_err kind = CTLC_OK;
    char err[256];
    char *line;
    size_t n;
    int e;

    memset(rep, 0, sizeof *rep);
    req->id = c->next_id++;
    line = proto_format_request(req);
    e = ctlc_send_all(c, line, deadline);
    free(line);
    /* vpowerd may have refused the connection with a reply (busy) before
     * it read ours: read on to show that, not EPIPE. */
    if (e && e != EPIPE && e != ECONNRESET) {
        return ctlc_fail(c, CTLC_E_SEND, "cannot send to vpowerd at %s: %s",
                         c->path, e == ETIMEDOUT ? "timed out"
                                                 : strerror(e));
    }
    n = ctlc_read_line(c, deadline, e, &kind);
    if (!n) {
        return kind;
    }
    if (proto_parse_reply(c->buf, n, rep, err, sizeof err) < 0) {
        return ctlc_fail(c, CTLC_E_PROTO, "bad reply from vpowerd at %s: "
                         "%s", c->path, err);
    }
    memmove(c->buf, c->buf + n, c->len - n);
    c->len -= n;
    if (rep->id >= 0 && rep->id != req->id) {
        proto_reply_free(rep);
        return ctlc_fail(c, CTLC_E_PROTO, "reply from vpowerd has id %lld, "
                         "expected %lld", (long long) rep->id,
                         (long long) req->id);
    }
    return CTLC_OK;
}

void
ctlc_set_timeout(struct ctlc *c, unsigned timeout_ms)
{
    c->timeout_ms = timeout_ms;
}

const char *
ctlc_path(const struct ctlc *c)
{
    return c->path;
}

const char *
ctlc_error(const struct ctlc *c)
{
    return c->err;
}

void
ctlc_close(struct ctlc *c)
{
    if (c->fd >= 0) {
        close(c->fd);
    }
    free(c->buf);
    c->fd = -1;
    c->buf = NULL;
    c->len = c->cap = 0;
}
