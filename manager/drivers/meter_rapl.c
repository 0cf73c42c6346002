/* manager/drivers/meter_rapl.c -- RAPL energy counters through powercap.
 *
 * The kernel's powercap class lists every RAPL zone flat below
 * /sys/class/powercap: "intel-rapl:P" for top-level zones (one per
 * package, "psys" for the platform where the CPU has it) and
 * "intel-rapl:P:S" for a package's subzones (dram, core, uncore).  AMD
 * CPUs use the same "intel-rapl" control type.  What a zone covers comes
 * from its "name" file, never from its number: psys is a top-level zone
 * numbered like a package.  "intel-rapl-mmio" zones are skipped: they
 * expose the same package energy through MMIO for power limiting, and
 * counting them would count the package twice.
 *
 * energy_uj counts 0..max_energy_range_uj and starts again at 0; the
 * generic meter_read_uj() unwraps it.  Since 2020 energy_uj is readable
 * by root only, so an unprivileged reader gets a problem naming the file
 * (EACCES) instead of a meter. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

struct zone_id {
    unsigned top, sub;           /* intel-rapl:top[:sub]. */
    bool is_sub;
    char dir[METER_NAME_LEN];    /* Entry name in the powercap root. */
};

/* Parses "intel-rapl:N" or "intel-rapl:N:M" strictly. */
static bool
parse_zone(const char *name, struct zone_id *z)
{
    static const char prefix[] = "intel-rapl:";
    char tail;
    int n;

    if (strncmp(name, prefix, sizeof prefix - 1)
        || strlen(name) >= sizeof z->dir) {
        return false;
    }
    name += sizeof prefix - 1;
    memset(z, 0, sizeof *z);
    n = sscanf(name, "%u:%u%c", &z->top, &z->sub, &tail);
    if (n == 2) {
        z->is_sub = true;
    } else if (sscanf(name, "%u%c", &z->top, &tail) != 1) {
        return false;
    }
    if (name[0] < '0' || name[0] > '9' || strchr(name, '+')
        || strchr(name, '-') || strchr(name, ' ')) {
        return false;
    }
    snprintf(z->dir, sizeof z->dir, "intel-rapl:%s", name);
    return true;
}

static int
cmp_zone(const void *a_, const void *b_)
{
    const struct zone_id *a = a_, *b = b_;

    if (a->top != b->top) {
        return a->top < b->top ? -1 : 1;
    }
    if (a->is_sub != b->is_sub) {
        return a->is_sub ? 1 : -1;
    }
    return a->sub < b->sub ? -1 : a->sub > b->sub;
}

/* Reads 'root'/'dir'/'file' into 'buf'; a problem on failure. */
static int
read_text(struct meter_list *list, const char *root, const char *dir,
          const char *file, char *buf, size_t len)
{
    char path[METER_PATH_LEN];
    int r;

    if ((size_t) snprintf(path, sizeof path, "%s/%s/%s", root, dir, file)
        >= sizeof path) {
        meter_list_problem(list, "%s/%s: path too long", root, dir);
        return -ENAMETOOLONG;
    }
    r = sysfs_read_file(path, buf, len);
    if (r < 0) {
        meter_list_problem(list, "%s: %s", path,
                           r == -EOVERFLOW ? "value too long"
                                           : strerror(-r));
    }
    return r;
}

/* Package number of a "package-N" zone name, -1 otherwise. */
static int
package_number(const char *name)
{
    unsigned n;
    char tail;

    if (strncmp(name, "package-", 8) || name[8] < '0' || name[8] > '9'
        || sscanf(name + 8, "%u%c", &n, &tail) != 1 || n > 65535) {
        return -1;
    }
    return (int) n;
}

/* Sets the scope, package and name of 'm' from zone 'z' named 'name'.
 * A subzone's package is its parent's "package-N". */
static bool
classify(struct meter_list *list, const char *root, const struct zone_id *z,
         const char *name, struct meter_info *m)
{
    static const struct {
        const char *name;
        enum meter_scope scope;
    } subs[] = {
        { "dram", METER_SCOPE_DRAM },
        { "core", METER_SCOPE_CORE },
        { "uncore", METER_SCOPE_UNCORE },
    };
    char parent[METER_NAME_LEN], pname[64];

    m->package = package_number(name);
    if (!z->is_sub && m->package >= 0) {
        m->scope = METER_SCOPE_PACKAGE;
        snprintf(m->name, sizeof m->name, "%s", name);
        return true;
    }
    if (!z->is_sub && !strcmp(name, "psys")) {
        m->scope = METER_SCOPE_PLATFORM;
        snprintf(m->name, sizeof m->name, "psys");
        return true;
    }
    for (size_t i = 0; z->is_sub && i < ARRAY_SIZE(subs); i++) {
        if (strcmp(name, subs[i].name)) {
            continue;
        }
        snprintf(parent, sizeof parent, "intel-rapl:%u", z->top);
        if (read_text(list, root, parent, "name", pname, sizeof pname) < 0) {
            return false;
        }
        m->package = package_number(pname);
        if (m->package < 0) {
            meter_list_problem(list, "%s/%s/name: \"%s\" is not package-N, "
                               "so subzone %s has no package", root, parent,
                               pname, z->dir);
            return false;
        }
        m->scope = subs[i].scope;
        snprintf(m->name, sizeof m->name, "%.16s-%d", name, m->package);
        return true;
    }
    meter_list_problem(list, "%s/%s/name: unknown RAPL zone name \"%.32s\"",
                       root, z->dir, name);
    return false;
}

/* Adds zone 'z' if its name is known and its counter readable. */
static void
add_zone(struct meter_list *list, const char *root, const struct zone_id *z)
{
    struct meter_info m = { .ops = &meter_rapl_ops,
                            .kind = METER_KIND_RAPL, .counter = true };
    char name[64], path[METER_PATH_LEN], err[METER_ERR_LEN];
    uint64_t v;

    if (read_text(list, root, z->dir, "name", name, sizeof name) < 0
        || !classify(list, root, z, name, &m)) {
        return;
    }
    snprintf(path, sizeof path, "%s/%s/max_energy_range_uj", root, z->dir);
    if (meter_read_u64(path, false, &m.max_range_uj, err, sizeof err) < 0) {
        meter_list_problem(list, "%s", err);
        return;
    }
    if (!m.max_range_uj) {
        meter_list_problem(list, "%s: range 0 cannot count energy", path);
        return;
    }
    if ((size_t) snprintf(m.path, sizeof m.path, "%s/%s/energy_uj", root,
                          z->dir) >= sizeof m.path) {
        meter_list_problem(list, "%s/%s: path too long", root, z->dir);
        return;
    }
    if (meter_read_u64(m.path, false, &v, err, sizeof err) < 0) {
        meter_list_problem(list, "%s", err);
        return;
    }
    if (v > m.max_range_uj) {
        meter_list_problem(list, "%s: %llu is above max_energy_range_uj "
                           "%llu", m.path, (unsigned long long) v,
                           (unsigned long long) m.max_range_uj);
        return;
    }
    meter_list_add(list, &m);
}

static void
rapl_discover(const char *root, struct meter_list *list)
{
    struct zone_id *zones = NULL;
    size_t n = 0;
    struct dirent *de;
    DIR *d;

    root = root ? root : METER_POWERCAP_ROOT;
    d = opendir(root);
    if (!d) {
        if (errno != ENOENT) {
            meter_list_problem(list, "%s: %s", root, strerror(errno));
        }
        return;
    }
    while ((de = readdir(d))) {
        struct zone_id z;
        if (parse_zone(de->d_name, &z)) {
            zones = xrealloc(zones, (n + 1) * sizeof *zones);
            zones[n++] = z;
        }
    }
    closedir(d);
    if (n) {
        qsort(zones, n, sizeof *zones, cmp_zone);
    }
    for (size_t i = 0; i < n; i++) {
        add_zone(list, root, &zones[i]);
    }
    free(zones);
}

static int
rapl_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
            size_t errlen)
{
    (void) now_ns;
    return meter_read_u64(m->info.path, false, raw, err, errlen);
}

const struct meter_ops meter_rapl_ops = {
    .name = "rapl",
    .discover = rapl_discover,
    .sample = rapl_sample,
};
