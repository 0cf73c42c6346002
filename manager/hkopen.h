/* manager/hkopen.h -- Opening housekeeping from vpowerd.conf.
 *
 * Translates the housekeeping directives (manager/conf.h) into the
 * housekeeping driver's configuration and opens it, for the running
 * daemon (when 'housekeeping yes') and for the replay of a crashed run's
 * journal (whatever the directive says now: what was changed must go
 * back). */

#ifndef VPOWER_HKOPEN_H
#define VPOWER_HKOPEN_H 1

#include <stdbool.h>
#include <stddef.h>

struct vpd;
struct vpd_conf;
struct drv_hk;
struct jnl;

/* Opens the housekeeping driver with the roots, groups and parts of 'c'
 * ('dry_run': write nothing).  NULL with the reason in 'err'. */
struct drv_hk *hkopen_driver(const struct vpd_conf *c, bool dry_run,
                             char *err, size_t errlen);

/* Creates d->hks on drv_hk_host if d->conf.housekeeping is on (else
 * leaves it NULL).  Returns 0 or -EINVAL with 'err' filled. */
int hkopen_start(struct vpd *d, char *err, size_t errlen);

/* Writes back the housekeeping originals journalled in 'j', through
 * d->hks or, without one, a driver opened for it.  '*n_failed' counts
 * those not restored.  Returns 0 or the first error. */
int hkopen_restore_journal(struct vpd *d, const struct jnl *j,
                           unsigned *n_failed, char *err, size_t errlen);

#endif /* manager/hkopen.h */
