/* sim/replayhost.h -- Driver tables that answer from a recording.
 *
 * The replayer (sim/replay.h) runs the daemon's cycle (manager/cycle.h)
 * once per recorded decision.  These tables are the world that cycle
 * sees: the hypervisor driver lists the decision's VMs (UUIDs made from
 * their load-history keys) and gives each vCPU cumulative run and
 * run-queue-delay counters that grow by exactly the recorded busy and
 * ready time of each sampled vCPU; the host driver reports each CPU's
 * recorded busy share directly (drv_host_ops.busy_ppm), its recorded
 * frequency as the current one, the recorded online set, and accepts
 * every action without effect (a recording has no host to change).
 * Idle residency is not offered: its microseconds cannot reproduce
 * every recorded share at short periods. */

#ifndef VPOWER_SIM_REPLAYHOST_H
#define VPOWER_SIM_REPLAYHOST_H 1

#include <stddef.h>
#include <stdint.h>

#include "manager/drivers/drv.h"
#include "sim/replay.h"

struct replayhost;

/* For model 'm' (borrowed).  Never NULL (aborts when out of memory). */
struct replayhost *replayhost_create(const struct pol_model *m);
void replayhost_destroy(struct replayhost *);   /* NULL is fine. */

/* Makes 'dec' (borrowed until the next call) the decision the drivers
 * answer from.  The counters are those before its samples. */
void replayhost_set(struct replayhost *, const struct replay_decision *dec);

/* Adds the current decision's sampled busy and ready time to the
 * counters and forgets the vCPUs it does not hold. */
void replayhost_advance(struct replayhost *);

/* The decision's VM with domain UUID 'uuid' into '*i': 0 or -ENOENT. */
int replayhost_vm_index(const struct replayhost *, const char *uuid,
                        size_t *i);

/* The UUID the drivers give the VM of load-history key 'key'. */
void replayhost_uuid(uint64_t key, char buf[DRV_UUID_LEN]);

struct drv_hv *replayhost_hv(struct replayhost *);
struct drv_host *replayhost_host(struct replayhost *);

extern const struct drv_hv_ops replayhost_hv_ops;
extern const struct drv_host_ops replayhost_host_ops;

#endif /* sim/replayhost.h */
