/* manager/hkset.c -- The housekeeping set follows the plan (hkset.h). */

#include <config.h>

#include "manager/hkset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/log.h"
#include "manager/util.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "vpowerd"

struct hkset *
hkset_create(const struct drv_hk_ops *ops, struct drv_hk *h,
             uint32_t spread_pressure_pct)
{
    struct hkset *s = XNEW(struct hkset);

    s->ops = ops;
    s->h = h;
    s->spread_cpct = spread_pressure_pct * 100;
    return s;
}

void
hkset_destroy(struct hkset *s)
{
    if (s) {
        s->ops->close(s->h);
        free(s->snap);
        free(s);
    }
}

/* The CPUs host work may use under the plan in force: every online CPU
 * vpowerd does not free (managed and outside the active set), and CPU0,
 * which the driver requires and vpowerd never frees.  With the override
 * every online CPU. */
void
hkset_target(const struct vpd *d, struct cpuset *set)
{
    cpuset_zero(set);
    for (unsigned c = 0; c < d->n_cpus; c++) {
        const struct vpd_cpu *vc = &d->cpus[c];

        if (!vc->online) {
            continue;
        }
        if (d->override_performance || !vc->managed
            || cpuset_has(&d->applied->active, c)) {
            cpuset_set(set, c);
        }
    }
    cpuset_set(set, 0);
}

static void
log_report(const struct vpd *d, const struct hkset *s)
{
    const struct drv_hk_report *r = &s->rep;
    char set[128], irqs[96];

    if (r->irqbalance_pid > 0) {
        snprintf(irqs, sizeof irqs, "interrupts left to irqbalance "
                 "(pid %d)", r->irqbalance_pid);
    } else {
        snprintf(irqs, sizeof irqs, "%u interrupts%s (%u refused)",
                 r->n_irqs, d->dry_run ? " would move" : " moved",
                 r->n_irqs_refused);
    }
    LOG_INFO("%shousekeeping: host work on %s%s: %u cgroups, %s, "
             "workqueues %s", d->dry_run ? "dry-run " : "",
             cpuset_label(&s->set, set, sizeof set),
             s->released ? " (override: released)" : "", r->n_cgroups,
             irqs, r->wq_moved ? (d->dry_run ? "would move" : "moved")
                               : "unchanged");
}

void
hkset_follow(struct vpd *d)
{
    struct hkset *s = d->hks;
    struct cpuset set;
    int r;

    if (!s || !d->applied) {
        return;
    }
    hkset_target(d, &set);
    if (s->applied && cpuset_equal(&set, &s->set)) {
        return;
    }
    memset(&s->rep, 0, sizeof s->rep);
    r = s->ops->confine(s->h, &set, &s->rep);
    s->applied = true;
    s->set = set;
    s->released = d->override_performance;
    s->last_err = r;
    s->n_changes++;
    snprintf(s->error, sizeof s->error, "%s", s->ops->error(s->h));
    log_report(d, s);
    if (r < 0) {
        /* Not retried until the set changes: a file that refuses now
         * would refuse every period. */
        LOG_WARN_RL("housekeeping: %s", s->error[0] ? s->error
                                                    : strerror(-r));
        d->n_errors[VPD_E_SYSFS]++;
    }
}

void
hkset_demand(struct vpd *d, struct pol_vcpu *vcpus, size_t n)
{
    struct hkset *s = d->hks;
    uint32_t ready = d->pcfg.spread_ready_ppm + 1;
    uint32_t cpct;
    bool was;

    if (!s) {
        return;
    }
    was = s->spreading;
    s->spreading = false;
    if (s->ops->pressure(s->h, &cpct) < 0) {
        s->pressure_known = false;
        return;
    }
    s->pressure_known = true;
    s->pressure_cpct = cpct;
    if (cpct < s->spread_cpct) {
        return;
    }
    /* Host work waits for a CPU: the same signal as a VM whose vCPUs
     * wait, and the same answer, spread at once.  Every VM is marked,
     * since host work runs on the whole active set. */
    for (size_t i = 0; i < n; i++) {
        if (vcpus[i].load.ready_ppm < ready) {
            vcpus[i].load.ready_ppm = ready;
        }
    }
    s->spreading = true;
    s->n_spread++;
    if (!was) {
        LOG_INFO("housekeeping: host CPU pressure %u.%02u %% "
                 "at or above %u %%: spreading", cpct / 100, cpct % 100,
                 s->spread_cpct / 100);
    }
}

/* ---- What ran on the freed CPUs ------------------------------------- */

/* Sources in one order: interrupts by label, then threads by id. */
static int
cmp_source(const void *a, const void *b)
{
    const struct drv_waker *x = a, *y = b;

    if (x->thread != y->thread) {
        return x->thread ? 1 : -1;
    }
    if (x->thread) {
        return x->tid < y->tid ? -1 : x->tid > y->tid;
    }
    return strcmp(x->label, y->label);
}

/* Largest count first. */
static int
cmp_count(const void *a, const void *b)
{
    const struct drv_waker *x = a, *y = b;

    return x->count > y->count ? -1 : x->count < y->count;
}

/* The period's counts: 'cur' minus 'prev' (both sorted by source).  A
 * source new in 'cur' counts from 0: interrupt counts start at boot,
 * and a thread not read before was born in the period. */
static void
diff(struct hkset_woke *w, const struct drv_waker *prev, size_t np,
     const struct drv_waker *cur, size_t nc)
{
    struct drv_waker *all = XNEWARRAY(struct drv_waker, nc ? nc : 1);
    size_t n = 0, j = 0;

    w->irqs = w->thread_runs = 0;
    for (size_t i = 0; i < nc; i++) {
        uint64_t before = 0;
        int c = 1;

        while (j < np && (c = cmp_source(&prev[j], &cur[i])) < 0) {
            j++;
        }
        if (j < np && c == 0) {
            before = prev[j].count;
        }
        if (cur[i].count <= before || (cur[i].thread && !cur[i].on_set)) {
            continue;
        }
        all[n] = cur[i];
        all[n].count -= before;
        if (cur[i].thread) {
            w->thread_runs += all[n].count;
        } else {
            w->irqs += all[n].count;
        }
        n++;
    }
    qsort(all, n, sizeof *all, cmp_count);
    w->n_top = n < HKSET_TOP ? n : HKSET_TOP;
    memcpy(w->top, all, w->n_top * sizeof *all);
    free(all);
}

/* How many entries of a list sorted by source are interrupts (they
 * come first). */
static size_t
n_irqs(const struct drv_waker *w, size_t n)
{
    size_t k = 0;

    while (k < n && !w[k].thread) {
        k++;
    }
    return k;
}

void
hkset_watch(struct vpd *d, uint64_t now_ns)
{
    struct hkset *s = d->hks;
    struct drv_waker *cur;
    struct cpuset freed;
    bool threads;
    int n;

    if (!s) {
        return;
    }
    cpuset_zero(&freed);
    for (unsigned c = 0; s->applied && !s->released && c < d->n_cpus; c++) {
        if (d->cpus[c].online && !cpuset_has(&s->set, c)) {
            cpuset_set(&freed, c);
        }
    }
    threads = now_ns < s->threads_until_ns;
    n = cpuset_empty(&freed) ? -ENOENT
        : s->ops->wakers(s->h, &freed, threads, &cur);
    if (n < 0) {
        if (n != -ENOENT) {
            LOG_WARN_RL("housekeeping: %s", s->ops->error(s->h));
        }
        s->snap_valid = false;
        s->woke.valid = false;
        return;
    }
    qsort(cur, (size_t) n, sizeof *cur, cmp_source);
    s->woke.valid = s->snap_valid && cpuset_equal(&s->snap_cpus, &freed);
    if (s->woke.valid) {
        /* Threads count only when both readings hold them. */
        bool both = threads && s->snap_threads;

        s->woke.threads = both;
        s->woke.cpus = freed;
        s->woke.period_ns = now_ns - s->snap_ns;
        diff(&s->woke, s->snap, both ? s->n_snap : n_irqs(s->snap, s->n_snap),
             cur, both ? (size_t) n : n_irqs(cur, (size_t) n));
    }
    free(s->snap);
    s->snap = cur;
    s->n_snap = (size_t) n;
    s->snap_valid = true;
    s->snap_threads = threads;
    s->snap_cpus = freed;
    s->snap_ns = now_ns;
}

void
hkset_watch_threads(struct hkset *s, uint64_t until_ns)
{
    if (until_ns > s->threads_until_ns) {
        s->threads_until_ns = until_ns;
    }
}

void
hkset_woke_text(const struct hkset *s, char *buf, size_t len)
{
    const struct hkset_woke *w = &s->woke;
    char set[128];
    size_t o;

    if (!w->valid) {
        snprintf(buf, len, "No CPU was freed of host work over the last "
                 "two periods.");
        return;
    }
    o = (size_t) snprintf(buf, len, "Freed CPUs %s, last %.1f s: %" PRIu64
                          " interrupts", cpuset_label(&w->cpus, set,
                                                      sizeof set),
                          (double) w->period_ns / 1e9, w->irqs);
    if (w->threads) {
        o += (size_t) snprintf(buf + (o < len ? o : len),
                               o < len ? len - o : 0,
                               ", threads that last ran there scheduled "
                               "in %" PRIu64 " times", w->thread_runs);
    }
    for (size_t i = 0; i < w->n_top && o < len; i++) {
        const struct drv_waker *t = &w->top[i];

        if (t->thread) {
            o += (size_t) snprintf(buf + o, len - o, "%s thread %s "
                                   "(tid %" PRIu32 ") x%" PRIu64,
                                   i ? ";" : ":", t->name, t->tid,
                                   t->count);
        } else {
            o += (size_t) snprintf(buf + o, len - o, "%s IRQ %s (%s) x%"
                                   PRIu64, i ? ";" : ":", t->label,
                                   t->name[0] ? t->name : "?", t->count);
        }
    }
    if (!w->threads && o < len) {
        snprintf(buf + o, len - o, ".  Threads are read from now on; ask "
                 "again after the next period to see them.");
    } else if (o < len) {
        snprintf(buf + o, len - o, ".");
    }
}

int
hkset_restore(struct vpd *d)
{
    struct hkset *s = d->hks;
    unsigned failed = 0;
    int r;

    if (!s || !s->applied || d->dry_run) {
        return 0;
    }
    r = s->ops->restore(s->h, &failed);
    if (r < 0) {
        LOG_ERR("housekeeping: %u originals not restored: %s", failed,
                s->ops->error(s->h)[0] ? s->ops->error(s->h)
                                       : strerror(-r));
    } else {
        LOG_INFO("housekeeping: host work restored as found");
    }
    s->applied = false;
    return r;
}

const char *
hkset_mode(const struct hkset *s)
{
    return s->ops->mode(s->h);
}
