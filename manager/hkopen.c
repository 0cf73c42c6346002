/* manager/hkopen.c -- Opening housekeeping from vpowerd.conf
 * (hkopen.h). */

#include <config.h>

#include "manager/hkopen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "manager/drivers/drv_hk.h"
#include "manager/hkset.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "vpowerd"

_Static_assert(CONF_HK_MAX_GROUPS == HK_MAX_GROUPS,
               "housekeeping_groups holds what the driver takes");

struct drv_hk *
hkopen_driver(const struct vpd_conf *c, bool dry_run, char *err,
              size_t errlen)
{
    char groups[sizeof c->hk_groups];
    struct hk_conf hc;
    char *save = NULL;

    hk_conf_init(&hc);
    hc.cgroup_root = c->hk_cgroup_root;
    hc.proc_root = c->hk_proc_root;
    hc.wq_path = c->hk_wq_path;
    hc.run_root = c->hk_run_root;
    hc.cpusets = c->hk_cpusets;
    hc.irqs = c->hk_irqs;
    hc.workqueues = c->hk_workqueues;
    hc.dry_run = dry_run;
    /* The parser checked the list; hk_open() copies the strings. */
    snprintf(groups, sizeof groups, "%s", c->hk_groups);
    hc.n_groups = 0;
    for (char *g = strtok_r(groups, ",", &save);
         g && hc.n_groups < HK_MAX_GROUPS; g = strtok_r(NULL, ",", &save)) {
        hc.groups[hc.n_groups++] = g;
    }
    return drv_hk_open(&hc, err, errlen);
}

int
hkopen_start(struct vpd *d, char *err, size_t errlen)
{
    struct drv_hk *h;
    char why[256];

    if (!d->conf.housekeeping) {
        return 0;
    }
    h = hkopen_driver(&d->conf, d->dry_run, why, sizeof why);
    if (!h) {
        snprintf(err, errlen, "housekeeping: %s", why);
        return -EINVAL;
    }
    d->hks = hkset_create(&drv_hk_host, h, d->conf.hk_spread_pressure_pct);
    LOG_INFO("housekeeping: cpusets %s (%s), interrupts %s, workqueues "
             "%s; host work follows the active set",
             d->conf.hk_cpusets ? "on" : "off", hkset_mode(d->hks),
             d->conf.hk_irqs ? "on" : "off",
             d->conf.hk_workqueues ? "on" : "off");
    return 0;
}

static int
count_hk(void *aux, const struct jnl_entry *e)
{
    size_t *n = aux;

    *n += e->kind == JNL_CGROUP || e->kind == JNL_UNIT
          || e->kind == JNL_IRQ || e->kind == JNL_WQMASK;
    return 0;
}

int
hkopen_restore_journal(struct vpd *d, const struct jnl *j,
                       unsigned *n_failed, char *err, size_t errlen)
{
    struct drv_hk *h = d->hks ? d->hks->h : NULL;
    size_t n = 0;
    int r;

    *n_failed = 0;
    jnl_foreach(j, JNL_N_KINDS, count_hk, &n);
    if (!n) {
        return 0;
    }
    if (!h) {
        h = hkopen_driver(&d->conf, false, err, errlen);
        if (!h) {
            return -EINVAL;
        }
    }
    r = drv_hk_host.restore_journal(h, j, n_failed);
    if (r < 0) {
        snprintf(err, errlen, "%s", drv_hk_host.error(h));
    } else {
        LOG_INFO("housekeeping: %zu journalled originals restored", n);
    }
    if (!d->hks) {
        drv_hk_host.close(h);
    }
    return r;
}
