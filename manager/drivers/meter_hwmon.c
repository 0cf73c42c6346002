/* manager/drivers/meter_hwmon.c -- hwmon power and energy sensors.
 *
 * Every hwmon device below /sys/class/hwmon is looked at: its "name" and
 * its sensors energyN_input (microjoules, a cumulative counter),
 * powerN_average (microwatts averaged over powerN_average_interval
 * milliseconds) and powerN_input (microwatts, instantaneous; used only
 * where the channel has no average).  Older drivers, acpi_power_meter
 * among them, put their attribute files in the device directory
 * (hwmonN/device/) rather than in hwmonN/; both places are searched.
 *
 * What a sensor covers is known only for "power_meter" (the ACPI power
 * meter, ACPI000D: the whole platform as measured by the BMC or the power
 * supply; "acpi_power_meter" is accepted as the same).  A sensor with no
 * usable value at discovery (all ones, garbage, unreadable) is not
 * listed: a BMC that never has a reading must not displace RAPL as the
 * host meter.  Sensors of other devices are listed with scope "other" and
 * never chosen as the host meter.
 *
 * A BMC with no reading makes acpi_power_meter print all ones
 * (4294967295000 from _PMM's 0xffffffff, or the 64- or 32-bit all-ones
 * value); meter_read_u64() rejects those with a message naming the
 * file. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#define HWMON_MAX_CHANNEL 64

/* Parses "<prefix>N<suffix>" strictly; N in 1..HWMON_MAX_CHANNEL-1. */
static bool
parse_sensor(const char *file, const char *prefix, const char *suffix,
             unsigned *n)
{
    size_t lp = strlen(prefix), ls = strlen(suffix), lf = strlen(file);
    unsigned v = 0;
    size_t i;

    if (lf <= lp + ls || strncmp(file, prefix, lp)
        || strcmp(file + lf - ls, suffix)) {
        return false;
    }
    for (i = lp; i < lf - ls; i++) {
        if (file[i] < '0' || file[i] > '9' || v >= HWMON_MAX_CHANNEL) {
            return false;
        }
        v = v * 10 + (unsigned) (file[i] - '0');
    }
    *n = v;
    return v > 0 && v < HWMON_MAX_CHANNEL && file[lp] != '0';
}

static int
cmp_uint(const void *a, const void *b)
{
    unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
    return x < y ? -1 : x > y;
}

/* Adds the sensor 'file' of channel 'ch' in 'base' if its value is
 * usable now; else a problem. */
static void
add_sensor(struct meter_list *list, const char *base, const char *hwname,
           const char *file, unsigned ch, bool counter)
{
    struct meter_info m = { .ops = &meter_hwmon_ops,
                            .kind = METER_KIND_HWMON,
                            .package = -1, .counter = counter };
    char err[METER_ERR_LEN], ipath[METER_PATH_LEN];
    uint64_t v;

    m.scope = !strcmp(hwname, "power_meter")
              || !strcmp(hwname, "acpi_power_meter") ? METER_SCOPE_PLATFORM
                                                     : METER_SCOPE_OTHER;
    snprintf(m.name, sizeof m.name, "%.40s/%s%u", hwname,
             counter ? "energy" : "power", ch);
    if ((size_t) snprintf(m.path, sizeof m.path, "%s/%s", base, file)
        >= sizeof m.path) {
        meter_list_problem(list, "%s: path too long", base);
        return;
    }
    if (meter_read_u64(m.path, !counter, &v, err, sizeof err) < 0) {
        meter_list_problem(list, "%s", err);
        return;
    }
    if (!counter) {
        snprintf(ipath, sizeof ipath, "%s/power%u_average_interval", base,
                 ch);
        if (meter_read_u64(ipath, false, &v, err, sizeof err) == 0
            && v <= UINT32_MAX) {
            m.interval_ms = (uint32_t) v;
        }
    }
    meter_list_add(list, &m);
}

/* The sensors of one device whose attribute files are in 'base'. */
static void
scan_device(struct meter_list *list, const char *base, const char *hwname)
{
    bool energy[HWMON_MAX_CHANNEL] = { false };
    bool avg[HWMON_MAX_CHANNEL] = { false };
    bool inst[HWMON_MAX_CHANNEL] = { false };
    char file[32];
    struct dirent *de;
    unsigned ch;
    DIR *d = opendir(base);

    if (!d) {
        meter_list_problem(list, "%s: %s", base, strerror(errno));
        return;
    }
    while ((de = readdir(d))) {
        if (parse_sensor(de->d_name, "energy", "_input", &ch)) {
            energy[ch] = true;
        } else if (parse_sensor(de->d_name, "power", "_average", &ch)) {
            avg[ch] = true;
        } else if (parse_sensor(de->d_name, "power", "_input", &ch)) {
            inst[ch] = true;
        }
    }
    closedir(d);
    for (ch = 1; ch < HWMON_MAX_CHANNEL; ch++) {
        if (energy[ch]) {
            snprintf(file, sizeof file, "energy%u_input", ch);
            add_sensor(list, base, hwname, file, ch, true);
        }
    }
    for (ch = 1; ch < HWMON_MAX_CHANNEL; ch++) {
        if (avg[ch] || inst[ch]) {
            snprintf(file, sizeof file, "power%u_%s", ch,
                     avg[ch] ? "average" : "input");
            add_sensor(list, base, hwname, file, ch, false);
        }
    }
}

/* One hwmonN directory: its attributes are in hwmonN/ or, for drivers
 * registered the old way, in hwmonN/device/. */
static void
scan_hwmon(struct meter_list *list, const char *root, unsigned n)
{
    char base[METER_PATH_LEN], path[METER_PATH_LEN + 16], name[64];
    struct stat st;
    int r;

    if ((size_t) snprintf(base, sizeof base, "%s/hwmon%u", root, n)
        >= sizeof base - 8) {
        meter_list_problem(list, "%s: path too long", root);
        return;
    }
    snprintf(path, sizeof path, "%s/name", base);
    if (lstat(path, &st) < 0) {
        snprintf(path, sizeof path, "%s/device/name", base);
        if (lstat(path, &st) == 0) {
            strcat(base, "/device");
        } else {
            snprintf(path, sizeof path, "%s/name", base);
        }
    }
    r = sysfs_read_file(path, name, sizeof name);
    if (r < 0) {
        meter_list_problem(list, "%s: %s", path,
                           r == -EOVERFLOW ? "value too long"
                                           : strerror(-r));
        return;
    }
    if (!name[0] || strchr(name, '/') || strchr(name, '\n')) {
        meter_list_problem(list, "%s: not a device name: \"%.32s\"", path,
                           name);
        return;
    }
    scan_device(list, base, name);
}

static void
hwmon_discover(const char *root, struct meter_list *list)
{
    unsigned *ids = NULL, id;
    size_t n = 0;
    struct dirent *de;
    DIR *d;

    root = root ? root : METER_HWMON_ROOT;
    d = opendir(root);
    if (!d) {
        if (errno != ENOENT) {
            meter_list_problem(list, "%s: %s", root, strerror(errno));
        }
        return;
    }
    while ((de = readdir(d))) {
        char tail;
        if (!strncmp(de->d_name, "hwmon", 5) && de->d_name[5] >= '0'
            && de->d_name[5] <= '9'
            && sscanf(de->d_name + 5, "%u%c", &id, &tail) == 1) {
            ids = xrealloc(ids, (n + 1) * sizeof *ids);
            ids[n++] = id;
        }
    }
    closedir(d);
    if (n) {
        qsort(ids, n, sizeof *ids, cmp_uint);
    }
    for (size_t i = 0; i < n; i++) {
        scan_hwmon(list, root, ids[i]);
    }
    free(ids);
}

static int
hwmon_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
             size_t errlen)
{
    (void) now_ns;
    return meter_read_u64(m->info.path, !m->info.counter, raw, err, errlen);
}

const struct meter_ops meter_hwmon_ops = {
    .name = "hwmon",
    .discover = hwmon_discover,
    .sample = hwmon_sample,
};
