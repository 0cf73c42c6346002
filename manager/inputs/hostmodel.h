/* manager/inputs/hostmodel.h -- An energy model built from what the host
 * shows.
 *
 * When vpowerd.conf names no energy_model file, vpowerd derives a
 * 'struct pol_model' from the host driver (cpufreq operating points,
 * cpuidle states) and the topology files under the sysfs root.  Sysfs
 * carries no power numbers, so the powers are ASSUMPTIONS (documented in
 * hostmodel.c and docs/configuration.md): good enough to rank choices
 * (pack or spread, which idle depth), not to report watts.
 *
 *  - CPUs: the host driver's n_cpus (possible CPUs).
 *  - Domains: one per cpufreq policy (cpuN/cpufreq/related_cpus), or one
 *    per CPU without cpufreq.
 *  - Packages: one per topology/physical_package_id (0 when absent).
 *  - Cores: topology/core_id within a package; SMT siblings share it.
 *  - OPPs: scaling_available_frequencies, else cpuinfo min and max, else
 *    (no cpufreq) one nominal point at 1000 MHz labelled unknown.
 *    Capacity is linear in frequency, 1024 at the highest non-turbo
 *    point (the highest point: sysfs does not mark turbo).
 *  - Idle states: cpuidle name/latency/residency; none -> one "busy"
 *    polling state. */

#ifndef VPOWER_HOSTMODEL_H
#define VPOWER_HOSTMODEL_H 1

#include <stddef.h>

#include "manager/drivers/drv.h"
#include "policy/model.h"

/* Assumed busy power of one core at the nominal point, mW. */
#define HOSTMODEL_NOMINAL_BUSY_MW 4000
/* Frequency used for the single OPP when the host has no cpufreq. */
#define HOSTMODEL_UNKNOWN_KHZ 1000000

/* Fills 'm' (caller-owned; it is big: allocate it) from host driver
 * instance 'h' of 'ops' and the topology files below 'root' ('root' may
 * be NULL: every CPU is its own core in package 0).  Returns 0, or a
 * negative errno with a reason naming the CPU and file in 'err'. */
int hostmodel_build(const struct drv_host_ops *ops, struct drv_host *h,
                    const char *root, struct pol_model *m,
                    char *err, size_t errlen);

/* The whole-model checks pol_model_parse() makes, for a model built in
 * memory: every CPU in exactly one domain and one package, domains inside
 * one package, SMT siblings in one domain, OPPs strictly ascending with a
 * non-turbo nominal point, idle states non-decreasing in exit latency and
 * residency.  0, or -EINVAL with the reason in 'err'. */
int hostmodel_check(const struct pol_model *m, char *err, size_t errlen);

#endif /* manager/inputs/hostmodel.h */
