/* sim/xalloc.h -- Allocation for the simulator's fixed-size tables.
 *
 * The simulator sizes every table once, from the trace and the model,
 * before it runs; running out of memory there leaves nothing sensible to
 * report, so these abort instead of returning NULL.  Never used by
 * vpowerd or policy/ (a daemon must not abort on a failed allocation). */
#ifndef VPOWER_SIM_XALLOC_H
#define VPOWER_SIM_XALLOC_H

#include <stddef.h>

/* calloc(n, size) that never returns NULL (aborts instead) and treats a
 * zero count or size as one, so an empty table is still a valid,
 * freeable pointer.  Caller frees with free(). */
void *sim_xcalloc(size_t n, size_t size);

#endif
