/* manager/inputs/qemuconf.c -- The 'sched_core' setting of libvirt's
 * qemu.conf.
 *
 * qemu.conf is libvirt's virConf format: "name = value" lines, '#'
 * comments, strings in double quotes, lists in brackets that may span
 * lines.  Only a top-level 'sched_core' is looked at; the last one
 * counts, as when libvirt reads the file. */

#include <config.h>

#include "manager/inputs/qemuconf.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const sched_names[] = {
    [QEMUCONF_SCHED_NONE] = "none",
    [QEMUCONF_SCHED_VCPUS] = "vcpus",
    [QEMUCONF_SCHED_EMULATOR] = "emulator",
    [QEMUCONF_SCHED_FULL] = "full",
};

#define N_SCHED (sizeof sched_names / sizeof sched_names[0])

const char *
qemuconf_sched_name(enum qemuconf_sched v)
{
    return (unsigned) v < N_SCHED ? sched_names[v] : "unknown";
}

bool
qemuconf_sched_apart(enum qemuconf_sched v)
{
    return v != QEMUCONF_SCHED_NONE;
}

/* Bracket depth of 'line' after it (from 'depth'), outside strings and
 * comments. */
static int
line_depth(const char *line, int depth)
{
    bool str = false;

    for (const char *p = line; *p; p++) {
        if (str) {
            str = *p != '"';
        } else if (*p == '"') {
            str = true;
        } else if (*p == '#') {
            break;
        } else if (*p == '[') {
            depth++;
        } else if (*p == ']' && depth > 0) {
            depth--;
        }
    }
    return depth;
}

/* The value of a top-level "sched_core = ..." line into '*out'; 1 when
 * 'line' sets it, 0 when it is another line, -EINVAL with a reason. */
static int
parse_line(const char *line, enum qemuconf_sched *out, char *why,
           size_t whylen)
{
    static const char key[] = "sched_core";
    const char *p = line, *end;
    size_t n;

    while (isspace((unsigned char) *p)) {
        p++;
    }
    if (strncmp(p, key, sizeof key - 1)
        || (p[sizeof key - 1] != '=' && p[sizeof key - 1] != ' '
            && p[sizeof key - 1] != '\t')) {
        return 0;
    }
    p += sizeof key - 1;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p++ != '=') {
        snprintf(why, whylen, "sched_core: expected '='");
        return -EINVAL;
    }
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p != '"' || !(end = strchr(p + 1, '"'))) {
        snprintf(why, whylen, "sched_core: value must be a string in "
                 "double quotes (\"none\", \"vcpus\", \"emulator\" or "
                 "\"full\")");
        return -EINVAL;
    }
    p++;
    n = (size_t) (end - p);
    for (size_t i = 0; i < N_SCHED; i++) {
        if (strlen(sched_names[i]) == n && !strncmp(p, sched_names[i], n)) {
            *out = (enum qemuconf_sched) i;
            for (p = end + 1; *p == ' ' || *p == '\t' || *p == '\r'
                 || *p == '\n'; p++) {
            }
            if (*p && *p != '#') {
                snprintf(why, whylen, "sched_core: text after the value");
                return -EINVAL;
            }
            return 1;
        }
    }
    snprintf(why, whylen, "sched_core: unknown value \"%.*s\" (none, "
             "vcpus, emulator or full)", (int) (n > 32 ? 32 : n), p);
    return -EINVAL;
}

int
qemuconf_sched_core(const char *path, enum qemuconf_sched *out, char *err,
                    size_t errlen)
{
    enum qemuconf_sched v = QEMUCONF_SCHED_NONE;
    char line[4096], why[160];
    unsigned lineno = 0;
    int depth = 0, rc = 0;
    FILE *f;

    *out = QEMUCONF_SCHED_NONE;
    f = fopen(path, "re");
    if (!f) {
        int e = errno;

        if (e == ENOENT) {
            return 0;
        }
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%u: line longer than %zu bytes",
                     path, lineno, sizeof line - 2);
            rc = -EINVAL;
            break;
        }
        if (depth == 0) {
            int r = parse_line(line, &v, why, sizeof why);

            if (r < 0) {
                snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
                rc = r;
                break;
            }
        }
        depth = line_depth(line, depth);
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -EIO;
    }
    fclose(f);
    if (!rc) {
        *out = v;
    }
    return rc;
}
