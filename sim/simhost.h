/* sim/simhost.h -- Driver tables backed by the execution model.
 *
 * The simulator runs vpowerd's own decision cycle (manager/cycle.h), one
 * instance per simulated host, on these drivers and a virtual clock:
 *
 *  - the hypervisor driver lists the host's trace VMs (each VM's policy
 *    comes back from get_metadata as the <policy> element vpowerd keeps
 *    in domain metadata) and answers vcpu_stats from the execution model
 *    (sim/exec.h): cumulative CPU time (guest work plus KVM halt
 *    polling), run-queue wait as ready time, halt-poll time when the host
 *    has halt stats, and the CPU each vCPU reports; pins change the
 *    allowed sets the model serves vCPUs from;
 *  - the host driver applies frequency ceilings (the domain runs at the
 *    ceiling), idle-state disables (the plan's idle limit), offlining,
 *    and reports each CPU's frequency and idle residency (the idle time
 *    the model computed, polling counted as busy, as cpuidle shows it);
 *  - energy is the model's own (exec_host.energy_j), not the cycle's
 *    estimate; simhost_meter_create() is a meter that reads it, so the
 *    daemon's model check runs against a host whose true model it was
 *    not told (vpower-sim --true-model).
 *
 * What the drivers are told collects in a pending plan; simhost_commit()
 * hands it to the model (exec_apply) after each cycle, applying the
 * hardware thermal cap, and folds the finished period into the
 * cumulative counters. */

#ifndef VPOWER_SIM_SIMHOST_H
#define VPOWER_SIM_SIMHOST_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/drivers/drv.h"
#include "sim/exec.h"

struct meter;

extern const struct drv_hv_ops simhost_hv_ops;
extern const struct drv_host_ops simhost_host_ops;

struct simhost;

/* A host of 'n_vms' VMs with the vCPU counts 'n_vcpus[i]', names
 * 'names[i]' and policies 'policy[i]' (NULL: the default), executed by
 * 'h' (borrowed).  'halt_stats': whether vcpu_stats reports halt-poll
 * time (KVM halt stats) or only plain CPU time. */
struct simhost *simhost_create(struct exec_host *h, size_t n_vms,
                               const uint32_t *n_vcpus,
                               const char *const *names,
                               const struct pol_vm_policy *policy,
                               bool halt_stats);
void simhost_destroy(struct simhost *);

/* The instance to put in vpd.hv and vpd.host. */
struct drv_hv *simhost_hv(struct simhost *);
struct drv_host *simhost_host(struct simhost *);

/* The host's whole-platform meter: an energy counter (microjoules) that
 * reads what 'h' (borrowed) has charged so far, with its energy model
 * (exec_host.energy_m when set: the true model of --true-model).  Owned
 * by the caller (meter_close()). */
struct meter *simhost_meter_create(const struct exec_host *h);

/* Hands what the drivers were told since the last commit to the model,
 * each domain at most 'cap_khz[d]' (0 = no cap), and starts a new
 * period.  Returns the load the vCPUs' counters showed over the period
 * just ended, in nominal-vCPU seconds (what the cycle fed its loads). */
double simhost_commit(struct simhost *, const uint32_t *cap_khz);

#endif /* sim/simhost.h */
