/* manager/migration.h -- What a live migration means for vpowerd's hands
 * on one domain.
 *
 * The hypervisor driver reports migrations as enum drv_migr events
 * (manager/drivers/drv.h) and answers "which job runs on this domain now"
 * (drv_hv_ops.migr_job).  This module keeps, per domain, what the events
 * said and combines it with the job answer into one verdict the daemon
 * follows before it touches the domain:
 *
 *   MIGR_MANAGE   no migration: manage as usual.
 *   MIGR_FROZEN   a migration job runs (either end): never change its
 *                 pins now, nor restore them (a restore is a change); plan
 *                 around its vCPUs where they are.  Also when events said
 *                 a migration began and the job query failed: the safe
 *                 side.
 *   MIGR_GONE     it migrated away: forget its journal entries without
 *                 restoring them (jnl_forget_domain; its threads are gone,
 *                 and restoring would only fail or, after a return
 *                 trip, undo the other host's placement) and drop it.
 *   MIGR_ARRIVED  it arrived by migration: read its policy from its
 *                 metadata (which travels with the domain) instead of
 *                 anything remembered under its uuid.  Its live pins are
 *                 the source host's (libvirt migrates live pins): they
 *                 are no administrator's static pins and no originals of
 *                 this host.
 *
 * GONE and ARRIVED stay until migr_done() or migr_taken(); FROZEN and
 * MANAGE follow the job answer at each call.  A migration that fails on the
 * source before its final pause raises no event: the job answer then turns
 * FROZEN back into MANAGE.  Pure: no I/O, no clock, no globals.  Uuids are
 * copied. */

#ifndef VPOWER_MIGRATION_H
#define VPOWER_MIGRATION_H 1

#include <stdbool.h>
#include <stddef.h>

#include "manager/drivers/drv.h"

enum migr_verdict {
    MIGR_MANAGE,
    MIGR_FROZEN,
    MIGR_GONE,
    MIGR_ARRIVED,
};

struct migr;

/* An empty table; migr_destroy() frees it (NULL is fine). */
struct migr *migr_create(void);
void migr_destroy(struct migr *);

/* Notes one driver migration event for domain 'uuid'. */
void migr_event(struct migr *, enum drv_migr, const char *uuid);

/* The verdict for domain 'uuid'.  'job' is the driver's answer to
 * migr_job(); 'job_known' is false when there was none (the query failed
 * or the driver has no job query), and then only the events count. */
enum migr_verdict migr_verdict(const struct migr *, const char *uuid,
                               enum drv_job job, bool job_known);

/* The daemon acted on GONE or ARRIVED, or dropped the domain: forgets
 * what the events said about 'uuid'. */
void migr_done(struct migr *, const char *uuid);

/* The daemon took 'uuid' as arrived (it acted on ARRIVED).  When the
 * verdict came from the job ending before the resume event, that event
 * is still on its way: it is remembered as taken, so the event ends the
 * entry instead of making the domain arrive a second time.  Otherwise
 * as migr_done(). */
void migr_taken(struct migr *, const char *uuid);

/* Number of domains with migration state (for tests and status). */
size_t migr_count(const struct migr *);

/* "manage", "frozen", "gone", "arrived". */
const char *migr_verdict_name(enum migr_verdict);

#endif /* manager/migration.h */
