/* manager/util.h -- Memory helpers that abort on exhaustion, whole-file
 * readers built on them, the trust check for files vpowerd relies on,
 * and escapes for foreign bytes.
 *
 * A daemon that cannot allocate a few bytes cannot restore the host
 * either; failing loudly at the allocation site (chrony's Malloc, OVS's
 * xmalloc) beats a NULL check that nobody tests.  Everything allocated
 * here is owned by the caller and released with free(). */

#ifndef VPOWER_UTIL_H
#define VPOWER_UTIL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

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

/* The same for a file vpowerd acts on (configuration, energy model):
 * 'path' must be a regular file.  It is opened without blocking, so a
 * FIFO or a device never stalls the caller: a directory is -EISDIR, any
 * other non-regular file (FIFO, socket, device) -ENODEV, both before
 * anything is read.  Other errors as util_read_file().  '*st' (may be
 * NULL) gets the fstat() of the file read, for util_check_trusted(). */
int util_read_regular(const char *path, size_t max_bytes, char **text,
                      size_t *len, struct stat *st);

/* A reason for util_read_regular()'s errors: "is a directory", "is not a
 * regular file", strerror() for the rest (-EFBIG: the caller names its
 * bound).  A static string. */
const char *util_read_strerror(int error);

/* Checks that 'st' (the stat of 'path') cannot be changed by another
 * user: it must be owned by root or by vpowerd's effective uid and not
 * be writable by group or others.  'what' names the file in the message
 * ("journal", "control socket directory"), 'guards' what another user
 * could then do ("replace the socket").  Returns 0, or -EPERM with a
 * message in 'err' that ends with the command that fixes it. */
int util_check_trusted(const char *path, const struct stat *st,
                       const char *what, const char *guards, char *err,
                       size_t errlen);

/* util_check_trusted() for the directory 'dir' itself, which must be a
 * real directory (lstat: a symlink is -ENOTDIR).  Returns 0, -ENOTDIR,
 * -EPERM or lstat()'s -errno, with a message in 'err'. */
int util_check_trusted_dir(const char *dir, const char *what,
                           const char *guards, char *err, size_t errlen);

/* Foreign bytes.  Strings vpowerd did not make itself (a client's
 * request, a domain name from the hypervisor, a guest's hint) may hold
 * any bytes.  Two rules, applied at the two kinds of output:
 *
 *   - text for people (log lines, vpowerctl's columns): every byte that
 *     is not printable UTF-8 becomes a C-style escape, so one message
 *     stays one line and no terminal sequence gets through: "\n", "\r",
 *     "\t", "\\" for a backslash, and "\xNN" for every other byte of a C0
 *     or C1 control, DEL, an invisible or bidirectional formatting
 *     character (util_utf8_hidden()), or an invalid UTF-8 sequence;
 *   - JSON (control replies, vpowerctl --json): JSON escapes the C0
 *     controls itself, so only invalid UTF-8 is replaced, each invalid
 *     byte by U+FFFD, and the output is always valid UTF-8; vpowerctl
 *     --json, read on a terminal, also writes the rest of what
 *     util_utf8_unprintable() names (DEL, C1 controls, hidden
 *     characters) as \uXXXX escapes.
 *
 * "Valid" is RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF. */

/* Length (1 to 4) of the valid UTF-8 sequence at the start of the 'n'
 * bytes at 's', or 0 if they do not start with one (n == 0 included). */
size_t util_utf8_len(const char *s, size_t n);

/* The code point (U+0000 to U+10FFFF) of the valid 'k'-byte UTF-8
 * sequence at 's', 'k' being what util_utf8_len() returned for it (1 to
 * 4): what util_utf8_hidden() looks up, and the number vpowerctl --json
 * writes in a \u escape. */
uint32_t util_utf8_codepoint(const char *s, size_t k);

/* True if the valid 'k'-byte UTF-8 sequence at 's' is a character that
 * prints as nothing, breaks the line or reorders what follows: the soft
 * hyphen, the zero-width and joiner characters, the line and paragraph
 * separators, the bidirectional marks, embeddings, overrides and
 * isolates (U+061C, U+200E/F, U+202A..E, U+2066..9, which can make a log
 * line read differently from its bytes), the word joiner and invisible
 * operators, the byte-order mark, the Mongolian vowel separator and the
 * interlinear annotation controls. */
bool util_utf8_hidden(const char *s, size_t k);

/* True if the valid 'k'-byte UTF-8 sequence at 's' is to be escaped in
 * text for people: a C0 control, DEL, a C1 control (U+0080..U+009F) or
 * a util_utf8_hidden() character.  util_escape() and the simulator's
 * trace_esc() both ask this. */
bool util_utf8_unprintable(const char *s, size_t k);

/* True if the 'n' bytes at 's' are all valid UTF-8. */
bool util_utf8_valid(const char *s, size_t n);

/* Writes 's' (NUL-terminated) to 'out' with the text rule above,
 * NUL-terminated, truncated at a whole escape or character to fit
 * 'outlen' bytes (> 0).  Returns 'out'. */
char *util_escape(const char *s, char *out, size_t outlen);

/* The same into a fresh string (free() it). */
char *util_escape_dup(const char *s);

/* A copy of the 'n' bytes at 's' (which may hold NUL bytes) with each
 * byte of an invalid sequence replaced by U+FFFD, NUL-terminated; '*outn'
 * (if not NULL) gets its length.  Fresh string, free() it. */
char *util_utf8_replace(const char *s, size_t n, size_t *outn);

/* Clock 'id' (CLOCK_MONOTONIC, a CPU-time clock...) in nanoseconds; 0
 * if it cannot be read. */
uint64_t util_clock_ns(clockid_t id);

#define XNEW(T) ((T *) xcalloc(1, sizeof(T)))
#define XNEWARRAY(T, N) ((T *) xcalloc((N), sizeof(T)))
#define ARRAY_SIZE(A) (sizeof(A) / sizeof((A)[0]))

#endif /* manager/util.h */
