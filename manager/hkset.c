/* manager/hkset.c -- The housekeeping set follows the plan (hkset.h). */

#include <config.h>

#include "manager/hkset.h"

#include <errno.h>
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
        free(s);
    }
}

/* The CPUs host work may use under the plan in force: every online CPU
 * vpowerd does not free (managed and outside the active set), and CPU0,
 * which the driver requires and vpowerd never frees.  With the override
 * every online CPU. */
static void
target_set(const struct vpd *d, struct cpuset *set)
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
    target_set(d, &set);
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
