/* tests/unit/hostdrv-fixture.h -- Temporary sysfs trees for host tests.
 *
 * The host-driver unit tests never touch the machine's sysfs for writes:
 * they build a tree with tests/fixtures/mksysfs.sh in a fresh temporary
 * directory, point the driver's root at it and remove it afterwards.
 * Header-only (static functions) so each test program stays one file. */

#ifndef VPOWER_TESTS_HOSTDRV_FIXTURE_H
#define VPOWER_TESTS_HOSTDRV_FIXTURE_H 1

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef VPOWER_ABS_SRCDIR
#define VPOWER_ABS_SRCDIR "."
#endif

static inline const char *
fx_srcdir(void)
{
    const char *s = getenv("VPOWER_SRCDIR");

    return s && *s ? s : VPOWER_ABS_SRCDIR;
}

/* A fresh empty directory; caller frees the string and fx_rmtree()s. */
static inline char *
fx_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    char *dir;

    if (asprintf(&dir, "%s/vpower-test-XXXXXX", t && *t ? t : "/tmp") < 0
        || !mkdtemp(dir)) {
        perror("mkdtemp");
        exit(99);
    }
    return dir;
}

/* Runs mksysfs.sh into a new temporary directory with 'args'. */
static inline char *
fx_mksysfs(const char *args)
{
    char *dir = fx_tmpdir(), *cmd;
    int rc;

    if (asprintf(&cmd, "sh '%s/tests/fixtures/mksysfs.sh' '%s' %s",
                 fx_srcdir(), dir, args) < 0) {
        exit(99);
    }
    rc = system(cmd);
    free(cmd);
    if (rc != 0) {
        fprintf(stderr, "mksysfs.sh %s failed (%d)\n", args, rc);
        exit(99);
    }
    return dir;
}

static inline void
fx_rmtree(char *dir)
{
    char *cmd;

    if (dir && strncmp(dir, "/", 1) == 0
        && strstr(dir, "/vpower-test-")
        && asprintf(&cmd, "rm -rf '%s'", dir) >= 0) {
        if (system(cmd) != 0) {
            fprintf(stderr, "cannot remove %s\n", dir);
        }
        free(cmd);
    }
    free(dir);
}

/* Overwrites 'root'/'rel' with 'text' (exactly, no newline added). */
static inline void
fx_put(const char *root, const char *rel, const char *text)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(99);
    }
}

/* Contents of 'root'/'rel' without the trailing newline, in a static
 * buffer ("" if missing). */
static inline const char *
fx_get(const char *root, const char *rel)
{
    static char buf[4096];
    char path[1024];
    size_t n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    buf[0] = '\0';
    f = fopen(path, "r");
    if (f) {
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
    }
    buf[n] = '\0';
    if (n && buf[n - 1] == '\n') {
        buf[n - 1] = '\0';
    }
    return buf;
}

/* Contents of 'root'/'rel' exactly, trailing newline included, in a
 * fresh string the caller frees ("" if missing). */
static inline char *
fx_get_raw(const char *root, const char *rel)
{
    char path[1024], *buf = calloc(1, 4096);
    size_t n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "r");
    if (f) {
        n = fread(buf, 1, 4095, f);
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

#endif /* tests/unit/hostdrv-fixture.h */
