/* sim/xalloc.c -- see xalloc.h. */

#include <config.h>

#include "sim/xalloc.h"

#include <stdlib.h>

void *
sim_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (!p) {
        abort();
    }
    return p;
}
