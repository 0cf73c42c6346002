/* manager/calibrate/calib_loops.h -- The real host side of calibration.
 *
 * calib_loops_ops is the 'struct calib_ops' vpower-calibrate uses on a
 * real host: one thread per CPU spinning in a loop, each pinned with
 * sched_setaffinity() before it starts spinning; CLOCK_MONOTONIC; and
 * clock_nanosleep() for waiting.  Its 'aux' is a 'struct calib_loops'
 * from calib_loops_create(). */

#ifndef VPOWER_CALIB_LOOPS_H
#define VPOWER_CALIB_LOOPS_H 1

#include "manager/calibrate/calib.h"

struct calib_loops;

extern const struct calib_ops calib_loops_ops;

/* A loop set with no thread running; calib_loops_destroy() stops any
 * still running.  NULL is fine for destroy. */
struct calib_loops *calib_loops_create(void);
void calib_loops_destroy(struct calib_loops *);

/* Signal handler (SIGINT, SIGTERM): the current point stops at its
 * next meter read and calib_run() restores the limits and fails with
 * "interrupted". */
void calib_loops_signal(int sig);

/* Total CPU time the loop threads have used so far, ns (for the log:
 * it shows the loops really ran). */
unsigned long long calib_loops_cpu_ns(const struct calib_loops *);

#endif /* manager/calibrate/calib_loops.h */
