/* manager/drivers/sysfs_io.h -- Bounded reads and single writes of sysfs
 * files below a root.
 *
 * The file access the sysfs host driver (sysfs.h) is built on, kept apart
 * so that the restore journal (manager/journal.h), which the driver
 * journals into, puts files back with the same code without depending
 * on the driver.  Contents are hostile input: every read is bounded and
 * a NUL byte is an error.  Files are opened with O_NONBLOCK, so a FIFO
 * in a fixture tree fails or reads empty instead of hanging the daemon. */

#ifndef VPOWER_SYSFS_IO_H
#define VPOWER_SYSFS_IO_H 1

#include <stddef.h>

#define SYSFS_ROOT_MAX 256       /* Longest accepted root path. */
#define SYSFS_PATH_MAX 512       /* Longest root + relative path. */
#define SYSFS_READ_MAX 4096      /* Biggest file content accepted. */

/* Reads 'root'/'rel' into 'buf' (NUL-terminated, one trailing newline
 * removed).  Returns the length, -EOVERFLOW if the content does not fit
 * in 'len' - 1 bytes, -ENAMETOOLONG, or the open/read errno. */
int sysfs_read(const char *root, const char *rel, char *buf, size_t len);

/* The same without removing the trailing newline: the content exactly as
 * read, as the journal keeps it. */
int sysfs_read_raw(const char *root, const char *rel, char *buf,
                   size_t len);

/* The same for a whole path (for /proc, /sys/class and /run files outside
 * the CPU tree): 'path' into 'buf', one trailing newline removed; the
 * length, -EOVERFLOW if the content does not fit in 'len' - 1 bytes,
 * -EINVAL on a NUL byte or 'len' < 2, or the open/read errno. */
int sysfs_read_file(const char *path, char *buf, size_t len);

/* Writes 'value' (a newline is not added) to 'root'/'rel' with one
 * write(); a short write is -EIO.  The file must exist (no O_CREAT). */
int sysfs_write(const char *root, const char *rel, const char *value);

#endif /* manager/drivers/sysfs_io.h */
