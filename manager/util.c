/* manager/util.c -- Allocation helpers and a whole-file reader; see
 * util.h. */

#include <config.h>

#include "manager/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
oom(size_t n)
{
    fprintf(stderr, "vpower: out of memory allocating %zu bytes\n", n);
    abort();
}

void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        oom(n);
    }
    return p;
}

void *
xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        oom(n * size);
    }
    return p;
}

void *
xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);
    if (!p) {
        oom(n);
    }
    return p;
}

char *
xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

char *
xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0) {
        oom(0);
    }
    va_end(ap);
    return s;
}

/* util_read_file() and util_read_fd() once the stream is open: reads
 * 'f' to its end and closes it. */
static int
read_stream(FILE *f, size_t max_bytes, char **text, size_t *len)
{
    struct stat st;
    size_t n = 0, cap = 0, limit;
    char *buf = NULL;

    /* Room for max_bytes + 1 bytes (one more than allowed is how "too
     * big" shows) and the NUL must not wrap. */
    if (max_bytes > SIZE_MAX - 2) {
        max_bytes = SIZE_MAX - 2;
    }
    limit = max_bytes + 1;
    /* Only an early refusal: the size can change before the reads, which
     * are what the result and the bound go by. */
    if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode)
        && (uintmax_t) st.st_size > max_bytes) {
        fclose(f);
        return -EFBIG;
    }
    for (;;) {
        size_t want, got;

        if (n == cap) {
            cap = !cap ? 8192 : cap <= limit / 2 ? 2 * cap : limit;
            cap = cap < limit ? cap : limit;
            buf = xrealloc(buf, cap + 1);
        }
        want = cap - n;
        got = fread(buf + n, 1, want, f);
        n += got;
        if (n > max_bytes) {
            fclose(f);
            free(buf);
            return -EFBIG;
        }
        if (got < want) {
            break;              /* End of file or an error. */
        }
    }
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return -EIO;
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

int
util_read_file(const char *path, size_t max_bytes, char **text,
               size_t *len)
{
    FILE *f = fopen(path, "re");

    if (!f) {
        return -errno;
    }
    return read_stream(f, max_bytes, text, len);
}

int
util_read_fd(int fd, size_t max_bytes, char **text, size_t *len)
{
    FILE *f = fdopen(fd, "r");

    if (!f) {
        int e = errno;

        close(fd);
        return -e;
    }
    return read_stream(f, max_bytes, text, len);
}
