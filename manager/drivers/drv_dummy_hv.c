/* manager/drivers/drv_dummy_hv.c -- drv_hv_dummy: in-memory fake domains, so
 * the
 * real vpowerd runs in tests without libvirt (`--driver=dummy`).
 *
 * The "URI" is the path of a small text file (`--dummy-domains FILE` or
 * $VPOWER_DUMMY_DOMAINS), one domain per line:
 *
 *     # name  vcpus  busy%-of-vcpu0 [busy%-of-vcpu1 ...] [static=CPULIST]
 *     #       [kind=performance|balanced|powersave] [agent=SOCKET]
 *     #       [migr=out|gone|in]
 *     web     2      80 10
 *     batch   1      5 static=1
 *     db      1      90 kind=performance
 *
 * kind= stands for the vpower policy metadata an operator would set;
 * agent= for the host end of the guest channel (drv_dom.agent_path).
 * A vCPU with busy B accumulates B% of wall time as CPU time (missing
 * values repeat the last one given); run-queue delay is 0 unless the
 * vCPU's allowed set is shared with more busy than one CPU holds, then
 * the excess is reported as delay, which is what a real host shows;
 * vCPUs that share CPUs are reported as running spread over them
 * (ran_on()).  The file is re-read when it changes (mtime, size or
 * inode), so a test can change the load while vpowerd runs.  Like
 * libvirt, the driver reports domains that appear or vanish in the file as
 * DRV_EV_STARTED/STOPPED: a timer looks at the file every DUMMY_POLL_NS (this
 * is a test driver; the real one is told by libvirtd), and events are raised
 * from a timer of their own, never from inside list(), which the daemon's
 * resync on DRV_EV_STARTED calls.  A file that does not parse is reported and
 * the last good one stays in force, as a hypervisor keeps its domains when one
 * request is bad.
 * migr= scripts a live migration, raising what libvirt raises
 * (drv.h, enum drv_migr; the migration event first, then the plain one)
 * and answering migr_job() accordingly:
 *   migr=out   the domain migrates away: still listed and running, job
 *              DRV_JOB_MIGR_OUT; entering it raises DRV_MIGR_OUT_BEGIN.
 *   migr=gone  it has left: no longer listed; raises DRV_MIGR_GONE, then
 *              DRV_EV_STOPPED.
 *   migr=in    it is being received: listed, paused (its CPU time stands
 *              still), job DRV_JOB_MIGR_IN; appearing so raises
 *              DRV_MIGR_IN_BEGIN, then DRV_EV_STARTED.
 * Dropping migr=in (the line stays) is the arrival: DRV_MIGR_RESUMED,
 * then DRV_EV_STARTED, and drv_dom.migrated_in stays true while the
 * line does.  Dropping migr=out is a migration that failed
 * before its final pause: no event, as with libvirt.  Removing the line
 * is a plain stop.
 * Pins start as "all host CPUs" and are kept in memory; every change is
 * logged and, if $VPOWER_DUMMY_STATE names a file, the whole pin table is
 * rewritten there ("name vcpuN CPULIST" and "name emulator CPULIST"
 * lines) for tests to read. */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "dummy-hv"

#define DUMMY_MAX_VCPUS 64
#define DUMMY_POLL_NS 500000000ull   /* Look at the file twice a second. */

/* A scripted migration state (migr= in the file). */
enum dummy_mig {
    MIG_NONE,
    MIG_OUT,                    /* Migrating away, still here. */
    MIG_GONE,                   /* Migrated away. */
    MIG_IN,                     /* Being received, paused. */
};

struct dummy_dom {
    struct drv_dom dom;
    uint32_t busy_pct[DUMMY_MAX_VCPUS];
    uint64_t time_ns[DUMMY_MAX_VCPUS];
    uint64_t delay_ns[DUMMY_MAX_VCPUS];
    struct cpuset pin[DUMMY_MAX_VCPUS];
    struct cpuset emu;
    char metadata[1024];
    bool seen;                  /* Still in the file at the last read. */
    bool reported;              /* Visible as of the last event raised. */
    enum dummy_mig mig, reported_mig;
    enum dummy_mig prev_mig;    /* As of the read before this one. */
};

struct drv_hv {
    char path[256];
    char state_path[256];
    struct dummy_dom *doms;
    size_t n_doms;
    struct cpuset all;
    struct timespec mtime;      /* The file as last read: */
    off_t size;
    ino_t ino;
    uint64_t last_ns;
    struct sched *sched;        /* NULL: no events (unit tests). */
    drv_event_cb *cb;
    void *aux;
    drv_migr_cb *migr_cb;       /* NULL: nobody asked. */
    void *migr_aux;
    uint64_t poll_timer, event_timer;
};

static uint32_t
name_hash(const char *s)
{
    uint32_t h = 2166136261u;

    for (; *s; s++) {
        h = (h ^ (uint8_t) *s) * 16777619u;
    }
    return h;
}

/* Listed and usable: in the file and not migrated away. */
static bool
visible(const struct dummy_dom *d)
{
    return d->seen && d->mig != MIG_GONE;
}

/* Its vCPUs run: a domain being received is paused until it arrives. */
static bool
running(const struct dummy_dom *d)
{
    return visible(d) && d->mig != MIG_IN;
}

static struct dummy_dom *
find_name(struct drv_hv *hv, const char *name)
{
    for (size_t i = 0; i < hv->n_doms; i++) {
        if (!strcmp(hv->doms[i].dom.name, name)) {
            return &hv->doms[i];
        }
    }
    return NULL;
}

static struct dummy_dom *
find_uuid(struct drv_hv *hv, const char *uuid)
{
    for (size_t i = 0; i < hv->n_doms; i++) {
        if (visible(&hv->doms[i]) && !strcmp(hv->doms[i].dom.uuid, uuid)) {
            return &hv->doms[i];
        }
    }
    return NULL;
}

/* Parses one line and, if 'apply', stores it into a (new or existing)
 * domain; without 'apply' it only checks.  Returns 0, 1 for a blank
 * line, or -EINVAL with a reason. */
static int
parse_line(struct drv_hv *hv, char *line, bool apply, char *err,
           size_t errlen)
{
    char *save = NULL, *tok, *name;
    unsigned nv, k = 0;
    struct dummy_dom *d;
    uint32_t busy[DUMMY_MAX_VCPUS];
    struct cpuset st;
    bool has_static = false;
    char kind[32] = "";
    char agent[DRV_PATH_LEN] = "";
    enum dummy_mig mig = MIG_NONE;
    char *end;

    line[strcspn(line, "#\n")] = '\0';
    name = strtok_r(line, " \t", &save);
    if (!name) {
        return 1;
    }
    if (strlen(name) >= DRV_NAME_LEN) {
        snprintf(err, errlen, "domain name too long");
        return -EINVAL;
    }
    tok = strtok_r(NULL, " \t", &save);
    if (!tok || (nv = (unsigned) strtoul(tok, &end, 10), *end) || !nv
        || nv > DUMMY_MAX_VCPUS) {
        snprintf(err, errlen, "'%s': vCPU count must be 1..%d", name,
                 DUMMY_MAX_VCPUS);
        return -EINVAL;
    }
    while ((tok = strtok_r(NULL, " \t", &save))) {
        unsigned long b;

        if (!strncmp(tok, "kind=", 5)) {
            /* Stands for vpower metadata set by an operator. */
            snprintf(kind, sizeof kind, "%.31s", tok + 5);
            continue;
        }
        if (!strncmp(tok, "agent=", 6)) {
            /* Host end of the guest channel, as libvirt's <channel>
             * source path (tests play QEMU's listening side). */
            if (strlen(tok + 6) >= sizeof agent || tok[6] != '/') {
                snprintf(err, errlen, "'%s': agent= needs an absolute "
                         "socket path below %zu bytes", name, sizeof agent);
                return -EINVAL;
            }
            snprintf(agent, sizeof agent, "%s", tok + 6);
            continue;
        }
        if (!strncmp(tok, "migr=", 5)) {
            static const char *const names[] = { "out", "gone", "in" };
            static const enum dummy_mig states[] = { MIG_OUT, MIG_GONE,
                                                     MIG_IN };
            size_t i = 0;

            while (i < ARRAY_SIZE(names) && strcmp(tok + 5, names[i])) {
                i++;
            }
            if (i == ARRAY_SIZE(names)) {
                snprintf(err, errlen, "'%s': bad migration state '%s' "
                         "(out, gone or in)", name, tok + 5);
                return -EINVAL;
            }
            mig = states[i];
            continue;
        }
        if (!strncmp(tok, "static=", 7)) {
            if (cpuset_parse(&st, tok + 7) < 0 || cpuset_empty(&st)) {
                snprintf(err, errlen, "'%s': bad static CPU list '%s'",
                         name, tok + 7);
                return -EINVAL;
            }
            has_static = true;
            continue;
        }
        b = strtoul(tok, &end, 10);
        if (*end || b > 100 || k >= nv) {
            snprintf(err, errlen, "'%s': bad busy value '%s' (0..100, one "
                     "per vCPU)", name, tok);
            return -EINVAL;
        }
        busy[k++] = (uint32_t) b;
    }
    for (unsigned i = k; i < nv; i++) {
        busy[i] = k ? busy[k - 1] : 0;
    }
    if (!apply) {
        return 0;
    }
    d = find_name(hv, name);
    if (!d) {
        hv->doms = xrealloc(hv->doms, (hv->n_doms + 1) * sizeof *hv->doms);
        d = &hv->doms[hv->n_doms++];
        memset(d, 0, sizeof *d);
        snprintf(d->dom.name, sizeof d->dom.name, "%s", name);
        snprintf(d->dom.uuid, sizeof d->dom.uuid,
                 "%08x-0000-4000-8000-%012zx", name_hash(name), hv->n_doms);
        d->dom.id = (int) hv->n_doms;
        d->dom.persistent = true;
        for (unsigned i = 0; i < DUMMY_MAX_VCPUS; i++) {
            d->pin[i] = hv->all;
        }
        d->emu = hv->all;
    }
    d->dom.n_vcpus = nv;
    memcpy(d->busy_pct, busy, nv * sizeof busy[0]);
    snprintf(d->dom.agent_path, sizeof d->dom.agent_path, "%s", agent);
    d->dom.static_pinning = has_static;
    if (has_static) {
        d->dom.static_cpus = st;
        for (unsigned i = 0; i < nv; i++) {
            d->pin[i] = st;
        }
        d->emu = st;
    }
    if (kind[0]) {
        snprintf(d->metadata, sizeof d->metadata,
                 "<vpower:policy xmlns:vpower=\"" VPOWER_XML_NS "\" "
                 "kind=\"%s\"/>", kind);
    }
    /* Arrived: runs here since a migration brought it. */
    d->dom.migrated_in = mig == MIG_NONE
                         && (d->dom.migrated_in || d->prev_mig == MIG_IN);
    d->mig = mig;
    d->seen = true;
    return 0;
}

static void raise_events(void *hv_);

/* Reads the whole file, checks every line, and only then applies them:
 * a file with a bad line (a bad or half-written rewrite) changes no
 * domain.  (Checking first costs a second parse of a small file; keeping
 * a copy of the domains instead cost ~10 kB per domain per reload.) */
static int
load_file(struct drv_hv *hv, char *err, size_t errlen)
{
    char line[1024], why[256], *text;
    size_t len;
    struct stat sb;
    /* Looked at before the read: a rewrite in between is then noticed
     * (and read) at the next look instead of being taken as seen. */
    bool have_sb = stat(hv->path, &sb) == 0;
    bool changed = false;
    int r = util_read_file(hv->path, (size_t) 16 << 20, &text, &len);

    /* Noted even if it could not be read or does not parse (a bad file
     * is reported once, not at every look, and read again when it
     * changes); not if it could not be opened. */
    if (have_sb && (r == 0 || r == -EIO || r == -EFBIG)) {
        hv->mtime = sb.st_mtim;
        hv->size = sb.st_size;
        hv->ino = sb.st_ino;
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", hv->path, strerror(-r));
        return r;
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *at = text;
        unsigned ln = 0;

        if (pass) {
            for (size_t i = 0; i < hv->n_doms; i++) {
                struct dummy_dom *d = &hv->doms[i];

                d->prev_mig = d->seen ? d->mig : MIG_NONE;
                d->dom.migrated_in &= d->seen;
                d->seen = false;
                d->mig = MIG_NONE;
            }
        }
        while (*at) {
            size_t n = strcspn(at, "\n");

            ln++;
            if (n >= sizeof line) {
                snprintf(err, errlen, "%s:%u: line longer than %zu bytes",
                         hv->path, ln, sizeof line - 1);
                free(text);
                return -EINVAL;
            }
            memcpy(line, at, n);
            line[n] = '\0';
            at += n + (at[n] == '\n');
            if (parse_line(hv, line, pass == 1, why, sizeof why) < 0) {
                snprintf(err, errlen, "%s:%u: %s", hv->path, ln, why);
                free(text);
                return -EINVAL;
            }
        }
    }
    free(text);
    for (size_t i = 0; i < hv->n_doms; i++) {
        changed |= visible(&hv->doms[i]) != hv->doms[i].reported
                   || hv->doms[i].mig != hv->doms[i].reported_mig;
    }
    if (changed && hv->sched && hv->cb && !hv->event_timer) {
        hv->event_timer = sched_add_timer(hv->sched, 0, raise_events, hv);
    }
    return 0;
}

static void
maybe_reload(struct drv_hv *hv)
{
    struct stat sb;
    char err[512];

    if (stat(hv->path, &sb) == 0
        && (sb.st_mtim.tv_sec != hv->mtime.tv_sec
            || sb.st_mtim.tv_nsec != hv->mtime.tv_nsec
            || sb.st_size != hv->size || sb.st_ino != hv->ino)
        && load_file(hv, err, sizeof err) < 0) {
        LOG_WARN_RL("%s (keeping the domains as they were)", err);
    }
}

/* The migration event for a change of scripted state, -1 for none. */
static int
migr_event(const struct dummy_dom *d)
{
    if (d->mig == d->reported_mig || !d->seen) {
        return -1;
    }
    switch (d->mig) {
    case MIG_OUT:
        return DRV_MIGR_OUT_BEGIN;
    case MIG_GONE:
        /* Only a domain the daemon was told about can leave. */
        return d->reported ? DRV_MIGR_GONE : -1;
    case MIG_IN:
        return DRV_MIGR_IN_BEGIN;
    case MIG_NONE:
        break;
    }
    return d->reported_mig == MIG_IN ? DRV_MIGR_RESUMED : -1;
}

/* Timer: tells the daemon which domains appeared, vanished or migrated
 * since the last call.  Everything is taken from the domain before the
 * first callback: a callback may call list(), which may re-read the file
 * and move hv->doms. */
static void
raise_events(void *hv_)
{
    struct drv_hv *hv = hv_;

    hv->event_timer = 0;
    for (size_t i = 0; i < hv->n_doms; i++) {
        struct dummy_dom *d = &hv->doms[i];
        char uuid[sizeof d->dom.uuid];
        bool up = visible(d);
        int migr = migr_event(d), ev = -1;

        if (up != d->reported) {
            ev = up ? DRV_EV_STARTED : DRV_EV_STOPPED;
            LOG_INFO("domain %s %s", d->dom.name,
                     up ? "appeared" : "vanished");
        } else if (migr == DRV_MIGR_RESUMED) {
            ev = DRV_EV_STARTED;        /* As libvirt's RESUMED. */
        }
        if (migr >= 0) {
            LOG_INFO("domain %s: migration event %d", d->dom.name, migr);
        }
        d->reported = up;
        d->reported_mig = d->mig;
        snprintf(uuid, sizeof uuid, "%s", d->dom.uuid);
        if (migr >= 0 && hv->migr_cb) {
            hv->migr_cb(hv->migr_aux, (enum drv_migr) migr, uuid);
        }
        if (ev >= 0) {
            hv->cb(hv->aux, (enum drv_event) ev, uuid);
        }
    }
}

static void
poll_file(void *hv_)
{
    struct drv_hv *hv = hv_;

    maybe_reload(hv);
    hv->poll_timer = sched_add_timer(hv->sched, DUMMY_POLL_NS, poll_file,
                                     hv);
}

static void
write_state(struct drv_hv *hv)
{
    char tmp[300], set[256];
    FILE *f;

    if (!hv->state_path[0]) {
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", hv->state_path);
    f = fopen(tmp, "w");
    if (!f) {
        LOG_WARN_RL("%s: %s", tmp, strerror(errno));
        return;
    }
    for (size_t i = 0; i < hv->n_doms; i++) {
        struct dummy_dom *d = &hv->doms[i];

        if (!visible(d)) {
            continue;
        }
        for (unsigned v = 0; v < d->dom.n_vcpus; v++) {
            cpuset_format(&d->pin[v], set, sizeof set);
            fprintf(f, "%s vcpu%u %s\n", d->dom.name, v, set);
        }
        cpuset_format(&d->emu, set, sizeof set);
        fprintf(f, "%s emulator %s\n", d->dom.name, set);
    }
    fclose(f);
    rename(tmp, hv->state_path);
}

/* Advances every vCPU's counters to now: busy% of the elapsed time as CPU
 * time, and as delay the share of busy its allowed CPUs cannot hold. */
static void
advance(struct drv_hv *hv)
{
    uint64_t now = clk_now_ns(), dt = now - hv->last_ns;
    uint32_t load[128];

    hv->last_ns = now;
    memset(load, 0, sizeof load);
    for (size_t i = 0; i < hv->n_doms; i++) {
        struct dummy_dom *d = &hv->doms[i];

        for (unsigned v = 0; running(d) && v < d->dom.n_vcpus; v++) {
            unsigned n = cpuset_count(&d->pin[v]);

            /* Spread a vCPU's busy over its allowed CPUs for the
             * overload estimate (first 128 CPUs are enough here). */
            CPUSET_FOREACH (c, &d->pin[v]) {
                if ((size_t) c < ARRAY_SIZE(load) && n) {
                    load[c] += d->busy_pct[v] / n;
                }
            }
        }
    }
    for (size_t i = 0; i < hv->n_doms; i++) {
        struct dummy_dom *d = &hv->doms[i];

        for (unsigned v = 0; running(d) && v < d->dom.n_vcpus; v++) {
            uint32_t over = 0, n = 0;

            d->time_ns[v] += dt * d->busy_pct[v] / 100;
            CPUSET_FOREACH (c, &d->pin[v]) {
                if ((size_t) c < ARRAY_SIZE(load)) {
                    over += load[c] > 100 ? load[c] - 100 : 0;
                    n++;
                }
            }
            if (n && over && d->busy_pct[v]) {
                d->delay_ns[v] += dt * (over / n) / 100 / 2;
            }
        }
    }
}

static struct drv_hv *
dummy_open(const char *uri, struct sched *s, drv_event_cb *cb, void *aux,
           char *err, size_t errlen)
{
    struct drv_hv *hv = XNEW(struct drv_hv);
    const char *path = uri && *uri ? uri : getenv("VPOWER_DUMMY_DOMAINS");
    const char *state = getenv("VPOWER_DUMMY_STATE");
    long n = sysconf(_SC_NPROCESSORS_CONF);

    if (!path || !*path) {
        snprintf(err, errlen, "dummy driver: no domains file (use "
                 "--dummy-domains FILE or VPOWER_DUMMY_DOMAINS)");
        free(hv);
        return NULL;
    }
    snprintf(hv->path, sizeof hv->path, "%s", path);
    snprintf(hv->state_path, sizeof hv->state_path, "%s",
             state ? state : "");
    cpuset_zero(&hv->all);
    for (long c = 0; c < (n > 0 ? n : 1) && c < POL_MAX_CPUS; c++) {
        cpuset_set(&hv->all, (unsigned) c);
    }
    if (load_file(hv, err, errlen) < 0) {
        free(hv->doms);
        free(hv);
        return NULL;
    }
    hv->last_ns = clk_now_ns();
    /* What open() found is what the daemon lists at startup: no events
     * for it. */
    for (size_t i = 0; i < hv->n_doms; i++) {
        hv->doms[i].reported = visible(&hv->doms[i]);
        hv->doms[i].reported_mig = hv->doms[i].mig;
    }
    if (s && cb) {
        hv->sched = s;
        hv->cb = cb;
        hv->aux = aux;
        hv->poll_timer = sched_add_timer(s, DUMMY_POLL_NS, poll_file, hv);
    }
    write_state(hv);
    return hv;
}

static void
dummy_close(struct drv_hv *hv)
{
    if (hv) {
        if (hv->sched) {
            sched_del_timer(hv->sched, hv->poll_timer);
            sched_del_timer(hv->sched, hv->event_timer);
        }
        free(hv->doms);
        free(hv);
    }
}

static int
dummy_list(struct drv_hv *hv, struct drv_dom **doms, size_t *n)
{
    size_t k = 0;

    maybe_reload(hv);
    *doms = XNEWARRAY(struct drv_dom, hv->n_doms ? hv->n_doms : 1);
    for (size_t i = 0; i < hv->n_doms; i++) {
        if (visible(&hv->doms[i])) {
            (*doms)[k++] = hv->doms[i].dom;
        }
    }
    *n = k;
    return 0;
}

/* The CPU a vCPU last ran on: the scheduler spreads the vCPUs that
 * share CPUs over them, so the vCPU numbered 'g' across all domains
 * (file order) is on the (g mod n)-th of its n allowed CPUs; -1 if it
 * may run nowhere. */
static int
ran_on(const struct cpuset *allowed, unsigned g)
{
    unsigned n = cpuset_count(allowed), k = 0;

    if (!n) {
        return -1;
    }
    CPUSET_FOREACH (c, allowed) {
        if (k++ == g % n) {
            return (int) c;
        }
    }
    return -1;
}

static int
dummy_vcpu_stats(struct drv_hv *hv, const char *uuid,
                 struct drv_vcpu_stat *out, size_t max, size_t *n)
{
    struct dummy_dom *d;
    unsigned g = 0;

    maybe_reload(hv);
    advance(hv);
    d = find_uuid(hv, uuid);
    *n = 0;
    if (!d) {
        return -ENOENT;
    }
    for (const struct dummy_dom *e = hv->doms; e < d; e++) {
        g += e->dom.n_vcpus;
    }
    for (unsigned v = 0; v < d->dom.n_vcpus && v < max; v++) {
        out[v].time_ns = d->time_ns[v];
        out[v].delay_ns = d->delay_ns[v];
        out[v].has_delay = true;
        out[v].cpu = ran_on(&d->pin[v], g + v);
        (*n)++;
    }
    return 0;
}

static int
dummy_pin_vcpu(struct drv_hv *hv, const char *uuid, unsigned vcpu,
               const struct cpuset *s)
{
    struct dummy_dom *d = find_uuid(hv, uuid);
    char buf[256];

    if (!d) {
        return -ENOENT;
    }
    if (vcpu >= d->dom.n_vcpus || cpuset_empty(s)) {
        return -EINVAL;
    }
    advance(hv);
    d->pin[vcpu] = *s;
    cpuset_format(s, buf, sizeof buf);
    LOG_INFO("pin %s vcpu%u -> %s", d->dom.name, vcpu, buf);
    write_state(hv);
    return 0;
}

static int
dummy_pin_emulator(struct drv_hv *hv, const char *uuid,
                   const struct cpuset *s)
{
    struct dummy_dom *d = find_uuid(hv, uuid);
    char buf[256];

    if (!d) {
        return -ENOENT;
    }
    if (cpuset_empty(s)) {
        return -EINVAL;
    }
    d->emu = *s;
    cpuset_format(s, buf, sizeof buf);
    LOG_INFO("pin %s emulator -> %s", d->dom.name, buf);
    write_state(hv);
    return 0;
}

static int
dummy_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                   struct cpuset *s)
{
    struct dummy_dom *d = find_uuid(hv, uuid);

    if (!d) {
        return -ENOENT;
    }
    if (vcpu >= d->dom.n_vcpus) {
        return -EINVAL;
    }
    *s = d->pin[vcpu];
    return 0;
}

static int
dummy_get_emulator_pin(struct drv_hv *hv, const char *uuid,
                       struct cpuset *s)
{
    struct dummy_dom *d = find_uuid(hv, uuid);

    if (!d) {
        return -ENOENT;
    }
    *s = d->emu;
    return 0;
}

static int
dummy_get_metadata(struct drv_hv *hv, const char *uuid, char *buf,
                   size_t len)
{
    struct dummy_dom *d = find_uuid(hv, uuid);

    if (!d) {
        return -ENOENT;
    }
    if (strlen(d->metadata) >= len) {
        return -ENAMETOOLONG;
    }
    snprintf(buf, len, "%s", d->metadata);
    return 0;
}

static int
dummy_set_metadata(struct drv_hv *hv, const char *uuid, const char *xml)
{
    struct dummy_dom *d = find_uuid(hv, uuid);

    if (!d) {
        return -ENOENT;
    }
    if (xml && strlen(xml) >= sizeof d->metadata) {
        return -ENAMETOOLONG;
    }
    snprintf(d->metadata, sizeof d->metadata, "%s", xml ? xml : "");
    return 0;
}

static void
dummy_set_migr_cb(struct drv_hv *hv, drv_migr_cb *cb, void *aux)
{
    hv->migr_cb = cb;
    hv->migr_aux = aux;
}

static int
dummy_migr_job(struct drv_hv *hv, const char *uuid, enum drv_job *job)
{
    struct dummy_dom *d;

    maybe_reload(hv);
    d = find_uuid(hv, uuid);
    *job = DRV_JOB_NONE;
    if (!d) {
        return -ENOENT;
    }
    *job = d->mig == MIG_OUT ? DRV_JOB_MIGR_OUT
           : d->mig == MIG_IN ? DRV_JOB_MIGR_IN : DRV_JOB_NONE;
    return 0;
}

const struct drv_hv_ops drv_hv_dummy = {
    .name = "dummy",
    .open = dummy_open,
    .close = dummy_close,
    .list = dummy_list,
    .vcpu_stats = dummy_vcpu_stats,
    .pin_vcpu = dummy_pin_vcpu,
    .pin_emulator = dummy_pin_emulator,
    .get_vcpu_pin = dummy_get_vcpu_pin,
    .get_emulator_pin = dummy_get_emulator_pin,
    .get_metadata = dummy_get_metadata,
    .set_metadata = dummy_set_metadata,
    .set_migr_cb = dummy_set_migr_cb,
    .migr_job = dummy_migr_job,
};
