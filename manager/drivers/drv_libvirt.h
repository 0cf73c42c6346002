/* manager/drivers/drv_libvirt.h -- What drv_hv_libvirt makes of libvirt's
 * migration signals, as pure functions (unit-tested without a second
 * libvirtd: libvirt's test driver cannot migrate).
 *
 * Lifecycle events in a live migration (libvirt 9, QEMU, pre-copy):
 *   source:      MIGRATION_ITERATION 1, 2, ... (memory passes),
 *                SUSPENDED_MIGRATED (final pause), STOPPED_MIGRATED;
 *                a cancel after the pause gives RESUMED_MIGRATED, a
 *                failure before it gives no lifecycle event at all.
 *   destination: STARTED_MIGRATED (domain created, paused, receiving),
 *                RESUMED_MIGRATED (arrived and running).
 * Meanwhile the destination domain is "paused (migrating)" and the job
 * query there fails with VIR_ERR_OPERATION_UNSUPPORTED.
 * Post-copy adds SUSPENDED_POSTCOPY on the source and RESUMED_POSTCOPY
 * on the destination while pages still move; the job query covers that
 * window. */

#ifndef VPOWER_DRV_LIBVIRT_H
#define VPOWER_DRV_LIBVIRT_H 1

#include <stdbool.h>

#include "manager/drivers/drv.h"

/* The events to raise for one libvirt lifecycle event: 'migr' (an enum
 * drv_migr, raised first) and 'ev' (an enum drv_event); -1 for none.
 * DEFINED and UNDEFINED give DRV_EV_CHANGED, which the driver raises
 * only for a running domain. */
struct drv_lv_event {
    int ev;
    int migr;
};
struct drv_lv_event drv_libvirt_lifecycle(int event, int detail);

/* The job of a domain (an enum drv_job) from virDomainGetJobStats():
 * 'err' is VIR_ERR_OK on success, then 'type' (VIR_DOMAIN_JOB_*) and
 * its VIR_DOMAIN_JOB_OPERATION parameter (-1 if absent) count; or the
 * libvirt error code of its failure.  The QEMU driver refuses job
 * statistics on the destination of a migration while it runs
 * (VIR_ERR_OPERATION_UNSUPPORTED, "available only on the source host"):
 * that is DRV_JOB_MIGR_IN.  -1 for other errors (no answer). */
int drv_libvirt_job(int err, int type, int operation);

/* drv_dom.migrated_in from virDomainGetState(): running, and the reason
 * is that a migration brought it (VIR_DOMAIN_RUNNING_MIGRATED).  Libvirt
 * keeps that reason until the next pause or resume. */
bool drv_libvirt_migrated_in(int state, int reason);

#endif /* manager/drivers/drv_libvirt.h */
