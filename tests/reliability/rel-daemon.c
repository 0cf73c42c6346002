/* tests/reliability/rel-daemon.c -- the real daemon core under faults and
 * domain churn, in one process the test controls.
 *
 * Links manager/daemon.c (the measure/decide/apply cycle, journal and
 * restore) with the in-memory dummy host driver, whose error injection
 * (manager/drivers/drv_dummy_host.h) is only reachable in-process, and with a
 * small fake hypervisor defined here that, unlike drv_hv_dummy, raises
 * the STARTED/STOPPED events libvirt raises.  Modes:
 *
 *   rel-daemon faults JOURNAL
 *     every sysfs operation failing with EBUSY, EACCES, EINVAL and
 *     ENOENT in turn while the plan changes (override toggled), then a
 *     domain that disappears in the middle of being pinned; checks the
 *     error counter moves, decisions and the other VMs' pins go on, and
 *     vpd_stop() restores the host exactly.
 *   rel-daemon churn JOURNAL N_VMS SECONDS
 *     N_VMS running VMs of which one stops and a new one starts every
 *     few ms (each with its STOPPED/STARTED event and a decision);
 *     samples VmRSS and the open fd count every second and fails if
 *     either grows after the warm-up.
 *
 * Prints one "RESULT:" line with the numbers; exit 0 pass, 1 fail,
 * 99 setup error. */

#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/daemon.h"
#include "manager/drivers/drv.h"
#include "manager/drivers/drv_dummy_host.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define MAX_VCPUS 4
#define NS_MS 1000000ull

/* ---- A fake hypervisor with events ---------------------------------- */

struct fake_dom {
    struct drv_dom dom;
    bool running;
    uint32_t busy_pct;
    uint64_t time_ns[MAX_VCPUS];
    struct cpuset pin[MAX_VCPUS], emu;
    bool vanish;                /* Disappear inside the next call. */
};

struct drv_hv {
    drv_event_cb *cb;
    void *aux;
    struct fake_dom *doms;
    size_t n_doms;
    unsigned n_host_cpus;
    uint64_t last_ns;
    uint64_t serial;            /* For fresh UUIDs. */
    uint64_t n_pins;            /* Successful pin calls. */
    uint64_t n_stats;           /* Successful vcpu_stats calls. */
    uint64_t n_enoent;          /* Calls on a domain that was gone. */
};

static void
fake_new_uuid(struct drv_hv *hv, struct fake_dom *f)
{
    hv->serial++;
    snprintf(f->dom.uuid, sizeof f->dom.uuid,
             "7e1ab1e0-0000-4000-8000-%012" PRIx64, hv->serial);
    snprintf(f->dom.name, sizeof f->dom.name, "vm%" PRIu64, hv->serial);
}

static void
fake_boot(struct drv_hv *hv, struct fake_dom *f, unsigned n_vcpus,
          uint32_t busy)
{
    memset(f, 0, sizeof *f);
    fake_new_uuid(hv, f);
    f->dom.id = (int) hv->serial;
    f->dom.n_vcpus = n_vcpus;
    f->busy_pct = busy;
    f->running = true;
    cpuset_zero(&f->emu);
    for (unsigned c = 0; c < hv->n_host_cpus; c++) {
        cpuset_set(&f->emu, c);
    }
    for (unsigned v = 0; v < n_vcpus; v++) {
        f->pin[v] = f->emu;
    }
}

/* uri: "doms=N,vcpus=V" */
static struct drv_hv *
fake_open(const char *uri, struct sched *s, drv_event_cb *cb, void *aux,
          char *err, size_t errlen)
{
    struct drv_hv *hv = XNEW(struct drv_hv);
    unsigned n = 3, v = 2;

    (void) s;
    if (uri && *uri && sscanf(uri, "doms=%u,vcpus=%u", &n, &v) != 2) {
        snprintf(err, errlen, "fake hv: bad uri '%s'", uri);
        free(hv);
        return NULL;
    }
    if (v < 1 || v > MAX_VCPUS || n > 100000) {
        snprintf(err, errlen, "fake hv: bad counts in '%s'", uri);
        free(hv);
        return NULL;
    }
    hv->cb = cb;
    hv->aux = aux;
    hv->n_host_cpus = 4;
    hv->n_doms = n;
    hv->doms = XNEWARRAY(struct fake_dom, n ? n : 1);
    for (unsigned i = 0; i < n; i++) {
        fake_boot(hv, &hv->doms[i], v, (uint32_t) (i * 7 % 20 + 2));
    }
    hv->last_ns = clk_now_ns();
    return hv;
}

static void
fake_close(struct drv_hv *hv)
{
    if (hv) {
        free(hv->doms);
        free(hv);
    }
}

static struct fake_dom *
fake_find(struct drv_hv *hv, const char *uuid)
{
    for (size_t i = 0; i < hv->n_doms; i++) {
        if (hv->doms[i].running && !strcmp(hv->doms[i].dom.uuid, uuid)) {
            return &hv->doms[i];
        }
    }
    hv->n_enoent++;
    return NULL;
}

static int
fake_list(struct drv_hv *hv, struct drv_dom **doms, size_t *n)
{
    size_t k = 0;

    *doms = XNEWARRAY(struct drv_dom, hv->n_doms ? hv->n_doms : 1);
    for (size_t i = 0; i < hv->n_doms; i++) {
        if (hv->doms[i].running) {
            (*doms)[k++] = hv->doms[i].dom;
        }
    }
    *n = k;
    return 0;
}

static int
fake_vcpu_stats(struct drv_hv *hv, const char *uuid,
                struct drv_vcpu_stat *out, size_t max, size_t *n)
{
    uint64_t now = clk_now_ns(), dt = now - hv->last_ns;
    struct fake_dom *f;

    hv->last_ns = now;
    for (size_t i = 0; i < hv->n_doms; i++) {
        for (unsigned v = 0; v < hv->doms[i].dom.n_vcpus; v++) {
            hv->doms[i].time_ns[v] += dt * hv->doms[i].busy_pct / 100;
        }
    }
    *n = 0;
    f = fake_find(hv, uuid);
    if (!f) {
        return -ENOENT;
    }
    hv->n_stats++;
    if (f->vanish) {
        /* Destroyed right after this sample: the cycle's pin actions
         * for it meet a domain that is gone, the event comes later. */
        f->running = false;
    }
    for (unsigned v = 0; v < f->dom.n_vcpus && v < max; v++) {
        memset(&out[v], 0, sizeof out[v]);   /* Fields we do not know. */
        out[v].time_ns = f->time_ns[v];
        out[v].delay_ns = 0;
        out[v].has_delay = true;
        out[v].cpu = cpuset_next(&f->pin[v], 0);
        (*n)++;
    }
    return 0;
}

static int
fake_pin_vcpu(struct drv_hv *hv, const char *uuid, unsigned vcpu,
              const struct cpuset *set)
{
    struct fake_dom *f = fake_find(hv, uuid);

    if (!f || vcpu >= f->dom.n_vcpus) {
        return -ENOENT;
    }
    f->pin[vcpu] = *set;
    hv->n_pins++;
    if (f->vanish) {
        f->running = false;
    }
    return 0;
}

static int
fake_pin_emulator(struct drv_hv *hv, const char *uuid,
                  const struct cpuset *set)
{
    struct fake_dom *f = fake_find(hv, uuid);

    if (!f) {
        return -ENOENT;
    }
    f->emu = *set;
    hv->n_pins++;
    return 0;
}

static int
fake_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                  struct cpuset *set)
{
    struct fake_dom *f = fake_find(hv, uuid);

    if (!f || vcpu >= f->dom.n_vcpus) {
        return -ENOENT;
    }
    *set = f->pin[vcpu];
    return 0;
}

static int
fake_get_emulator_pin(struct drv_hv *hv, const char *uuid,
                      struct cpuset *set)
{
    struct fake_dom *f = fake_find(hv, uuid);

    if (!f) {
        return -ENOENT;
    }
    *set = f->emu;
    return 0;
}

static int
fake_get_metadata(struct drv_hv *hv, const char *uuid, char *buf,
                  size_t len)
{
    if (!fake_find(hv, uuid)) {
        return -ENOENT;
    }
    if (len) {
        buf[0] = '\0';
    }
    return 0;
}

static int
fake_set_metadata(struct drv_hv *hv, const char *uuid, const char *xml)
{
    (void) xml;
    return fake_find(hv, uuid) ? 0 : -ENOENT;
}

static const struct drv_hv_ops fake_hv_ops = {
    .name = "fake",
    .open = fake_open,
    .close = fake_close,
    .list = fake_list,
    .vcpu_stats = fake_vcpu_stats,
    .pin_vcpu = fake_pin_vcpu,
    .pin_emulator = fake_pin_emulator,
    .get_vcpu_pin = fake_get_vcpu_pin,
    .get_emulator_pin = fake_get_emulator_pin,
    .get_metadata = fake_get_metadata,
    .set_metadata = fake_set_metadata,
};

/* ---- Helpers -------------------------------------------------------- */

struct host_snap {
    bool online[8];
    struct drv_freq freq[8];
    struct drv_idle idle[8];
};

static void
snap_host(struct vpd *d, struct host_snap *s)
{
    memset(s, 0, sizeof *s);
    for (unsigned c = 0; c < d->n_cpus && c < 8; c++) {
        d->host_ops->is_online(d->host, c, &s->online[c]);
        d->host_ops->get_freq(d->host, c, &s->freq[c]);
        d->host_ops->get_idle(d->host, c, &s->idle[c]);
    }
}

/* Same writable state (ignores residency counters and cur_khz). */
static bool
snap_equal(const struct host_snap *a, const struct host_snap *b,
           unsigned n, char *why, size_t len)
{
    for (unsigned c = 0; c < n && c < 8; c++) {
        if (a->online[c] != b->online[c]) {
            snprintf(why, len, "cpu%u online %d -> %d", c, a->online[c],
                     b->online[c]);
            return false;
        }
        if (a->freq[c].min_khz != b->freq[c].min_khz
            || a->freq[c].max_khz != b->freq[c].max_khz
            || strcmp(a->freq[c].governor, b->freq[c].governor)) {
            snprintf(why, len, "cpu%u freq %u-%u %s -> %u-%u %s", c,
                     a->freq[c].min_khz, a->freq[c].max_khz,
                     a->freq[c].governor, b->freq[c].min_khz,
                     b->freq[c].max_khz, b->freq[c].governor);
            return false;
        }
        for (unsigned s = 0; s < a->idle[c].n_states; s++) {
            if (a->idle[c].disabled[s] != b->idle[c].disabled[s]) {
                snprintf(why, len, "cpu%u idle state %u disable %d -> %d",
                         c, s, a->idle[c].disabled[s],
                         b->idle[c].disabled[s]);
                return false;
            }
        }
    }
    return true;
}

static void
quit_cb(void *aux)
{
    sched_quit(aux, 0);
}

/* Runs the daemon's loop for 'ms' milliseconds. */
static void
run_for(struct vpd *d, unsigned ms)
{
    sched_add_timer(d->sched, ms * NS_MS, quit_cb, d->sched);
    sched_run(d->sched);
}

static long
rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;

    if (!f) {
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "VmRSS: %ld", &kb) == 1) {
            break;
        }
    }
    fclose(f);
    return kb;
}

static int
n_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;

    if (!dir) {
        return -1;
    }
    while ((e = readdir(dir))) {
        n += e->d_name[0] != '.';
    }
    closedir(dir);
    return n - 1;               /* Not the DIR's own fd. */
}

static struct vpd *
start(const char *journal, const char *uri, char *err, size_t errlen)
{
    struct vpd *d = xcalloc(1, sizeof *d);

    conf_defaults(&d->conf);
    d->conf.period_ms = 100;
    d->conf.max_period_ms = 200;
    d->conf.pack_dwell_ms = 0;
    d->conf.allow_offline = true;
    snprintf(d->conf.journal_path, sizeof d->conf.journal_path, "%s",
             journal);
    snprintf(d->conf.connect_uri, sizeof d->conf.connect_uri, "%s", uri);
    snprintf(d->conf.sysfs_root, sizeof d->conf.sysfs_root, "cpus=4");
    d->hv_ops = &fake_hv_ops;
    d->host_ops = &drv_host_dummy;
    d->sched = sched_create();
    if (vpd_start(d, err, errlen) < 0) {
        vpd_stop(d);
        sched_destroy(d->sched);
        free(d);
        return NULL;
    }
    return d;
}

static void
finish(struct vpd *d)
{
    sched_destroy(d->sched);
    free(d);
}

#define CHECK(COND, ...) \
    do { \
        if (!(COND)) { \
            printf("FAIL: " __VA_ARGS__); \
            printf("\n"); \
            failed++; \
        } \
    } while (0)

static void
no_close_host(struct drv_host *h)
{
    (void) h;
}

static void
no_close_hv(struct drv_hv *hv)
{
    (void) hv;
}

/* vpd_stop() with the drivers kept open past it (close is a no-op), so
 * the restored state can be read back: host values as in 'before', and
 * every running VM's pins back at all host CPUs.  Returns failures. */
static int
stop_and_check(struct vpd *d, const struct host_snap *before)
{
    struct drv_host_ops host_ops = *d->host_ops;
    struct drv_hv_ops hv_ops = *d->hv_ops;
    const struct drv_host_ops *real_host = d->host_ops;
    struct drv_host *host = d->host;
    struct drv_hv *hv = d->hv;
    struct host_snap after;
    struct vpd probe;
    char why[256];
    int failed = 0;
    unsigned n_cpus = d->n_cpus;

    host_ops.close = no_close_host;
    hv_ops.close = no_close_hv;
    d->host_ops = &host_ops;
    d->hv_ops = &hv_ops;
    if (vpd_stop(d) < 0) {
        printf("FAIL: vpd_stop could not restore everything\n");
        failed++;
    }
    memset(&probe, 0, sizeof probe);
    probe.host_ops = real_host;
    probe.host = host;
    probe.n_cpus = n_cpus;
    snap_host(&probe, &after);
    if (!snap_equal(before, &after, n_cpus, why, sizeof why)) {
        printf("FAIL: host not restored by vpd_stop: %s\n", why);
        failed++;
    }
    for (size_t i = 0; i < hv->n_doms; i++) {
        struct fake_dom *f = &hv->doms[i];

        for (unsigned v = 0; f->running && v < f->dom.n_vcpus; v++) {
            if (cpuset_count(&f->pin[v]) != hv->n_host_cpus) {
                printf("FAIL: %s vCPU %u pin not restored\n",
                       f->dom.name, v);
                failed++;
            }
        }
        if (f->running && cpuset_count(&f->emu) != hv->n_host_cpus) {
            printf("FAIL: %s emulator pin not restored\n", f->dom.name);
            failed++;
        }
    }
    real_host->close(host);
    fake_close(hv);
    return failed;
}

/* True if the last plan wants something of kind 'op' that is not in
 * force (frequency targets, idle limits, offline set). */
static bool
plan_pending(const struct vpd *d, enum dummy_host_op op)
{
    const struct pol_plan *p = d->plan, *a = d->applied;

    if (!p || !a) {
        return false;
    }
    switch (op) {
    case DUMMY_OP_SET_FREQ:
        for (unsigned i = 0; i < d->model.n_domains; i++) {
            if (p->dom_freq_khz[i] && p->dom_freq_khz[i]
                != a->dom_freq_khz[i]) {
                return true;
            }
        }
        return false;
    case DUMMY_OP_SET_IDLE:
        for (unsigned c = 0; c < d->n_cpus; c++) {
            if (d->cpus[c].online && p->idle_limit[c] != a->idle_limit[c]) {
                return true;
            }
        }
        return false;
    default:
        return false;
    }
}

/* ---- faults --------------------------------------------------------- */

static int
do_faults(const char *journal)
{
    static const int errs[] = { EBUSY, EACCES, EINVAL, ENOENT };
    static const struct { enum dummy_host_op op; const char *name; } ops[] = {
        { DUMMY_OP_SET_FREQ, "set_freq" },
        { DUMMY_OP_SET_IDLE, "set_idle" },
        { DUMMY_OP_SET_ONLINE, "set_online" },
        { DUMMY_OP_SET_GOVERNOR, "set_governor" },
        { DUMMY_OP_GET_FREQ, "get_freq" },
        { DUMMY_OP_GET_IDLE, "get_idle" },
        { DUMMY_OP_IS_ONLINE, "is_online" },
    };
    struct host_snap before;
    char err[512];
    struct vpd *d;
    struct drv_hv *hv;
    int failed = 0, cases = 0;
    uint64_t errs_total = 0, pins_total = 0;
    size_t n_vms;

    d = start(journal, "doms=3,vcpus=2", err, sizeof err);
    if (!d) {
        printf("ERROR: vpd_start: %s\n", err);
        return 99;
    }
    hv = d->hv;
    /* The dummy host as found: what vpd_stop() must give back.  (The
     * daemon onlined nothing: all CPUs start online.) */
    snap_host(d, &before);
    run_for(d, 800);
    CHECK(d->n_decisions > 0, "no decision in 0.8 s");

    for (size_t e = 0; e < ARRAY_SIZE(errs); e++) {
        for (size_t o = 0; o < ARRAY_SIZE(ops); o++) {
            uint64_t e0 = d->n_errors[VPD_E_SYSFS];
            uint64_t dec0 = d->n_decisions, pins0 = hv->n_pins;
            uint64_t st0 = hv->n_stats;
            bool pending;

            dummy_host_inject(d->host, ops[o].op, -1, -errs[e], 1000000);
            /* Make it change the host: override on spreads and raises,
             * off packs and lowers again. */
            vpd_set_override(d, true);
            run_for(d, 250);
            vpd_set_override(d, false);
            run_for(d, 350);
            /* A write the plan wants but that is not in force was tried
             * and failed: it must have been counted. */
            pending = plan_pending(d, ops[o].op);
            dummy_host_inject(d->host, ops[o].op, -1, 0, 0);
            cases++;
            printf("fault %-12s %-6s: errors_total.sysfs +%" PRIu64
                   ", decisions +%" PRIu64 ", samples +%" PRIu64
                   ", pins +%" PRIu64 "%s\n", ops[o].name,
                   strerror(errs[e]), d->n_errors[VPD_E_SYSFS] - e0,
                   d->n_decisions - dec0, hv->n_stats - st0,
                   hv->n_pins - pins0,
                   pending ? ", plan not in force" : "");
            CHECK(d->n_decisions > dec0 + 2, "%s %s: decisions stopped",
                  ops[o].name, strerror(errs[e]));
            CHECK(hv->n_stats > st0 + 3, "%s %s: VMs no longer sampled",
                  ops[o].name, strerror(errs[e]));
            CHECK(!pending || d->n_errors[VPD_E_SYSFS] > e0, "%s %s: "
                  "failed writes not counted in errors_total.sysfs",
                  ops[o].name, strerror(errs[e]));
            pins_total += hv->n_pins - pins0;
        }
    }
    errs_total = d->n_errors[VPD_E_SYSFS];
    run_for(d, 500);            /* Recovers with the faults gone. */

    /* A domain destroyed in the middle of its pin actions. */
    n_vms = d->n_vms;
    {
        struct fake_dom *victim = &hv->doms[1];
        uint64_t pins0, dec0, enoent0 = hv->n_enoent;
        char uuid[DRV_UUID_LEN];

        snprintf(uuid, sizeof uuid, "%s", victim->dom.uuid);
        victim->vanish = true;
        vpd_set_override(d, true);     /* Re-pins every VM now. */
        run_for(d, 300);               /* Samples it: it vanishes. */
        CHECK(!victim->running, "victim was never sampled");
        hv->cb(hv->aux, DRV_EV_STOPPED, uuid);
        CHECK(d->n_vms == n_vms - 1, "destroyed domain still tracked "
              "(%zu VMs, expected %zu)", d->n_vms, n_vms - 1);
        CHECK(!vpd_find_vm(d, uuid), "destroyed domain still found");
        pins0 = hv->n_pins;
        dec0 = d->n_decisions;
        vpd_set_override(d, false);
        run_for(d, 500);
        CHECK(d->n_decisions > dec0 && hv->n_stats > 0,
              "the other VMs are not served after a domain vanished");
        printf("domain destroyed mid-action: %" PRIu64 " calls met the "
               "gone domain, %zu -> %zu VMs, others re-pinned %" PRIu64
               " times after\n", hv->n_enoent - enoent0, n_vms, d->n_vms,
               hv->n_pins - pins0);
    }

    failed += stop_and_check(d, &before);
    finish(d);
    printf("RESULT: %d fault cases (4 errnos x 7 host operations) and a "
           "domain destroyed mid-action survived: daemon kept deciding "
           "and sampling (%" PRIu64 " pin changes under faults); "
           "errors_total.sysfs = %" PRIu64 "; %d failures\n",
           cases, pins_total, errs_total, failed);
    return failed ? 1 : 0;
}

/* ---- churn ---------------------------------------------------------- */

struct churn {
    struct vpd *d;
    uint64_t events;
    uint64_t rng;
};

static uint64_t
rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void
churn_tick(void *aux)
{
    struct churn *ch = aux;
    struct drv_hv *hv = ch->d->hv;
    struct fake_dom *f = &hv->doms[rng_next(&ch->rng) % hv->n_doms];
    char uuid[DRV_UUID_LEN];

    /* Stop one VM... */
    snprintf(uuid, sizeof uuid, "%s", f->dom.uuid);
    f->running = false;
    hv->cb(hv->aux, DRV_EV_STOPPED, uuid);
    /* ...and start a new one in its slot. */
    fake_boot(hv, f, 1 + (unsigned) (rng_next(&ch->rng) % 2),
              (uint32_t) (rng_next(&ch->rng) % 100));
    hv->cb(hv->aux, DRV_EV_STARTED, f->dom.uuid);
    ch->events += 2;
    sched_add_timer(ch->d->sched, 2 * NS_MS, churn_tick, ch);
}

static int
do_churn(const char *journal, unsigned n_vms, unsigned secs)
{
    struct churn ch = { .rng = 88172645463325252ull };
    struct host_snap before;
    char uri[64], err[512];
    long rss0 = 0, rss_max_late = 0, rss;
    int fd0 = -1, fd_late = -1, failed = 0;
    unsigned warm = secs / 5 ? secs / 5 : 1;

    snprintf(uri, sizeof uri, "doms=%u,vcpus=2", n_vms);
    ch.d = start(journal, uri, err, sizeof err);
    if (!ch.d) {
        printf("ERROR: vpd_start: %s\n", err);
        return 99;
    }
    snap_host(ch.d, &before);
    sched_add_timer(ch.d->sched, 2 * NS_MS, churn_tick, &ch);
    for (unsigned s = 1; s <= secs; s++) {
        run_for(ch.d, 1000);
        rss = rss_kb();
        if (s == warm) {
            rss0 = rss;
            fd0 = n_fds();
        } else if (s > warm && rss > rss_max_late) {
            rss_max_late = rss;
        }
        if (s % 10 == 0 || s == secs) {
            printf("t=%us: %" PRIu64 " start/stop events, %zu VMs, "
                   "VmRSS %ld kB, %d fds\n", s, ch.events, ch.d->n_vms,
                   rss, n_fds());
            fflush(stdout);
        }
    }
    fd_late = n_fds();
    if (secs <= warm) {
        rss_max_late = rss_kb();
    }
    CHECK(ch.d->n_vms == n_vms, "tracking %zu VMs, %u run", ch.d->n_vms,
          n_vms);
    /* The daemon's working set is a few MB; allow 1 MB of allocator
     * noise after the warm-up, no steady growth.  Under AddressSanitizer
     * freed memory sits in a quarantine of up to 256 MB, so RSS says
     * nothing there; LeakSanitizer checks the same property at exit. */
#ifdef __SANITIZE_ADDRESS__
    printf("VmRSS bound not checked under AddressSanitizer (quarantine); "
           "LeakSanitizer checks for leaks instead: %ld -> %ld kB\n",
           rss0, rss_max_late);
#else
    CHECK(rss_max_late <= rss0 + 1024, "VmRSS grew from %ld to %ld kB "
          "after the warm-up", rss0, rss_max_late);
#endif
    CHECK(fd_late == fd0, "fds %d after the warm-up, %d at the end", fd0,
          fd_late);
    CHECK(ch.events >= 1000, "only %" PRIu64 " events", ch.events);
    failed += stop_and_check(ch.d, &before);
    finish(ch.d);
    printf("RESULT: %u VMs churning for %u s: %" PRIu64 " start/stop "
           "events, VmRSS %ld kB after warm-up, max %ld kB after "
           "(+%ld kB), fds %d -> %d; %d failures\n", n_vms, secs,
           ch.events, rss0, rss_max_late, rss_max_late - rss0, fd0,
           fd_late, failed);
    return failed ? 1 : 0;
}

int
main(int argc, char **argv)
{
    log_init("rel-daemon", false, getenv("REL_VERBOSE") ? LOG_LVL_INFO
                                                       : LOG_LVL_ERR);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "faults")) {
        return do_faults(argv[2]);
    }
    if (argc == 5 && !strcmp(argv[1], "churn")) {
        return do_churn(argv[2], (unsigned) atoi(argv[3]),
                        (unsigned) atoi(argv[4]));
    }
    fprintf(stderr, "usage: rel-daemon faults JOURNAL | "
            "churn JOURNAL N_VMS SECONDS\n");
    return 99;
}
