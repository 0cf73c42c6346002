/* manager/control/exporter.c -- vpower-exporter: Prometheus metrics over HTTP.
 *
 * A separate, unprivileged program: the root daemon opens no TCP port.
 * Each scrape of GET /metrics connects to vpowerd's control socket (a
 * read-only client, like chronyc's monitoring commands), sends "status"
 * and "list" through ctlclient.c, and renders the replies with
 * metrics.c.  The whole query is bounded by --timeout (default 2 s), so
 * a slow or stuck daemon costs a scrape at most that long; if the daemon
 * is down the scrape still answers with vpower_up 0 and the exporter's
 * own metrics.
 *
 * HTTP is libmicrohttpd with its internal polling thread and a small
 * thread pool (epoll): idle or slow connections cost a socket and a few
 * KiB, not a thread.  Per-connection memory bounds request headers
 * (larger ones are refused by MHD) and MHD closes connections idle for
 * --connection-timeout.  The connection guard below adds what MHD lacks:
 * an overall deadline for a request's header (--header-timeout, which
 * also covers a body: MHD's idle timeout restarts with every byte, so a
 * client trickling a header line every few seconds would otherwise hold
 * its connection forever), and connection limits that make room
 * instead of refusing: a new connection over --per-ip-limit or
 * --max-connections closes the oldest connection still owing its request
 * (from that address, or any), so a scraper gets in even when slow
 * clients on its own address hold every slot.  Replies from vpowerd are
 * cached for 250 ms and fetched under one mutex, so many simultaneous
 * scrapes turn into at most a few queries per second: the daemon's
 * single event loop and its decision period are unaffected by scrape
 * storms.  Threads are fine here; the no-threads rule is for vpowerd. */

#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <microhttpd.h>

#include "manager/log.h"
#include "manager/control/ctlclient.h"
#include "manager/control/metrics.h"
#include "manager/control/proto.h"
#include "manager/util.h"
#include "policy/num.h"

#define LOG_MODULE "exporter"

#define DEFAULT_SOCKET "/run/vpower/vpowerd.sock"
#define DEFAULT_LISTEN "127.0.0.1:9877"
#define MAX_REPLY (32u << 20)          /* Bytes of replies we accept. */
#define CACHE_NS (250ull * 1000 * 1000)

struct exp_opts {
    const char *socket_path;
    const char *listen;
    unsigned timeout_ms;
    unsigned threads;
    unsigned max_conns;
    unsigned per_ip;
    unsigned conn_timeout_s;
    unsigned header_timeout_ms;
    size_t conn_memory;
};

struct exp_guard;

/* Shared by the MHD worker threads; everything below 'lock'. */
struct exp_state {
    const struct exp_opts *o;
    struct exp_guard *guard;
    pthread_mutex_t lock;
    struct json_object *status, *list;   /* Last replies, owned. */
    bool up;
    uint64_t fetched_ns;                 /* 0 = never. */
    double query_seconds;
    uint64_t scrapes, scrape_errors;
};

static uint64_t
now_ns(void)
{
    return util_clock_ns(CLOCK_MONOTONIC);
}

/* ---- vpowerd client ------------------------------------------------ */

/* Asks 'cc' for one result ('cmd') with the time left until
 * 'deadline_ns'; returns it (caller owns) or NULL with 'err' filled. */
static struct json_object *
fetch_result(struct ctlc *cc, enum proto_cmd cmd, uint64_t deadline_ns,
             unsigned timeout_ms, char *err, size_t errlen)
{
    struct proto_request req;
    struct proto_reply rep;
    struct json_object *res = NULL;
    uint64_t now = now_ns();
    enum ctlc_err e = CTLC_E_TIMEOUT;

    memset(&req, 0, sizeof req);
    req.cmd = cmd;
    if (now < deadline_ns) {
        ctlc_set_timeout(cc, (unsigned) ((deadline_ns - now) / 1000000 + 1));
        e = ctlc_call(cc, &req, &rep);
    }
    if (e == CTLC_E_TIMEOUT) {
        snprintf(err, errlen, "vpowerd at %s did not answer within %u ms",
                 ctlc_path(cc), timeout_ms);
        return NULL;
    }
    if (e != CTLC_OK) {
        snprintf(err, errlen, "%s", ctlc_error(cc));
        return NULL;
    }
    if (!rep.ok) {
        snprintf(err, errlen, "vpowerd refused '%s': %.200s",
                 proto_cmd_name(cmd),
                 rep.message[0] ? rep.message : rep.code_name);
    } else if (!rep.result) {
        snprintf(err, errlen, "vpowerd's reply has no result");
    } else {
        res = json_object_get(rep.result);
    }
    proto_reply_free(&rep);
    return res;
}

/* Asks the socket at 'path' for status and list, both within
 * 'timeout_ms' from now.  Returns 0 with both set (caller owns), or -1
 * with 'err' filled and nothing set. */
static int
query_daemon(const char *path, unsigned timeout_ms,
             struct json_object **status, struct json_object **list,
             char *err, size_t errlen)
{
    uint64_t deadline = now_ns() + (uint64_t) timeout_ms * 1000000;
    struct ctlc cc;

    *status = *list = NULL;
    if (ctlc_connect(&cc, path, timeout_ms, MAX_REPLY) != CTLC_OK) {
        snprintf(err, errlen, "%s", ctlc_error(&cc));
    } else if ((*status = fetch_result(&cc, PROTO_CMD_STATUS, deadline,
                                       timeout_ms, err, errlen))) {
        *list = fetch_result(&cc, PROTO_CMD_LIST, deadline, timeout_ms, err,
                             errlen);
    }
    ctlc_close(&cc);
    if (!*list) {
        json_object_put(*status);
        *status = NULL;
        return -1;
    }
    return 0;
}

/* ---- Connection guard ------------------------------------------------ */

/* One accepted HTTP connection, from MHD's NOTIFY_STARTED to its
 * NOTIFY_CLOSED (it is MHD's socket context).  A connection "waits" while
 * it owes a request, header and any body: from accept, and again after
 * each reply on a kept-alive connection.  Waiting ones are listed oldest
 * first, which is also earliest deadline first since every wait lasts
 * the same time. */
struct exp_conn {
    struct exp_conn *prev, *next;        /* exp_guard.all. */
    struct exp_conn *wprev, *wnext;      /* exp_guard.wait_*; if waiting. */
    struct sockaddr_storage addr;        /* Client's. */
    int fd;                              /* MHD's socket; MHD closes it. */
    uint64_t deadline_ns;                /* Request due by; if waiting. */
    bool waiting;
    bool doomed;                         /* Shut down; MHD closes it next. */
};

/* Shared by the MHD worker threads and main; everything below 'lock'.
 * A connection's fd stays valid while it is listed: MHD calls
 * NOTIFY_CLOSED, which unlists it under the lock, before closing it. */
struct exp_guard {
    pthread_mutex_t lock;
    struct exp_conn *all;
    struct exp_conn *wait_head, *wait_tail;
    unsigned live;                       /* Listed and not doomed. */
    unsigned max_conns, per_ip;
    uint64_t header_ns;
    int timer_fd;                        /* Fires at wait_head's deadline. */
};

/* The client address of 'c' as text, for messages. */
static const char *
conn_addr_str(const struct exp_conn *c, char *buf, size_t len)
{
    const void *a = c->addr.ss_family == AF_INET6
        ? (const void *) &((const struct sockaddr_in6 *) &c->addr)->sin6_addr
        : (const void *) &((const struct sockaddr_in *) &c->addr)->sin_addr;

    if (!inet_ntop(c->addr.ss_family, a, buf, (socklen_t) len)) {
        snprintf(buf, len, "?");
    }
    return buf;
}

static bool
same_host(const struct exp_conn *a, const struct exp_conn *b)
{
    if (a->addr.ss_family != b->addr.ss_family) {
        return false;
    }
    if (a->addr.ss_family == AF_INET6) {
        return !memcmp(&((const struct sockaddr_in6 *) &a->addr)->sin6_addr,
                       &((const struct sockaddr_in6 *) &b->addr)->sin6_addr,
                       sizeof(struct in6_addr));
    }
    return ((const struct sockaddr_in *) &a->addr)->sin_addr.s_addr
           == ((const struct sockaddr_in *) &b->addr)->sin_addr.s_addr;
}

/* Arms the timer for the earliest deadline, or disarms it. */
static void
guard_arm(struct exp_guard *g)
{
    struct itimerspec it;

    memset(&it, 0, sizeof it);
    if (g->wait_head) {
        it.it_value.tv_sec = (time_t) (g->wait_head->deadline_ns
                                       / 1000000000ull);
        it.it_value.tv_nsec = (long) (g->wait_head->deadline_ns
                                      % 1000000000ull);
    }
    if (timerfd_settime(g->timer_fd, TFD_TIMER_ABSTIME, &it, NULL) < 0) {
        LOG_WARN_RL("timerfd_settime: %s", strerror(errno));
    }
}

static void
wait_remove(struct exp_guard *g, struct exp_conn *c)
{
    if (!c->waiting) {
        return;
    }
    *(c->wprev ? &c->wprev->wnext : &g->wait_head) = c->wnext;
    *(c->wnext ? &c->wnext->wprev : &g->wait_tail) = c->wprev;
    c->wprev = c->wnext = NULL;
    c->waiting = false;
}

/* Starts the request deadline of 'c'. */
static void
wait_push(struct exp_guard *g, struct exp_conn *c)
{
    wait_remove(g, c);
    c->deadline_ns = now_ns() + g->header_ns;
    c->wprev = g->wait_tail;
    c->wnext = NULL;
    *(g->wait_tail ? &g->wait_tail->wnext : &g->wait_head) = c;
    g->wait_tail = c;
    c->waiting = true;
    if (g->wait_head == c) {
        guard_arm(g);
    }
}

/* Closes 'c' under MHD's feet: both directions are shut down, so its
 * worker sees end of file at once and closes it; the fd itself stays
 * MHD's. */
static void
doom(struct exp_guard *g, struct exp_conn *c)
{
    shutdown(c->fd, SHUT_RDWR);
    wait_remove(g, c);
    c->doomed = true;
    g->live--;
}

/* Dooms the oldest connection owing its request, from the host of 'like'
 * or, if 'like' is NULL, from anyone.  The connection just accepted is
 * waiting too, so there is one: the new one itself if all others are
 * busy with requests. */
static void
evict(struct exp_guard *g, const struct exp_conn *like, unsigned limit,
      const char *what)
{
    char a[INET6_ADDRSTRLEN];
    struct exp_conn *c;

    for (c = g->wait_head; c && like && !same_host(c, like); c = c->wnext) {
        continue;
    }
    if (c) {
        LOG_WARN_RL("http: %s (%u) reached: closing the oldest connection "
                    "still owing its request, from %s", what, limit,
                    conn_addr_str(c, a, sizeof a));
        doom(g, c);
    }
}

static void
guard_started(struct exp_guard *g, struct MHD_Connection *mc,
              void **socket_context)
{
    const union MHD_ConnectionInfo *ia, *ifd;
    struct exp_conn *c = xcalloc(1, sizeof *c), *o;
    unsigned same = 0;

    ia = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    ifd = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    c->fd = ifd ? ifd->connect_fd : -1;
    if (ia && ia->client_addr) {
        memcpy(&c->addr, ia->client_addr,
               ia->client_addr->sa_family == AF_INET6
               ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
    }
    *socket_context = c;
    pthread_mutex_lock(&g->lock);
    c->next = g->all;
    if (g->all) {
        g->all->prev = c;
    }
    g->all = c;
    g->live++;
    wait_push(g, c);
    for (o = g->all; o; o = o->next) {
        same += !o->doomed && same_host(o, c);
    }
    if (same > g->per_ip) {
        evict(g, c, g->per_ip, "per-address connection limit");
    }
    if (g->live > g->max_conns) {
        evict(g, NULL, g->max_conns, "connection limit");
    }
    pthread_mutex_unlock(&g->lock);
}

static void
guard_closed(struct exp_guard *g, struct exp_conn *c)
{
    pthread_mutex_lock(&g->lock);
    wait_remove(g, c);
    if (!c->doomed) {
        g->live--;
    }
    *(c->prev ? &c->prev->next : &g->all) = c->next;
    if (c->next) {
        c->next->prev = c->prev;
    }
    pthread_mutex_unlock(&g->lock);
    free(c);
}

/* MHD_OPTION_NOTIFY_CONNECTION. */
static void
on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
              enum MHD_ConnectionNotificationCode code)
{
    struct exp_guard *g = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        guard_started(g, mc, socket_context);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        guard_closed(g, *socket_context);
        *socket_context = NULL;
    }
}

static struct exp_conn *
conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *i;

    i = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return i ? i->socket_context : NULL;
}

/* A whole request (header and any body) is in: its connection stops
 * waiting. */
static void
guard_request_in(struct exp_guard *g, struct MHD_Connection *mc)
{
    struct exp_conn *c = conn_of(mc);

    if (c) {
        pthread_mutex_lock(&g->lock);
        wait_remove(g, c);
        pthread_mutex_unlock(&g->lock);
    }
}

/* MHD_OPTION_NOTIFY_COMPLETED: a kept-alive connection owes the next
 * request from now on. */
static void
on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
             enum MHD_RequestTerminationCode toe)
{
    struct exp_guard *g = cls;
    struct exp_conn *c = conn_of(mc);

    (void) con_cls;
    (void) toe;
    if (c) {
        pthread_mutex_lock(&g->lock);
        if (!c->doomed) {
            wait_push(g, c);
        }
        pthread_mutex_unlock(&g->lock);
    }
}

/* The timer fired: closes connections past their request deadline. */
static void
guard_expire(struct exp_guard *g)
{
    uint64_t now = now_ns(), ticks;
    char a[INET6_ADDRSTRLEN];
    struct exp_conn *c;

    if (read(g->timer_fd, &ticks, sizeof ticks) < 0 && errno != EAGAIN) {
        LOG_WARN_RL("timerfd: %s", strerror(errno));
    }
    pthread_mutex_lock(&g->lock);
    while ((c = g->wait_head) && c->deadline_ns <= now) {
        LOG_WARN_RL("http: closing connection from %s: no complete request "
                    "within %.3g s", conn_addr_str(c, a, sizeof a),
                    (double) g->header_ns * 1e-9);
        doom(g, c);
    }
    guard_arm(g);
    pthread_mutex_unlock(&g->lock);
}

/* ---- HTTP ------------------------------------------------------------- */

static const char index_html[] =
    "<!DOCTYPE html>\n<html><head><title>vpower exporter</title></head>"
    "<body><h1>vpower exporter</h1>"
    "<p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

static enum MHD_Result
reply_static(struct MHD_Connection *c, unsigned code, const char *type,
             const char *body)
{
    struct MHD_Response *r;
    enum MHD_Result ret;

    r = MHD_create_response_from_buffer(strlen(body), (void *) body,
                                        MHD_RESPMEM_PERSISTENT);
    if (!r) {
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (code == MHD_HTTP_METHOD_NOT_ALLOWED) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    }
    ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
serve_metrics(struct exp_state *st, struct MHD_Connection *c)
{
    struct metrics_self self;
    struct MHD_Response *r;
    enum MHD_Result ret;
    uint64_t t0 = now_ns();
    char err[256] = "";
    size_t len;
    char *text;

    pthread_mutex_lock(&st->lock);
    if (!st->fetched_ns || t0 - st->fetched_ns >= CACHE_NS) {
        struct json_object *s = NULL, *l = NULL;
        int rc = query_daemon(st->o->socket_path, st->o->timeout_ms, &s, &l,
                              err, sizeof err);

        json_object_put(st->status);
        json_object_put(st->list);
        st->status = s;
        st->list = l;
        st->up = rc == 0;
        st->fetched_ns = now_ns();
        st->query_seconds = (double) (st->fetched_ns - t0) * 1e-9;
        if (rc < 0) {
            LOG_WARN_RL("scrape: %s", err);
        }
    }
    st->scrapes++;
    if (!st->up) {
        st->scrape_errors++;
    }
    self.version = PACKAGE_VERSION;
    self.up = st->up;
    self.scrapes_total = st->scrapes;
    self.scrape_errors_total = st->scrape_errors;
    self.scrape_duration_seconds = (double) (now_ns() - t0) * 1e-9;
    text = metrics_render(st->status, st->list, &self, &len);
    pthread_mutex_unlock(&st->lock);

    r = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            METRICS_CONTENT_TYPE);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
           const char *method, const char *version, const char *upload,
           size_t *upload_size, void **con_cls)
{
    static int marker;
    struct exp_state *st = cls;
    bool get = !strcmp(method, MHD_HTTP_METHOD_GET)
               || !strcmp(method, MHD_HTTP_METHOD_HEAD);

    if (!get) {
        /* Answer at once; MHD closes the connection instead of reading
         * whatever body follows. */
        guard_request_in(st->guard, c);
        return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
                            "405 Method Not Allowed: use GET or HEAD\n");
    }
    if (!*con_cls) {
        *con_cls = &marker;             /* Headers done; body may follow. */
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;               /* A GET body means nothing. */
        return MHD_YES;
    }
    guard_request_in(st->guard, c);
    if (!strcmp(url, "/metrics")) {
        return serve_metrics(st, c);
    }
    if (!strcmp(url, "/")) {
        return reply_static(c, MHD_HTTP_OK, "text/html; charset=utf-8",
                            index_html);
    }
    return reply_static(c, MHD_HTTP_NOT_FOUND, "text/plain",
                        "404 Not Found: try /metrics\n");
}

/* MHD's messages, rate-limited (clients can trigger them). */
static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    char buf[512];
    size_t n;

    vsnprintf(buf, sizeof buf, fmt, ap);
    n = strlen(buf);
    while (n && buf[n - 1] == '\n') {
        buf[--n] = '\0';
    }
    pthread_mutex_lock(&lock);
    LOG_WARN_RL("http: %s", buf);
    pthread_mutex_unlock(&lock);
}

/* ---- Startup ---------------------------------------------------------- */

/* Parses "ADDR:PORT" or "[ADDR6]:PORT". */
static int
parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl)
{
    char host[INET6_ADDRSTRLEN + 1];
    const char *port, *end;
    char *e;
    unsigned long p;
    size_t hl;

    memset(ss, 0, sizeof *ss);
    if (s[0] == '[') {
        end = strchr(s, ']');
        if (!end || end[1] != ':') {
            return -EINVAL;
        }
        hl = (size_t) (end - s - 1);
        port = end + 2;
        s++;
    } else {
        end = strrchr(s, ':');
        if (!end) {
            return -EINVAL;
        }
        hl = (size_t) (end - s);
        port = end + 1;
    }
    if (hl >= sizeof host || !*port) {
        return -EINVAL;
    }
    memcpy(host, s, hl);
    host[hl] = '\0';
    errno = 0;
    p = strtoul(port, &e, 10);
    if (errno || *e || p > 65535) {
        return -EINVAL;
    }
    if (strchr(host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *) ss;

        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t) p);
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) {
            return -EINVAL;
        }
        *sl = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *) ss;

        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t) p);
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
            return -EINVAL;
        }
        *sl = sizeof *a;
    }
    return 0;
}

/* A listening TCP socket on 'ss', or -1 with the reason logged: binding
 * here rather than in MHD names the address and the system's error. */
static int
open_listener(const char *listen_str, const struct sockaddr_storage *ss,
              socklen_t sl)
{
    int one = 1;
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK
                    | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        LOG_ERR("cannot serve HTTP on %s: socket: %s", listen_str,
                strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss->ss_family == AF_INET6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    }
    if (bind(fd, (const struct sockaddr *) ss, sl) < 0) {
        int e = errno;

        LOG_ERR("cannot serve HTTP on %s: %s%s", listen_str, strerror(e),
                e == EADDRNOTAVAIL ? " (no interface of this host has that "
                "address)" : "");
        close(fd);
        return -1;
    }
    if (listen(fd, 128) < 0) {
        LOG_ERR("cannot serve HTTP on %s: listen: %s", listen_str,
                strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* MHD's cap on connections: the guard holds the live ones to
 * --max-connections, and this leaves room for those it has closed but
 * MHD has not yet reaped and for MHD's uneven split of its cap over the
 * pool's threads. */
static unsigned
mhd_conn_cap(const struct exp_opts *o)
{
    return o->max_conns + o->max_conns / 2 + 2 * o->threads;
}

/* Raises the soft limit on open files to what MHD's cap needs, as far as
 * the hard limit allows: a process that runs out of descriptors accepts
 * nothing, so the guard could not make room for a scraper. */
static void
raise_fd_limit(const struct exp_opts *o)
{
    rlim_t need = (rlim_t) mhd_conn_cap(o) + 64;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need) {
        return;
    }
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need
                  ? need : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < need) {
        LOG_WARN("--max-connections %u needs %llu open files but the limit "
                 "is %llu: lower --max-connections or raise the limit "
                 "(LimitNOFILE=)", o->max_conns, (unsigned long long) need,
                 (unsigned long long) rl.rlim_cur);
    }
}

static void
usage(FILE *f)
{
    fprintf(f,
"Usage: vpower-exporter [OPTION]...\n"
"Serve vpowerd's state as Prometheus metrics on http://ADDR:PORT/metrics.\n"
"\n"
"  -s, --socket PATH        vpowerd's control socket (%s)\n"
"  -l, --listen ADDR:PORT   address to serve on (%s; IPv6 as [::1]:9877)\n"
"  -t, --timeout SECONDS    bound on each query to vpowerd (2)\n"
"      --threads N          HTTP worker threads (4)\n"
"      --max-connections N  open HTTP connections in all (1024)\n"
"      --per-ip-limit N     open HTTP connections per client IP (512)\n"
"      --header-timeout SECONDS      to send a whole request (5)\n"
"      --connection-timeout SECONDS  idle HTTP connections closed (10)\n"
"      --connection-memory BYTES     per connection, bounds headers (32768)\n"
"  -v, --verbose            log debug messages\n"
"  -h, --help               this text\n"
"  -V, --version            print the version\n",
            DEFAULT_SOCKET, DEFAULT_LISTEN);
}

static int
parse_uint(const char *opt, const char *s, unsigned long min,
           unsigned long max, unsigned long *out)
{
    uint64_t v;

    if (num_parse_u64(s, max, &v) || v < min) {
        fprintf(stderr, "vpower-exporter: %s: '%s' is not a number from "
                "%lu to %lu\n", opt, s, min, max);
        return -EINVAL;
    }
    *out = (unsigned long) v;
    return 0;
}

static int
parse_seconds_ms(const char *opt, const char *s, unsigned *ms)
{
    char *e;
    double v;

    errno = 0;
    v = strtod(s, &e);
    if (errno || *e || !*s || !(v >= 0.01 && v <= 60)) {
        fprintf(stderr, "vpower-exporter: %s: '%s' is not a number of "
                "seconds from 0.01 to 60\n", opt, s);
        return -EINVAL;
    }
    *ms = (unsigned) (v * 1000 + 0.5);
    return 0;
}

/* Parses the command line into 'o'.  Returns -1 to go on, else the exit
 * status (0 after --help or --version, 2 on a usage error). */
static int
parse_args(int argc, char **argv, struct exp_opts *o, bool *verbose)
{
    static const struct option longopts[] = {
        { "socket", required_argument, NULL, 's' },
        { "listen", required_argument, NULL, 'l' },
        { "timeout", required_argument, NULL, 't' },
        { "threads", required_argument, NULL, 1 },
        { "max-connections", required_argument, NULL, 2 },
        { "per-ip-limit", required_argument, NULL, 3 },
        { "connection-timeout", required_argument, NULL, 4 },
        { "connection-memory", required_argument, NULL, 5 },
        { "header-timeout", required_argument, NULL, 6 },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    unsigned long u;
    int opt, rc = 0;

    while (!rc && (opt = getopt_long(argc, argv, "s:l:t:vhV", longopts,
                                     NULL)) != -1) {
        switch (opt) {
        case 's':
            o->socket_path = optarg;
            break;
        case 'l':
            o->listen = optarg;
            break;
        case 't':
            rc = parse_seconds_ms("--timeout", optarg, &o->timeout_ms);
            break;
        case 1:
            rc = parse_uint("--threads", optarg, 1, 64, &u);
            o->threads = (unsigned) u;
            break;
        case 2:
            rc = parse_uint("--max-connections", optarg, 1, 65536, &u);
            o->max_conns = (unsigned) u;
            break;
        case 3:
            rc = parse_uint("--per-ip-limit", optarg, 1, 65536, &u);
            o->per_ip = (unsigned) u;
            break;
        case 4:
            rc = parse_uint("--connection-timeout", optarg, 1, 3600, &u);
            o->conn_timeout_s = (unsigned) u;
            break;
        case 5:
            rc = parse_uint("--connection-memory", optarg, 4096, 1 << 24,
                            &u);
            o->conn_memory = u;
            break;
        case 6:
            rc = parse_seconds_ms("--header-timeout", optarg,
                                  &o->header_timeout_ms);
            break;
        case 'v':
            *verbose = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("vpower-exporter %s\n", PACKAGE_VERSION);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (rc) {
        return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "vpower-exporter: unexpected argument '%s'\n",
                argv[optind]);
        usage(stderr);
        return 2;
    }
    return -1;
}

/* The main thread's event loop: waits for SIGTERM or SIGINT (SIGHUP is
 * ignored) while closing connections past their request deadline. */
static void
run_loop(struct exp_guard *g, const sigset_t *sigs)
{
    int sfd = signalfd(-1, sigs, SFD_CLOEXEC);

    if (sfd < 0) {
        LOG_ERR("signalfd: %s", strerror(errno));
        return;
    }
    for (;;) {
        struct pollfd p[2] = {
            { sfd, POLLIN, 0 }, { g->timer_fd, POLLIN, 0 }
        };
        struct signalfd_siginfo si;

        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            LOG_ERR("poll: %s", strerror(errno));
            break;
        }
        if (p[1].revents & POLLIN) {
            guard_expire(g);
        }
        if ((p[0].revents & POLLIN)
            && read(sfd, &si, sizeof si) == (ssize_t) sizeof si
            && si.ssi_signo != SIGHUP) {
            LOG_INFO("signal %u: stopping", si.ssi_signo);
            break;
        }
    }
    close(sfd);
}

int
main(int argc, char **argv)
{
    struct exp_opts o = {
        DEFAULT_SOCKET, DEFAULT_LISTEN, 2000, 4, 1024, 512, 10, 5000, 32768
    };
    struct exp_state st;
    struct exp_guard g;
    struct sockaddr_storage ss;
    struct MHD_Daemon *d;
    socklen_t sl;
    bool verbose = false;
    sigset_t sigs;
    int rc, lfd;

    if ((rc = parse_args(argc, argv, &o, &verbose)) >= 0) {
        return rc;
    }
    if (parse_listen(o.listen, &ss, &sl) < 0) {
        fprintf(stderr, "vpower-exporter: --listen: '%s' is not ADDR:PORT "
                "(e.g. 127.0.0.1:9877 or [::1]:9877)\n", o.listen);
        return 2;
    }
    log_init("vpower-exporter", false,
             verbose ? LOG_LVL_DEBUG : LOG_LVL_INFO);
    if ((lfd = open_listener(o.listen, &ss, sl)) < 0) {
        return 1;
    }
    raise_fd_limit(&o);

    /* Worker threads inherit this mask; only main takes the signals. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.lock, NULL);
    g.max_conns = o.max_conns;
    g.per_ip = o.per_ip;
    g.header_ns = (uint64_t) o.header_timeout_ms * 1000000;
    g.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (g.timer_fd < 0) {
        LOG_ERR("timerfd_create: %s", strerror(errno));
        return 1;
    }
    memset(&st, 0, sizeof st);
    st.o = &o;
    st.guard = &g;
    pthread_mutex_init(&st.lock, NULL);
    /* The guard enforces both limits (on_connection), making room by
     * closing waiting connections; MHD's own cap is a backstop. */
    d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG,
        0, NULL, NULL, on_request, &st,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_LISTEN_SOCKET, lfd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) o.threads,
        MHD_OPTION_CONNECTION_LIMIT, mhd_conn_cap(&o),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) o.conn_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) o.conn_memory,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, &g,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, &g,
        MHD_OPTION_END);
    if (!d) {
        LOG_ERR("cannot serve HTTP on %s: libmicrohttpd did not start "
                "(see its message above)", o.listen);
        return 1;
    }
    LOG_INFO("serving http://%s/metrics from vpowerd at %s", o.listen,
             o.socket_path);
    run_loop(&g, &sigs);
    MHD_stop_daemon(d);                 /* Closes lfd too. */
    close(g.timer_fd);
    json_object_put(st.status);
    json_object_put(st.list);
    pthread_mutex_destroy(&st.lock);
    pthread_mutex_destroy(&g.lock);
    return 0;
}
