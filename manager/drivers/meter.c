/* manager/drivers/meter.c -- What every power meter driver shares: the list
 * discovery fills, the choice of the whole-host meter, the sum meter
 * built from that choice, and the one place where counters are unwrapped
 * and power readings integrated into energy.
 *
 * Drivers only sample the hardware (a counter value or a power); keeping
 * the arithmetic here means a wrap or a gap is handled the same way for
 * RAPL, hwmon, IPMI and the dummy meter the simulator drives. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/log.h"
#include "manager/drivers/sysfs.h"
#include "manager/util.h"

#define LOG_MODULE "meter"

/* ---- List ------------------------------------------------------------- */

void
meter_list_add(struct meter_list *list, const struct meter_info *info)
{
    list->meters = xrealloc(list->meters,
                            (list->n + 1) * sizeof *list->meters);
    list->meters[list->n++] = *info;
}

void
meter_list_problem(struct meter_list *list, const char *fmt, ...)
{
    va_list ap;
    char *msg;

    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0) {
        abort();
    }
    va_end(ap);
    list->problems = xrealloc(list->problems,
                              (list->n_problems + 1) * sizeof *list->problems);
    list->problems[list->n_problems++] = msg;
}

void
meter_list_clear(struct meter_list *list)
{
    for (size_t i = 0; i < list->n_problems; i++) {
        free(list->problems[i]);
    }
    free(list->problems);
    free(list->meters);
    memset(list, 0, sizeof *list);
}

void
meter_discover(const struct meter_roots *roots, struct meter_list *list)
{
    static const struct meter_roots real;
    const struct meter_roots *r = roots ? roots : &real;

    if (!r->powercap || r->powercap[0]) {
        meter_rapl_ops.discover(r->powercap, list);
    }
    if (!r->hwmon || r->hwmon[0]) {
        meter_hwmon_ops.discover(r->hwmon, list);
    }
    if (!r->ipmi_dev || r->ipmi_dev[0]) {
        meter_ipmi_ops.discover(r->ipmi_dev, list);
    }
}

const char *
meter_kind_name(enum meter_kind kind)
{
    switch (kind) {
    case METER_KIND_RAPL:
        return "rapl";
    case METER_KIND_HWMON:
        return "hwmon";
    case METER_KIND_IPMI:
        return "ipmi";
    case METER_KIND_DUMMY:
        return "dummy";
    case METER_KIND_SUM:
        return "sum";
    }
    return "?";
}

const char *
meter_scope_name(enum meter_scope scope)
{
    switch (scope) {
    case METER_SCOPE_PACKAGE:
        return "package";
    case METER_SCOPE_DRAM:
        return "dram";
    case METER_SCOPE_CORE:
        return "core";
    case METER_SCOPE_UNCORE:
        return "uncore";
    case METER_SCOPE_PLATFORM:
        return "platform";
    case METER_SCOPE_PACKAGE_DRAM:
        return "package+dram";
    case METER_SCOPE_OTHER:
        return "other";
    }
    return "?";
}

/* ---- Values ----------------------------------------------------------- */

bool
meter_all_ones(uint64_t value)
{
    return value == UINT64_MAX || value == UINT32_MAX
           || value == (uint64_t) UINT32_MAX * 1000;
}

int
meter_read_u64(const char *path, bool power, uint64_t *out, char *err,
               size_t errlen)
{
    char buf[64];
    uint64_t v;
    int r = sysfs_read_file(path, buf, sizeof buf);

    if (r == -EOVERFLOW) {
        snprintf(err, errlen, "%s: value longer than %zu bytes", path,
                 sizeof buf - 1);
        return -EINVAL;
    }
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(-r));
        return r;
    }
    if (sysfs_parse_u64(buf, &v) < 0) {
        snprintf(err, errlen, "%s: not an unsigned decimal number: \"%.32s\"",
                 path, buf);
        return -EINVAL;
    }
    if (power ? meter_all_ones(v) : v == UINT64_MAX) {
        snprintf(err, errlen, "%s: %s is the all-ones value: the hardware "
                 "has no reading", path, buf);
        return -ERANGE;
    }
    *out = v;
    return 0;
}

/* ---- Choosing the host meter ------------------------------------------ */

/* Rank of a platform meter, lower is better; -1 if 'm' is not one.
 * Counters beat sampled power (no energy is missed between samples) and
 * local sensors beat a BMC round trip. */
static int
platform_rank(const struct meter_info *m)
{
    if (m->scope != METER_SCOPE_PLATFORM) {
        return -1;
    }
    switch (m->kind) {
    case METER_KIND_RAPL:
        return 0;
    case METER_KIND_HWMON:
        return m->counter ? 1 : 2;
    case METER_KIND_IPMI:
        return 3;
    case METER_KIND_DUMMY:
    case METER_KIND_SUM:
        return 4;
    }
    return -1;
}

static bool
package_has_dram(const struct meter_list *list, int package)
{
    for (size_t i = 0; i < list->n; i++) {
        const struct meter_info *m = &list->meters[i];
        if (m->kind == METER_KIND_RAPL && m->scope == METER_SCOPE_DRAM
            && m->package == package) {
            return true;
        }
    }
    return false;
}

int
meter_choose_host(const struct meter_list *list, struct meter_choice *c)
{
    int best = -1;
    size_t n_pkg = 0, n_pkg_dram = 0;

    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < list->n; i++) {
        int rank = platform_rank(&list->meters[i]);
        if (rank >= 0 && (best < 0 || rank < best)) {
            best = rank;
            c->idx[0] = i;
            c->n = 1;
        }
    }
    if (c->n) {
        c->scope = METER_SCOPE_PLATFORM;
        return 0;
    }

    for (size_t i = 0; i < list->n; i++) {
        const struct meter_info *m = &list->meters[i];
        if (m->kind == METER_KIND_RAPL && m->scope == METER_SCOPE_PACKAGE) {
            n_pkg++;
            n_pkg_dram += package_has_dram(list, m->package);
        }
    }
    if (!n_pkg) {
        return -ENOENT;
    }
    c->scope = n_pkg_dram == n_pkg ? METER_SCOPE_PACKAGE_DRAM
                                   : METER_SCOPE_PACKAGE;
    if (n_pkg + (c->scope == METER_SCOPE_PACKAGE_DRAM ? n_pkg_dram : 0)
        > METER_HOST_MAX) {
        return -E2BIG;
    }
    for (size_t i = 0; i < list->n; i++) {
        const struct meter_info *m = &list->meters[i];
        if (m->kind == METER_KIND_RAPL
            && (m->scope == METER_SCOPE_PACKAGE
                || (m->scope == METER_SCOPE_DRAM
                    && c->scope == METER_SCOPE_PACKAGE_DRAM))) {
            c->idx[c->n++] = i;
        }
    }
    return 0;
}

int
meter_describe(const struct meter_info *m, char *buf, size_t len)
{
    if (!m->counter && m->interval_ms) {
        return snprintf(buf, len, "%s: %s, %s, %s, power, averaged over "
                        "%u ms", m->name, meter_kind_name(m->kind),
                        meter_scope_name(m->scope), m->path,
                        (unsigned) m->interval_ms);
    }
    return snprintf(buf, len, "%s: %s, %s, %s%s", m->name,
                    meter_kind_name(m->kind), meter_scope_name(m->scope),
                    m->path, m->counter ? "" : ", power");
}

void
meter_log_list(const struct meter_list *list)
{
    char line[METER_NAME_LEN + METER_PATH_LEN + 80];
    struct meter_choice c;
    size_t used = 0;
    int r;

    for (size_t i = 0; i < list->n; i++) {
        meter_describe(&list->meters[i], line, sizeof line);
        LOG_INFO("meter %s", line);
    }
    for (size_t i = 0; i < list->n_problems; i++) {
        LOG_WARN("meter not usable: %s", list->problems[i]);
    }
    r = meter_choose_host(list, &c);
    if (r < 0) {
        LOG_WARN("no whole-host meter: %s", r == -E2BIG
                 ? "too many zones to sum" : "none of psys, hwmon "
                 "power_meter, IPMI DCMI or RAPL package found");
        return;
    }
    line[0] = '\0';
    for (size_t i = 0; i < c.n; i++) {
        r = snprintf(line + used, sizeof line - used, "%s%s", i ? "+" : "",
                     list->meters[c.idx[i]].name);
        if (r < 0 || (size_t) r >= sizeof line - used) {
            break;
        }
        used += (size_t) r;
    }
    LOG_INFO("whole-host meter: %s (%s)", line, meter_scope_name(c.scope));
}

/* ---- Reading ---------------------------------------------------------- */

struct meter *
meter_open(const struct meter_info *info, char *err, size_t errlen)
{
    struct meter *m;

    if (info->ops->open) {
        return info->ops->open(info, err, errlen);
    }
    m = XNEW(struct meter);
    m->ops = info->ops;
    m->info = *info;
    return m;
}

void
meter_close(struct meter *m)
{
    if (m && m->ops->close) {
        m->ops->close(m);
    } else {
        free(m);
    }
}

/* Energy between two counter values 'prev' and 'raw' of a counter that
 * counts 0..max_range then starts again at 0.  0 for max_range means a
 * plain 64-bit counter, which does not wrap in practice: going backwards
 * is then a reset. */
static int
counter_delta(const struct meter *m, uint64_t raw, uint64_t *delta,
              char *err, size_t errlen)
{
    uint64_t max = m->info.max_range_uj;

    if (max && raw > max) {
        snprintf(err, errlen, "%s: counter %llu above its range %llu",
                 m->info.path, (unsigned long long) raw,
                 (unsigned long long) max);
        return -EINVAL;
    }
    if (raw >= m->last_raw) {
        *delta = raw - m->last_raw;
    } else if (max) {
        *delta = (max - m->last_raw) + raw + 1;
    } else {
        snprintf(err, errlen, "%s: counter went back from %llu to %llu "
                 "(reset?)", m->info.path,
                 (unsigned long long) m->last_raw, (unsigned long long) raw);
        return -EINVAL;
    }
    return 0;
}

int
meter_read_uj(struct meter *m, uint64_t now_ns, uint64_t *energy_uj,
              char *err, size_t errlen)
{
    uint64_t raw, add = 0;
    int r = m->ops->sample(m, now_ns, &raw, err, errlen);

    if (r < 0) {
        return r;
    }
    if (m->info.counter) {
        if (!m->started) {
            m->energy_uj = raw;
        } else if ((r = counter_delta(m, raw, &add, err, errlen)) < 0) {
            return r;
        }
        m->last_raw = raw;
    } else if (m->started) {
        if (now_ns < m->last_ns) {
            snprintf(err, errlen, "%s: read time went backwards",
                     m->info.path);
            return -EINVAL;
        }
        /* uW x ns / 1e9 = uJ; split to stay within 64 bits for any
         * power below 2^64 uW over intervals of hours. */
        uint64_t dt = now_ns - m->last_ns;
        add = raw * (dt / 1000000000u)
              + (raw * (dt % 1000000000u / 1000u)) / 1000000u;
    }
    m->energy_uj += add;
    m->last_ns = now_ns;
    m->started = true;
    *energy_uj = m->energy_uj;
    return 0;
}

/* ---- The sum meter ---------------------------------------------------- */

struct sum_meter {
    struct meter up;
    struct meter *parts[METER_HOST_MAX];
    size_t n;
};

static void
sum_close(struct meter *m)
{
    struct sum_meter *s = (struct sum_meter *) m;

    for (size_t i = 0; i < s->n; i++) {
        meter_close(s->parts[i]);
    }
    free(s);
}

/* Reads every part; the raw value is the sum of their energies, which
 * is already unwrapped, so the sum is a plain 64-bit counter. */
static int
sum_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
           size_t errlen)
{
    struct sum_meter *s = (struct sum_meter *) m;
    uint64_t total = 0, e;

    for (size_t i = 0; i < s->n; i++) {
        int r = meter_read_uj(s->parts[i], now_ns, &e, err, errlen);
        if (r < 0) {
            return r;
        }
        total += e;
    }
    *raw = total;
    return 0;
}

static const struct meter_ops sum_ops = {
    .name = "sum",
    .sample = sum_sample,
    .close = sum_close,
};

struct meter *
meter_host_open(const struct meter_list *list, const struct meter_choice *c,
                char *err, size_t errlen)
{
    struct sum_meter *s = XNEW(struct sum_meter);
    size_t used = 0;

    s->up.ops = &sum_ops;
    s->up.info.ops = &sum_ops;
    s->up.info.kind = METER_KIND_SUM;
    s->up.info.scope = c->scope;
    s->up.info.package = -1;
    s->up.info.counter = true;
    for (size_t i = 0; i < c->n && i < METER_HOST_MAX; i++) {
        const struct meter_info *info = &list->meters[c->idx[i]];
        int n;

        s->parts[i] = meter_open(info, err, errlen);
        if (!s->parts[i]) {
            sum_close(&s->up);
            return NULL;
        }
        s->n++;
        n = snprintf(s->up.info.name + used, sizeof s->up.info.name - used,
                     "%s%s", i ? "+" : "", info->name);
        used = n < 0 ? used : used + (size_t) n;
        used = used < sizeof s->up.info.name ? used
                                             : sizeof s->up.info.name - 1;
        if (i == 0) {
            snprintf(s->up.info.path, sizeof s->up.info.path, "%s",
                     info->path);
        }
    }
    if (!s->n) {
        snprintf(err, errlen, "no meter to open");
        sum_close(&s->up);
        return NULL;
    }
    return &s->up;
}
