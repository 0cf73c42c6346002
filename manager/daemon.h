/* manager/daemon.h -- The calls other modules make into vpowerd.
 *
 * 'struct vpd' (manager/vpd_types.h, included here) is the daemon: one
 * instance, created in vpowerd.c and passed explicitly (no globals).
 * The modules below the daemon (cycle, VM registry, restore, recorder,
 * guest channels) include only vpd_types.h.  The cycle (cycle.c)
 * samples through the drivers, feeds the policy, and applies the plan's
 * actions; the control socket (cmds.c) and the guest channels (through
 * the struct gch_ops the daemon hands them) only read this state and
 * call the functions below, which validate, record and then ask for a
 * new decision with vpd_kick() -- nothing outside cycle.c actuates. */

#ifndef VPOWER_DAEMON_H
#define VPOWER_DAEMON_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/vpd_types.h"

const char *vpd_hint_name(enum vpd_hint_kind);

/* Looks a running VM up by name, UUID or numeric id (as virsh does). */
struct vpd_vm *vpd_find_vm(struct vpd *, const char *key);

/* Validates and sets 'vm''s policy: stores it in the domain's libvirt
 * metadata (live and persistent) first, then in memory, then decides at
 * once.  Returns 0, or -errno with a message naming the problem. */
int vpd_set_policy(struct vpd *, struct vpd_vm *,
                   const struct pol_vm_policy *, char *err, size_t errlen);

/* Host-wide "maximum performance, power does not matter": takes effect
 * in this call (a decision and its actions run before it returns). */
void vpd_set_override(struct vpd *, bool on);

/* Records a validated guest hint for 'vm' and decides at once (the loop
 * reacts when a hint arrives, not at the next period).  'read_ns' (the
 * cycle's clock, vpd_now_ns) is when it was read from the guest's
 * channel: the host side of the hint is timed from there to the last
 * action of the decision (cycle_hint). */
void vpd_hint(struct vpd *, struct vpd_vm *, enum vpd_hint_kind,
              uint32_t arg, const char *text, uint64_t read_ns);

/* The daemon's clock (the cycle's, CLOCK_MONOTONIC before it exists),
 * ns. */
uint64_t vpd_now_ns(struct vpd *);

/* Runs a decision and applies it now (coalesced if already running). */
void vpd_kick(struct vpd *);

/* Counts a run-time error of 'kind' (exported as a metric). */
void vpd_count_error(struct vpd *, enum vpd_err_kind);

/* ---- Lifecycle (vpowerd.c) ------------------------------------------ */

/* Starts 'd' (conf, sched, hv_ops, host_ops and dry_run filled by the
 * caller): opens the drivers, replays a leftover journal, brings managed
 * cores online, builds the energy model, discovers domains and arms the
 * first cycle.  Returns 0, or -errno with a message in 'err'. */
int vpd_start(struct vpd *d, char *err, size_t errlen);

/* Restores everything vpowerd changed (pins, frequency limits, idle
 * disables, online state), removes the journal and closes the drivers.
 * Returns 0, or -EIO if something could not be restored (logged). */
int vpd_stop(struct vpd *d);

#endif /* manager/daemon.h */
