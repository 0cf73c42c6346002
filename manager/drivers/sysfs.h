/* manager/drivers/sysfs.h -- The sysfs host driver and its parsers.
 *
 * The bounded file reads and writes it is built on are in sysfs_io.h,
 * which this header includes.
 *
 * drv_host_sysfs (declared in manager/drivers/drv.h) reads and sets cpufreq,
 * cpuidle and CPU hotplug state below a configurable root, by default
 * /sys/devices/system/cpu, so unit tests run it against fixture trees
 * (tests/fixtures/mksysfs.sh).  Sysfs contents are treated as hostile
 * input: every file is read with a bounded buffer and parsed strictly;
 * a malformed value is -EINVAL for that CPU, never a crash.
 *
 * Policy of the driver (cpupower's, minus its anti-patterns):
 *  - set_freq_range clamps to [cpuinfo_min_freq, cpuinfo_max_freq] and
 *    writes max then min when raising, min then max when lowering, so
 *    the kernel never sees min > max.
 *  - set_governor accepts only the kernel's governor names
 *    (sysfs_governor_valid) that the CPU also lists as available.
 *  - scaling_setspeed is never written: vpowerd steers frequency through
 *    the min/max range, which works with every governor (a single point
 *    is min == max); has_setspeed is only reported.
 *  - set_online(0, false) is -EPERM; -EBUSY from the kernel is returned
 *    as is so the caller can retry later.
 *  - With a journal attached (sysfs_set_journal), the original content of
 *    every file (byte for byte, trailing newline included) is journalled
 *    before its first write; if journalling fails the write is not made.
 *  - Other writers: every knob (scaling_min/max_freq, scaling_governor,
 *    cpuidle stateN/disable, online) is read back before each write and
 *    compared with what vpowerd last wrote (as the kernel then showed it)
 *    or, never written, first read; CPUs whose cpufreq directories
 *    resolve to one policy share those knobs.  Any other value makes the
 *    knob foreign (drv.h, struct drv_foreign): logged once, listed by
 *    drv_host_sysfs.foreign, never written again by this instance.  The
 *    journal gets the value vpowerd writes as well as the original, so
 *    a replay spares it too.
 *  - Files are opened with O_NONBLOCK, so a FIFO in a fixture tree fails
 *    or reads empty instead of hanging the daemon. */

#ifndef VPOWER_SYSFS_H
#define VPOWER_SYSFS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/drivers/drv.h"
#include "manager/drivers/sysfs_io.h"

struct jnl;

#define SYSFS_DEFAULT_ROOT "/sys/devices/system/cpu"

/* Strict decimal parsing of a whole sysfs value: optional trailing
 * newline/space only, no sign, no empty string, no overflow.  0 or
 * -EINVAL. */
int sysfs_parse_u32(const char *s, uint32_t *out);
int sysfs_parse_u64(const char *s, uint64_t *out);

/* True for the kernel's governor names: performance, powersave,
 * userspace, ondemand, conservative, schedutil. */
bool sysfs_governor_valid(const char *gov);

/* Attaches 'j' (may be NULL to detach) to a drv_host_sysfs instance;
 * the journal is not owned. */
void sysfs_set_journal(struct drv_host *, struct jnl *);

/* The root the instance was opened with. */
const char *sysfs_root(const struct drv_host *);

#endif /* manager/drivers/sysfs.h */
