/* agent/vpower-agent.c -- The guest side of vpower's guest channel.
 *
 * Runs inside a VM as a small static binary (no libvirt, no json-c).  It
 * owns the virtio-serial port org.vpower.agent.0, says HELLO to the host,
 * relays task hints from local programs (libvpowerhint / vpower-hint over
 * the SOCK_SEQPACKET socket /run/vpower-agent.sock) and every few
 * seconds reports its own view of per-vCPU utilisation and CPU pressure.
 * Each forwarded hint gets the agent's own sequence number; the host's
 * ACK for it is relayed back to the client under the client's number.
 * One poll() loop, no threads; it sleeps when there is nothing to do. */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/gchproto.h"
#include "agent/port.h"

#define MAX_CLIENTS 16
#define MAX_PENDING 64
#define PENDING_TIMEOUT_NS (10 * 1000000000ull)
#define HELLO_RETRY_NS (2 * 1000000000ull)
#define PORT_RETRY_NS (1000000000ull)
#define OUT_CAP 4096

struct pending {
    int used;
    uint32_t agent_seq, client_seq;
    int client;                 /* Index into clients[], -1 = agent's own. */
    uint64_t client_gen;        /* Guards against a reused slot. */
    uint64_t sent_ns;
};

struct client {
    int fd;                     /* -1 = free. */
    uint64_t gen;
};

struct agent {
    const char *port_arg, *sock_path;
    char port_path[64];
    int port_fd, listen_fd;
    int verbose;
    uint32_t util_interval_ms;
    int host_ready;             /* HELLO_ACK received. */
    int port_hup;               /* No host connection: do not poll. */
    uint64_t next_hello_ns, next_util_ns, next_port_ns;
    uint32_t seq;
    uint64_t gen;
    struct client clients[MAX_CLIENTS];
    struct pending pending[MAX_PENDING];
    uint8_t in[2 * GCH_MAX_MSG];
    size_t in_len;
    uint8_t out[OUT_CAP];
    size_t out_len;
    /* Utilisation sampling. */
    unsigned n_cpus;
    uint64_t prev_busy[GCH_MAX_UTIL_VCPUS], prev_total[GCH_MAX_UTIL_VCPUS];
    int prev_valid[GCH_MAX_UTIL_VCPUS];
    uint64_t prev_psi_us, prev_util_ns;
    int prev_psi_valid;
    uint64_t n_sent, n_acked, n_dropped;
};

static volatile sig_atomic_t quit_flag;

static void
on_signal(int sig)
{
    (void) sig;
    quit_flag = 1;
}

static void
say(const char *fmt, ...)
{
    va_list ap;

    fputs("vpower-agent: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t
now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Queues one message for the port; drops it (counted) when the port is
 * backed up, so a host that stopped reading cannot grow the agent. */
static int
queue_msg(struct agent *a, const struct gch_msg *m)
{
    int len;

    if (a->port_fd < 0) {
        a->n_dropped++;
        return -ENOTCONN;
    }
    len = gch_encode(m, a->out + a->out_len, sizeof a->out - a->out_len);
    if (len == GCH_E_SHORT) {
        a->n_dropped++;
        return -ENOBUFS;
    }
    if (len < 0) {
        return -EINVAL;
    }
    a->out_len += (size_t) len;
    a->n_sent++;
    return 0;
}

static void
flush_out(struct agent *a)
{
    while (a->out_len > 0 && a->port_fd >= 0) {
        ssize_t n = write(a->port_fd, a->out, a->out_len);

        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return;             /* EAGAIN: host not reading; retry later. */
        }
        memmove(a->out, a->out + n, a->out_len - (size_t) n);
        a->out_len -= (size_t) n;
    }
}

static void
send_hello(struct agent *a)
{
    struct gch_msg m;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_HELLO;
    m.hdr.seq = ++a->seq;
    m.u.hello.min_version = GCH_VERSION;
    m.u.hello.max_version = GCH_VERSION;
    m.u.hello.caps = GCH_CAP_ALL;
    m.u.hello.n_vcpus = n > 0 ? (uint32_t) n : 1;
    snprintf(m.u.hello.agent_version, sizeof m.u.hello.agent_version,
             "agent-%s", PACKAGE_VERSION);
    queue_msg(a, &m);
    a->next_hello_ns = now_ns() + HELLO_RETRY_NS;
}

static void
close_port(struct agent *a, const char *why)
{
    if (a->port_fd >= 0) {
        say("closing %s: %s", a->port_path, why);
        close(a->port_fd);
    }
    a->port_fd = -1;
    a->host_ready = 0;
    a->in_len = a->out_len = 0;
    a->next_port_ns = now_ns() + PORT_RETRY_NS;
}

static int
open_port(struct agent *a)
{
    int r;

    if (a->port_arg) {
        snprintf(a->port_path, sizeof a->port_path, "%s", a->port_arg);
    } else {
        r = port_find(NULL, a->port_path, sizeof a->port_path);
        if (r < 0) {
            return r;
        }
    }
    a->port_fd = open(a->port_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (a->port_fd < 0) {
        return -errno;
    }
    a->in_len = a->out_len = 0;
    a->host_ready = 0;
    a->port_hup = 0;
    say("using port %s", a->port_path);
    send_hello(a);
    return 0;
}

static int
open_listener(struct agent *a)
{
    struct sockaddr_un sun;
    int fd;

    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (strlen(a->sock_path) >= sizeof sun.sun_path) {
        say("socket path too long: %s", a->sock_path);
        return -ENAMETOOLONG;
    }
    strcpy(sun.sun_path, a->sock_path);
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    unlink(a->sock_path);
    if (bind(fd, (struct sockaddr *) &sun, sizeof sun) < 0
        || chmod(a->sock_path, 0666) < 0 || listen(fd, 16) < 0) {
        int err = -errno;

        say("cannot listen on %s: %s", a->sock_path, strerror(errno));
        close(fd);
        return err;
    }
    a->listen_fd = fd;
    return 0;
}

/* Sends an ACK frame to client 'ci' (best effort: a client that does not
 * read loses its acks, never blocks the agent). */
static void
client_ack(struct agent *a, int ci, uint32_t seq, unsigned type,
           unsigned status)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m;
    int len;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_ACK;
    m.hdr.seq = seq;
    m.u.ack.status = (uint8_t) status;
    m.u.ack.type = (uint8_t) type;
    len = gch_encode(&m, buf, sizeof buf);
    if (len > 0 && a->clients[ci].fd >= 0) {
        (void) send(a->clients[ci].fd, buf, (size_t) len,
                    MSG_DONTWAIT | MSG_NOSIGNAL);
    }
}

static struct pending *
pending_new(struct agent *a)
{
    uint64_t now = now_ns();
    size_t i;

    for (i = 0; i < MAX_PENDING; i++) {
        if (a->pending[i].used && now - a->pending[i].sent_ns
                                  > PENDING_TIMEOUT_NS) {
            a->pending[i].used = 0;
        }
    }
    for (i = 0; i < MAX_PENDING; i++) {
        if (!a->pending[i].used) {
            return &a->pending[i];
        }
    }
    return NULL;
}

static void
client_input(struct agent *a, int ci)
{
    uint8_t buf[GCH_MAX_MSG + 1];
    struct gch_msg m;
    struct pending *p;
    ssize_t n;
    uint32_t cseq;
    int r;

    n = recv(a->clients[ci].fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close(a->clients[ci].fd);
        a->clients[ci].fd = -1;
        return;
    }
    if (n < 0) {
        return;
    }
    r = gch_decode(buf, (size_t) n, &m);
    if (r != n) {
        if (a->verbose) {
            say("client sent a bad message: %s",
                gch_strerror(r < 0 ? r : GCH_E_LENGTH));
        }
        return;
    }
    if (m.hdr.type < GCH_T_LATENCY_BEGIN || m.hdr.type > GCH_T_IDLE) {
        client_ack(a, ci, m.hdr.seq, m.hdr.type, GCH_S_UNSUPPORTED);
        return;
    }
    if (!a->host_ready) {
        /* Answer at once rather than letting the client time out: the
         * host has not spoken, so nothing would be applied. */
        client_ack(a, ci, m.hdr.seq, m.hdr.type, GCH_S_NO_HELLO);
        return;
    }
    p = pending_new(a);
    cseq = m.hdr.seq;
    m.hdr.seq = ++a->seq;
    if (!p || queue_msg(a, &m) < 0) {
        client_ack(a, ci, cseq, m.hdr.type, GCH_S_RATE_LIMITED);
        return;
    }
    p->used = 1;
    p->agent_seq = m.hdr.seq;
    p->client_seq = cseq;
    p->client = ci;
    p->client_gen = a->clients[ci].gen;
    p->sent_ns = now_ns();
    flush_out(a);
}

static void
host_message(struct agent *a, const struct gch_msg *m)
{
    size_t i;

    if (m->hdr.type == GCH_T_HELLO_ACK) {
        if (!a->host_ready) {
            say("host ready: protocol %u, caps 0x%x, hint_rate %u/s, "
                "burst %u, %u vCPUs", m->u.hello_ack.version,
                (unsigned) m->u.hello_ack.caps,
                (unsigned) m->u.hello_ack.hint_rate,
                (unsigned) m->u.hello_ack.burst,
                (unsigned) m->u.hello_ack.n_vcpus);
        }
        a->host_ready = 1;
        return;
    }
    if (m->hdr.type != GCH_T_ACK) {
        return;
    }
    if (m->u.ack.status == GCH_S_NO_HELLO) {
        /* The host end reconnected (vpowerd restarted): greet again. */
        a->host_ready = 0;
        send_hello(a);
    }
    a->n_acked++;
    for (i = 0; i < MAX_PENDING; i++) {
        struct pending *p = &a->pending[i];

        if (!p->used || p->agent_seq != m->hdr.seq) {
            continue;
        }
        p->used = 0;
        if (a->verbose) {
            say("ack seq %" PRIu32 " %s %s after %" PRIu64 " us",
                m->hdr.seq, gch_type_name(m->u.ack.type),
                gch_status_name(m->u.ack.status),
                (now_ns() - p->sent_ns) / 1000u);
        }
        if (p->client >= 0 && a->clients[p->client].gen == p->client_gen) {
            client_ack(a, p->client, p->client_seq, m->u.ack.type,
                       m->u.ack.status);
        }
        return;
    }
}

static void
port_input(struct agent *a)
{
    struct gch_msg m;
    ssize_t n;
    int r;

    n = read(a->port_fd, a->in + a->in_len, sizeof a->in - a->in_len);
    if (n < 0) {
        if (errno != EAGAIN && errno != EINTR) {
            close_port(a, strerror(errno));
        }
        return;
    }
    a->in_len += (size_t) n;
    while (a->in_len > 0) {
        r = gch_decode(a->in, a->in_len, &m);
        if (r == GCH_E_SHORT) {
            break;
        }
        if (r < 0) {
            size_t skip = gch_resync(a->in, a->in_len);

            if (a->verbose) {
                say("skipping %zu bytes from the host: %s", skip,
                    gch_strerror(r));
            }
            memmove(a->in, a->in + skip, a->in_len - skip);
            a->in_len -= skip;
            continue;
        }
        memmove(a->in, a->in + r, a->in_len - (size_t) r);
        a->in_len -= (size_t) r;
        host_message(a, &m);
    }
}

/* /proc/stat "cpuN user nice system idle iowait irq softirq steal ...":
 * busy = total - idle - iowait; steal counts as not ours (it is the
 * host's view of time the vCPU wanted but did not get). */
static void
send_util(struct agent *a)
{
    struct gch_msg m;
    char line[512];
    uint64_t now = now_ns(), psi = 0;
    int have_psi = 0;
    FILE *f;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_UTIL;
    f = fopen("/proc/stat", "r");
    if (!f) {
        return;
    }
    while (fgets(line, sizeof line, f)) {
        unsigned cpu;
        unsigned long long v[8] = { 0 };
        uint64_t total = 0, busy;
        int i, k;

        if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9') {
            continue;
        }
        k = sscanf(line + 3, "%u %llu %llu %llu %llu %llu %llu %llu %llu",
                   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
        if (k < 5 || cpu >= GCH_MAX_UTIL_VCPUS) {
            continue;
        }
        for (i = 0; i < 7; i++) {
            total += v[i];
        }
        busy = total - v[3] - v[4];
        if (a->prev_valid[cpu] && total > a->prev_total[cpu]
            && m.u.util.n < GCH_MAX_UTIL_VCPUS) {
            uint64_t dt = total - a->prev_total[cpu];
            uint64_t db = busy >= a->prev_busy[cpu]
                          ? busy - a->prev_busy[cpu] : 0;
            struct gch_util_vcpu *e = &m.u.util.v[m.u.util.n++];

            e->vcpu = (uint16_t) cpu;
            e->busy_permille = (uint16_t) (db >= dt ? 1000 : db * 1000 / dt);
        }
        a->prev_total[cpu] = total;
        a->prev_busy[cpu] = busy;
        a->prev_valid[cpu] = 1;
    }
    fclose(f);

    f = fopen("/proc/pressure/cpu", "r");
    if (f) {
        unsigned long long tot;

        while (fgets(line, sizeof line, f)) {
            char *t = strstr(line, "total=");

            if (!strncmp(line, "some ", 5) && t
                && sscanf(t, "total=%llu", &tot) == 1) {
                psi = tot;
                have_psi = 1;
            }
        }
        fclose(f);
    }
    m.u.util.pressure_some_ppm = GCH_PRESSURE_NONE;
    if (have_psi && a->prev_psi_valid && now > a->prev_util_ns
        && psi >= a->prev_psi_us) {
        uint64_t dt_us = (now - a->prev_util_ns) / 1000u;
        uint64_t ppm = dt_us ? (psi - a->prev_psi_us) * 1000000u / dt_us : 0;

        m.u.util.pressure_some_ppm = (uint32_t) (ppm > 1000000u ? 1000000u
                                                                : ppm);
    }
    m.u.util.interval_ms = a->prev_util_ns && now > a->prev_util_ns
                           ? (uint32_t) ((now - a->prev_util_ns) / 1000000u)
                           : a->util_interval_ms;
    if (m.u.util.interval_ms < 1) {
        m.u.util.interval_ms = 1;
    }
    if (m.u.util.interval_ms > GCH_MAX_UTIL_INTERVAL_MS) {
        m.u.util.interval_ms = GCH_MAX_UTIL_INTERVAL_MS;
    }
    a->prev_psi_us = psi;
    a->prev_psi_valid = have_psi;
    a->prev_util_ns = now;
    if (m.u.util.n > 0 && a->host_ready) {
        struct pending *p = pending_new(a);

        m.hdr.seq = ++a->seq;
        if (queue_msg(a, &m) == 0 && p) {
            memset(p, 0, sizeof *p);
            p->used = 1;
            p->agent_seq = m.hdr.seq;
            p->client = -1;
            p->sent_ns = now;
        }
    }
}

static void
accept_client(struct agent *a)
{
    int fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    size_t i;

    if (fd < 0) {
        return;
    }
    for (i = 0; i < MAX_CLIENTS; i++) {
        if (a->clients[i].fd < 0) {
            a->clients[i].fd = fd;
            a->clients[i].gen = ++a->gen;
            return;
        }
    }
    close(fd);                  /* Full: the client sees ECONNRESET. */
}

static int
timeout_ms_until(uint64_t now, uint64_t when)
{
    return when <= now ? 0 : (int) ((when - now) / 1000000u) + 1;
}

static void
usage(FILE *f)
{
    fputs("Usage: vpower-agent [OPTION]...\n"
          "Relay task hints and utilisation from this guest to vpowerd.\n\n"
          "  -p, --port PATH          virtio-serial port (default: the port "
          "named\n"
          "                           " GCH_PORT_NAME ")\n"
          "  -s, --socket PATH        local socket for vpower-hint "
          "(default\n"
          "                           " GCH_AGENT_SOCK ")\n"
          "  -u, --util-interval-ms N utilisation report period, 0 = off "
          "(default 5000)\n"
          "  -v, --verbose            log every acknowledgement\n"
          "  -h, --help               this text\n"
          "  -V, --version            print the version\n", f);
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "port", required_argument, NULL, 'p' },
        { "socket", required_argument, NULL, 's' },
        { "util-interval-ms", required_argument, NULL, 'u' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    static struct agent a;
    struct sigaction sa;
    int c, r;
    size_t i;

    a.sock_path = GCH_AGENT_SOCK;
    a.util_interval_ms = 5000;
    a.port_fd = a.listen_fd = -1;
    for (i = 0; i < MAX_CLIENTS; i++) {
        a.clients[i].fd = -1;
    }
    while ((c = getopt_long(argc, argv, "p:s:u:vhV", opts, NULL)) != -1) {
        char *end;
        unsigned long v;

        switch (c) {
        case 'p': a.port_arg = optarg; break;
        case 's': a.sock_path = optarg; break;
        case 'u':
            errno = 0;
            v = strtoul(optarg, &end, 10);
            if (errno || *end || end == optarg || v > 3600000) {
                say("--util-interval-ms: '%s' is not 0..3600000", optarg);
                return 2;
            }
            a.util_interval_ms = (uint32_t) v;
            break;
        case 'v': a.verbose = 1; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("vpower-agent %s\n", PACKAGE_VERSION); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind != argc) {
        say("unexpected argument '%s'", argv[optind]);
        return 2;
    }

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    r = open_port(&a);
    if (r < 0) {
        say("no virtio-serial port %s (%s); add the <channel> element of "
            "docs/guest-agent.md to the domain; retrying",
            a.port_arg ? a.port_arg : GCH_PORT_NAME, strerror(-r));
        a.next_port_ns = now_ns() + PORT_RETRY_NS;
    }
    if (open_listener(&a) < 0) {
        return 1;
    }
    say("listening on %s", a.sock_path);
    a.next_util_ns = now_ns();

    while (!quit_flag) {
        struct pollfd pfd[2 + MAX_CLIENTS];
        int idx_client[MAX_CLIENTS];
        int nfd = 0, port_idx = -1, timeout = 60000;
        uint64_t now = now_ns();

        if (a.port_fd < 0 && now >= a.next_port_ns) {
            if (open_port(&a) < 0) {
                a.next_port_ns = now + PORT_RETRY_NS;
            }
        }
        if (a.port_fd >= 0 && a.port_hup && now >= a.next_port_ns) {
            a.port_hup = 0;     /* Look again whether the host is there. */
        }
        if (a.port_fd >= 0 && !a.host_ready && !a.port_hup
            && now >= a.next_hello_ns) {
            a.out_len = 0;      /* Stale data for a host that was gone. */
            send_hello(&a);
        }
        if (a.util_interval_ms && now >= a.next_util_ns) {
            send_util(&a);
            a.next_util_ns = now + (uint64_t) a.util_interval_ms * 1000000u;
        }
        flush_out(&a);

        pfd[nfd].fd = a.listen_fd;
        pfd[nfd++].events = POLLIN;
        if (a.port_fd >= 0 && !a.port_hup) {
            port_idx = nfd;
            pfd[nfd].fd = a.port_fd;
            pfd[nfd++].events = POLLIN | (a.out_len ? POLLOUT : 0);
        }
        for (i = 0; i < MAX_CLIENTS; i++) {
            idx_client[i] = -1;
            if (a.clients[i].fd >= 0) {
                idx_client[i] = nfd;
                pfd[nfd].fd = a.clients[i].fd;
                pfd[nfd++].events = POLLIN;
            }
        }
        if (a.port_fd < 0 || a.port_hup) {
            timeout = timeout_ms_until(now, a.next_port_ns);
        } else if (!a.host_ready) {
            timeout = timeout_ms_until(now, a.next_hello_ns);
        }
        if (a.util_interval_ms) {
            int t = timeout_ms_until(now, a.next_util_ns);

            timeout = t < timeout ? t : timeout;
        }
        r = poll(pfd, (nfds_t) nfd, timeout);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            say("poll: %s", strerror(errno));
            return 1;
        }
        if (port_idx >= 0 && pfd[port_idx].revents) {
            if (pfd[port_idx].revents & POLLIN) {
                port_input(&a);
            } else if (pfd[port_idx].revents & (POLLHUP | POLLERR)) {
                /* No host connection on the other end: the port stays
                 * open, we just stop polling it for a second. */
                if (a.host_ready) {
                    say("host side of %s went away", a.port_path);
                }
                a.host_ready = 0;
                a.port_hup = 1;
                a.next_port_ns = now_ns() + PORT_RETRY_NS;
                a.next_hello_ns = 0;
            }
            if (a.port_fd >= 0 && (pfd[port_idx].revents & POLLOUT)) {
                flush_out(&a);
            }
        }
        if (pfd[0].revents & POLLIN) {
            accept_client(&a);
        }
        for (i = 0; i < MAX_CLIENTS; i++) {
            if (idx_client[i] >= 0 && pfd[idx_client[i]].revents) {
                client_input(&a, (int) i);
            }
        }
    }
    unlink(a.sock_path);
    say("exiting: %" PRIu64 " messages sent, %" PRIu64 " acks, %" PRIu64
        " dropped", a.n_sent, a.n_acked, a.n_dropped);
    return 0;
}
