/* manager/drivers/drv_libvirt.c -- drv_hv_libvirt: domains, vCPU stats and
 * pins
 * through one libvirt connection, with libvirt's events in our loop.
 *
 * libvirt delivers domain events only through an event implementation;
 * the first open binds it to the daemon's loop (manager/drivers/virtloop.h),
 * so
 * the RPC socket, keepalive timers and event dispatch of libvirt all run
 * in vpowerd's one thread: callbacks arrive between our own cycles and
 * need no locks.  What the driver reads from domain XML (static pins,
 * the agent channel) is parsed by manager/drivers/domxml.h.  The connection is
 * watched with a close callback; when libvirtd goes away the driver
 * reports DRV_EV_DISCONNECTED and reconnects from a backoff timer (1 s
 * doubling to 30 s), then reports DRV_EV_CHANGED with a NULL uuid which
 * means "anything may have changed: list the domains again".
 *
 * Live migration: lifecycle events with a MIGRATED detail and the
 * memory-iteration events are also reported to an optional migration
 * callback (drv.h, enum drv_migr; the mapping is in
 * manager/drivers/drv_libvirt.h), and migr_job() reads the domain's running
 * job
 * (virDomainGetJobStats: type and operation).  libvirt's live pins travel
 * with a migrating domain: it arrives pinned as the source left it.
 *
 * Pins are live-only (VIR_DOMAIN_AFFECT_LIVE): the persistent definition
 * stays the administrator's.  Errors are -errno: -ENOENT when the domain
 * is gone (the caller drops it quietly), -EIO for other libvirt errors
 * (libvirt's message is logged rate-limited).
 *
 * Every libvirt call is a round trip to libvirtd, and a guest's hint
 * waits for the pins it causes.  libvirt has no call that pins several
 * vCPUs at once: through libvirt the floor for a VM is one
 * virDomainPinVcpuFlags per vCPU whose set changes, one
 * virDomainPinEmulator and one virDomainPinIOThread per IOThread, a
 * millisecond or more each.  For a local QEMU (URI "" or qemu:///system)
 * the driver therefore puts a pin in force through the domain's cpuset
 * groups first, as libvirt itself would (manager/drivers/cgpin.h), and
 * makes the same pin through libvirt afterwards from a timer, one call
 * per loop turn, so libvirt's view follows within milliseconds; where
 * that is not possible it pins through libvirt at once.  It looks a
 * domain up once (struct dom_cache), reads all of a domain's vCPU pins
 * in one virDomainGetVcpuPinInfo, and skips a pin whose set is already
 * in force as far as it knows: what it set or read last.  That knowledge
 * is dropped with every lifecycle or device event of the domain and on
 * reconnection, and a vCPU's or the emulator's is dropped when a tunable
 * event reports a pin other than the one remembered (someone else
 * pinned it) or a pin call fails.  Without all its events registered
 * the driver skips nothing. */

#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "manager/drivers/cgpin.h"
#include "manager/drivers/domxml.h"
#include "manager/drivers/drv.h"
#include "manager/drivers/drv_libvirt.h"
#include "manager/inputs/haltstats.h"
#include "manager/inputs/taskstats.h"
#include "manager/log.h"
#include "manager/drivers/virtloop.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "libvirt"

#define AGENT_CHANNEL "org.vpower.agent.0"
#define RECONNECT_MIN_MS 1000
#define RECONNECT_MAX_MS 30000
#define GET_PIN_MAPS 256        /* vCPU pins read in one call (at least). */
#define PENDING_RETRY_NS 1000000000ull  /* A pin libvirt could not record
                                         * (a migration job runs, an
                                         * error): tried again after 1 s. */

/* ---- Driver instance ------------------------------------------------- */

/* What the driver knows of one domain it has looked up. */
struct dom_cache {
    char uuid[DRV_UUID_LEN];
    virDomainPtr dom;           /* Our reference, from one lookup. */
    size_t n_vcpus;             /* Entries of vcpu[] and vcpu_known[]. */
    struct cpuset *vcpu;        /* Pin in force, where vcpu_known[]. */
    bool *vcpu_known;
    struct cpuset emu;          /* Emulator and IOThreads' pin in force, */
    bool emu_known;             /* ...if this is true. */
    int cg_state;               /* 0: cgdir not looked for yet, 1: found,
                                 * -1: none (pins go through libvirt). */
    char cgdir[CGPIN_PATH_MAX]; /* The domain's cpuset group (cgpin.h). */
    struct dom_cache *next;
};

/* A pin in force in the kernel that libvirt has not recorded yet. */
struct pending {
    char uuid[DRV_UUID_LEN];
    unsigned vcpu;              /* UINT_MAX: the emulator and IOThreads. */
    struct cpuset set;
    struct pending *next;
};

struct drv_hv {
    char uri[256];
    struct sched *sched;
    virConnectPtr conn;
    drv_event_cb *cb;
    void *aux;
    drv_migr_cb *migr_cb;       /* NULL: nobody asked. */
    void *migr_aux;
    int cb_ids[6];              /* One per entry of events[]. */
    size_t n_cb_ids;
    int n_host_cpus;
    unsigned backoff_ms;
    uint64_t reconnect_timer;
    bool closing;
    struct dom_cache *doms;     /* Domains looked up, most recent first. */
    bool may_skip;              /* Every event registered: pins known to
                                 * be in force may be skipped. */
    bool local;                 /* QEMU runs here: pins go through its
                                 * cpuset groups first (cgpin.h). */
    struct cgpin cg;
    struct pending *pending;    /* Oldest first. */
    uint64_t pending_timer;     /* 0: not armed. */
};

/* ---- What is known to be in force ------------------------------------ */

static struct dom_cache *
cache_find(struct drv_hv *hv, const char *uuid)
{
    for (struct dom_cache *e = hv->doms; e; e = e->next) {
        if (!strcmp(e->uuid, uuid)) {
            return e;
        }
    }
    return NULL;
}

/* Forgets domain 'uuid' (NULL: every domain) and releases its lookup. */
static void
cache_drop(struct drv_hv *hv, const char *uuid)
{
    struct dom_cache **pp = &hv->doms;

    while (*pp) {
        struct dom_cache *e = *pp;

        if (uuid && strcmp(e->uuid, uuid)) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        virDomainFree(e->dom);
        free(e->vcpu);
        free(e->vcpu_known);
        free(e);
    }
}

/* Domain 'uuid''s entry, looked up on first use.  Returns 0, -ENOTCONN
 * while disconnected or -ENOENT if there is no such domain. */
static int
cache_get(struct drv_hv *hv, const char *uuid, struct dom_cache **out)
{
    struct dom_cache *e;
    virDomainPtr dom;

    if (!hv->conn) {
        return -ENOTCONN;
    }
    e = cache_find(hv, uuid);
    if (!e) {
        dom = virDomainLookupByUUIDString(hv->conn, uuid);
        if (!dom) {
            return -ENOENT;
        }
        e = XNEW(struct dom_cache);
        snprintf(e->uuid, sizeof e->uuid, "%s", uuid);
        e->dom = dom;
        e->next = hv->doms;
        hv->doms = e;
    }
    *out = e;
    return 0;
}

/* Records that vCPU 'vcpu' of 'e' is pinned to 's' (NULL: unknown). */
static void
cache_set_vcpu(struct dom_cache *e, unsigned vcpu, const struct cpuset *s)
{
    if (vcpu >= e->n_vcpus) {
        size_t n = (size_t) vcpu + 1;

        if (!s) {
            return;
        }
        e->vcpu = xrealloc(e->vcpu, n * sizeof *e->vcpu);
        e->vcpu_known = xrealloc(e->vcpu_known, n * sizeof *e->vcpu_known);
        memset(e->vcpu_known + e->n_vcpus, 0,
               (n - e->n_vcpus) * sizeof *e->vcpu_known);
        e->n_vcpus = n;
    }
    e->vcpu_known[vcpu] = s != NULL;
    if (s) {
        e->vcpu[vcpu] = *s;
    }
}

/* Whether vCPU 'vcpu' of 'e' (UINT_MAX: the emulator) is known to be
 * pinned to 's', so a pin to 's' may be skipped. */
static bool
cache_has_pin(const struct drv_hv *hv, const struct dom_cache *e,
              unsigned vcpu, const struct cpuset *s)
{
    if (vcpu == UINT_MAX) {
        return hv->may_skip && e->emu_known && cpuset_equal(&e->emu, s);
    }
    return hv->may_skip && vcpu < e->n_vcpus && e->vcpu_known[vcpu]
           && cpuset_equal(&e->vcpu[vcpu], s);
}

/* 's' without the CPUs the host does not have: what a pin puts in
 * force and what libvirt reports. */
static void
clip(const struct drv_hv *hv, const struct cpuset *s, struct cpuset *out)
{
    cpuset_zero(out);
    CPUSET_FOREACH (cpu, s) {
        if (cpu < hv->n_host_cpus) {
            cpuset_set(out, (unsigned) cpu);
        }
    }
}

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

/* Forgets what is known of 'dom': its pins may have changed. */
static void
forget(struct drv_hv *hv, virDomainPtr dom)
{
    char uuid[VIR_UUID_STRING_BUFLEN];

    if (dom && virDomainGetUUIDString(dom, uuid) == 0) {
        cache_drop(hv, uuid);
    }
}

struct drv_lv_event
drv_libvirt_lifecycle(int event, int detail)
{
    struct drv_lv_event r = { -1, -1 };

    switch (event) {
    case VIR_DOMAIN_EVENT_STARTED:
        r.ev = DRV_EV_STARTED;
        if (detail == VIR_DOMAIN_EVENT_STARTED_MIGRATED) {
            r.migr = DRV_MIGR_IN_BEGIN;
        }
        break;
    case VIR_DOMAIN_EVENT_RESUMED:
        r.ev = DRV_EV_STARTED;
        if (detail == VIR_DOMAIN_EVENT_RESUMED_MIGRATED) {
            r.migr = DRV_MIGR_RESUMED;
        }
        break;
    case VIR_DOMAIN_EVENT_SUSPENDED:
        /* The source pauses for the last copy (pre-copy) or for the
         * switch to post-copy; other pauses change nothing for us. */
        if (detail == VIR_DOMAIN_EVENT_SUSPENDED_MIGRATED
            || detail == VIR_DOMAIN_EVENT_SUSPENDED_POSTCOPY) {
            r.migr = DRV_MIGR_OUT_BEGIN;
        }
        break;
    case VIR_DOMAIN_EVENT_STOPPED:
        r.ev = DRV_EV_STOPPED;
        if (detail == VIR_DOMAIN_EVENT_STOPPED_MIGRATED) {
            r.migr = DRV_MIGR_GONE;
        }
        break;
    case VIR_DOMAIN_EVENT_CRASHED:
        r.ev = DRV_EV_STOPPED;
        break;
    case VIR_DOMAIN_EVENT_DEFINED:
    case VIR_DOMAIN_EVENT_UNDEFINED:
        r.ev = DRV_EV_CHANGED;
        break;
    default:
        break;
    }
    return r;
}

static void
report_migr(struct drv_hv *hv, enum drv_migr ev, virDomainPtr dom)
{
    char uuid[VIR_UUID_STRING_BUFLEN];

    if (hv->migr_cb && dom && virDomainGetUUIDString(dom, uuid) == 0) {
        hv->migr_cb(hv->migr_aux, ev, uuid);
    }
}

static int
lifecycle_cb(virConnectPtr conn, virDomainPtr dom, int event, int detail,
             void *opaque)
{
    struct drv_hv *hv = opaque;
    struct drv_lv_event m = drv_libvirt_lifecycle(event, detail);

    forget(hv, dom);
    if (m.migr >= 0) {
        report_migr(hv, (enum drv_migr) m.migr, dom);
    }
    /* Only running domains matter; a redefinition of a running one may
     * change its vCPUs or static pins. */
    if (m.ev == DRV_EV_CHANGED && virDomainIsActive(dom) != 1) {
        return 0;
    }
    if (m.ev >= 0) {
        report(hv, (enum drv_event) m.ev, dom);
    }
    return 0;
}

/* Each pass over the memory of a domain migrating away; the first one
 * is the earliest sign of an outgoing migration on the source. */
static void
iteration_cb(virConnectPtr conn, virDomainPtr dom, int iteration,
             void *opaque)
{
    report_migr(opaque, DRV_MIGR_OUT_BEGIN, dom);
}

static void
device_cb(virConnectPtr conn, virDomainPtr dom, const char *alias,
          void *opaque)
{
    /* vCPU hotplug arrives as device events with aliases "vcpuN". */
    forget(opaque, dom);
    report(opaque, DRV_EV_CHANGED, dom);
}

/* A pin that tunable parameter 'p' reports for 'e': one that is not the
 * pin remembered (someone else's, or an older one of ours) makes that
 * pin unknown, so the next pin call is made. */
static void
tunable_pin(struct drv_hv *hv, struct dom_cache *e,
            const virTypedParameter *p)
{
    struct cpuset got;
    unsigned vcpu;
    char end;
    bool ok;

    ok = p->type == VIR_TYPED_PARAM_STRING && p->value.s
         && cpuset_parse(&got, p->value.s) == 0;
    if (ok) {
        clip(hv, &got, &got);
    }
    /* IOThreads follow the emulator (lv_pin_emulator). */
    if (!strcmp(p->field, VIR_DOMAIN_TUNABLE_CPU_EMULATORPIN)
        || !strncmp(p->field, "cputune.iothreadpin", 19)) {
        e->emu_known = e->emu_known && ok && cpuset_equal(&got, &e->emu);
    } else if (sscanf(p->field, "cputune.vcpupin%u%c", &vcpu, &end) == 1
               && vcpu < e->n_vcpus && e->vcpu_known[vcpu]
               && !(ok && cpuset_equal(&got, &e->vcpu[vcpu]))) {
        cache_set_vcpu(e, vcpu, NULL);
    }
}

static void
tunable_cb(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params,
           int nparams, void *opaque)
{
    struct drv_hv *hv = opaque;
    char uuid[VIR_UUID_STRING_BUFLEN];
    struct dom_cache *e = NULL;

    if (dom && virDomainGetUUIDString(dom, uuid) == 0) {
        e = cache_find(hv, uuid);
    }
    /* Pins ("cputune.*pin*", ours too) only change what the cache
     * knows; anything else may change the domain. */
    for (int i = 0; i < nparams; i++) {
        if (strncmp(params[i].field, "cputune.", 8)) {
            forget(hv, dom);
            report(hv, DRV_EV_CHANGED, dom);
            return;
        }
        if (e) {
            tunable_pin(hv, e, &params[i]);
        }
    }
}

static void schedule_reconnect(struct drv_hv *);
static void pending_arm(struct drv_hv *);
static bool pending_take(struct drv_hv *, const char *uuid, unsigned vcpu,
                         struct pending *out);
static int pending_one(struct drv_hv *);

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
    hv->may_skip = false;
    schedule_reconnect(hv);
    hv->cb(hv->aux, DRV_EV_DISCONNECTED, NULL);
}

static void
deregister_events(struct drv_hv *hv)
{
    cache_drop(hv, NULL);
    hv->may_skip = false;
    if (!hv->conn) {
        return;
    }
    for (size_t i = 0; i < hv->n_cb_ids; i++) {
        virConnectDomainEventDeregisterAny(hv->conn, hv->cb_ids[i]);
    }
    hv->n_cb_ids = 0;
    virConnectUnregisterCloseCallback(hv->conn, close_cb);
}

/* The domain events the driver listens to; hv->cb_ids holds one
 * registration per entry. */
static const struct {
    int id;                                /* VIR_DOMAIN_EVENT_ID_*. */
    virConnectDomainEventGenericCallback cb;
} events[] = {
    { VIR_DOMAIN_EVENT_ID_LIFECYCLE,
      VIR_DOMAIN_EVENT_CALLBACK(lifecycle_cb) },
    { VIR_DOMAIN_EVENT_ID_DEVICE_ADDED, VIR_DOMAIN_EVENT_CALLBACK(device_cb) },
    { VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
      VIR_DOMAIN_EVENT_CALLBACK(device_cb) },
    { VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(tunable_cb) },
    { VIR_DOMAIN_EVENT_ID_MIGRATION_ITERATION,
      VIR_DOMAIN_EVENT_CALLBACK(iteration_cb) },
};
_Static_assert(ARRAY_SIZE(events)
               <= ARRAY_SIZE(((struct drv_hv *) NULL)->cb_ids),
               "struct drv_hv has a registration slot per event");

static int
do_connect(struct drv_hv *hv, char *err, size_t errlen)
{

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

    for (size_t i = 0; i < ARRAY_SIZE(events); i++) {
        int id = virConnectDomainEventRegisterAny(hv->conn, NULL,
                                                  events[i].id,
                                                  events[i].cb, hv, NULL);

        if (id >= 0) {
            hv->cb_ids[hv->n_cb_ids++] = id;
        }
    }
    hv->may_skip = hv->n_cb_ids == ARRAY_SIZE(events);
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
    pending_arm(hv);
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

    if (virtloop_register(s) < 0) {
        snprintf(err, errlen, "libvirt events already bound to a loop");
        return NULL;
    }
    virSetErrorFunc(NULL, quiet_error);
    hv = XNEW(struct drv_hv);
    snprintf(hv->uri, sizeof hv->uri, "%s", uri ? uri : "qemu:///system");
    hv->sched = s;
    hv->cb = cb;
    hv->aux = aux;
    hv->backoff_ms = RECONNECT_MIN_MS;
    hv->local = drv_hv_uri_local(uri) && cgpin_init(&hv->cg, NULL, NULL) == 0;
    if (do_connect(hv, err, errlen) < 0) {
        free(hv);
        return NULL;
    }
    return hv;
}

static void
lv_close(struct drv_hv *hv)
{
    size_t n;

    if (!hv) {
        return;
    }
    hv->closing = true;
    if (hv->reconnect_timer) {
        sched_del_timer(hv->sched, hv->reconnect_timer);
    }
    if (hv->pending_timer) {
        sched_del_timer(hv->sched, hv->pending_timer);
    }
    /* libvirt records every pin still pending before we go, each tried
     * once (not one of a domain that migrates: its threads go with it). */
    n = 0;
    for (struct pending *p = hv->pending; p; p = p->next) {
        n++;
    }
    while (n-- > 0) {
        pending_one(hv);
    }
    while (hv->pending) {
        struct pending p;

        pending_take(hv, NULL, 0, &p);
    }
    if (hv->conn) {
        deregister_events(hv);
        virConnectClose(hv->conn);
    }
    virtloop_flush();
    free(hv);
}

/* Domain 'uuid' into '*dom' (a reference of the caller's: virDomainFree),
 * looked up once per domain.  Returns 0, -ENOTCONN while disconnected
 * or -ENOENT if there is no such domain. */
static int
lookup(struct drv_hv *hv, const char *uuid, virDomainPtr *dom)
{
    struct dom_cache *e;
    int r = cache_get(hv, uuid, &e);

    if (r < 0) {
        return r;
    }
    virDomainRef(e->dom);
    *dom = e->dom;
    return 0;
}

static int
fill_dom(struct drv_hv *hv, virDomainPtr dom, struct drv_dom *d)
{
    /* Number of host CPUs (online or not); -1 if unknown, and then
     * every pin counts as static, the safe side. */
    int n_host = virNodeGetCPUMap(hv->conn, NULL, NULL, 0);
    char *xml, err[256];
    int n, state, reason;

    memset(d, 0, sizeof *d);
    if (virDomainGetUUIDString(dom, d->uuid) < 0) {
        return vir_errno();
    }
    snprintf(d->name, sizeof d->name, "%s", virDomainGetName(dom));
    d->id = (int) virDomainGetID(dom);
    d->persistent = virDomainIsPersistent(dom) == 1;
    if (virDomainGetState(dom, &state, &reason, 0) == 0) {
        d->migrated_in = drv_libvirt_migrated_in(state, reason);
    }
    n = virDomainGetVcpusFlags(dom, VIR_DOMAIN_AFFECT_LIVE);
    if (n < 0) {
        return vir_errno();
    }
    d->n_vcpus = (unsigned) n;
    /* Static pins of the administrator come from the persistent
     * (inactive) definition: the live one also shows the pins vpowerd
     * itself made.  Transient domains have only the live one; vpowerd
     * decides about them once, when it first sees them, before it pins
     * anything. */
    xml = virDomainGetXMLDesc(dom, d->persistent ? VIR_DOMAIN_XML_INACTIVE
                                                 : 0);
    if (xml && domxml_static_pins(xml, n_host, d, err, sizeof err) < 0) {
        LOG_WARN_RL("%s: leaving it alone: %s", d->name, err);
    }
    if (d->persistent) {
        free(xml);
        xml = virDomainGetXMLDesc(dom, 0);
    }
    if (xml && domxml_agent_path(xml, AGENT_CHANNEL, d->agent_path,
                                 sizeof d->agent_path, err,
                                 sizeof err) < 0) {
        LOG_WARN_RL("%s: no guest agent: %s", d->name, err);
    }
    free(xml);
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
    virDomainPtr dom, doms[2];
    virDomainStatsRecordPtr *recs = NULL;
    virVcpuInfoPtr info;
    struct halt_stats *halt = NULL;
    int r = lookup(hv, uuid, &dom), nv = 0;
    bool bulk;

    *n = 0;
    if (r < 0) {
        return r;
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

/* One pin call on a domain: the domain and libvirt CPU maps of the
 * host's size. */
struct pin_call {
    virDomainPtr dom;
    unsigned char *maps;        /* 'n' maps of 'maplen' bytes each. */
    int maplen;
};

/* Looks domain 'uuid' up and makes 'n' maps, the first holding 's'
 * (CPUs the host does not have are left out) or all empty if 's' is
 * NULL.  Returns 0 (then pin_end() releases 'pc') or lookup()'s
 * error. */
static int
pin_begin(struct drv_hv *hv, const char *uuid, const struct cpuset *s,
          int n, struct pin_call *pc)
{
    int r = lookup(hv, uuid, &pc->dom);

    if (r < 0) {
        return r;
    }
    pc->maplen = VIR_CPU_MAPLEN(hv->n_host_cpus);
    pc->maps = xcalloc((size_t) n, (size_t) pc->maplen);
    if (s) {
        CPUSET_FOREACH (cpu, s) {
            if (cpu < hv->n_host_cpus) {
                VIR_USE_CPU(pc->maps, cpu);
            }
        }
    }
    return 0;
}

static void
pin_end(struct pin_call *pc)
{
    free(pc->maps);
    virDomainFree(pc->dom);
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

/* After a pin call on 'uuid' that returned 'r': records 'set' as in
 * force for vCPU 'vcpu' (UINT_MAX: the emulator) on success, forgets it
 * on failure and forgets the domain when it is gone. */
static void
pin_done(struct drv_hv *hv, const char *uuid, unsigned vcpu,
         const struct cpuset *set, int r)
{
    struct dom_cache *e = cache_find(hv, uuid);
    struct cpuset in_force;

    if (!e) {
        return;
    }
    if (r == -ENOENT) {
        cache_drop(hv, uuid);
        return;
    }
    clip(hv, set, &in_force);
    if (vcpu == UINT_MAX) {
        e->emu = in_force;
        e->emu_known = r == 0;
    } else {
        cache_set_vcpu(e, vcpu, r == 0 ? &in_force : NULL);
    }
}

/* libvirt's own pin of vCPU 'vcpu' (UINT_MAX: the emulator and its
 * IOThreads) of 'uuid' to 's', recorded in the cache. */
static int
vir_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
        const struct cpuset *s)
{
    virDomainIOThreadInfoPtr *iot = NULL;
    struct pin_call pc;
    int r = pin_begin(hv, uuid, s, 1, &pc), n;

    if (r < 0) {
        return r;
    }
    if (vcpu != UINT_MAX) {
        if (virDomainPinVcpuFlags(pc.dom, vcpu, pc.maps, pc.maplen,
                                  VIR_DOMAIN_AFFECT_LIVE) < 0
            && (!flags_unsupported()
                || virDomainPinVcpuFlags(pc.dom, vcpu, pc.maps, pc.maplen,
                                         VIR_DOMAIN_AFFECT_CURRENT) < 0)) {
            r = vir_errno();
            if (r != -ENOENT) {
                log_vir_error("pinning vCPU of", uuid);
            }
        }
        goto out;
    }
    if (virDomainPinEmulator(pc.dom, pc.maps, pc.maplen,
                             VIR_DOMAIN_AFFECT_LIVE) < 0) {
        r = vir_errno();
        if (r != -ENOENT) {
            log_vir_error("pinning emulator of", uuid);
        }
        goto out;
    }
    /* IOThreads follow the emulator: a freed core still running a QEMU
     * I/O thread never reaches deep idle. */
    n = virDomainGetIOThreadInfo(pc.dom, &iot, VIR_DOMAIN_AFFECT_LIVE);
    for (int i = 0; i < n; i++) {
        if (virDomainPinIOThread(pc.dom, iot[i]->iothread_id, pc.maps,
                                 pc.maplen, VIR_DOMAIN_AFFECT_LIVE) < 0
            && !r) {
            r = vir_errno();
            log_vir_error("pinning iothread of", uuid);
        }
        virDomainIOThreadInfoFree(iot[i]);
    }
    free(iot);
out:
    pin_end(&pc);
    pin_done(hv, uuid, vcpu, s, r);
    return r;
}

/* ---- Pins in the kernel first, libvirt's record after ----------------
 *
 * A local domain's pin is put in force through its cpuset groups
 * (cgpin.h), microseconds, and the same pin is then made through libvirt
 * from a timer, one call per loop turn, so libvirt's view (virsh vcpupin,
 * the live XML, what it restores after a libvirtd restart) catches up
 * within milliseconds while samples, the control socket and other
 * guests' hints are served between the calls.  Only the newest set of
 * each pin waits; a pin made through libvirt meanwhile supersedes it. */

static void pending_cb(void *aux);
static int lv_migr_job(struct drv_hv *, const char *uuid, enum drv_job *);

/* Arms the timer that makes the next pending pin through libvirt, after
 * 'delay_ns'. */
static void
pending_arm_in(struct drv_hv *hv, uint64_t delay_ns)
{
    if (hv->pending && !hv->pending_timer && hv->conn) {
        hv->pending_timer = sched_add_timer(hv->sched, delay_ns, pending_cb,
                                            hv);
    }
}

static void
pending_arm(struct drv_hv *hv)
{
    pending_arm_in(hv, 0);
}

/* Puts the pin of 'vcpu' of 'uuid' on the list (the newest set wins)
 * without arming the timer. */
static void
pending_add(struct drv_hv *hv, const char *uuid, unsigned vcpu,
            const struct cpuset *s)
{
    struct pending **pp = &hv->pending;

    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->vcpu == vcpu && !strcmp((*pp)->uuid, uuid)) {
            (*pp)->set = *s;
            return;
        }
    }
    *pp = XNEW(struct pending);
    snprintf((*pp)->uuid, sizeof (*pp)->uuid, "%s", uuid);
    (*pp)->vcpu = vcpu;
    (*pp)->set = *s;
}

static void
pending_put(struct drv_hv *hv, const char *uuid, unsigned vcpu,
            const struct cpuset *s)
{
    pending_add(hv, uuid, vcpu, s);
    pending_arm(hv);
}

/* Takes the pending pin of 'vcpu' of 'uuid' (UINT_MAX both: the oldest
 * one) off the list into '*out'; false if there is none. */
static bool
pending_take(struct drv_hv *hv, const char *uuid, unsigned vcpu,
             struct pending *out)
{
    for (struct pending **pp = &hv->pending; *pp; pp = &(*pp)->next) {
        struct pending *p = *pp;

        if (uuid && (p->vcpu != vcpu || strcmp(p->uuid, uuid))) {
            continue;
        }
        *out = *p;
        *pp = p->next;
        free(p);
        return true;
    }
    return false;
}

/* Makes the oldest pending pin through libvirt.  Returns 0, -ENOENT if
 * the domain is gone (it took the pin with it), or an error after which
 * the pin stays pending, last in line: -EBUSY while a migration job runs
 * on the domain (libvirt would hold the call until the job ends, and a
 * pin it records travels with the domain), -ENOTCONN while disconnected
 * (the reconnection re-arms the timer), or vir_pin()'s error (logged
 * there; the kernel keeps the pin in force meanwhile). */
static int
pending_one(struct drv_hv *hv)
{
    enum drv_job job = DRV_JOB_NONE;
    struct pending p;
    int r;

    if (!pending_take(hv, NULL, 0, &p)) {
        return 0;
    }
    r = lv_migr_job(hv, p.uuid, &job);
    if (r == 0 && (job == DRV_JOB_MIGR_OUT || job == DRV_JOB_MIGR_IN)) {
        r = -EBUSY;
    } else if (r != -ENOENT) {
        r = vir_pin(hv, p.uuid, p.vcpu, &p.set);
    }
    if (r < 0 && r != -ENOENT) {
        pending_add(hv, p.uuid, p.vcpu, &p.set);
    }
    return r;
}

static void
pending_cb(void *aux)
{
    struct drv_hv *hv = aux;
    int r;

    hv->pending_timer = 0;
    r = pending_one(hv);
    if (r == 0 || r == -ENOENT) {
        pending_arm(hv);
    } else if (r != -ENOTCONN) {
        pending_arm_in(hv, PENDING_RETRY_NS);
    }
}

/* The domain group of 'e', looked for once per cache entry. */
static bool
kernel_dir(struct drv_hv *hv, struct dom_cache *e)
{
    const char *name;
    pid_t qpid;
    int r;

    if (e->cg_state == 0) {
        name = virDomainGetName(e->dom);
        r = name ? qemu_pid_of(NULL, name, &qpid) : -ENOENT;
        if (r == 0) {
            r = cgpin_domain(&hv->cg, qpid, e->cgdir, sizeof e->cgdir);
        }
        e->cg_state = r == 0 ? 1 : -1;
        if (r < 0) {
            LOG_DEBUG("%s: no cpuset group of its own (%s): pins go "
                      "through libvirt", name ? name : e->uuid,
                      strerror(-r));
        }
    }
    return e->cg_state > 0;
}

/* Puts the pin in force in the kernel and leaves libvirt's record of it
 * pending.  Returns 0, or an error after which the caller pins through
 * libvirt (which rewrites whatever was written). */
static int
kernel_pin(struct drv_hv *hv, struct dom_cache *e, unsigned vcpu,
           const struct cpuset *want)
{
    int r;

    if (!hv->local || !kernel_dir(hv, e)) {
        return -ENOTSUP;
    }
    r = vcpu == UINT_MAX ? cgpin_emulator(&hv->cg, e->cgdir, want)
                         : cgpin_vcpu(&hv->cg, e->cgdir, vcpu, want);
    if (r == -EROFS || r == -EPERM || r == -EACCES) {
        /* Not allowed here (a sandbox without CAP_SYS_NICE or with the
         * cgroup tree read-only, docs/security.md): every pin goes
         * through libvirt from now on. */
        LOG_INFO("pins go through libvirt only: the kernel refused a pin "
                 "of %s's threads (%s)", e->uuid, strerror(-r));
        hv->local = false;
    } else if (r < 0) {
        LOG_RL(LOG_LVL_DEBUG, "%s: kernel pin of %s %u failed (%s): "
               "through libvirt", e->uuid,
               vcpu == UINT_MAX ? "emulator" : "vCPU",
               vcpu == UINT_MAX ? 0 : vcpu, strerror(-r));
    }
    if (r < 0) {
        return r;
    }
    pin_done(hv, e->uuid, vcpu, want, 0);
    pending_put(hv, e->uuid, vcpu, want);
    return 0;
}

/* A pin of 'vcpu' (UINT_MAX: the emulator) of 'uuid'. */
static int
pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
    const struct cpuset *s)
{
    struct dom_cache *e;
    struct pending gone;
    struct cpuset want;
    int r = cache_get(hv, uuid, &e);

    if (r < 0) {
        return r;
    }
    clip(hv, s, &want);
    if (cache_has_pin(hv, e, vcpu, &want)) {
        return 0;
    }
    if (kernel_pin(hv, e, vcpu, &want) == 0) {
        return 0;
    }
    r = vir_pin(hv, uuid, vcpu, s);
    if (r == 0) {
        pending_take(hv, uuid, vcpu, &gone);   /* Superseded. */
    }
    return r;
}

/* A local domain with its own cpuset groups is pinned without libvirt,
 * so its pins never wait for a job of libvirt's. */
static bool
lv_pin_may_wait(struct drv_hv *hv, const char *uuid)
{
    struct dom_cache *e;

    return !hv->local || cache_get(hv, uuid, &e) < 0 || !kernel_dir(hv, e);
}

static int
lv_pin_vcpu(struct drv_hv *hv, const char *uuid, unsigned vcpu,
            const struct cpuset *s)
{
    return vcpu == UINT_MAX ? -ERANGE : pin(hv, uuid, vcpu, s);
}

static int
lv_pin_emulator(struct drv_hv *hv, const char *uuid, const struct cpuset *s)
{
    return pin(hv, uuid, UINT_MAX, s);
}

static int
lv_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                struct cpuset *s)
{
    struct dom_cache *e;
    struct pin_call pc;
    int n, got, r = cache_get(hv, uuid, &e);

    if (r < 0) {
        return r;
    }
    if (hv->may_skip && vcpu < e->n_vcpus && e->vcpu_known[vcpu]) {
        *s = e->vcpu[vcpu];
        return 0;
    }
    /* Every vCPU's pin in the one call: the caller asks for each. */
    n = vcpu < GET_PIN_MAPS ? GET_PIN_MAPS : (int) vcpu + 1;
    r = pin_begin(hv, uuid, NULL, n, &pc);
    if (r < 0) {
        return r;
    }
    got = virDomainGetVcpuPinInfo(pc.dom, n, pc.maps, pc.maplen,
                                  VIR_DOMAIN_AFFECT_LIVE);
    if (got < 0 && flags_unsupported()) {
        got = virDomainGetVcpuPinInfo(pc.dom, n, pc.maps, pc.maplen,
                                      VIR_DOMAIN_AFFECT_CURRENT);
    }
    if (got < 0) {
        r = vir_errno();
    } else if ((int) vcpu >= got) {
        r = -ERANGE;
    } else {
        for (int i = 0; i < got; i++) {
            struct cpuset one;

            map_to_set(VIR_GET_CPUMAP(pc.maps, pc.maplen, i), pc.maplen,
                       &one);
            cache_set_vcpu(e, (unsigned) i, &one);
        }
        *s = e->vcpu[vcpu];
    }
    pin_end(&pc);
    return r;
}

static int
lv_get_emulator_pin(struct drv_hv *hv, const char *uuid, struct cpuset *s)
{
    struct dom_cache *e;
    struct pin_call pc;
    int r = cache_get(hv, uuid, &e);

    if (r < 0) {
        return r;
    }
    if (hv->may_skip && e->emu_known) {
        *s = e->emu;
        return 0;
    }
    r = pin_begin(hv, uuid, NULL, 1, &pc);
    if (r < 0) {
        return r;
    }
    if (virDomainGetEmulatorPinInfo(pc.dom, pc.maps, pc.maplen,
                                    VIR_DOMAIN_AFFECT_LIVE) < 0) {
        r = vir_errno();
    } else {
        map_to_set(pc.maps, pc.maplen, s);
        e->emu = *s;
        e->emu_known = true;
    }
    pin_end(&pc);
    return r;
}

static int
lv_get_metadata(struct drv_hv *hv, const char *uuid, char *buf, size_t len)
{
    virDomainPtr dom;
    char *md;
    int r = lookup(hv, uuid, &dom);

    buf[0] = '\0';
    if (r < 0) {
        return r;
    }
    md = virDomainGetMetadata(dom, VIR_DOMAIN_METADATA_ELEMENT, VPOWER_XML_NS,
                              VIR_DOMAIN_AFFECT_LIVE);
    if (md) {
        if (strlen(md) >= len) {
            /* Whoever set it learns why it is not used. */
            LOG_WARN_RL("%s: vpower metadata is %zu bytes, more than %zu",
                        uuid, strlen(md), len - 1);
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
    virDomainPtr dom;
    unsigned flags = VIR_DOMAIN_AFFECT_LIVE;
    int r = lookup(hv, uuid, &dom);

    if (r < 0) {
        return r;
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

static void
lv_set_migr_cb(struct drv_hv *hv, drv_migr_cb *cb, void *aux)
{
    hv->migr_cb = cb;
    hv->migr_aux = aux;
}

bool
drv_libvirt_migrated_in(int state, int reason)
{
    return state == VIR_DOMAIN_RUNNING
           && reason == VIR_DOMAIN_RUNNING_MIGRATED;
}

int
drv_libvirt_job(int err, int type, int operation)
{
    if (err == VIR_ERR_OPERATION_UNSUPPORTED) {
        /* QEMU driver on the destination of a migration: "migration
         * statistics are available only on the source host". */
        return DRV_JOB_MIGR_IN;
    }
    if (err != VIR_ERR_OK) {
        return -1;
    }
    if (type == VIR_DOMAIN_JOB_NONE || type == VIR_DOMAIN_JOB_COMPLETED) {
        return DRV_JOB_NONE;
    }
    if (operation == VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT) {
        return DRV_JOB_MIGR_OUT;
    }
    if (operation == VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN) {
        return DRV_JOB_MIGR_IN;
    }
    return DRV_JOB_OTHER;
}

static int
lv_migr_job(struct drv_hv *hv, const char *uuid, enum drv_job *job)
{
    virDomainPtr dom;
    virTypedParameterPtr params = NULL;
    int type = VIR_DOMAIN_JOB_NONE, nparams = 0, op = -1;
    int r = lookup(hv, uuid, &dom);

    *job = DRV_JOB_NONE;
    if (r < 0) {
        return r;
    }
    if (virDomainGetJobStats(dom, &type, &params, &nparams, 0) < 0) {
        virErrorPtr e = virGetLastError();
        int j = drv_libvirt_job(e ? e->code : VIR_ERR_INTERNAL_ERROR, 0, -1);

        if (j >= 0) {
            *job = (enum drv_job) j;
        } else {
            r = vir_errno();
            if (r != -ENOENT && r != -ENOTSUP) {
                log_vir_error("reading the job of", uuid);
            }
        }
    } else {
        /* Without "operation" (libvirt before 3.3) the job counts as not
         * a migration: the lifecycle events still say it is one. */
        if (virTypedParamsGetInt(params, nparams, VIR_DOMAIN_JOB_OPERATION,
                                 &op) != 1) {
            op = -1;
        }
        *job = (enum drv_job) drv_libvirt_job(VIR_ERR_OK, type, op);
        virTypedParamsFree(params, nparams);
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
    .set_migr_cb = lv_set_migr_cb,
    .migr_job = lv_migr_job,
    .pin_may_wait = lv_pin_may_wait,
};
