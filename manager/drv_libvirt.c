/* manager/drv_libvirt.c -- drv_hv_libvirt: domains, vCPU stats and pins
 * through one libvirt connection, with libvirt's events in our loop.
 *
 * libvirt delivers domain events only through an event implementation.
 * Instead of running virEventRunDefaultImpl() in a thread, this driver
 * registers adapters onto manager/sched.h (virEventRegisterImpl, before
 * the first virConnectOpen), so the RPC socket, keepalive timers and
 * event dispatch of libvirt all run in vpowerd's one thread: callbacks
 * arrive between our own cycles and need no locks.  The connection is
 * watched with a close callback; when libvirtd goes away the driver
 * reports DRV_EV_DISCONNECTED and reconnects from a backoff timer (1 s
 * doubling to 30 s), then reports DRV_EV_CHANGED with a NULL uuid which
 * means "anything may have changed: list the domains again".
 *
 * Pins are live-only (VIR_DOMAIN_AFFECT_LIVE): the persistent definition
 * stays the administrator's.  Errors are -errno: -ENOENT when the domain
 * is gone (the caller drops it quietly), -EIO for other libvirt errors
 * (libvirt's message is logged rate-limited). */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "manager/drv.h"
#include "manager/haltstats.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "libvirt"

#define AGENT_CHANNEL "org.vpower.agent.0"
#define RECONNECT_MIN_MS 1000
#define RECONNECT_MAX_MS 30000

/* ---- Event implementation on sched ---------------------------------- */

/* libvirt's event API (virEventRegisterImpl) is process-wide and its
 * callbacks carry no context pointer, so the loop they run on has to be
 * a file-scope variable: the one exception to "no globals", set once by
 * the first open() and never changed (there is one loop per process). */
static struct sched *ev_sched;

struct ev_handle {
    int watch;
    int fd;                     /* libvirt's fd, passed back to it. */
    int dupfd;                  /* Our registration (libvirt may watch
                                 * one fd twice; epoll needs distinct fds). */
    int events;                 /* VIR_EVENT_HANDLE_*. */
    bool registered;
    virEventHandleCallback cb;
    void *opaque;
    virFreeCallback ff;
    struct ev_handle *next;
};

struct ev_timeout {
    int timer;
    int freq_ms;                /* -1 disabled, 0 every iteration. */
    uint64_t sched_id;          /* 0 when not armed. */
    virEventTimeoutCallback cb;
    void *opaque;
    virFreeCallback ff;
    struct ev_timeout *next;
};

static struct ev_handle *ev_handles;
static struct ev_timeout *ev_timeouts;
static int ev_next_id = 1;

static uint32_t
vir_to_epoll(int ev)
{
    uint32_t e = 0;

    if (ev & VIR_EVENT_HANDLE_READABLE) {
        e |= EPOLLIN;
    }
    if (ev & VIR_EVENT_HANDLE_WRITABLE) {
        e |= EPOLLOUT;
    }
    return e;
}

static int
epoll_to_vir(uint32_t e)
{
    int ev = 0;

    if (e & EPOLLIN) {
        ev |= VIR_EVENT_HANDLE_READABLE;
    }
    if (e & EPOLLOUT) {
        ev |= VIR_EVENT_HANDLE_WRITABLE;
    }
    if (e & EPOLLERR) {
        ev |= VIR_EVENT_HANDLE_ERROR;
    }
    if (e & EPOLLHUP) {
        ev |= VIR_EVENT_HANDLE_HANGUP;
    }
    return ev;
}

static struct ev_handle *
find_handle(int watch)
{
    for (struct ev_handle *h = ev_handles; h; h = h->next) {
        if (h->watch == watch) {
            return h;
        }
    }
    return NULL;
}

static void
handle_fd_cb(int fd, uint32_t events, void *aux)
{
    struct ev_handle *h = aux;

    h->cb(h->watch, h->fd, epoll_to_vir(events), h->opaque);
}

/* An fd watched for no events is taken out of epoll altogether: epoll
 * would still report HUP/ERR for it, and a hung-up socket libvirt is not
 * interested in would wake us in a loop. */
static void
handle_sync(struct ev_handle *h)
{
    uint32_t e = vir_to_epoll(h->events);

    if (!e && h->registered) {
        sched_del_fd(ev_sched, h->dupfd);
        h->registered = false;
    } else if (e && !h->registered) {
        if (sched_add_fd(ev_sched, h->dupfd, e, handle_fd_cb, h) == 0) {
            h->registered = true;
        } else {
            LOG_ERR("cannot watch libvirt fd %d", h->fd);
        }
    } else if (e) {
        sched_mod_fd(ev_sched, h->dupfd, e);
    }
}

static int
ev_add_handle(int fd, int events, virEventHandleCallback cb, void *opaque,
              virFreeCallback ff)
{
    struct ev_handle *h = XNEW(struct ev_handle);
    int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

    if (dupfd < 0) {
        free(h);
        return -1;
    }
    h->watch = ev_next_id++;
    h->fd = fd;
    h->dupfd = dupfd;
    h->events = events;
    h->cb = cb;
    h->opaque = opaque;
    h->ff = ff;
    h->next = ev_handles;
    ev_handles = h;
    handle_sync(h);
    return h->watch;
}

static void
ev_update_handle(int watch, int events)
{
    struct ev_handle *h = find_handle(watch);

    if (h) {
        h->events = events;
        handle_sync(h);
    }
}

/* libvirt requires the free callback to run later, outside the call that
 * removed the handle (it may hold a lock the callback takes). */
struct ev_deferred_free {
    virFreeCallback ff;
    void *opaque;
    uint64_t timer;
    struct ev_deferred_free *next;   /* Pending, for the flush at close. */
};

static struct ev_deferred_free *ev_deferred;

static void
deferred_free_cb(void *aux)
{
    struct ev_deferred_free *df = aux;

    for (struct ev_deferred_free **p = &ev_deferred; *p; p = &(*p)->next) {
        if (*p == df) {
            *p = df->next;
            break;
        }
    }
    df->ff(df->opaque);
    free(df);
}

static void
defer_free(virFreeCallback ff, void *opaque)
{
    if (ff) {
        struct ev_deferred_free *df = XNEW(struct ev_deferred_free);

        df->ff = ff;
        df->opaque = opaque;
        df->next = ev_deferred;
        ev_deferred = df;
        df->timer = sched_add_timer(ev_sched, 0, deferred_free_cb, df);
    }
}

/* Runs the free callbacks still waiting for the loop: after the last
 * connection is closed nothing holds libvirt's locks, and the loop may
 * never turn again (daemon exit), which would leak them. */
static void
flush_deferred_frees(void)
{
    while (ev_deferred) {
        struct ev_deferred_free *df = ev_deferred;

        sched_del_timer(ev_sched, df->timer);
        deferred_free_cb(df);
    }
}

static int
ev_remove_handle(int watch)
{
    for (struct ev_handle **p = &ev_handles; *p; p = &(*p)->next) {
        struct ev_handle *h = *p;

        if (h->watch == watch) {
            *p = h->next;
            if (h->registered) {
                sched_del_fd(ev_sched, h->dupfd);
            }
            close(h->dupfd);
            defer_free(h->ff, h->opaque);
            free(h);
            return 0;
        }
    }
    return -1;
}

static void timeout_arm(struct ev_timeout *);

static void
timeout_fire_cb(void *aux)
{
    struct ev_timeout *t = aux;
    int timer = t->timer;

    t->sched_id = 0;
    /* Re-arm first: the callback may update or remove the timeout. */
    timeout_arm(t);
    t->cb(timer, t->opaque);
}

static void
timeout_arm(struct ev_timeout *t)
{
    if (t->sched_id) {
        sched_del_timer(ev_sched, t->sched_id);
        t->sched_id = 0;
    }
    if (t->freq_ms >= 0) {
        t->sched_id = sched_add_timer(ev_sched,
                                      (uint64_t) t->freq_ms * 1000000u,
                                      timeout_fire_cb, t);
    }
}

static int
ev_add_timeout(int freq_ms, virEventTimeoutCallback cb, void *opaque,
               virFreeCallback ff)
{
    struct ev_timeout *t = XNEW(struct ev_timeout);

    t->timer = ev_next_id++;
    t->freq_ms = freq_ms;
    t->cb = cb;
    t->opaque = opaque;
    t->ff = ff;
    t->next = ev_timeouts;
    ev_timeouts = t;
    timeout_arm(t);
    return t->timer;
}

static void
ev_update_timeout(int timer, int freq_ms)
{
    for (struct ev_timeout *t = ev_timeouts; t; t = t->next) {
        if (t->timer == timer) {
            t->freq_ms = freq_ms;
            timeout_arm(t);
            return;
        }
    }
}

static int
ev_remove_timeout(int timer)
{
    for (struct ev_timeout **p = &ev_timeouts; *p; p = &(*p)->next) {
        struct ev_timeout *t = *p;

        if (t->timer == timer) {
            *p = t->next;
            if (t->sched_id) {
                sched_del_timer(ev_sched, t->sched_id);
            }
            defer_free(t->ff, t->opaque);
            free(t);
            return 0;
        }
    }
    return -1;
}

/* ---- Driver instance ------------------------------------------------- */

struct drv_hv {
    char uri[256];
    struct sched *sched;
    virConnectPtr conn;
    drv_event_cb *cb;
    void *aux;
    int cb_ids[4];
    size_t n_cb_ids;
    int n_host_cpus;
    unsigned backoff_ms;
    uint64_t reconnect_timer;
    bool closing;
};

static void
log_vir_error(const char *what, const char *uuid)
{
    virErrorPtr e = virGetLastError();

    LOG_WARN_RL("%s %s: %s", what, uuid ? uuid : "",
                e && e->message ? e->message : "unknown libvirt error");
}

/* Maps libvirt's last error to -errno: a vanished domain is -ENOENT. */
static int
vir_errno(void)
{
    virErrorPtr e = virGetLastError();

    if (e && (e->code == VIR_ERR_NO_DOMAIN
              || e->code == VIR_ERR_OPERATION_INVALID)) {
        return -ENOENT;
    }
    if (e && e->code == VIR_ERR_NO_SUPPORT) {
        return -ENOTSUP;
    }
    return -EIO;
}

/* Drivers without explicit LIVE support (libvirt's test driver) reject
 * the flag; for a running domain AFFECT_CURRENT is the same thing. */
static bool
flags_unsupported(void)
{
    virErrorPtr e = virGetLastError();

    return e && (e->code == VIR_ERR_INVALID_ARG
                 || e->code == VIR_ERR_NO_SUPPORT);
}

/* libvirt prints every error on stderr unless told otherwise; we log
 * what matters ourselves, rate-limited. */
static void
quiet_error(void *opaque, virErrorPtr e)
{
}

static void
report(struct drv_hv *hv, enum drv_event ev, virDomainPtr dom)
{
    char uuid[VIR_UUID_STRING_BUFLEN];

    if (dom && virDomainGetUUIDString(dom, uuid) == 0) {
        hv->cb(hv->aux, ev, uuid);
    }
}

static int
lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail,
             void *opaque)
{
    struct drv_hv *hv = opaque;

    switch (event) {
    case VIR_DOMAIN_EVENT_STARTED:
    case VIR_DOMAIN_EVENT_RESUMED:
        report(hv, DRV_EV_STARTED, dom);
        break;
    case VIR_DOMAIN_EVENT_STOPPED:
    case VIR_DOMAIN_EVENT_CRASHED:
        report(hv, DRV_EV_STOPPED, dom);
        break;
    case VIR_DOMAIN_EVENT_DEFINED:
    case VIR_DOMAIN_EVENT_UNDEFINED:
        /* Only running domains matter; a redefinition of a running one
         * may change its vCPUs or static pins. */
        if (virDomainIsActive(dom) == 1) {
            report(hv, DRV_EV_CHANGED, dom);
        }
        break;
    default:
        break;
    }
    return 0;
}

static void
device_cb(virConnectPtr conn, virDomainPtr dom, const char *alias,
          void *opaque)
{
    /* vCPU hotplug arrives as device events with aliases "vcpuN". */
    report(opaque, DRV_EV_CHANGED, dom);
}

static void
tunable_cb(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params,
           int nparams, void *opaque)
{
    /* Our own pins raise "cputune.*" tunable events: ignore those. */
    for (int i = 0; i < nparams; i++) {
        if (strncmp(params[i].field, "cputune.", 8)) {
            report(opaque, DRV_EV_CHANGED, dom);
            return;
        }
    }
}

static void schedule_reconnect(struct drv_hv *);

static void
close_cb(virConnectPtr conn, int reason, void *opaque)
{
    struct drv_hv *hv = opaque;

    if (hv->closing) {
        return;
    }
    LOG_WARN("connection to %s lost (reason %d); reconnecting", hv->uri,
             reason);
    /* The connection object is unusable now; drop our reference from a
     * timer, not inside libvirt's own callback. */
    schedule_reconnect(hv);
    hv->cb(hv->aux, DRV_EV_DISCONNECTED, NULL);
}

static void
deregister_events(struct drv_hv *hv)
{
    if (!hv->conn) {
        return;
    }
    for (size_t i = 0; i < hv->n_cb_ids; i++) {
        virConnectDomainEventDeregisterAny(hv->conn, hv->cb_ids[i]);
    }
    hv->n_cb_ids = 0;
    virConnectUnregisterCloseCallback(hv->conn, close_cb);
}

static int
do_connect(struct drv_hv *hv, char *err, size_t errlen)
{
    int id;

    hv->conn = virConnectOpen(hv->uri);
    if (!hv->conn) {
        virErrorPtr e = virGetLastError();

        snprintf(err, errlen, "cannot connect to %s: %s", hv->uri,
                 e && e->message ? e->message : "unknown error");
        return -ECONNREFUSED;
    }
    hv->n_host_cpus = virNodeGetCPUMap(hv->conn, NULL, NULL, 0);
    if (hv->n_host_cpus <= 0) {
        hv->n_host_cpus = 1;
    }
    /* Keepalive notices a hung libvirtd, not only a closed socket. */
    virConnectSetKeepAlive(hv->conn, 5, 3);
    virConnectRegisterCloseCallback(hv->conn, close_cb, hv, NULL);

    id = virConnectDomainEventRegisterAny(
        hv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
        VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb), hv, NULL);
    if (id >= 0) {
        hv->cb_ids[hv->n_cb_ids++] = id;
    }
    id = virConnectDomainEventRegisterAny(
        hv->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED,
        VIR_DOMAIN_EVENT_CALLBACK(device_cb), hv, NULL);
    if (id >= 0) {
        hv->cb_ids[hv->n_cb_ids++] = id;
    }
    id = virConnectDomainEventRegisterAny(
        hv->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
        VIR_DOMAIN_EVENT_CALLBACK(device_cb), hv, NULL);
    if (id >= 0) {
        hv->cb_ids[hv->n_cb_ids++] = id;
    }
    id = virConnectDomainEventRegisterAny(
        hv->conn, NULL, VIR_DOMAIN_EVENT_ID_TUNABLE,
        VIR_DOMAIN_EVENT_CALLBACK(tunable_cb), hv, NULL);
    if (id >= 0) {
        hv->cb_ids[hv->n_cb_ids++] = id;
    }
    if (hv->n_cb_ids == 0) {
        snprintf(err, errlen, "%s: cannot register domain events", hv->uri);
        deregister_events(hv);
        virConnectClose(hv->conn);
        hv->conn = NULL;
        return -EIO;
    }
    return 0;
}

static void
reconnect_cb(void *aux)
{
    struct drv_hv *hv = aux;
    char err[256];

    hv->reconnect_timer = 0;
    if (hv->conn) {
        deregister_events(hv);
        virConnectClose(hv->conn);
        hv->conn = NULL;
    }
    if (do_connect(hv, err, sizeof err) < 0) {
        LOG_WARN_RL("%s; retrying in %u ms", err, hv->backoff_ms);
        schedule_reconnect(hv);
        return;
    }
    LOG_INFO("reconnected to %s", hv->uri);
    hv->backoff_ms = RECONNECT_MIN_MS;
    hv->cb(hv->aux, DRV_EV_CHANGED, NULL);
}

static void
schedule_reconnect(struct drv_hv *hv)
{
    uint64_t delay;

    if (hv->reconnect_timer) {
        return;
    }
    delay = (uint64_t) hv->backoff_ms * 1000000u;
    hv->backoff_ms = hv->backoff_ms * 2 > RECONNECT_MAX_MS
                     ? RECONNECT_MAX_MS : hv->backoff_ms * 2;
    hv->reconnect_timer = sched_add_timer(hv->sched, delay, reconnect_cb, hv);
}

static struct drv_hv *
lv_open(const char *uri, struct sched *s, drv_event_cb *cb, void *aux,
        char *err, size_t errlen)
{
    struct drv_hv *hv;

    if (!ev_sched) {
        ev_sched = s;
        /* Must precede virConnectOpen: connections pick the event
         * implementation up when they are opened. */
        virSetErrorFunc(NULL, quiet_error);
        virEventRegisterImpl(ev_add_handle, ev_update_handle,
                             ev_remove_handle, ev_add_timeout,
                             ev_update_timeout, ev_remove_timeout);
    } else if (ev_sched != s) {
        snprintf(err, errlen, "libvirt events already bound to a loop");
        return NULL;
    }
    hv = XNEW(struct drv_hv);
    snprintf(hv->uri, sizeof hv->uri, "%s", uri ? uri : "qemu:///system");
    hv->sched = s;
    hv->cb = cb;
    hv->aux = aux;
    hv->backoff_ms = RECONNECT_MIN_MS;
    if (do_connect(hv, err, errlen) < 0) {
        free(hv);
        return NULL;
    }
    return hv;
}

static void
lv_close(struct drv_hv *hv)
{
    if (!hv) {
        return;
    }
    hv->closing = true;
    if (hv->reconnect_timer) {
        sched_del_timer(hv->sched, hv->reconnect_timer);
    }
    if (hv->conn) {
        deregister_events(hv);
        virConnectClose(hv->conn);
    }
    flush_deferred_frees();
    free(hv);
}

static virDomainPtr
lookup(struct drv_hv *hv, const char *uuid)
{
    virDomainPtr dom;

    if (!hv->conn) {
        return NULL;
    }
    dom = virDomainLookupByUUIDString(hv->conn, uuid);
    return dom;
}

/* ---- XML facts (no XML library: only a few fixed elements) ---------- */

/* Copies the value of attribute 'attr' of the tag starting at 'tag' (up
 * to its '>') into 'buf'.  Returns true if found. */
static bool
xml_attr(const char *tag, const char *attr, char *buf, size_t len)
{
    const char *end = strchr(tag, '>');
    size_t alen = strlen(attr);

    for (const char *p = tag; p && end && p < end; p++) {
        if (!strncmp(p, attr, alen) && p[alen] == '=' && p > tag
            && (p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t')) {
            char q = p[alen + 1];
            const char *v = p + alen + 2, *ve;

            if (q != '\'' && q != '"') {
                return false;
            }
            ve = strchr(v, q);
            if (!ve || ve > end || (size_t) (ve - v) >= len) {
                return false;
            }
            memcpy(buf, v, (size_t) (ve - v));
            buf[ve - v] = '\0';
            return true;
        }
    }
    return false;
}

/* Adds pin 's' to d's static pins unless it covers every one of the
 * host's 'n_host' CPUs: such a pin constrains nothing.  It is also what
 * vpowerd's own restore leaves in a transient domain's live XML (the
 * original "no pinning" reads back as all CPUs), which must not make the
 * next vpowerd take the domain for an administrator-pinned one. */
static void
add_static_pin(struct drv_dom *d, const struct cpuset *s, int n_host)
{
    bool all = n_host > 0;

    for (int c = 0; all && c < n_host && c < POL_MAX_CPUS; c++) {
        all = cpuset_has(s, (unsigned) c);
    }
    if (!all) {
        d->static_pinning = true;
        cpuset_or(&d->static_cpus, &d->static_cpus, s);
    }
}

/* Static pins of the administrator: <vcpu cpuset=...>, <vcpupin>,
 * <emulatorpin> in the persistent (inactive) definition -- the live one
 * also shows the pins vpowerd itself made.  Transient domains have only
 * the live one; vpowerd decides about them once, when it first sees
 * them, before it pins anything. */
static void
parse_static_pins(const char *xml, struct drv_dom *d, int n_host)
{
    const char *p;
    char val[512];
    struct cpuset s;

    cpuset_zero(&d->static_cpus);
    d->static_pinning = false;
    p = strstr(xml, "<vcpu ");
    if (p && xml_attr(p, "cpuset", val, sizeof val)
        && cpuset_parse(&s, val) == 0) {
        add_static_pin(d, &s, n_host);
    }
    p = strstr(xml, "<cputune");
    if (!p) {
        return;
    }
    for (const char *q = p; (q = strstr(q, "<vcpupin ")); q++) {
        if (xml_attr(q, "cpuset", val, sizeof val)
            && cpuset_parse(&s, val) == 0) {
            add_static_pin(d, &s, n_host);
        }
    }
    for (const char *q = p; (q = strstr(q, "<emulatorpin ")); q++) {
        if (xml_attr(q, "cpuset", val, sizeof val)
            && cpuset_parse(&s, val) == 0) {
            add_static_pin(d, &s, n_host);
        }
    }
}

static void
parse_agent_path(const char *xml, struct drv_dom *d)
{
    char val[DRV_PATH_LEN];

    d->agent_path[0] = '\0';
    for (const char *c = xml; (c = strstr(c, "<channel ")); c++) {
        const char *end = strstr(c, "</channel>");
        const char *src = strstr(c, "<source ");
        const char *tgt = strstr(c, "<target ");

        if (!end || !src || !tgt || src > end || tgt > end) {
            continue;
        }
        if (xml_attr(tgt, "name", val, sizeof val)
            && !strcmp(val, AGENT_CHANNEL)
            && xml_attr(src, "path", val, sizeof val)) {
            snprintf(d->agent_path, sizeof d->agent_path, "%s", val);
            return;
        }
    }
}

static int
fill_dom(struct drv_hv *hv, virDomainPtr dom, struct drv_dom *d)
{
    char *xml;
    int n;

    memset(d, 0, sizeof *d);
    if (virDomainGetUUIDString(dom, d->uuid) < 0) {
        return vir_errno();
    }
    snprintf(d->name, sizeof d->name, "%s", virDomainGetName(dom));
    d->id = (int) virDomainGetID(dom);
    d->persistent = virDomainIsPersistent(dom) == 1;
    n = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_LIVE);
    if (n < 0) {
        return vir_errno();
    }
    d->n_vcpus = (unsigned) n;
    xml = virDomainGetXMLDesc(dom, d->persistent ? VIR_DOMAIN_XML_INACTIVE
                                                 : 0);
    if (xml) {
        /* Number of host CPUs (online or not); -1 if unknown, and then
         * every pin counts as static, the safe side. */
        parse_static_pins(xml, d, virNodeGetCPUMap(hv->conn, NULL, NULL, 0));
        free(xml);
    }
    xml = virDomainGetXMLDesc(dom, 0);
    if (xml) {
        parse_agent_path(xml, d);
        free(xml);
    }
    return 0;
}

static int
lv_list(struct drv_hv *hv, struct drv_dom **doms, size_t *n)
{
    virDomainPtr *list = NULL;
    int cnt;
    size_t k = 0;

    *doms = NULL;
    *n = 0;
    if (!hv->conn) {
        return -ENOTCONN;
    }
    cnt = virConnectListAllDomains(hv->conn, &list,
                                   VIR_CONNECT_LIST_DOMAINS_ACTIVE);
    if (cnt < 0) {
        log_vir_error("listing domains", NULL);
        return -EIO;
    }
    *doms = XNEWARRAY(struct drv_dom, cnt ? (size_t) cnt : 1);
    for (int i = 0; i < cnt; i++) {
        /* A domain stopping while we list is simply not listed. */
        if (fill_dom(hv, list[i], &(*doms)[k]) == 0) {
            k++;
        }
        virDomainFree(list[i]);
    }
    free(list);
    *n = k;
    return 0;
}

static int
lv_vcpu_stats(struct drv_hv *hv, const char *uuid, struct drv_vcpu_stat *out,
              size_t max, size_t *n)
{
    virDomainPtr dom = lookup(hv, uuid);
    virDomainPtr doms[2];
    virDomainStatsRecordPtr *recs = NULL;
    virVcpuInfoPtr info;
    struct halt_stats *halt = NULL;
    int r, nv = 0;
    bool bulk;

    *n = 0;
    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    doms[0] = dom;
    doms[1] = NULL;
    r = virDomainListGetStats(doms, VIR_DOMAIN_STATS_VCPU, &recs, 0);
    if (r < 0 && vir_errno() == -ENOENT) {
        r = -ENOENT;
        goto out;
    }
    memset(out, 0, max * sizeof *out);
    for (size_t i = 0; i < max; i++) {
        out[i].cpu = -1;
    }
    halt = XNEWARRAY(struct halt_stats, max ? max : 1);
    for (int i = 0; r > 0 && i < recs[0]->nparams; i++) {
        virTypedParameterPtr p = &recs[0]->params[i];
        unsigned idx;
        char field[32];

        if (!strcmp(p->field, "vcpu.current")) {
            nv = (int) p->value.ui > nv ? (int) p->value.ui : nv;
            continue;
        }
        if (sscanf(p->field, "vcpu.%u.%31s", &idx, field) != 2
            || idx >= max) {
            continue;
        }
        if ((int) idx + 1 > nv) {
            nv = (int) idx + 1;
        }
        if (p->type != VIR_TYPED_PARAM_ULLONG) {
            continue;
        }
        /* KVM binary stats (vcpu.N.halt_poll_*_ns.sum): TCG has none. */
        if (halt_stats_field(halt, (unsigned) max, p->field,
                             p->value.ul) == 1) {
            continue;
        }
        if (!strcmp(field, "time")) {
            out[idx].time_ns = p->value.ul;
        } else if (!strcmp(field, "delay")) {
            out[idx].delay_ns = p->value.ul;
            out[idx].has_delay = true;
        }
    }
    for (size_t i = 0; i < max; i++) {
        if (halt[i].valid) {
            out[i].halt_poll_ns = halt[i].poll_success_ns
                                  + halt[i].poll_fail_ns;
            out[i].has_halt = true;
        }
    }
    /* Without bulk vCPU stats (older or test drivers) the vCPU info's
     * cpuTime still gives busy time, without run-queue delay. */
    bulk = nv > 0;
    if (!bulk) {
        nv = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_LIVE);
        if (nv < 0) {
            nv = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_CURRENT);
        }
        if (nv < 0) {
            r = vir_errno();
            goto out;
        }
    }
    if ((size_t) nv > max) {
        nv = (int) max;
    }
    /* Last CPU each vCPU ran on: not in the bulk stats. */
    info = XNEWARRAY(virVcpuInfo, nv ? (size_t) nv : 1);
    r = nv ? virDomainGetVcpus(dom, info, nv, NULL, 0) : 0;
    for (int i = 0; i < r; i++) {
        if (info[i].number < max) {
            out[info[i].number].cpu = info[i].cpu;
            if (!bulk) {
                out[info[i].number].time_ns = info[i].cpuTime;
            }
        }
    }
    free(info);
    *n = (size_t) nv;
    r = 0;
out:
    free(halt);
    if (recs) {
        virDomainStatsRecordListFree(recs);
    }
    virDomainFree(dom);
    return r;
}

static void
set_to_map(struct drv_hv *hv, const struct cpuset *s, unsigned char *map,
           int maplen)
{
    memset(map, 0, (size_t) maplen);
    CPUSET_FOREACH (cpu, s) {
        if (cpu < hv->n_host_cpus) {
            VIR_USE_CPU(map, cpu);
        }
    }
}

static void
map_to_set(const unsigned char *map, int maplen, struct cpuset *s)
{
    cpuset_zero(s);
    for (int cpu = 0; cpu < maplen * 8 && cpu < POL_MAX_CPUS; cpu++) {
        if (VIR_CPU_USABLE(map, maplen, 0, cpu)) {
            cpuset_set(s, (unsigned) cpu);
        }
    }
}

static int
lv_pin_vcpu(struct drv_hv *hv, const char *uuid, unsigned vcpu,
            const struct cpuset *s)
{
    virDomainPtr dom = lookup(hv, uuid);
    int maplen, r = 0;
    unsigned char *map;

    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    maplen = VIR_CPU_MAPLEN(hv->n_host_cpus);
    map = xmalloc((size_t) maplen);
    set_to_map(hv, s, map, maplen);
    if (virDomainPinVcpuFlags(dom, vcpu, map, maplen,
                              VIR_DOMAIN_AFFECT_LIVE) < 0
        && (!flags_unsupported()
            || virDomainPinVcpuFlags(dom, vcpu, map, maplen,
                                     VIR_DOMAIN_AFFECT_CURRENT) < 0)) {
        r = vir_errno();
        if (r != -ENOENT) {
            log_vir_error("pinning vCPU of", uuid);
        }
    }
    free(map);
    virDomainFree(dom);
    return r;
}

static int
lv_pin_emulator(struct drv_hv *hv, const char *uuid, const struct cpuset *s)
{
    virDomainPtr dom = lookup(hv, uuid);
    virDomainIOThreadInfoPtr *iot = NULL;
    int maplen, r = 0, n;
    unsigned char *map;

    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    maplen = VIR_CPU_MAPLEN(hv->n_host_cpus);
    map = xmalloc((size_t) maplen);
    set_to_map(hv, s, map, maplen);
    if (virDomainPinEmulator(dom, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0) {
        r = vir_errno();
        if (r != -ENOENT) {
            log_vir_error("pinning emulator of", uuid);
        }
        goto out;
    }
    /* IOThreads follow the emulator: a freed core still running a QEMU
     * I/O thread never reaches deep idle. */
    n = virDomainGetIOThreadInfo(dom, &iot, VIR_DOMAIN_AFFECT_LIVE);
    for (int i = 0; i < n; i++) {
        if (virDomainPinIOThread(dom, iot[i]->iothread_id, map, maplen,
                                 VIR_DOMAIN_AFFECT_LIVE) < 0 && !r) {
            r = vir_errno();
            log_vir_error("pinning iothread of", uuid);
        }
        virDomainIOThreadInfoFree(iot[i]);
    }
    free(iot);
out:
    free(map);
    virDomainFree(dom);
    return r;
}

static int
lv_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                struct cpuset *s)
{
    virDomainPtr dom = lookup(hv, uuid);
    int maplen, n, r = 0;
    unsigned char *maps;

    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    maplen = VIR_CPU_MAPLEN(hv->n_host_cpus);
    n = (int) vcpu + 1;
    maps = xcalloc((size_t) n, (size_t) maplen);
    if (virDomainGetVcpuPinInfo(dom, n, maps, maplen,
                                VIR_DOMAIN_AFFECT_LIVE) < 0
        && (!flags_unsupported()
            || virDomainGetVcpuPinInfo(dom, n, maps, maplen,
                                       VIR_DOMAIN_AFFECT_CURRENT) < 0)) {
        r = vir_errno();
    } else {
        map_to_set(VIR_GET_CPUMAP(maps, maplen, vcpu), maplen, s);
    }
    free(maps);
    virDomainFree(dom);
    return r;
}

static int
lv_get_emulator_pin(struct drv_hv *hv, const char *uuid, struct cpuset *s)
{
    virDomainPtr dom = lookup(hv, uuid);
    int maplen, r = 0;
    unsigned char *map;

    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    maplen = VIR_CPU_MAPLEN(hv->n_host_cpus);
    map = xcalloc(1, (size_t) maplen);
    if (virDomainGetEmulatorPinInfo(dom, map, maplen,
                                    VIR_DOMAIN_AFFECT_LIVE) < 0) {
        r = vir_errno();
    } else {
        map_to_set(map, maplen, s);
    }
    free(map);
    virDomainFree(dom);
    return r;
}

static int
lv_get_metadata(struct drv_hv *hv, const char *uuid, char *buf, size_t len)
{
    virDomainPtr dom = lookup(hv, uuid);
    char *md;
    int r = 0;

    buf[0] = '\0';
    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    md = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, VPOWER_XML_NS,
                              VIR_DOMAIN_AFFECT_LIVE);
    if (md) {
        if (strlen(md) >= len) {
            r = -ENAMETOOLONG;
        } else {
            snprintf(buf, len, "%s", md);
        }
        free(md);
    } else {
        virErrorPtr e = virGetLastError();

        if (!e || e->code != VIR_ERR_NO_DOMAIN_METADATA) {
            r = vir_errno();
        }
    }
    virDomainFree(dom);
    return r;
}

static int
lv_set_metadata(struct drv_hv *hv, const char *uuid, const char *xml)
{
    virDomainPtr dom = lookup(hv, uuid);
    unsigned flags = VIR_DOMAIN_AFFECT_LIVE;
    int r = 0;

    if (!dom) {
        return hv->conn ? -ENOENT : -ENOTCONN;
    }
    if (virDomainIsPersistent(dom) == 1) {
        flags |= VIR_DOMAIN_AFFECT_CONFIG;
    }
    if (virDomainSetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, xml,
                             xml ? VPOWER_XML_PREFIX : NULL, VPOWER_XML_NS,
                             flags) < 0) {
        r = vir_errno();
        log_vir_error("setting metadata of", uuid);
    }
    virDomainFree(dom);
    return r;
}

const struct drv_hv_ops drv_hv_libvirt = {
    .name = "libvirt",
    .caps = DRV_HV_LOCAL_QEMU,
    .open = lv_open,
    .close = lv_close,
    .list = lv_list,
    .vcpu_stats = lv_vcpu_stats,
    .pin_vcpu = lv_pin_vcpu,
    .pin_emulator = lv_pin_emulator,
    .get_vcpu_pin = lv_get_vcpu_pin,
    .get_emulator_pin = lv_get_emulator_pin,
    .get_metadata = lv_get_metadata,
    .set_metadata = lv_set_metadata,
};
