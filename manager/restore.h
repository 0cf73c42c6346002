/* manager/restore.h -- Putting back what vpowerd changed.
 *
 * Two paths: at a clean stop, the originals the cycle kept in memory
 * (each VM's pins as found, each CPU's frequency range, idle disables
 * and online state: cycle.orig[]) go back through the drivers; at a
 * start after a crash, the journal the crashed run left behind is
 * replayed first (pins through the hypervisor driver, sysfs values
 * and online states through the journal's own writer, for a host
 * driver working on a sysfs tree, cpusets, interrupt affinities and the
 * workqueue mask through the housekeeping driver, manager/hkopen.h). */

#ifndef VPOWER_RESTORE_H
#define VPOWER_RESTORE_H 1

#include <stddef.h>

struct vpd;

/* Replays the journal at d->conf.journal_path, if any, and removes it.
 * Returns 0 (also when there was none) or -errno with 'err' filled (the
 * journal is kept). */
int restore_journal(struct vpd *d, char *err, size_t errlen);

/* Puts every original in d->cyc back.  Returns 0 or the first error
 * (each one logged). */
int restore_all(struct vpd *d);

#endif /* manager/restore.h */
