/* manager/vmreg.h -- The registry of running VMs (vpd.vms).
 *
 * Mirrors the hypervisor driver's list of running domains: each VM with
 * its vCPUs, their load histories and the pins found (restored on exit)
 * and in force.  New vCPUs start from their current pins and get a first
 * counter sample so the next cycle has a delta.  Events go to the cycle
 * hooks (vm_added, vm_changed, vm_gone) of d->cyc, which must exist. */

#ifndef VPOWER_VMREG_H
#define VPOWER_VMREG_H 1

#include "manager/drivers/drv.h"

struct vpd;
struct vpd_vm;

/* The VM with domain UUID 'uuid', or NULL. */
struct vpd_vm *vmreg_find_uuid(struct vpd *, const char *uuid);

/* Lists the running domains and adds, updates or drops VMs to match.
 * Returns 0, or the driver's -errno (the registry is unchanged). */
int vmreg_resync(struct vpd *);

/* Drops 'vm' (vm_gone first) and frees it. */
void vmreg_remove(struct vpd *, struct vpd_vm *vm);

/* 'vm' arrived here by live migration: re-reads its policy from its
 * metadata and takes neither its live pins (the source host's) as
 * administrator's static pins nor as originals: its originals become
 * all host CPUs, which is what an unpinned domain starts with. */
void vmreg_arrived(struct vpd *, struct vpd_vm *vm);

/* Drops every VM (vm_gone for each, quietly: at stop). */
void vmreg_clear(struct vpd *);

#endif /* manager/vmreg.h */
