/* sim/xalloc.h -- Allocation for the simulator's fixed-size tables.
 *
 * The simulator sizes every table once, from the trace and the model,
 * before it runs; running out of memory there leaves nothing sensible to
 * report, so this aborts instead of returning NULL (as manager/util.h's
 * xcalloc() does for the daemon).  A copy of its own because sim/ links
 * policy/ but not manager/; policy/ itself never aborts (its create
 * functions return NULL and their callers decide). */
#ifndef VPOWER_SIM_XALLOC_H
#define VPOWER_SIM_XALLOC_H

#include <stddef.h>

/* calloc(n, size) that never returns NULL (aborts instead) and treats a
 * zero count or size as one, so an empty table is still a valid,
 * freeable pointer.  Caller frees with free(). */
void *sim_xcalloc(size_t n, size_t size);

#endif
