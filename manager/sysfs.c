/* manager/sysfs.c -- cpufreq, cpuidle and hotplug through sysfs.
 *
 * The host driver vpowerd uses on real machines.  All paths are built
 * below the instance's root (sysfs_root in vpowerd.conf), so the unit
 * tests run this exact code against fixture trees.  The kernel's files
 * are parsed strictly and a bad value fails that one CPU with -EINVAL;
 * writes are journalled first (manager/journal.h) so a crashed vpowerd
 * leaves enough behind to put the host back as it was. */

#include <config.h>

#include "manager/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/journal.h"
#include "manager/log.h"
#include "manager/util.h"
#include "policy/cpuset.h"

#define LOG_MODULE "sysfs"

struct drv_host {
    char root[SYSFS_ROOT_MAX];
    unsigned n_cpus;
    struct jnl *jnl;            /* Not owned; NULL = no journalling. */
};

static const char *const governors[] = {
    "performance", "powersave", "userspace", "ondemand", "conservative",
    "schedutil",
};

/* ---- File helpers ---------------------------------------------------- */

static int
build_path(char *out, const char *root, const char *rel)
{
    int n = snprintf(out, SYSFS_PATH_MAX, "%s/%s", root, rel);

    if (n < 0 || n >= SYSFS_PATH_MAX) {
        return -ENAMETOOLONG;
    }
    return 0;
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
    return error ? error : sysfs_read_file(path, buf, len);
}

int
sysfs_read_file(const char *path, char *buf, size_t len)
{
    size_t got = 0;
    int fd, error;

    if (len < 2) {
        return -EINVAL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
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
    if (got && buf[got - 1] == '\n') {
        buf[--got] = '\0';
    }
    error = (int) got;
out:
    close(fd);
    return error;
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
     * by kernfs, as with a shell's "echo > file". */
    fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
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

static int
parse_u64_max(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;

    if (*p < '0' || *p > '9') {
        return -EINVAL;           /* Empty, sign or text. */
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned) (*p - '0');

        if (v > (max - d) / 10) {
            return -EINVAL;
        }
        v = v * 10 + d;
    }
    while (*p == '\n' || *p == ' ') {
        p++;
    }
    if (*p) {
        return -EINVAL;
    }
    *out = v;
    return 0;
}

int
sysfs_parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    int error = parse_u64_max(s, UINT32_MAX, &v);

    if (!error) {
        *out = (uint32_t) v;
    }
    return error;
}

int
sysfs_parse_u64(const char *s, uint64_t *out)
{
    return parse_u64_max(s, UINT64_MAX, out);
}

bool
sysfs_governor_valid(const char *gov)
{
    for (size_t i = 0; i < ARRAY_SIZE(governors); i++) {
        if (!strcmp(gov, governors[i])) {
            return true;
        }
    }
    return false;
}

/* ---- Per-CPU helpers -------------------------------------------------- */

static int
read_cpu(struct drv_host *h, unsigned cpu, const char *file, char *buf,
         size_t len)
{
    char rel[SYSFS_PATH_MAX];
    int n = snprintf(rel, sizeof rel, "cpu%u/%s", cpu, file);

    if (n < 0 || (size_t) n >= sizeof rel) {
        return -ENAMETOOLONG;
    }
    return sysfs_read(h->root, rel, buf, len);
}

static int
read_cpu_u32(struct drv_host *h, unsigned cpu, const char *file,
             uint32_t *out)
{
    char buf[64];
    int n = read_cpu(h, cpu, file, buf, sizeof buf);

    if (n == -EOVERFLOW) {
        return -EINVAL;
    }
    if (n < 0) {
        return n;
    }
    if (sysfs_parse_u32(buf, out)) {
        LOG_WARN_RL("cpu%u/%s: not a number: \"%.20s\"", cpu, file, buf);
        return -EINVAL;
    }
    return 0;
}

static int
read_cpu_u64(struct drv_host *h, unsigned cpu, const char *file,
             uint64_t *out)
{
    char buf[64];
    int n = read_cpu(h, cpu, file, buf, sizeof buf);

    if (n == -EOVERFLOW) {
        return -EINVAL;
    }
    if (n < 0) {
        return n;
    }
    if (sysfs_parse_u64(buf, out)) {
        LOG_WARN_RL("cpu%u/%s: not a number: \"%.20s\"", cpu, file, buf);
        return -EINVAL;
    }
    return 0;
}

/* Writes 'value' to cpuN/'file', journalling the original first. */
static int
write_cpu(struct drv_host *h, unsigned cpu, const char *file,
          const char *value)
{
    char rel[SYSFS_PATH_MAX];
    int n = snprintf(rel, sizeof rel, "cpu%u/%s", cpu, file);
    int error;

    if (n < 0 || (size_t) n >= sizeof rel || n >= JNL_PATH_LEN) {
        return -ENAMETOOLONG;
    }
    if (h->jnl && !jnl_has_sysfs(h->jnl, rel, NULL)) {
        char orig[JNL_VALUE_LEN];

        n = sysfs_read(h->root, rel, orig, sizeof orig);
        if (n < 0) {
            return n == -EOVERFLOW ? -EINVAL : n;
        }
        error = jnl_record_sysfs(h->jnl, rel, orig);
        if (error) {
            LOG_ERR("%s: cannot journal original value, not writing: %s",
                    rel, strerror(-error));
            return error;
        }
    }
    error = sysfs_write(h->root, rel, value);
    if (error) {
        LOG_DEBUG("%s <- %s: %s", rel, value, strerror(-error));
    }
    return error;
}

static bool
cpu_has_dir(struct drv_host *h, unsigned cpu, const char *sub)
{
    char path[SYSFS_PATH_MAX];
    struct stat st;
    int n = snprintf(path, sizeof path, "%s/cpu%u%s%s", h->root, cpu,
                     *sub ? "/" : "", sub);

    return n > 0 && (size_t) n < sizeof path && !stat(path, &st)
           && S_ISDIR(st.st_mode);
}

/* ---- Driver ------------------------------------------------------------ */

static struct drv_host *
sysfs_open(const char *root, char *err, size_t errlen)
{
    struct drv_host *h;
    struct cpuset possible;
    char buf[SYSFS_READ_MAX];
    int n, last = -1;

    if (!root || !*root) {
        root = SYSFS_DEFAULT_ROOT;
    }
    if (strlen(root) >= SYSFS_ROOT_MAX) {
        snprintf(err, errlen, "sysfs root too long (max %d bytes)",
                 SYSFS_ROOT_MAX - 1);
        return NULL;
    }
    n = sysfs_read(root, "possible", buf, sizeof buf);
    if (n < 0) {
        snprintf(err, errlen, "%s/possible: %s", root, strerror(-n));
        return NULL;
    }
    if (cpuset_parse(&possible, buf) || cpuset_empty(&possible)) {
        snprintf(err, errlen, "%s/possible: not a CPU list: \"%.40s\"",
                 root, buf);
        return NULL;
    }
    CPUSET_FOREACH (cpu, &possible) {
        last = cpu;
    }
    h = XNEW(struct drv_host);
    snprintf(h->root, sizeof h->root, "%s", root);
    h->n_cpus = (unsigned) last + 1;
    return h;
}

static void
sysfs_close(struct drv_host *h)
{
    free(h);
}

static int
sysfs_n_cpus(struct drv_host *h, unsigned *n)
{
    *n = h->n_cpus;
    return 0;
}

static int
sysfs_is_online(struct drv_host *h, unsigned cpu, bool *online)
{
    char buf[16];
    int n;

    if (cpu >= h->n_cpus) {
        return -EINVAL;
    }
    n = read_cpu(h, cpu, "online", buf, sizeof buf);
    if (n == -ENOENT) {
        /* No hotplug control (CPU0, or a kernel without it): it is
         * online if it exists at all. */
        if (!cpu_has_dir(h, cpu, "")) {
            return -ENOENT;
        }
        *online = true;
        return 0;
    }
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (!strcmp(buf, "1")) {
        *online = true;
    } else if (!strcmp(buf, "0")) {
        *online = false;
    } else {
        LOG_WARN_RL("cpu%u/online: expected 0 or 1, got \"%.20s\"", cpu,
                    buf);
        return -EINVAL;
    }
    return 0;
}

static int
sysfs_set_online(struct drv_host *h, unsigned cpu, bool online)
{
    bool cur;
    int error;

    if (cpu >= h->n_cpus) {
        return -EINVAL;
    }
    if (cpu == 0 && !online) {
        return -EPERM;            /* Never, whatever the kernel allows. */
    }
    error = sysfs_is_online(h, cpu, &cur);
    if (error) {
        return error;
    }
    if (cur == online) {
        return 0;
    }
    if (h->jnl) {
        error = jnl_record_online(h->jnl, cpu, cur);
        if (error) {
            return error;
        }
    }
    /* The online state is journalled as its own kind, not as a sysfs
     * value, so write without write_cpu()'s journalling. */
    {
        char rel[32];

        snprintf(rel, sizeof rel, "cpu%u/online", cpu);
        return sysfs_write(h->root, rel, online ? "1" : "0");
    }
}

static int
sysfs_get_freq(struct drv_host *h, unsigned cpu, struct drv_freq *f)
{
    char buf[SYSFS_READ_MAX];
    int error, n;

    if (cpu >= h->n_cpus) {
        return -EINVAL;
    }
    if (!cpu_has_dir(h, cpu, "cpufreq")) {
        return cpu_has_dir(h, cpu, "") ? -ENOTSUP : -ENOENT;
    }
    memset(f, 0, sizeof *f);
    if ((error = read_cpu_u32(h, cpu, "cpufreq/scaling_min_freq",
                              &f->min_khz))
        || (error = read_cpu_u32(h, cpu, "cpufreq/scaling_max_freq",
                                 &f->max_khz))
        || (error = read_cpu_u32(h, cpu, "cpufreq/cpuinfo_min_freq",
                                 &f->hw_min_khz))
        || (error = read_cpu_u32(h, cpu, "cpufreq/cpuinfo_max_freq",
                                 &f->hw_max_khz))) {
        return error;
    }
    if (f->min_khz > f->max_khz || f->hw_min_khz > f->hw_max_khz
        || f->hw_max_khz == 0) {
        LOG_WARN_RL("cpu%u/cpufreq: inconsistent ranges", cpu);
        return -EINVAL;
    }
    /* scaling_cur_freq is missing on some drivers: 0 means unknown. */
    error = read_cpu_u32(h, cpu, "cpufreq/scaling_cur_freq", &f->cur_khz);
    if (error && error != -ENOENT) {
        return error;
    }
    n = read_cpu(h, cpu, "cpufreq/scaling_governor", buf, sizeof buf);
    if (n < 0 && n != -ENOENT) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (n >= (int) sizeof f->governor) {
        return -EINVAL;
    }
    if (n > 0) {
        memcpy(f->governor, buf, (size_t) n + 1);
    }
    n = read_cpu(h, cpu, "cpufreq/scaling_available_governors", buf,
                 sizeof buf);
    if (n > 0) {
        for (char *save, *tok = strtok_r(buf, " \n", &save); tok;
             tok = strtok_r(NULL, " \n", &save)) {
            if (!strcmp(tok, "userspace")) {
                f->has_setspeed = true;
            }
        }
    }
    return 0;
}

static int
sysfs_set_freq_range(struct drv_host *h, unsigned cpu, uint32_t min_khz,
                     uint32_t max_khz)
{
    struct drv_freq cur;
    char vmin[16], vmax[16];
    int error;

    if (min_khz > max_khz) {
        return -EINVAL;
    }
    error = sysfs_get_freq(h, cpu, &cur);
    if (error) {
        return error;
    }
    min_khz = min_khz < cur.hw_min_khz ? cur.hw_min_khz : min_khz;
    min_khz = min_khz > cur.hw_max_khz ? cur.hw_max_khz : min_khz;
    max_khz = max_khz < cur.hw_min_khz ? cur.hw_min_khz : max_khz;
    max_khz = max_khz > cur.hw_max_khz ? cur.hw_max_khz : max_khz;
    snprintf(vmin, sizeof vmin, "%" PRIu32, min_khz);
    snprintf(vmax, sizeof vmax, "%" PRIu32, max_khz);

    /* Raising: max first, so the new min never exceeds the old max.
     * Lowering: min first, so the new max never goes below the old min.
     * Either way the kernel sees min <= max after every write. */
    if (max_khz >= cur.max_khz) {
        if (max_khz != cur.max_khz) {
            error = write_cpu(h, cpu, "cpufreq/scaling_max_freq", vmax);
        }
        if (!error && min_khz != cur.min_khz) {
            error = write_cpu(h, cpu, "cpufreq/scaling_min_freq", vmin);
        }
    } else {
        if (min_khz != cur.min_khz) {
            error = write_cpu(h, cpu, "cpufreq/scaling_min_freq", vmin);
        }
        if (!error) {
            error = write_cpu(h, cpu, "cpufreq/scaling_max_freq", vmax);
        }
    }
    return error;
}

static int
sysfs_set_governor(struct drv_host *h, unsigned cpu, const char *gov)
{
    char buf[SYSFS_READ_MAX];
    bool listed = false;
    int n;

    if (cpu >= h->n_cpus || !gov || !sysfs_governor_valid(gov)) {
        return -EINVAL;
    }
    if (!cpu_has_dir(h, cpu, "cpufreq")) {
        return cpu_has_dir(h, cpu, "") ? -ENOTSUP : -ENOENT;
    }
    n = read_cpu(h, cpu, "cpufreq/scaling_available_governors", buf,
                 sizeof buf);
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    for (char *save, *tok = strtok_r(buf, " \n", &save); tok;
         tok = strtok_r(NULL, " \n", &save)) {
        if (!strcmp(tok, gov)) {
            listed = true;
        }
    }
    if (!listed) {
        return -EINVAL;           /* Valid name, not offered here. */
    }
    return write_cpu(h, cpu, "cpufreq/scaling_governor", gov);
}

static int
read_idle_name(struct drv_host *h, unsigned cpu, unsigned k, char *name,
               size_t len)
{
    char file[64], buf[64];
    int n;

    snprintf(file, sizeof file, "cpuidle/state%u/name", k);
    n = read_cpu(h, cpu, file, buf, sizeof buf);
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (n == 0 || (size_t) n >= len) {
        return -EINVAL;
    }
    for (int i = 0; i < n; i++) {
        if ((unsigned char) buf[i] < 0x20 || buf[i] == 0x7f) {
            return -EINVAL;
        }
    }
    memcpy(name, buf, (size_t) n + 1);
    return 0;
}

static int
sysfs_get_idle(struct drv_host *h, unsigned cpu, struct drv_idle *idle)
{
    unsigned k;

    if (cpu >= h->n_cpus) {
        return -EINVAL;
    }
    if (!cpu_has_dir(h, cpu, "cpuidle")) {
        return cpu_has_dir(h, cpu, "") ? -ENOTSUP : -ENOENT;
    }
    memset(idle, 0, sizeof *idle);
    for (k = 0; k < DRV_MAX_IDLE; k++) {
        char file[64], sub[32];
        uint32_t dis;
        int error;

        snprintf(sub, sizeof sub, "cpuidle/state%u", k);
        if (!cpu_has_dir(h, cpu, sub)) {
            break;
        }
        error = read_idle_name(h, cpu, k, idle->name[k], sizeof idle->name[k]);
        if (!error) {
            snprintf(file, sizeof file, "%s/latency", sub);
            error = read_cpu_u32(h, cpu, file, &idle->latency_us[k]);
        }
        if (!error) {
            snprintf(file, sizeof file, "%s/residency", sub);
            error = read_cpu_u32(h, cpu, file, &idle->residency_us[k]);
        }
        if (!error) {
            snprintf(file, sizeof file, "%s/time", sub);
            error = read_cpu_u64(h, cpu, file, &idle->time_us[k]);
        }
        if (!error) {
            snprintf(file, sizeof file, "%s/disable", sub);
            error = read_cpu_u32(h, cpu, file, &dis);
            if (!error && dis > 1) {
                error = -EINVAL;
            }
            idle->disabled[k] = dis == 1;
        }
        if (error) {
            LOG_WARN_RL("cpu%u/%s: unreadable: %s", cpu, sub,
                        strerror(-error));
            return error;
        }
    }
    idle->n_states = k;
    return 0;
}

static int
sysfs_set_idle_disable(struct drv_host *h, unsigned cpu, unsigned state,
                       bool disable)
{
    char sub[64];

    if (cpu >= h->n_cpus || state >= DRV_MAX_IDLE) {
        return -EINVAL;
    }
    snprintf(sub, sizeof sub, "cpuidle/state%u", state);
    if (!cpu_has_dir(h, cpu, sub)) {
        return cpu_has_dir(h, cpu, "cpuidle") ? -EINVAL : -ENOTSUP;
    }
    snprintf(sub, sizeof sub, "cpuidle/state%u/disable", state);
    return write_cpu(h, cpu, sub, disable ? "1" : "0");
}

void
sysfs_set_journal(struct drv_host *h, struct jnl *j)
{
    h->jnl = j;
}

const char *
sysfs_root(const struct drv_host *h)
{
    return h->root;
}

const struct drv_host_ops drv_host_sysfs = {
    .name = "sysfs",
    .caps = DRV_HOST_SYSFS_TREE,
    .open = sysfs_open,
    .close = sysfs_close,
    .n_cpus = sysfs_n_cpus,
    .is_online = sysfs_is_online,
    .set_online = sysfs_set_online,
    .get_freq = sysfs_get_freq,
    .set_freq_range = sysfs_set_freq_range,
    .set_governor = sysfs_set_governor,
    .get_idle = sysfs_get_idle,
    .set_idle_disable = sysfs_set_idle_disable,
    .set_journal = sysfs_set_journal,
};
