/* manager/util.h -- Memory helpers that abort on exhaustion.
 *
 * A daemon that cannot allocate a few bytes cannot restore the host
 * either; failing loudly at the allocation site (chrony's Malloc, OVS's
 * xmalloc) beats a NULL check that nobody tests.  Everything allocated
 * here is owned by the caller and released with free(). */

#ifndef VPOWER_UTIL_H
#define VPOWER_UTIL_H 1

#include <stddef.h>

void *xmalloc(size_t);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *, size_t);
char *xstrdup(const char *);
/* printf into a fresh string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define XNEW(T) ((T *) xcalloc(1, sizeof(T)))
#define XNEWARRAY(T, N) ((T *) xcalloc((N), sizeof(T)))
#define ARRAY_SIZE(A) (sizeof(A) / sizeof((A)[0]))

#endif /* manager/util.h */
