/* manager/drivers/housekeeping_ops.c -- The real host operations of the
 * housekeeping driver: files, and systemd units over D-Bus.
 *
 * systemd owns the cgroups of its units on the unified hierarchy and
 * rewrites their cpuset.cpus from its own unit state (daemon-reload,
 * unit restarts), so there the driver asks systemd itself:
 * SetUnitProperties(unit, runtime, AllowedCPUs) through sd-bus.  The
 * change lives in /run and is gone at reboot, like the rest of what
 * vpowerd changes.  The calls are synchronous with a short timeout: they
 * happen only when the housekeeping set changes. */

#include <config.h>

#include "manager/drivers/housekeeping.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-bus.h>
#endif

#define HK_BUS_TIMEOUT_US (5 * 1000 * 1000)

static int
real_read(void *aux, const char *path, char *buf, size_t len)
{
    (void) aux;
    return sysfs_read_file(path, buf, len);
}

static int
real_write(void *aux, const char *path, const char *value)
{
    char *line = xasprintf("%s\n", value);
    size_t len = strlen(line);
    ssize_t n;
    int fd, error = 0;

    (void) aux;
    /* O_TRUNC as the shell's "echo >" does: kernel files ignore it. */
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        free(line);
        return -errno;
    }
    do {
        n = write(fd, line, len);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        error = -errno;
    } else if ((size_t) n != len) {
        error = -EIO;
    }
    if (close(fd) < 0 && !error) {
        error = -errno;
    }
    free(line);
    return error;
}

#ifdef HAVE_LIBSYSTEMD

struct hk_sdbus {
    sd_bus *bus;
};

struct hk_sdbus *
hk_sdbus_new(void)
{
    return XNEW(struct hk_sdbus);
}

void
hk_sdbus_free(struct hk_sdbus *b)
{
    if (b) {
        sd_bus_flush_close_unref(b->bus);
        free(b);
    }
}

static int
bus_get(struct hk_sdbus *b, char *err, size_t errlen)
{
    int r;

    if (b->bus) {
        return 0;
    }
    r = sd_bus_open_system(&b->bus);
    if (r < 0) {
        b->bus = NULL;
        snprintf(err, errlen, "cannot connect to the system bus (is "
                 "dbus running?): %s", strerror(-r));
        return -ENOTCONN;       /* Not "no such unit". */
    }
    return 0;
}

static const char *
unit_iface(const char *unit)
{
    static const char *const map[][2] = {
        { ".service", "org.freedesktop.systemd1.Service" },
        { ".slice", "org.freedesktop.systemd1.Slice" },
        { ".scope", "org.freedesktop.systemd1.Scope" },
        { ".socket", "org.freedesktop.systemd1.Socket" },
        { ".mount", "org.freedesktop.systemd1.Mount" },
        { ".swap", "org.freedesktop.systemd1.Swap" },
    };
    const char *dot = strrchr(unit, '.');

    for (size_t i = 0; dot && i < sizeof map / sizeof map[0]; i++) {
        if (!strcmp(dot, map[i][0])) {
            return map[i][1];
        }
    }
    return NULL;
}

static int
bus_fail(sd_bus_error *e, int r, const char *what, const char *unit,
         char *err, size_t errlen)
{
    if (sd_bus_error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit")) {
        r = -ENOENT;
    } else if (r == -ENOENT) {
        r = -EIO;               /* -ENOENT means "no such unit" here. */
    }
    snprintf(err, errlen, "systemd %s %s: %s", what, unit,
             e->message ? e->message : strerror(-r));
    sd_bus_error_free(e);
    return r;
}

static int
real_unit_get(void *aux, const char *unit, struct cpuset *cpus, char *err,
              size_t errlen)
{
    struct hk_sdbus *b = aux;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    const char *iface = unit_iface(unit), *opath;
    const void *bytes;
    char *path = NULL;
    size_t n;
    int r;

    if (!iface) {
        snprintf(err, errlen, "%s: not a unit with a cgroup", unit);
        return -EINVAL;
    }
    r = bus_get(b, err, errlen);
    if (r < 0) {
        return r;
    }
    r = sd_bus_call_method(b->bus, "org.freedesktop.systemd1",
                           "/org/freedesktop/systemd1",
                           "org.freedesktop.systemd1.Manager", "GetUnit",
                           &e, &reply, "s", unit);
    if (r < 0) {
        return bus_fail(&e, r, "GetUnit", unit, err, errlen);
    }
    r = sd_bus_message_read(reply, "o", &opath);
    if (r >= 0) {
        path = xstrdup(opath);
    }
    reply = sd_bus_message_unref(reply);
    if (r < 0) {
        snprintf(err, errlen, "systemd GetUnit %s: bad reply", unit);
        return r;
    }
    r = sd_bus_get_property(b->bus, "org.freedesktop.systemd1", path, iface,
                            "AllowedCPUs", &e, &reply, "ay");
    free(path);
    if (r < 0) {
        return bus_fail(&e, r, "AllowedCPUs of", unit, err, errlen);
    }
    r = sd_bus_message_read_array(reply, 'y', &bytes, &n);
    cpuset_zero(cpus);
    for (size_t i = 0; r >= 0 && i < n && i * 8 < POL_MAX_CPUS; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            if (((const unsigned char *) bytes)[i] & (1u << bit)) {
                cpuset_set(cpus, (unsigned) (i * 8 + bit));
            }
        }
    }
    sd_bus_message_unref(reply);
    if (r < 0) {
        snprintf(err, errlen, "systemd AllowedCPUs of %s: bad reply", unit);
    }
    return r < 0 ? r : 0;
}

static int
real_unit_set(void *aux, const char *unit, const struct cpuset *cpus,
              char *err, size_t errlen)
{
    struct hk_sdbus *b = aux;
    sd_bus_error e = SD_BUS_ERROR_NULL;
    sd_bus_message *m = NULL;
    unsigned char bytes[POL_MAX_CPUS / 8];
    size_t n = 0;
    int r;

    memset(bytes, 0, sizeof bytes);
    CPUSET_FOREACH(cpu, cpus) {
        bytes[cpu / 8] |= (unsigned char) (1u << (cpu % 8));
        n = (size_t) cpu / 8 + 1;
    }
    r = bus_get(b, err, errlen);
    if (r < 0) {
        return r;
    }
    r = sd_bus_message_new_method_call(b->bus, &m,
                                       "org.freedesktop.systemd1",
                                       "/org/freedesktop/systemd1",
                                       "org.freedesktop.systemd1.Manager",
                                       "SetUnitProperties");
    if (r >= 0) {
        r = sd_bus_message_append(m, "sb", unit, 1);
    }
    if (r >= 0) {
        r = sd_bus_message_open_container(m, 'a', "(sv)");
    }
    if (r >= 0) {
        r = sd_bus_message_open_container(m, 'r', "sv");
    }
    if (r >= 0) {
        r = sd_bus_message_append(m, "s", "AllowedCPUs");
    }
    if (r >= 0) {
        r = sd_bus_message_open_container(m, 'v', "ay");
    }
    if (r >= 0) {
        r = sd_bus_message_append_array(m, 'y', bytes, n);
    }
    for (int i = 0; r >= 0 && i < 3; i++) {
        r = sd_bus_message_close_container(m);
    }
    if (r < 0) {
        sd_bus_message_unref(m);
        snprintf(err, errlen, "cannot build SetUnitProperties: %s",
                 strerror(-r));
        return r;
    }
    r = sd_bus_call(b->bus, m, HK_BUS_TIMEOUT_US, &e, NULL);
    sd_bus_message_unref(m);
    if (r < 0) {
        return bus_fail(&e, r, "SetUnitProperties", unit, err, errlen);
    }
    return 0;
}

#else /* !HAVE_LIBSYSTEMD */

struct hk_sdbus {
    int unused;
};

struct hk_sdbus *
hk_sdbus_new(void)
{
    return XNEW(struct hk_sdbus);
}

void
hk_sdbus_free(struct hk_sdbus *b)
{
    free(b);
}

static int
real_unit_get(void *aux, const char *unit, struct cpuset *cpus, char *err,
              size_t errlen)
{
    (void) aux;
    (void) cpus;
    snprintf(err, errlen, "unit %s: vpowerd was built without libsystemd, "
             "so it cannot ask systemd to confine units", unit);
    return -ENOTSUP;
}

static int
real_unit_set(void *aux, const char *unit, const struct cpuset *cpus,
              char *err, size_t errlen)
{
    struct cpuset unused;

    (void) cpus;
    return real_unit_get(aux, unit, &unused, err, errlen);
}

#endif /* HAVE_LIBSYSTEMD */

const struct hk_ops hk_ops_real = {
    .read = real_read,
    .write = real_write,
    .unit_get_cpus = real_unit_get,
    .unit_set_cpus = real_unit_set,
};
