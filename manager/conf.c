/* manager/conf.c -- vpowerd.conf parser.
 *
 * chrony-style: one directive and its argument per line, '#' starts a
 * comment, later directives override earlier ones, an unknown directive
 * or a bad value is an error that stops vpowerd from starting.  Parsing
 * text is pure (conf_parse); only conf_load and the 'include' directive
 * read files, and only conf_check_system() and conf_check_cpus() look at
 * the host.  Each directive is one row of a table with its type and
 * range, so the table is also the documentation checked by the tests
 * (see config/vpowerd.conf and docs/configuration.md). */

#include <config.h>

#include "manager/conf.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "manager/util.h"
#include "policy/num.h"

#define CONF_MAX_FILE (1024 * 1024)
#define CONF_MAX_LINE 4096
#define CONF_MAX_DEPTH 8

enum conf_type { T_STR, T_PATH, T_SOCKET, T_GROUP, T_CPUS, T_KIND,
                 T_OVERRIDE, T_TURBO, T_BOOL, T_U32, T_INCLUDE,
                 T_CGROUPS };

_Static_assert(CONF_SOCKET_MAX + 1
               == sizeof ((struct sockaddr_un *) 0)->sun_path,
               "CONF_SOCKET_MAX is sun_path less its NUL");

struct conf_directive {
    const char *name;
    enum conf_type type;
    size_t off;                 /* Field offset in struct vpd_conf. */
    size_t size;                /* Field size (strings). */
    uint32_t min, max;          /* T_U32 range. */
};

#define STR(NAME, T, FIELD) \
    { NAME, T, offsetof(struct vpd_conf, FIELD), \
      sizeof ((struct vpd_conf *) 0)->FIELD, 0, 0 }
#define FIELD(NAME, T, FIELD) \
    { NAME, T, offsetof(struct vpd_conf, FIELD), 0, 0, 0 }
#define U32(NAME, FIELD, MIN, MAX) \
    { NAME, T_U32, offsetof(struct vpd_conf, FIELD), 0, MIN, MAX }

static const struct conf_directive directives[] = {
    STR("connect", T_STR, connect_uri),
    STR("sysfs_root", T_PATH, sysfs_root),
    STR("energy_model", T_PATH, model_file),
    STR("journal", T_PATH, journal_path),
    STR("powercap_root", T_PATH, powercap_root),
    STR("hwmon_root", T_PATH, hwmon_root),
    STR("control_socket", T_SOCKET, socket_path),
    STR("admin_group", T_GROUP, admin_group),
    STR("record", T_PATH, record_path),
    U32("record_max_bytes", record_max_bytes, 4096, UINT32_MAX),
    FIELD("managed_cpus", T_CPUS, managed),
    FIELD("default_policy", T_KIND, default_policy),
    FIELD("override", T_OVERRIDE, override_performance),
    FIELD("manage_static_pinned", T_BOOL, manage_static_pinned),
    FIELD("offline_cores", T_BOOL, allow_offline),
    FIELD("dry_run", T_BOOL, dry_run),
    U32("period_ms", period_ms, 100, 600000),
    U32("max_period_ms", max_period_ms, 100, 3600000),
    U32("headroom_pct", headroom_pct, 0, 90),
    U32("spread_ready_pct", spread_ready_pct, 1, 100),
    U32("pack_dwell_ms", pack_dwell_ms, 0, 3600000),
    U32("hint_rate", hint_rate, 1, 1000),
    U32("sched_priority", sched_priority, 0, 99),
    FIELD("turbo", T_TURBO, use_turbo),
    FIELD("default_share_smt", T_BOOL, default_share_smt),
    FIELD("housekeeping", T_BOOL, housekeeping),
    FIELD("housekeeping_cpusets", T_BOOL, hk_cpusets),
    FIELD("housekeeping_irqs", T_BOOL, hk_irqs),
    FIELD("housekeeping_workqueues", T_BOOL, hk_workqueues),
    STR("housekeeping_groups", T_CGROUPS, hk_groups),
    STR("housekeeping_cgroup_root", T_PATH, hk_cgroup_root),
    STR("housekeeping_proc_root", T_PATH, hk_proc_root),
    STR("housekeeping_workqueue_mask", T_PATH, hk_wq_path),
    STR("housekeeping_run_root", T_PATH, hk_run_root),
    U32("housekeeping_spread_pressure_pct", hk_spread_pressure_pct, 1, 100),
    U32("model_error_pct", model_error_pct, 1, 1000),
    U32("model_error_periods", model_error_periods, 1, 1000000),
    FIELD("model_correction", T_BOOL, model_correction),
    { "include", T_INCLUDE, 0, 0, 0, 0 },
};

void
conf_defaults(struct vpd_conf *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->connect_uri, "qemu:///system");
    strcpy(c->sysfs_root, "/sys/devices/system/cpu");
    strcpy(c->journal_path, "/run/vpower/journal");
    strcpy(c->powercap_root, "/sys/class/powercap");
    strcpy(c->hwmon_root, "/sys/class/hwmon");
    strcpy(c->socket_path, "/run/vpower/vpowerd.sock");
    cpuset_zero(&c->managed);
    c->managed_set = false;
    c->default_policy = POL_BALANCED;
    c->period_ms = 1000;
    c->max_period_ms = 10000;
    c->headroom_pct = 20;
    c->spread_ready_pct = 5;
    c->pack_dwell_ms = 30000;
    c->hint_rate = 20;
    c->record_max_bytes = 64u << 20;
    c->default_share_smt = true;
    c->saturation_turbo = true;
    c->hk_cpusets = c->hk_irqs = c->hk_workqueues = true;
    strcpy(c->hk_groups, CONF_HK_DEFAULT_GROUPS);
    strcpy(c->hk_cgroup_root, "/sys/fs/cgroup");
    strcpy(c->hk_proc_root, "/proc");
    strcpy(c->hk_wq_path, "/sys/devices/virtual/workqueue/cpumask");
    strcpy(c->hk_run_root, "/run");
    c->hk_spread_pressure_pct = 10;
    c->model_error_pct = 10;
    c->model_error_periods = 30;
}

static int load_file(struct vpd_conf *, const char *path, int depth,
                     const char *from_file, unsigned from_line,
                     char *err, size_t errlen);

static int
parse_bool(const char *s, bool *out)
{
    if (!strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "true")) {
        *out = true;
    } else if (!strcmp(s, "no") || !strcmp(s, "off")
               || !strcmp(s, "false")) {
        *out = false;
    } else {
        return -EINVAL;
    }
    return 0;
}

int
conf_turbo_of(const char *when, bool *use_turbo, bool *saturation_turbo)
{
    bool yes;

    if (!strcmp(when, "saturated")) {
        *use_turbo = false;
        *saturation_turbo = true;
    } else if (!parse_bool(when, &yes)) {
        *use_turbo = *saturation_turbo = yes;
    } else {
        return -EINVAL;
    }
    return 0;
}

static int
parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    int r = num_parse_u64(s, UINT32_MAX, &v);

    if (!r) {
        *out = (uint32_t) v;
    }
    return r;
}

static bool
group_valid(const char *s)
{
    if (!*s || !((*s >= 'a' && *s <= 'z') || *s == '_')) {
        return false;
    }
    for (; *s; s++) {
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')
              || *s == '_' || *s == '-')) {
            return false;
        }
    }
    return true;
}

/* A housekeeping_groups list: comma-separated cgroup paths relative to
 * the cgroup root, each non-empty, not absolute, without "." or ".."
 * components and at most CONF_HK_MAX_GROUPS of them.  Returns NULL or a
 * reason. */
static const char *
cgroups_check(const char *s, char *why, size_t whylen)
{
    unsigned n = 0;

    for (const char *p = s;; p++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t) (end - p) : strlen(p);
        const char *q = p;

        if (len == 0 || *p == '/') {
            snprintf(why, whylen, "item %u: expected a cgroup path "
                     "relative to the cgroup root", n + 1);
            return why;
        }
        while (q < p + len) {
            size_t cl = strcspn(q, "/,");

            if ((cl == 1 && q[0] == '.') || (cl == 2 && !strncmp(q, "..", 2))
                || cl == 0) {
                snprintf(why, whylen, "item %u (%.*s): empty, \".\" or "
                         "\"..\" component", n + 1, (int) len, p);
                return why;
            }
            q += cl + (q[cl] == '/');
        }
        if (++n > CONF_HK_MAX_GROUPS) {
            snprintf(why, whylen, "more than %d groups", CONF_HK_MAX_GROUPS);
            return why;
        }
        if (!end) {
            return NULL;
        }
        p = end;
    }
}

/* Applies directive 'd' with argument 'arg'; returns NULL or a reason
 * (written into 'why' when it needs formatting). */
static const char *
apply(struct vpd_conf *c, const struct conf_directive *d, const char *arg,
      char *why, size_t whylen)
{
    char *field = (char *) c + d->off;

    switch (d->type) {
    case T_STR:
    case T_PATH:
    case T_SOCKET:
    case T_GROUP:
    case T_CGROUPS:
        if (strlen(arg) >= d->size) {
            snprintf(why, whylen, "value too long (max %zu bytes)",
                     d->size - 1);
            return why;
        }
        if ((d->type == T_PATH || d->type == T_SOCKET) && arg[0] != '/') {
            return "expected an absolute path";
        }
        if (d->type == T_SOCKET && strlen(arg) > CONF_SOCKET_MAX) {
            snprintf(why, whylen, "path longer than %d bytes, the most a "
                     "Unix socket address holds", CONF_SOCKET_MAX);
            return why;
        }
        if (d->type == T_GROUP && !group_valid(arg)) {
            return "not a valid group name";
        }
        if (d->type == T_CGROUPS && cgroups_check(arg, why, whylen)) {
            return why;
        }
        strcpy(field, arg);
        break;
    case T_CPUS: {
        struct cpuset set;

        if (cpuset_parse(&set, arg) || cpuset_empty(&set)) {
            snprintf(why, whylen, "not a CPU list (e.g. 0-3,8): \"%s\"",
                     arg);
            return why;
        }
        c->managed = set;
        c->managed_set = true;
        break;
    }
    case T_KIND: {
        enum pol_kind k;

        if (pol_kind_parse(arg, &k)) {
            snprintf(why, whylen, "unknown policy \"%s\" (balanced, "
                     "performance or powersave)", arg);
            return why;
        }
        c->default_policy = k;
        break;
    }
    case T_OVERRIDE:
        if (!strcmp(arg, "performance")) {
            c->override_performance = true;
        } else if (!strcmp(arg, "off")) {
            c->override_performance = false;
        } else {
            return "expected performance or off";
        }
        break;
    case T_TURBO:
        if (conf_turbo_of(arg, &c->use_turbo, &c->saturation_turbo)) {
            return "expected no, saturated or yes";
        }
        break;
    case T_BOOL:
        if (parse_bool(arg, (bool *) field)) {
            return "expected yes or no";
        }
        break;
    case T_U32: {
        uint32_t v;

        if (parse_u32(arg, &v) || v < d->min || v > d->max) {
            snprintf(why, whylen, "expected an integer from %u to %u, "
                     "got \"%s\"", d->min, d->max, arg);
            return why;
        }
        memcpy(field, &v, sizeof v);
        break;
    }
    case T_INCLUDE:
        break;                  /* Handled by the caller. */
    }
    return NULL;
}

static int
parse_text(struct vpd_conf *c, const char *file, const char *text,
           int depth, char *err, size_t errlen)
{
    unsigned lineno = 0;
    unsigned period_line = 0, max_line = 0;
    const char *p = text;

    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t) (eol - p) : strlen(p);
        char line[CONF_MAX_LINE];
        char *save, *name, *arg, *extra, *hash;
        const struct conf_directive *d = NULL;
        const char *reason;
        char why[320];

        lineno++;
        if (len >= sizeof line) {
            snprintf(err, errlen, "%s:%u: line too long (max %d bytes)",
                     file, lineno, CONF_MAX_LINE - 1);
            return -EINVAL;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (eol != NULL);

        hash = strchr(line, '#');
        if (hash) {
            *hash = '\0';
        }
        for (char *q = line; *q; q++) {
            if (*q == '\t' || *q == '\r') {
                *q = ' ';
            } else if ((unsigned char) *q < ' ') {
                snprintf(err, errlen, "%s:%u: control character in line",
                         file, lineno);
                return -EINVAL;
            }
        }
        name = strtok_r(line, " ", &save);
        if (!name) {
            continue;
        }
        for (size_t i = 0; i < ARRAY_SIZE(directives); i++) {
            if (!strcmp(name, directives[i].name)) {
                d = &directives[i];
            }
        }
        if (!d) {
            snprintf(err, errlen, "%s:%u: unknown directive \"%.64s\"",
                     file, lineno, name);
            return -EINVAL;
        }
        arg = strtok_r(NULL, " ", &save);
        extra = strtok_r(NULL, " ", &save);
        if (!arg) {
            snprintf(err, errlen, "%s:%u: %s: missing argument", file,
                     lineno, name);
            return -EINVAL;
        }
        if (extra) {
            snprintf(err, errlen, "%s:%u: %s: too many arguments", file,
                     lineno, name);
            return -EINVAL;
        }
        if (d->type == T_INCLUDE) {
            int error = load_file(c, arg, depth + 1, file, lineno, err,
                                  errlen);

            if (error) {
                return error;
            }
            continue;
        }
        reason = apply(c, d, arg, why, sizeof why);
        if (reason) {
            snprintf(err, errlen, "%s:%u: %s: %s", file, lineno, name,
                     reason);
            return -EINVAL;
        }
        if (d->off == offsetof(struct vpd_conf, period_ms)) {
            period_line = lineno;
        } else if (d->off == offsetof(struct vpd_conf, max_period_ms)) {
            max_line = lineno;
        } else if (d->off == offsetof(struct vpd_conf, admin_group)) {
            snprintf(c->admin_group_at, sizeof c->admin_group_at, "%.256s:%u",
                     file, lineno);
        } else if (d->type == T_CPUS) {
            snprintf(c->managed_at, sizeof c->managed_at, "%.256s:%u", file,
                     lineno);
        }
    }
    if ((period_line || max_line) && c->max_period_ms < c->period_ms) {
        snprintf(err, errlen, "%s:%u: %s: max_period_ms (%u) is below "
                 "period_ms (%u)", file,
                 max_line > period_line ? max_line : period_line,
                 max_line > period_line ? "max_period_ms" : "period_ms",
                 c->max_period_ms, c->period_ms);
        return -EINVAL;
    }
    return 0;
}

int
conf_parse(struct vpd_conf *c, const char *file, const char *text,
           char *err, size_t errlen)
{
    return parse_text(c, file ? file : "(config)", text, 0, err, errlen);
}

/* Reads 'path' (a regular file of at most CONF_MAX_FILE bytes that only
 * root or vpowerd's uid can write) into a fresh string; on an error,
 * 'why' says what is wrong. */
static int
read_text(const char *path, char **out, char *why, size_t whylen)
{
    struct stat st;
    char *buf;
    size_t len;
    int error;

    error = util_read_regular(path, CONF_MAX_FILE, &buf, &len, &st);
    if (error) {
        snprintf(why, whylen, "%s", error == -EFBIG
                 ? "file larger than 1 MiB" : util_read_strerror(error));
        return error == -EFBIG ? -EINVAL : error;
    }
    error = util_check_trusted(path, &st, "configuration file",
                               "make vpowerd do anything as root", why,
                               whylen);
    if (error) {
        free(buf);
        return error;
    }
    if (strlen(buf) != len) {
        snprintf(why, whylen, "not a text file (NUL byte)");
        free(buf);
        return -EINVAL;
    }
    *out = buf;
    return 0;
}

static int
load_file(struct vpd_conf *c, const char *path, int depth,
          const char *from_file, unsigned from_line, char *err,
          size_t errlen)
{
    char *text = NULL, *full = NULL, why[512];
    int error;

    if (depth > CONF_MAX_DEPTH) {
        snprintf(err, errlen, "%s:%u: include: nested more than %d deep",
                 from_file, from_line, CONF_MAX_DEPTH);
        return -EINVAL;
    }
    /* A relative include is relative to the including file. */
    if (from_file && path[0] != '/' && strchr(from_file, '/')) {
        const char *slash = strrchr(from_file, '/');

        full = xasprintf("%.*s/%s", (int) (slash - from_file), from_file,
                         path);
        path = full;
    }
    error = read_text(path, &text, why, sizeof why);
    if (error) {
        /* The trust check's message names the file itself. */
        const char *name = error == -EPERM ? "" : path;
        const char *sep = error == -EPERM ? "" : ": ";

        if (from_file) {
            snprintf(err, errlen, "%s:%u: include: %s%s%s", from_file,
                     from_line, name, sep, why);
        } else {
            snprintf(err, errlen, "%s%s%s", name, sep, why);
        }
        free(full);
        return error;
    }
    error = parse_text(c, path, text, depth, err, errlen);
    free(text);
    free(full);
    return error;
}

int
conf_load(struct vpd_conf *c, const char *path, char *err, size_t errlen)
{
    return load_file(c, path, 0, NULL, 0, err, errlen);
}

void
conf_to_policy(const struct vpd_conf *c, struct pol_config *p)
{
    pol_config_default(p);
    p->headroom_pct = c->headroom_pct;
    if (p->powersave_headroom_pct > c->headroom_pct) {
        /* Powersave VMs are never given more room than the others. */
        p->powersave_headroom_pct = c->headroom_pct;
    }
    p->spread_ready_ppm = c->spread_ready_pct * 10000;
    p->pack_dwell_ns = (uint64_t) c->pack_dwell_ms * 1000000;
    p->min_interval_ns = (uint64_t) c->period_ms * 1000000;
    p->max_interval_ns = (uint64_t) c->max_period_ms * 1000000;
    p->allow_offline = c->allow_offline;
    p->use_turbo = c->use_turbo;
    p->saturation_turbo = c->saturation_turbo;
}

int
conf_check_system(const struct vpd_conf *c, char *err, size_t errlen)
{
    if (c->admin_group[0] && !getgrnam(c->admin_group)) {
        snprintf(err, errlen, "%s: admin_group: '%s' is not a group on this "
                 "host (create it with groupadd, or remove the directive to "
                 "allow root only)",
                 c->admin_group_at[0] ? c->admin_group_at : "(config)",
                 c->admin_group);
        return -ENOENT;
    }
    if (c->model_file[0]) {
        struct stat st;
        char why[512];
        int error = 0;

        if (stat(c->model_file, &st) < 0) {
            error = -errno;
            snprintf(why, sizeof why, "%s", strerror(errno));
        } else if (!S_ISREG(st.st_mode)) {
            error = S_ISDIR(st.st_mode) ? -EISDIR : -ENODEV;
            snprintf(why, sizeof why, "%s", util_read_strerror(error));
        } else {
            error = util_check_trusted(c->model_file, &st, "energy model",
                                       "choose what vpowerd does as root",
                                       why, sizeof why);
        }
        if (error) {
            snprintf(err, errlen, "energy model %s: %s", c->model_file, why);
            return error;
        }
    }
    return 0;
}

int
conf_check_cpus(const struct vpd_conf *c, unsigned n_cpus, char *err,
                size_t errlen)
{
    struct cpuset extra;
    char list[256], have[64];

    if (!c->managed_set) {
        return 0;
    }
    cpuset_zero(&extra);
    CPUSET_FOREACH (cpu, &c->managed) {
        if ((unsigned) cpu >= n_cpus) {
            cpuset_set(&extra, (unsigned) cpu);
        }
    }
    if (cpuset_empty(&extra)) {
        return 0;
    }
    cpuset_format(&extra, list, sizeof list);
    if (n_cpus > 1) {
        snprintf(have, sizeof have, "CPUs 0-%u", n_cpus - 1);
    } else {
        snprintf(have, sizeof have, "only CPU 0");
    }
    snprintf(err, errlen, "%s: managed_cpus: CPU%s %s do%s not exist on this "
             "host, which has %s; correct the list",
             c->managed_at[0] ? c->managed_at : "(config)",
             cpuset_count(&extra) > 1 ? "s" : "", list,
             cpuset_count(&extra) > 1 ? "" : "es", have);
    return -EINVAL;
}
