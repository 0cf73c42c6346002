/* manager/drivers/drv_hk.h -- The housekeeping driver behind its table.
 *
 * drv_hk_host (manager/drivers/drv.h) adapts the housekeeping driver
 * (housekeeping.h) to the table the decision cycle calls: the cycle
 * hands it the set of CPUs host work may use, the daemon hands it the
 * restore journal.  Opening takes the driver's own configuration (roots,
 * groups, parts, dry run), which the daemon builds from vpowerd.conf. */

#ifndef VPOWER_DRV_HK_H
#define VPOWER_DRV_HK_H 1

#include <stddef.h>

#include "manager/drivers/drv.h"
#include "manager/drivers/housekeeping.h"

/* Opens the housekeeping driver on the real host files below the roots
 * of 'conf' (copied).  Returns an instance for drv_hk_host, or NULL with
 * the reason in 'err' (a bad group name or root). */
struct drv_hk *drv_hk_open(const struct hk_conf *conf, char *err,
                           size_t errlen);

#endif /* manager/drivers/drv_hk.h */
