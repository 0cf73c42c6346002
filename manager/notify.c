/* manager/notify.c -- sd_notify readiness, status and watchdog; see
 * notify.h.
 *
 * One timer on the event loop does both jobs: each tick sends WATCHDOG=1
 * (when systemd asked for a watchdog) and the status line when it
 * changed, in one datagram.  libsystemd does the protocol: abstract and
 * path sockets in $NOTIFY_SOCKET, credentials, and $WATCHDOG_PID
 * matching. */

#include <config.h>

#include "manager/notify.h"

#ifdef HAVE_LIBSYSTEMD

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "notify"

/* Shortest tick: a $WATCHDOG_USEC below twice this is a mistake, and
 * honouring it would make the loop spin. */
#define MIN_TICK_NS (10 * 1000000ull)

struct notify {
    struct sched *sched;
    notify_status_cb *cb;
    void *aux;
    uint64_t keepalive_ns;          /* 0: no watchdog. */
    uint64_t tick_ns;
    uint64_t timer;                 /* sched timer id, 0 when not armed. */
    bool stopping;
    char status[256];               /* Last sent, "" before READY. */
};

static void
tell(struct notify *n, const char *msg)
{
    int r = sd_notify(0, msg);

    if (r < 0) {
        LOG_WARN_RL("cannot notify the service manager (%.40s...): %s",
                    msg, strerror(-r));
    }
}

/* Appends "STATUS=<line>" to 'msg' when the line differs from the last
 * one sent.  Line breaks become spaces: STATUS= is one line. */
static void
add_status(struct notify *n, char *msg, size_t len)
{
    char line[sizeof n->status];
    size_t used = strlen(msg);

    line[0] = '\0';
    n->cb(line, sizeof line, n->aux);
    for (char *p = line; *p; p++) {
        if (*p == '\n' || *p == '\r') {
            *p = ' ';
        }
    }
    if (!strcmp(line, n->status)) {
        return;
    }
    snprintf(n->status, sizeof n->status, "%s", line);
    snprintf(msg + used, len - used, "%sSTATUS=%s", used ? "\n" : "",
             line);
}

static void tick_cb(void *aux);

static void
arm(struct notify *n)
{
    n->timer = sched_add_timer(n->sched, n->tick_ns, tick_cb, n);
}

static void
tick_cb(void *aux)
{
    struct notify *n = aux;
    char msg[sizeof n->status + 32];

    n->timer = 0;
    if (n->stopping) {
        return;
    }
    snprintf(msg, sizeof msg, "%s", n->keepalive_ns ? "WATCHDOG=1" : "");
    add_status(n, msg, sizeof msg);
    if (msg[0]) {
        tell(n, msg);
    }
    arm(n);
}

struct notify *
notify_create(struct sched *s, notify_status_cb *cb, void *aux)
{
    struct notify *n;
    uint64_t usec = 0;
    int r;

    if (!getenv("NOTIFY_SOCKET")) {
        return NULL;
    }
    n = XNEW(struct notify);
    n->sched = s;
    n->cb = cb;
    n->aux = aux;
    r = sd_watchdog_enabled(0, &usec);
    if (r < 0) {
        LOG_WARN("ignoring the watchdog asked for in $WATCHDOG_USEC/"
                 "$WATCHDOG_PID: %s", strerror(-r));
    } else if (r > 0) {
        n->keepalive_ns = usec * 1000u / 2;
        if (n->keepalive_ns < MIN_TICK_NS) {
            LOG_WARN("$WATCHDOG_USEC=%llu is too short; sending "
                     "keep-alives every %llu ms", (unsigned long long) usec,
                     (unsigned long long) (MIN_TICK_NS / 1000000u));
            n->keepalive_ns = MIN_TICK_NS;
        }
    }
    n->tick_ns = n->keepalive_ns && n->keepalive_ns < NOTIFY_STATUS_MAX_NS
                 ? n->keepalive_ns : NOTIFY_STATUS_MAX_NS;
    if (n->keepalive_ns) {
        LOG_INFO("service manager watchdog: a keep-alive every %llu ms",
                 (unsigned long long) (n->keepalive_ns / 1000000u));
    }
    return n;
}

void
notify_destroy(struct notify *n)
{
    if (!n) {
        return;
    }
    if (n->timer) {
        sched_del_timer(n->sched, n->timer);
    }
    free(n);
}

void
notify_ready(struct notify *n)
{
    char msg[sizeof n->status + 32];

    if (!n || n->stopping) {
        return;
    }
    snprintf(msg, sizeof msg, "READY=1%s",
             n->keepalive_ns ? "\nWATCHDOG=1" : "");
    add_status(n, msg, sizeof msg);
    tell(n, msg);
    if (!n->timer) {
        arm(n);
    }
}

void
notify_status(struct notify *n)
{
    char msg[sizeof n->status + 32] = "";

    if (!n || n->stopping || !n->timer) {
        return;
    }
    add_status(n, msg, sizeof msg);
    if (msg[0]) {
        tell(n, msg);
    }
}

void
notify_stopping(struct notify *n)
{
    if (!n || n->stopping) {
        return;
    }
    n->stopping = true;
    if (n->timer) {
        sched_del_timer(n->sched, n->timer);
        n->timer = 0;
    }
    tell(n, "STOPPING=1\nSTATUS=restoring the host and exiting");
}

uint64_t
notify_keepalive_ns(const struct notify *n)
{
    return n ? n->keepalive_ns : 0;
}

#else /* !HAVE_LIBSYSTEMD */

/* Built without libsystemd: there is nobody to notify. */

struct notify *
notify_create(struct sched *s, notify_status_cb *cb, void *aux)
{
    return NULL;
}

void
notify_destroy(struct notify *n)
{
}

void
notify_ready(struct notify *n)
{
}

void
notify_status(struct notify *n)
{
}

void
notify_stopping(struct notify *n)
{
}

uint64_t
notify_keepalive_ns(const struct notify *n)
{
    return 0;
}

#endif /* HAVE_LIBSYSTEMD */
