/* manager/control/cmds.h -- The control verbs, executed against 'struct vpd'.
 *
 * cmds_start() opens the control socket (manager/control/ctl.h) at
 * d->conf.socket_path with d->conf.admin_group as the admin group and
 * routes its requests to cmds_dispatch(); vpowerd.c calls it after
 * vpd_start() succeeded and cmds_stop() before vpd_stop().  Results are
 * built from 'struct vpd' exactly as docs/control-protocol.md and
 * the schemas in docs/schema/ describe; changes go through
 * vpd_set_policy() and vpd_set_override() only. */

#ifndef VPOWER_CMDS_H
#define VPOWER_CMDS_H 1

#include <stddef.h>

#include "manager/control/ctl.h"
#include "manager/control/proto.h"

struct vpd;

/* Starts serving; stores the server in d->ctl.  Returns 0, or -errno
 * with a message in 'err' (the daemon should refuse to start). */
int cmds_start(struct vpd *d, char *err, size_t errlen);

/* Stops serving and removes the socket.  Safe if never started. */
void cmds_stop(struct vpd *d);

/* Executes one validated, authorised request; returns the reply line
 * (malloc'ed).  'aux' is the struct vpd (ctl_dispatch_cb). */
char *cmds_dispatch(const struct proto_request *, const struct ctl_peer *,
                    void *aux);

/* Short machine names of enum pol_reason as the protocol sends them:
 * "packed", "performance", "latency-hint", "override", "ready-spread",
 * "unmanaged", "warmup", "smt-isolated". */
const char *cmds_reason_name(enum pol_reason);

/* Number of present CPUs that status reports as "active" (managed,
 * online and in the plan in force; every managed online CPU before the
 * first decision): the "active_cpus" of the status verb. */
unsigned cmds_active_cpus(const struct vpd *);

#endif /* manager/control/cmds.h */
