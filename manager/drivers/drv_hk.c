/* manager/drivers/drv_hk.c -- drv_hk_host: the housekeeping driver
 * (housekeeping.h) behind the cycle's table (drv.h).
 *
 * A thin adapter: reports are copied into the table's smaller struct,
 * the journal becomes the driver's recorder, and a crashed run's journal
 * entries are converted back into driver records before hk_restore(). */

#include <config.h>

#include "manager/drivers/drv_hk.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "manager/journal.h"
#include "manager/util.h"

struct drv_hk {
    struct hk *hk;
};

struct drv_hk *
drv_hk_open(const struct hk_conf *conf, char *err, size_t errlen)
{
    struct drv_hk *h = XNEW(struct drv_hk);

    if (hk_open(conf, NULL, NULL, &h->hk, err, errlen) < 0) {
        free(h);
        return NULL;
    }
    return h;
}

static void
hkd_close(struct drv_hk *h)
{
    if (h) {
        hk_close(h->hk);
        free(h);
    }
}

static int
hkd_confine(struct drv_hk *h, const struct cpuset *set,
            struct drv_hk_report *rep)
{
    struct hk_report hr;
    int r = hk_apply(h->hk, set, &hr);

    if (rep) {
        rep->n_cgroups = hr.n_cgroups;
        rep->n_absent = hr.n_absent;
        rep->n_irqs = hr.n_irqs;
        rep->n_irqs_refused = hr.n_irqs_refused;
        for (unsigned k = 0; k < hr.n_irqs_refused && k < HK_REPORT_IRQS
                             && k < DRV_HK_REFUSED_MAX; k++) {
            rep->refused[k] = hr.refused[k];
        }
        rep->wq_moved = hr.wq_moved;
        rep->irqbalance_pid = hr.irqbalance_pid;
    }
    return r;
}

static int
hkd_restore(struct drv_hk *h, unsigned *n_failed)
{
    return hk_restore(h->hk, NULL, 0, n_failed);
}

/* Collects the housekeeping entries of a journal. */
struct collect {
    struct hk_record *recs;
    size_t n, cap;
};

static int
collect_cb(void *aux, const struct jnl_entry *e)
{
    struct collect *c = aux;

    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 16;
        c->recs = xrealloc(c->recs, c->cap * sizeof *c->recs);
    }
    if (hk_record_from_jnl(e, &c->recs[c->n])) {
        c->n++;
    }
    return 0;
}

static int
hkd_restore_journal(struct drv_hk *h, const struct jnl *j,
                    unsigned *n_failed)
{
    struct collect c = { NULL, 0, 0 };
    int r;

    if (n_failed) {
        *n_failed = 0;
    }
    r = jnl_foreach(j, JNL_N_KINDS, collect_cb, &c);
    if (r == 0 && c.n) {
        r = hk_restore(h->hk, c.recs, c.n, n_failed);
    }
    free(c.recs);
    return r;
}

static void
hkd_set_journal(struct drv_hk *h, struct jnl *j)
{
    hk_set_recorder(h->hk, j ? hk_jnl_record : NULL, j);
}

static int
hkd_irq_counts(struct drv_hk *h, uint64_t *counts, size_t n)
{
    return hk_irq_counts(h->hk, counts, n);
}

static int
hkd_wakers(struct drv_hk *h, const struct cpuset *cpus, bool threads,
           struct drv_waker **out)
{
    struct hk_waker *hw;
    int n = hk_wakers(h->hk, cpus, threads, &hw);

    *out = NULL;
    if (n < 0) {
        return n;
    }
    *out = XNEWARRAY(struct drv_waker, n ? (size_t) n : 1);
    for (int i = 0; i < n; i++) {
        struct drv_waker *w = &(*out)[i];

        w->thread = hw[i].thread;
        w->on_set = hw[i].on_set;
        w->tid = hw[i].tid;
        snprintf(w->label, sizeof w->label, "%s", hw[i].label);
        snprintf(w->name, sizeof w->name, "%s", hw[i].name);
        w->count = hw[i].count;
    }
    free(hw);
    return n;
}

static int
hkd_pressure(struct drv_hk *h, uint32_t *cpct)
{
    struct hk_pressure p;
    int r = hk_cpu_pressure(h->hk, &p);

    if (r < 0) {
        return r;
    }
    /* Host files are hostile: clamp to the documented range. */
    *cpct = p.some_avg10 <= 0 ? 0
            : p.some_avg10 >= 100 ? 10000
            : (uint32_t) (p.some_avg10 * 100 + 0.5);
    return 0;
}

static int
hkd_cpu_time(struct drv_hk *h, uint64_t *ns)
{
    return hk_cpu_time(h->hk, ns);
}

static const char *
hkd_mode(const struct drv_hk *h)
{
    return hk_mode_name(hk_mode(h->hk));
}

static const char *
hkd_error(const struct drv_hk *h)
{
    return hk_error(h->hk);
}

const struct drv_hk_ops drv_hk_host = {
    .name = "host",
    .confine = hkd_confine,
    .restore = hkd_restore,
    .restore_journal = hkd_restore_journal,
    .set_journal = hkd_set_journal,
    .irq_counts = hkd_irq_counts,
    .wakers = hkd_wakers,
    .pressure = hkd_pressure,
    .cpu_time = hkd_cpu_time,
    .mode = hkd_mode,
    .error = hkd_error,
    .close = hkd_close,
};
