/* manager/util.c -- Allocation helpers, whole-file readers, the trust
 * check for files vpowerd relies on and escapes for foreign bytes; see
 * util.h. */

#include <config.h>

#include "manager/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* Reads the open stream 'f' to its end and closes it, as
 * util_read_file() does. */
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

int
util_read_regular(const char *path, size_t max_bytes, char **text,
                  size_t *len, struct stat *stp)
{
    struct stat st;
    int fd, flags;

    /* O_NONBLOCK: opening a FIFO without a writer must not wait. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        /* A socket cannot be opened at all (ENXIO): say what it is. */
        if (errno == ENXIO && !stat(path, &st) && !S_ISREG(st.st_mode)) {
            return -ENODEV;
        }
        return -errno;
    }
    if (fstat(fd, &st) < 0) {
        int error = -errno;

        close(fd);
        return error;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -ENODEV;
    }
    if (stp) {
        *stp = st;
    }
    flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        int error = -errno;

        close(fd);
        return error;
    }
    return util_read_fd(fd, max_bytes, text, len);
}

const char *
util_read_strerror(int error)
{
    return error == -EISDIR ? "is a directory"
           : error == -ENODEV ? "is not a regular file"
           : strerror(-error);
}

int
util_check_trusted(const char *path, const struct stat *st,
                   const char *what, const char *guards, char *err,
                   size_t errlen)
{
    uid_t me = geteuid();
    bool dir = S_ISDIR(st->st_mode);

    if (st->st_uid != 0 && st->st_uid != me) {
        snprintf(err, errlen, "%s %s is owned by uid %u, not by root or "
                 "vpowerd's uid %u; that user could %s (fix: chown %u %s)",
                 what, path, (unsigned) st->st_uid, (unsigned) me, guards,
                 (unsigned) me, path);
        return -EPERM;
    }
    if (st->st_mode & S_IWOTH) {
        snprintf(err, errlen, "%s %s is writable by every user, who could "
                 "%s (fix: chmod %s %s)", what, path, guards,
                 dir ? "755" : "go-w", path);
        return -EPERM;
    }
    if (st->st_mode & S_IWGRP) {
        snprintf(err, errlen, "%s %s is writable by group %u, whose members "
                 "could %s (fix: chmod g-w %s)", what, path,
                 (unsigned) st->st_gid, guards, path);
        return -EPERM;
    }
    return 0;
}

int
util_check_trusted_dir(const char *dir, const char *what,
                       const char *guards, char *err, size_t errlen)
{
    struct stat st;

    if (lstat(dir, &st) < 0) {
        int error = -errno;

        snprintf(err, errlen, "cannot stat %s %s: %s", what, dir,
                 strerror(errno));
        return error;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %s is not a directory (a symlink?); it "
                 "must be a real directory", what, dir);
        return -ENOTDIR;
    }
    return util_check_trusted(dir, &st, what, guards, err, errlen);
}

/* ---- Foreign bytes --------------------------------------------------- */

#define UTIL_REPLACEMENT_CHAR "\xef\xbf\xbd"

size_t
util_utf8_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *) s;
    unsigned char lo = 0x80, hi = 0xbf;
    size_t len;

    if (n == 0) {
        return 0;
    }
    if (p[0] < 0x80) {
        return 1;
    } else if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        len = 2;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        len = 3;
        lo = p[0] == 0xe0 ? 0xa0 : 0x80;    /* No overlong forms, */
        hi = p[0] == 0xed ? 0x9f : 0xbf;    /* no surrogates. */
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        len = 4;
        lo = p[0] == 0xf0 ? 0x90 : 0x80;
        hi = p[0] == 0xf4 ? 0x8f : 0xbf;    /* At most U+10FFFF. */
    } else {
        return 0;
    }
    if (n < len || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i < len; i++) {
        if (p[i] < 0x80 || p[i] > 0xbf) {
            return 0;
        }
    }
    return len;
}

uint32_t
util_utf8_codepoint(const char *s, size_t k)
{
    const unsigned char *p = (const unsigned char *) s;
    /* The lead byte's payload bits, by sequence length. */
    static const unsigned char lead_mask[5] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
    uint32_t cp;

    if (k < 1 || k > 4) {
        return 0;                 /* Not a length util_utf8_len() gives. */
    }
    cp = p[0] & lead_mask[k];
    for (size_t i = 1; i < k; i++) {
        cp = cp << 6 | (p[i] & 0x3f);
    }
    return cp;
}

bool
util_utf8_hidden(const char *s, size_t k)
{
    uint32_t cp;

    if (k != 2 && k != 3) {
        return false;             /* ASCII, or nothing this hides. */
    }
    cp = util_utf8_codepoint(s, k);
    return cp == 0x00ad || cp == 0x061c || cp == 0x180e
           || (cp >= 0x200b && cp <= 0x200f)
           || (cp >= 0x2028 && cp <= 0x202e)
           || (cp >= 0x2060 && cp <= 0x206f)
           || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb);
}

bool
util_utf8_unprintable(const char *s, size_t k)
{
    const unsigned char *p = (const unsigned char *) s;

    /* C0 and DEL; C1 (CSI among them) as its two-byte form. */
    return (k == 1 && (p[0] < 0x20 || p[0] == 0x7f))
           || (k == 2 && p[0] == 0xc2 && p[1] < 0xa0)
           || util_utf8_hidden(s, k);
}

bool
util_utf8_valid(const char *s, size_t n)
{
    while (n) {
        size_t k = util_utf8_len(s, n);

        if (!k) {
            return false;
        }
        s += k;
        n -= k;
    }
    return true;
}

/* The escape for the character of 'k' bytes at 's' (k == 0: one invalid
 * byte) into 'esc', or "" if it is printable as it is. */
static void
escape_one(const char *s, size_t k, char esc[16])
{
    unsigned char c = (unsigned char) s[0];

    esc[0] = '\0';
    if (k == 1 && c == '\n') {
        strcpy(esc, "\\n");
    } else if (k == 1 && c == '\r') {
        strcpy(esc, "\\r");
    } else if (k == 1 && c == '\t') {
        strcpy(esc, "\\t");
    } else if (k == 1 && c == '\\') {
        strcpy(esc, "\\\\");
    } else if (!k || util_utf8_unprintable(s, k)) {
        for (size_t i = 0; i < (k ? k : 1); i++) {
            snprintf(esc + 4 * i, 16 - 4 * i, "\\x%02x",
                     (unsigned char) s[i]);
        }
    }
}

char *
util_escape(const char *s, char *out, size_t outlen)
{
    size_t n = strlen(s), o = 0;

    while (n) {
        size_t k = util_utf8_len(s, n);
        size_t step = k ? k : 1;
        char esc[16];
        const char *src = s;
        size_t m = step;

        escape_one(s, k, esc);
        if (esc[0]) {
            src = esc;
            m = strlen(esc);
        }
        if (o + m >= outlen) {
            break;
        }
        memcpy(out + o, src, m);
        o += m;
        s += step;
        n -= step;
    }
    out[o] = '\0';
    return out;
}

char *
util_escape_dup(const char *s)
{
    /* "\xNN" is the longest expansion: 4 bytes per byte. */
    size_t len = 4 * strlen(s) + 1;

    return util_escape(s, xmalloc(len), len);
}

char *
util_utf8_replace(const char *s, size_t n, size_t *outn)
{
    char *out = xmalloc(3 * n + 1);
    size_t o = 0;

    while (n) {
        size_t k = util_utf8_len(s, n);

        if (k) {
            memcpy(out + o, s, k);
            o += k;
        } else {
            memcpy(out + o, UTIL_REPLACEMENT_CHAR, 3);
            o += 3;
            k = 1;
        }
        s += k;
        n -= k;
    }
    out[o] = '\0';
    if (outn) {
        *outn = o;
    }
    return out;
}

uint64_t
util_clock_ns(clockid_t id)
{
    struct timespec ts;

    if (clock_gettime(id, &ts) < 0) {
        return 0;
    }
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}
