/* manager/restore.c -- Putting back what vpowerd changed (restore.h). */

#include <config.h>

#include "manager/restore.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "manager/cycle.h"
#include "manager/hkopen.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "vpowerd"

static int
restore_pin(void *aux, const struct jnl_entry *e)
{
    struct vpd *d = aux;
    int r;

    if (e->kind == JNL_VCPU_PIN) {
        r = d->hv_ops->pin_vcpu(d->hv, e->uuid, e->vcpu, &e->cpus);
    } else {
        r = d->hv_ops->pin_emulator(d->hv, e->uuid, &e->cpus);
    }
    /* A domain that is gone took its pins with it. */
    return r == -ENOENT ? 0 : r;
}

int
restore_journal(struct vpd *d, char *err, size_t errlen)
{
    struct jnl *j = NULL;
    char why[256], hkwhy[256] = "";
    unsigned failed = 0, hk_failed = 0;
    int r, r2;

    r = jnl_load(d->conf.journal_path, &j, why, sizeof why);
    if (r == -ENOENT) {
        return 0;
    }
    if (r == -EPERM || r == -ENOTDIR) {
        snprintf(err, errlen, "%s", why);     /* Untrusted: not replayed. */
        return r;
    }
    if (r < 0) {
        snprintf(err, errlen, "leftover journal unusable, restore by hand: "
                 "%s", why);
        return r;
    }
    LOG_WARN("journal %s left by a crashed run: restoring %zu originals",
             d->conf.journal_path, jnl_count(j));
    r = jnl_foreach(j, JNL_VCPU_PIN, restore_pin, d);
    r2 = jnl_foreach(j, JNL_EMULATOR_PIN, restore_pin, d);
    r = r ? r : r2;
    if (d->host_ops->caps & DRV_HOST_SYSFS_TREE) {
        r2 = jnl_restore_sysfs(j, d->conf.sysfs_root, &failed);
        r = r ? r : r2;
    }
    /* Cpusets, interrupts and the workqueue mask, below the roots
     * configured now. */
    r2 = hkopen_restore_journal(d, j, &hk_failed, hkwhy, sizeof hkwhy);
    r = r ? r : r2;
    if (r < 0) {
        snprintf(err, errlen, "could not restore the leftover journal %s "
                 "(%u sysfs values, %u housekeeping values failed%s%s): %s",
                 d->conf.journal_path, failed, hk_failed,
                 hkwhy[0] ? ": " : "", hkwhy, strerror(-r));
        jnl_close(j);
        return r;
    }
    jnl_remove(j);
    jnl_close(j);
    return 0;
}

int
restore_all(struct vpd *d)
{
    int ret = 0, r;

    for (struct vpd_vm *vm = d->vms; vm && d->cyc->hv_up; vm = vm->next) {
        if (vm->unmanaged || vm->migr_frozen) {
            continue;
        }
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            struct vpd_vcpu *vc = &vm->vcpus[i];

            if (cpuset_equal(&vc->applied, &vc->original)) {
                continue;
            }
            r = d->hv_ops->pin_vcpu(d->hv, vm->dom.uuid, vc->idx,
                                    &vc->original);
            if (r < 0 && r != -ENOENT) {
                LOG_ERR("restoring %s vCPU %u pin: %s", vm->dom.name,
                        vc->idx, strerror(-r));
                ret = ret ? ret : r;
            }
        }
        if (!cpuset_equal(&vm->emu_applied, &vm->emu_original)) {
            r = d->hv_ops->pin_emulator(d->hv, vm->dom.uuid,
                                        &vm->emu_original);
            if (r < 0 && r != -ENOENT) {
                LOG_ERR("restoring %s emulator pin: %s", vm->dom.name,
                        strerror(-r));
                ret = ret ? ret : r;
            }
        }
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        const struct cycle_orig *o = &d->cyc->orig[c];

        /* Online first: an offline CPU has no cpufreq/cpuidle files. */
        if (o->online_saved && !d->cpus[c].online) {
            r = d->host_ops->set_online(d->host, c, true);
            if (r < 0) {
                LOG_ERR("onlining cpu%u: %s", c, strerror(-r));
                ret = ret ? ret : r;
                continue;
            }
            d->cpus[c].online = true;
        }
        if (o->idle_saved) {
            for (unsigned s = 0; s < o->n_idle; s++) {
                r = d->host_ops->set_idle_disable(d->host, c, s,
                                                  o->disabled[s]);
                if (r < 0) {
                    LOG_ERR("restoring cpu%u idle state %u: %s", c, s,
                            strerror(-r));
                    ret = ret ? ret : r;
                }
            }
        }
        if (o->freq_saved) {
            r = d->host_ops->set_freq_range(d->host, c, o->min_khz,
                                            o->max_khz);
            if (r < 0) {
                LOG_ERR("restoring cpu%u frequency range: %s", c,
                        strerror(-r));
                ret = ret ? ret : r;
            }
        }
        if (o->online_saved && !o->online && c != 0) {
            r = d->host_ops->set_online(d->host, c, false);
            if (r < 0) {
                LOG_ERR("offlining cpu%u as found: %s", c, strerror(-r));
                ret = ret ? ret : r;
            }
        }
    }
    return ret;
}
