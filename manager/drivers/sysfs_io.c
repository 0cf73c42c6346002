/* manager/drivers/sysfs_io.c -- Bounded reads and single writes of sysfs
 * files (see sysfs_io.h). */

#include <config.h>

#include "manager/drivers/sysfs_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int
build_path(char *out, const char *root, const char *rel)
{
    int n = snprintf(out, SYSFS_PATH_MAX, "%s/%s", root, rel);

    if (n < 0 || n >= SYSFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    return 0;
}

/* Reads 'path' into 'buf' as sysfs_read_file() does; the trailing
 * newline is kept unless 'strip'. */
static int
read_path(const char *path, char *buf, size_t len, bool strip)
{
    size_t got = 0;
    int fd, error;

    if (len < 2) {
        return -EINVAL;
    }
    /* O_NONBLOCK: a FIFO in a fixture tree reads as empty instead of
     * blocking the daemon; kernfs and /proc ignore the flag. */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        return -errno;
    }
    for (;;) {
        char extra;
        ssize_t n;

        if (got == len - 1) {
            /* Full: any further byte means the file is too big. */
            n = read(fd, &extra, 1);
            if (n > 0) {
                error = -EOVERFLOW;
                goto out;
            }
        } else {
            n = read(fd, buf + got, len - 1 - got);
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            error = -errno;
            goto out;
        }
        if (n == 0) {
            break;
        }
        got += (size_t) n;
    }
    buf[got] = '\0';
    if (memchr(buf, '\0', got)) {
        error = -EINVAL;          /* Binary garbage is not a value. */
        goto out;
    }
    if (strip && got && buf[got - 1] == '\n') {
        buf[--got] = '\0';
    }
    error = (int) got;
out:
    close(fd);
    return error;
}

int
sysfs_read(const char *root, const char *rel, char *buf, size_t len)
{
    char path[SYSFS_PATH_MAX];
    int error;

    if (len < 2) {
        return -EINVAL;
    }
    error = build_path(path, root, rel);
    return error ? error : read_path(path, buf, len, true);
}

int
sysfs_read_raw(const char *root, const char *rel, char *buf, size_t len)
{
    char path[SYSFS_PATH_MAX];
    int error;

    if (len < 2) {
        return -EINVAL;
    }
    error = build_path(path, root, rel);
    return error ? error : read_path(path, buf, len, false);
}

int
sysfs_read_file(const char *path, char *buf, size_t len)
{
    return read_path(path, buf, len, true);
}

int
sysfs_write(const char *root, const char *rel, const char *value)
{
    char path[SYSFS_PATH_MAX];
    size_t len = strlen(value);
    ssize_t n;
    int fd, error;

    error = build_path(path, root, rel);
    if (error) {
        return error;
    }
    /* O_TRUNC matters for fixture trees (regular files) and is accepted
     * by kernfs, as with a shell's "echo > file".  O_NONBLOCK: a FIFO
     * without a reader fails (ENXIO) instead of blocking. */
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        return -errno;
    }
    do {
        n = write(fd, value, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        error = -errno;
    } else if ((size_t) n != len) {
        error = -EIO;
    }
    if (close(fd) < 0 && !error && errno != EINTR) {
        error = -errno;           /* Some attributes report on close. */
    }
    return error;
}
