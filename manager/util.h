/* manager/util.h -- Memory helpers that abort on exhaustion, and a
 * whole-file reader built on them.
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

/* Reads all of 'path' into a fresh NUL-terminated buffer: '*text' (owned
 * by the caller, free()) holds '*len' bytes plus the NUL; the text may
 * itself contain NUL bytes.  Reads until end of file rather than trusting
 * the size stat reports, so a file that grows or shrinks while read, a
 * pipe or a /proc file gives what was read; 'max_bytes' bounds that
 * (SIZE_MAX: memory is the only bound).  Returns 0, or a negative errno
 * with '*text' and '*len' untouched: fopen()'s -errno, -EFBIG when the
 * file holds more than 'max_bytes' bytes, -EIO on a read error. */
int util_read_file(const char *path, size_t max_bytes, char **text,
                   size_t *len);
/* The same for the open descriptor 'fd', which it takes over: it is
 * closed whatever the result.  For callers that check what 'fd' is
 * (fstat) before reading it. */
int util_read_fd(int fd, size_t max_bytes, char **text, size_t *len);

#define XNEW(T) ((T *) xcalloc(1, sizeof(T)))
#define XNEWARRAY(T, N) ((T *) xcalloc((N), sizeof(T)))
#define ARRAY_SIZE(A) (sizeof(A) / sizeof((A)[0]))

#endif /* manager/util.h */
