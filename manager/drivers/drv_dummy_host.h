/* manager/drivers/drv_dummy_host.h -- Test controls of the in-memory host
 * driver.
 *
 * drv_host_dummy (manager/drivers/drv.h) is a fake host kept entirely in
 * memory:
 * n CPUs with a frequency table, idle states with residency counters and
 * online flags.  vpowerd's dummy mode, the simulator-style integration
 * tests and unit tests use it.  open(root) takes a spec string instead of
 * a path: "" or NULL = 4 CPUs; otherwise comma separated key=value:
 *   cpus=N            number of CPUs (1..POL_MAX_CPUS), default 4
 *   freqs=A:B:C       kHz, ascending (default 800000:1600000:2400000);
 *                     freqs=none gives CPUs without cpufreq (-ENOTSUP)
 *   idle=N:L:R/N:L:R  name:latency_us:residency_us, shallow first
 *                     (default POLL:0:0/C1:2:2/C6:133:600)
 * A spec starting with '/' (vpowerd passes its sysfs_root) is taken as ""
 * so that --host-driver=dummy works with any config.  All CPUs start
 * online at the top frequency, governor "schedutil", no state disabled.
 * These functions must only be given drv_host_dummy instances. */

#ifndef VPOWER_DRV_DUMMY_HOST_H
#define VPOWER_DRV_DUMMY_HOST_H 1

#include <stdint.h>

#include "manager/drivers/drv.h"

enum dummy_host_op {
    DUMMY_OP_IS_ONLINE,
    DUMMY_OP_SET_ONLINE,
    DUMMY_OP_GET_FREQ,
    DUMMY_OP_SET_FREQ,
    DUMMY_OP_SET_GOVERNOR,
    DUMMY_OP_GET_IDLE,
    DUMMY_OP_SET_IDLE,
    DUMMY_N_OPS
};

/* The next 'count' calls of 'op' on 'cpu' (-1 = any CPU) fail with
 * 'err' (a negative errno such as -EBUSY, -EACCES, -EINVAL, -ENOENT);
 * count 0 clears the injection. */
void dummy_host_inject(struct drv_host *, enum dummy_host_op op, int cpu,
                       int err, unsigned count);

/* Adds 'us' to idle state 'state' residency of 'cpu'. */
int dummy_host_advance_idle(struct drv_host *, unsigned cpu,
                            unsigned state, uint64_t us);

/* Number of successful mutating calls so far (tests check "no change"). */
uint64_t dummy_host_writes(const struct drv_host *);

/* The number of confine_self calls so far, and the last set asked for
 * in '*set' (the dummy host never touches the real process). */
unsigned dummy_host_self(const struct drv_host *, struct cpuset *set);

/* Another power agent writes 'value' to knob 'file' of 'cpu', as the
 * sysfs driver names it below cpuN/ ("online",
 * "cpufreq/scaling_min_freq", "cpufreq/scaling_max_freq",
 * "cpufreq/scaling_governor", "cpuidle/stateN/disable").  A value other
 * than the current one makes the knob foreign as drv.h describes: listed
 * by drv_host_dummy.foreign, logged, never written by vpowerd again.
 * -EINVAL for an unknown knob or a value the kernel would refuse,
 * -ENOTSUP for a cpufreq knob without cpufreq. */
int dummy_host_agent_write(struct drv_host *, unsigned cpu,
                           const char *file, const char *value);

#endif /* manager/drivers/drv_dummy_host.h */
