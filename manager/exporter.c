/* manager/exporter.c -- vpower-exporter: Prometheus metrics over HTTP.
 *
 * A separate, unprivileged program: the root daemon opens no TCP port.
 * Each scrape of GET /metrics connects to vpowerd's control socket (a
 * read-only client, like chronyc's monitoring commands), sends "status"
 * and "list" as JSON lines, and renders the replies with metrics.c.  The
 * whole query is bounded by --timeout (default 2 s), so a slow or stuck
 * daemon costs a scrape at most that long; if the daemon is down the
 * scrape still answers with vpower_up 0 and the exporter's own metrics.
 *
 * HTTP is libmicrohttpd with its internal polling thread and a small
 * thread pool (epoll): idle or slow connections cost a socket and a few
 * KiB, not a thread, so 200 connections held open by one client cannot
 * stall a scraper the way they would exhaust a thread-per-connection
 * server.  Connection count, per-IP count, idle timeout and per-connection
 * memory (which bounds request headers: larger ones are refused by MHD)
 * are all limited.  Replies from vpowerd are cached for 250 ms and
 * fetched under one mutex, so many simultaneous scrapes turn into at most
 * a few queries per second: the daemon's single event loop and its
 * decision period are unaffected by scrape storms.  Threads are fine
 * here; the no-threads rule is for vpowerd. */

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
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <microhttpd.h>

#include "manager/log.h"
#include "manager/metrics.h"
#include "manager/util.h"

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
    size_t conn_memory;
};

/* Shared by the MHD worker threads; everything below 'lock'. */
struct exp_state {
    const struct exp_opts *o;
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
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* ---- vpowerd client ------------------------------------------------ */

/* Milliseconds left until 'deadline_ns', at least 0. */
static int
left_ms(uint64_t deadline_ns)
{
    uint64_t now = now_ns();

    return now >= deadline_ns ? 0 : (int) ((deadline_ns - now) / 1000000 + 1);
}

/* Takes reply 'line' to request 'id' 1 (status) or 2 (list). */
static int
take_reply(const char *line, struct json_object **status,
           struct json_object **list, char *err, size_t errlen)
{
    struct json_object *o = json_tokener_parse(line), *v;
    int id, rc = 0;

    if (!o || !json_object_is_type(o, json_type_object)) {
        snprintf(err, errlen, "vpowerd sent a line that is not a JSON "
                 "object");
        rc = -EPROTO;
        goto out;
    }
    id = json_object_object_get_ex(o, "id", &v) ? json_object_get_int(v)
                                                 : 0;
    if (id != 1 && id != 2) {
        goto out;                       /* Not ours: ignore. */
    }
    if (!json_object_object_get_ex(o, "ok", &v)
        || !json_object_get_boolean(v)) {
        struct json_object *e = NULL, *m = NULL;

        json_object_object_get_ex(o, "error", &e);
        if (e) {
            json_object_object_get_ex(e, "message", &m);
        }
        snprintf(err, errlen, "vpowerd refused '%s': %s",
                 id == 1 ? "status" : "list",
                 m ? json_object_get_string(m) : "no message");
        rc = -EPROTO;
        goto out;
    }
    if (!json_object_object_get_ex(o, "result", &v)) {
        snprintf(err, errlen, "vpowerd's reply has no result");
        rc = -EPROTO;
        goto out;
    }
    json_object_get(v);
    if (id == 1) {
        json_object_put(*status);
        *status = v;
    } else {
        json_object_put(*list);
        *list = v;
    }
out:
    json_object_put(o);
    return rc;
}

/* Sends status and list to the socket at 'path' and waits at most
 * 'timeout_ms' for both replies.  Returns 0 with both set (caller owns),
 * or -errno with 'err' filled and nothing set. */
static int
query_daemon(const char *path, unsigned timeout_ms,
             struct json_object **status, struct json_object **list,
             char *err, size_t errlen)
{
    static const char req[] =
        "{\"version\":1,\"id\":1,\"cmd\":\"status\",\"args\":{}}\n"
        "{\"version\":1,\"id\":2,\"cmd\":\"list\",\"args\":{}}\n";
    uint64_t deadline = now_ns() + (uint64_t) timeout_ms * 1000000;
    struct sockaddr_un sa;
    size_t sent = 0, len = 0, cap = 0;
    char *buf = NULL;
    int fd, rc = 0;

    *status = *list = NULL;
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "socket path '%s' is too long", path);
        return -ENAMETOOLONG;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return rc;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0
        && errno != EINPROGRESS) {
        rc = -errno;
        snprintf(err, errlen, "cannot connect to vpowerd at %s: %s", path,
                 strerror(errno));
        goto out;
    }
    while (!*status || !*list) {
        struct pollfd p = { fd, POLLIN, 0 };
        int ms = left_ms(deadline);
        ssize_t n;

        if (sent < sizeof req - 1) {
            p.events |= POLLOUT;
        }
        if (!ms || (n = poll(&p, 1, ms)) == 0) {
            rc = -ETIMEDOUT;
            snprintf(err, errlen, "vpowerd at %s did not answer within "
                     "%u ms", path, timeout_ms);
            goto out;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rc = -errno;
            snprintf(err, errlen, "poll: %s", strerror(errno));
            goto out;
        }
        if (p.revents & POLLOUT) {
            n = send(fd, req + sent, sizeof req - 1 - sent, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                rc = -errno;
                snprintf(err, errlen, "sending to vpowerd: %s",
                         strerror(errno));
                goto out;
            }
            sent += n > 0 ? (size_t) n : 0;
        }
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) {
            continue;
        }
        if (len + 65536 + 1 > cap) {
            cap = cap ? cap * 2 : 131072;
            buf = xrealloc(buf, cap);
        }
        n = recv(fd, buf + len, cap - len - 1, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? -errno : -ECONNRESET;
            snprintf(err, errlen, "vpowerd closed the connection before "
                     "answering%s%s", n < 0 ? ": " : "",
                     n < 0 ? strerror(errno) : "");
            goto out;
        }
        len += (size_t) n;
        buf[len] = '\0';
        for (char *nl; (nl = memchr(buf, '\n', len));) {
            size_t used = (size_t) (nl - buf) + 1;

            *nl = '\0';
            rc = take_reply(buf, status, list, err, errlen);
            memmove(buf, buf + used, len - used);
            len -= used;
            buf[len] = '\0';
            if (rc < 0) {
                goto out;
            }
        }
        if (len > MAX_REPLY) {
            rc = -E2BIG;
            snprintf(err, errlen, "vpowerd's reply exceeds %u bytes",
                     MAX_REPLY);
            goto out;
        }
    }
out:
    if (rc < 0) {
        json_object_put(*status);
        json_object_put(*list);
        *status = *list = NULL;
    }
    free(buf);
    close(fd);
    return rc;
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
    char *e;

    errno = 0;
    *out = strtoul(s, &e, 10);
    if (errno || *e || !*s || *out < min || *out > max) {
        fprintf(stderr, "vpower-exporter: %s: '%s' is not a number from "
                "%lu to %lu\n", opt, s, min, max);
        return -EINVAL;
    }
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

int
main(int argc, char **argv)
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
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    struct exp_opts o = {
        DEFAULT_SOCKET, DEFAULT_LISTEN, 2000, 4, 1024, 512, 10, 32768
    };
    struct exp_state st;
    struct sockaddr_storage ss;
    struct MHD_Daemon *d;
    socklen_t sl;
    unsigned long u;
    bool verbose = false;
    sigset_t sigs;
    int opt, sig;

    while ((opt = getopt_long(argc, argv, "s:l:t:vhV", longopts, NULL))
           != -1) {
        switch (opt) {
        case 's':
            o.socket_path = optarg;
            break;
        case 'l':
            o.listen = optarg;
            break;
        case 't':
            if (parse_seconds_ms("--timeout", optarg, &o.timeout_ms) < 0) {
                return 2;
            }
            break;
        case 1:
            if (parse_uint("--threads", optarg, 1, 64, &u) < 0) {
                return 2;
            }
            o.threads = (unsigned) u;
            break;
        case 2:
            if (parse_uint("--max-connections", optarg, 1, 65536, &u) < 0) {
                return 2;
            }
            o.max_conns = (unsigned) u;
            break;
        case 3:
            if (parse_uint("--per-ip-limit", optarg, 1, 65536, &u) < 0) {
                return 2;
            }
            o.per_ip = (unsigned) u;
            break;
        case 4:
            if (parse_uint("--connection-timeout", optarg, 1, 3600, &u)
                < 0) {
                return 2;
            }
            o.conn_timeout_s = (unsigned) u;
            break;
        case 5:
            if (parse_uint("--connection-memory", optarg, 4096, 1 << 24, &u)
                < 0) {
                return 2;
            }
            o.conn_memory = u;
            break;
        case 'v':
            verbose = true;
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
    if (optind < argc) {
        fprintf(stderr, "vpower-exporter: unexpected argument '%s'\n",
                argv[optind]);
        usage(stderr);
        return 2;
    }
    if (parse_listen(o.listen, &ss, &sl) < 0) {
        fprintf(stderr, "vpower-exporter: --listen: '%s' is not ADDR:PORT "
                "(e.g. 127.0.0.1:9877 or [::1]:9877)\n", o.listen);
        return 2;
    }
    log_init("vpower-exporter", false,
             verbose ? LOG_LVL_DEBUG : LOG_LVL_INFO);

    /* Worker threads inherit this mask; only main takes the signals. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    memset(&st, 0, sizeof st);
    st.o = &o;
    pthread_mutex_init(&st.lock, NULL);
    d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL
        | MHD_USE_ERROR_LOG | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
        0, NULL, NULL, on_request, &st,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) o.threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int) o.max_conns,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int) o.per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) o.conn_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) o.conn_memory,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int) 128,
        MHD_OPTION_END);
    if (!d) {
        LOG_ERR("cannot serve HTTP on %s (address in use or not local?)",
                o.listen);
        return 1;
    }
    LOG_INFO("serving http://%s/metrics from vpowerd at %s", o.listen,
             o.socket_path);
    (void) sl;
    do {
        if (sigwait(&sigs, &sig) != 0) {
            sig = SIGTERM;
        }
    } while (sig == SIGHUP);
    LOG_INFO("signal %d: stopping", sig);
    MHD_stop_daemon(d);
    json_object_put(st.status);
    json_object_put(st.list);
    pthread_mutex_destroy(&st.lock);
    return 0;
}
