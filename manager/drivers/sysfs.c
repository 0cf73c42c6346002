/* manager/drivers/sysfs.c -- cpufreq, cpuidle and hotplug through sysfs.
 *
 * The host driver vpowerd uses on real machines.  All paths are built
 * below the instance's root (sysfs_root in vpowerd.conf), so the unit
 * tests run this exact code against fixture trees.  The kernel's files
 * are parsed strictly and a bad value fails that one CPU with -EINVAL;
 * writes are journalled first (manager/journal.h) so a crashed vpowerd
 * leaves enough behind to put the host back as it was.
 *
 * Other power agents write the same files, so every knob (a writable
 * file of one CPU) has an expected value: the one vpowerd last wrote,
 * read back, or the one it first read.  Each read and every write reads
 * it back first; another value marks the knob foreign (struct
 * drv_foreign in drv.h): logged once, counted, never written again. */

#include <config.h>

#include "manager/drivers/sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "manager/drivers/selfpin.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "manager/util.h"
#include "policy/cpuset.h"
#include "policy/num.h"

#define LOG_MODULE "sysfs"

/* vpowerd's view of one knob. */
struct knob {
    char file[48];              /* Below cpuN/. */
    char expect[JNL_VALUE_LEN]; /* Its value unless someone else wrote;
                                 * no trailing whitespace. */
    bool written;               /* 'expect' is vpowerd's write. */
    bool foreign;               /* Another writer's: hands off. */
    int64_t since_s;            /* Wall clock when 'expect' was set. */
};

struct knob_list {
    struct knob *k;
    size_t n, cap;
};

struct drv_host {
    char root[SYSFS_ROOT_MAX];
    unsigned n_cpus;
    struct jnl *jnl;            /* Not owned; NULL = no journalling. */
    struct knob_list *knobs;    /* [n_cpus] */
    int *policy_of;             /* [n_cpus] index in 'policies', -1 if
                                 * not known yet. */
    char **policies;            /* Resolved cpufreq directories. */
    struct knob_list *policy_knobs; /* [n_policies] */
    size_t n_policies;
    struct drv_foreign *foreign; /* Found so far, in order. */
    size_t n_foreign, cap_foreign;
    struct selfpin self;        /* The process's CPUs at open. */
};

static const char *const governors[] = {
    "performance", "powersave", "userspace", "ondemand", "conservative",
    "schedutil",
};

static int
parse_u64_max(const char *s, uint64_t max, uint64_t *out)
{
    return num_parse_line(s, max, out) ? -EINVAL : 0;
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

/* ---- Knobs other writers may change ------------------------------------ */

static int64_t
wall_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec;
}

static void
format_utc(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t) t;
    struct tm tm;

    if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%F %T UTC", &tm)) {
        snprintf(buf, len, "@%" PRId64, t);
    }
}

/* 'in' without trailing newlines and spaces into 'out'. */
static void
trimmed(char *out, size_t len, const char *in)
{
    size_t n;

    snprintf(out, len, "%s", in);
    n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) {
        out[--n] = '\0';
    }
}

/* The knobs cpuN/'file' is among.  The kernel links the cpufreq
 * directories of all CPUs of one policy to the same place (policyX):
 * their cpufreq knobs are one, kept per resolved directory. */
static struct knob_list *
knob_list(struct drv_host *h, unsigned cpu, const char *file)
{
    char path[SYSFS_PATH_MAX], *dir;
    size_t i;

    if (strncmp(file, "cpufreq/", 8)) {
        return &h->knobs[cpu];
    }
    if (h->policy_of[cpu] >= 0) {
        return &h->policy_knobs[h->policy_of[cpu]];
    }
    snprintf(path, sizeof path, "%s/cpu%u/cpufreq", h->root, cpu);
    dir = realpath(path, NULL);
    if (!dir) {
        return &h->knobs[cpu];
    }
    for (i = 0; i < h->n_policies; i++) {
        if (!strcmp(h->policies[i], dir)) {
            break;
        }
    }
    if (i == h->n_policies) {
        h->policies = xrealloc(h->policies,
                               (i + 1) * sizeof *h->policies);
        h->policy_knobs = xrealloc(h->policy_knobs,
                                   (i + 1) * sizeof *h->policy_knobs);
        h->policies[i] = dir;
        memset(&h->policy_knobs[i], 0, sizeof h->policy_knobs[i]);
        h->n_policies++;
    } else {
        free(dir);
    }
    h->policy_of[cpu] = (int) i;
    return &h->policy_knobs[i];
}

static struct knob *
knob_find(struct drv_host *h, unsigned cpu, const char *file)
{
    struct knob_list *l = knob_list(h, cpu, file);

    for (size_t i = 0; i < l->n; i++) {
        if (!strcmp(l->k[i].file, file)) {
            return &l->k[i];
        }
    }
    return NULL;
}

/* Sets cpuN/'file''s expected value to 'value' (as read or written). */
static struct knob *
knob_expect(struct drv_host *h, unsigned cpu, const char *file,
            const char *value, bool written)
{
    struct knob *k = knob_find(h, cpu, file);

    if (!k) {
        struct knob_list *l = knob_list(h, cpu, file);

        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 8;
            l->k = xrealloc(l->k, l->cap * sizeof *l->k);
        }
        k = &l->k[l->n++];
        memset(k, 0, sizeof *k);
        snprintf(k->file, sizeof k->file, "%s", file);
    }
    trimmed(k->expect, sizeof k->expect, value);
    k->written = written;
    k->since_s = wall_now();
    return k;
}

/* Another writer changed knob 'k' of 'cpu' to 'found': stop managing it,
 * remember and log it. */
static void
knob_foreign(struct drv_host *h, unsigned cpu, struct knob *k,
             const char *found)
{
    struct drv_foreign *f;
    char since[40], when[40];

    k->foreign = true;
    if (h->n_foreign == h->cap_foreign) {
        h->cap_foreign = h->cap_foreign ? h->cap_foreign * 2 : 8;
        h->foreign = xrealloc(h->foreign,
                              h->cap_foreign * sizeof *h->foreign);
    }
    f = &h->foreign[h->n_foreign++];
    memset(f, 0, sizeof *f);
    f->cpu = cpu;
    snprintf(f->knob, sizeof f->knob, "%s", k->file);
    /* Truncated on purpose: a report, not a value to write back. */
    snprintf(f->expected, sizeof f->expected, "%.*s",
             (int) sizeof f->expected - 1, k->expect);
    snprintf(f->found, sizeof f->found, "%.*s", (int) sizeof f->found - 1,
             found);
    f->written = k->written;
    f->since_s = k->since_s;
    f->when_s = wall_now();
    format_utc(f->since_s, since, sizeof since);
    format_utc(f->when_s, when, sizeof when);
    /* Once per knob and instance, so not rate limited. */
    LOG_WARN("cpu%u/%s changed by another writer between %s and %s: "
             "expected \"%s\" (%s), found \"%s\"; the writer is unknown "
             "(sysfs does not record it); vpowerd stops managing this "
             "knob and will not restore it (%zu foreign so far)", cpu,
             k->file, since, when, k->expect,
             k->written ? "written by vpowerd" : "as vpowerd first read it",
             found, h->n_foreign);
}

/* Compares 'cur', just read from cpuN/'file', with the knob's expected
 * value; the first read sets it.  True if the knob is foreign (found so
 * now or before). */
static bool
knob_check(struct drv_host *h, unsigned cpu, const char *file,
           const char *cur)
{
    struct knob *k = knob_find(h, cpu, file);
    char val[JNL_VALUE_LEN];

    trimmed(val, sizeof val, cur);
    if (!val[0]) {
        /* No writer's value (the kernel refuses an empty write): what a
         * torn write leaves in a fixture tree.  Not an expectation. */
        return k && k->foreign;
    }
    if (!k) {
        knob_expect(h, cpu, file, cur, false);
        return false;
    }
    if (k->foreign) {
        return true;
    }
    if (strcmp(val, k->expect)) {
        knob_foreign(h, cpu, k, val);
        return true;
    }
    return false;
}

static bool
knob_is_foreign(struct drv_host *h, unsigned cpu, const char *file)
{
    struct knob *k = knob_find(h, cpu, file);

    return k && k->foreign;
}

/* knob_check() for a number read from cpuN/'file'. */
static bool
knob_check_u32(struct drv_host *h, unsigned cpu, const char *file,
               uint32_t v)
{
    char buf[16];

    snprintf(buf, sizeof buf, "%" PRIu32, v);
    return knob_check(h, cpu, file, buf);
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

/* Reads cpuN/'file' as a decimal number in 0..'max'. */
static int
read_cpu_num(struct drv_host *h, unsigned cpu, const char *file,
             uint64_t max, uint64_t *out)
{
    char buf[64];
    int n = read_cpu(h, cpu, file, buf, sizeof buf);

    if (n == -EOVERFLOW) {
        return -EINVAL;
    }
    if (n < 0) {
        return n;
    }
    if (parse_u64_max(buf, max, out)) {
        LOG_WARN_RL("cpu%u/%s: not a number: \"%.20s\"", cpu, file, buf);
        return -EINVAL;
    }
    return 0;
}

static int
read_cpu_u32(struct drv_host *h, unsigned cpu, const char *file,
             uint32_t *out)
{
    uint64_t v;
    int error = read_cpu_num(h, cpu, file, UINT32_MAX, &v);

    if (!error) {
        *out = (uint32_t) v;
    }
    return error;
}

/* Writes 'value' to cpuN/'file' unless another writer changed it since
 * vpowerd's last write or first read (then 0, nothing written): reads it
 * back, journals the original and 'value', writes, and expects what the
 * kernel then shows. */
static int
write_cpu(struct drv_host *h, unsigned cpu, const char *file,
          const char *value)
{
    char rel[SYSFS_PATH_MAX], cur[JNL_VALUE_LEN], back[JNL_VALUE_LEN];
    int n = snprintf(rel, sizeof rel, "cpu%u/%s", cpu, file);
    int error;

    if (n < 0 || (size_t) n >= sizeof rel || n >= JNL_PATH_LEN
        || strlen(file) >= sizeof ((struct knob *) 0)->file) {
        return -ENAMETOOLONG;
    }
    /* As read, newline included, so a restore is byte-identical. */
    n = sysfs_read_raw(h->root, rel, cur, sizeof cur);
    if (n < 0) {
        return n == -EOVERFLOW ? -EINVAL : n;
    }
    if (knob_check(h, cpu, file, cur)) {
        LOG_DEBUG("%s <- %s: not written, another writer's", rel, value);
        return 0;
    }
    if (h->jnl) {
        error = jnl_note_sysfs_write(h->jnl, rel, cur, value);
        if (error) {
            LOG_ERR("%s: cannot journal original value, not writing: %s",
                    rel, strerror(-error));
            return error;
        }
    }
    error = sysfs_write(h->root, rel, value);
    if (error) {
        LOG_DEBUG("%s <- %s: %s", rel, value, strerror(-error));
        if (h->jnl) {
            /* Unchanged: the journal must expect what is there. */
            jnl_note_sysfs_write(h->jnl, rel, cur, cur);
        }
        return error;
    }
    /* The kernel may show another form of the value (a rounded
     * frequency): that is what vpowerd's write looks like from now on. */
    n = sysfs_read(h->root, rel, back, sizeof back);
    if (n < 0) {
        snprintf(back, sizeof back, "%s", value);
    }
    knob_expect(h, cpu, file, back, true);
    if (h->jnl && n >= 0 && strcmp(back, value)) {
        jnl_note_sysfs_write(h->jnl, rel, cur, back);
    }
    return 0;
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
    h->knobs = XNEWARRAY(struct knob_list, h->n_cpus);
    h->policy_of = XNEWARRAY(int, h->n_cpus);
    for (unsigned c = 0; c < h->n_cpus; c++) {
        h->policy_of[c] = -1;
    }
    /* Without an answer confine_self() changes nothing (-ENODATA). */
    (void) selfpin_init(&h->self);
    return h;
}

static int
sysfs_confine_self(struct drv_host *h, const struct cpuset *set)
{
    return selfpin_apply(&h->self, set);
}

static void
sysfs_close(struct drv_host *h)
{
    if (h) {
        for (unsigned c = 0; c < h->n_cpus; c++) {
            free(h->knobs[c].k);
        }
        for (size_t i = 0; i < h->n_policies; i++) {
            free(h->policies[i]);
            free(h->policy_knobs[i].k);
        }
        free(h->policies);
        free(h->policy_knobs);
        free(h->policy_of);
        free(h->knobs);
        free(h->foreign);
        free(h);
    }
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
    knob_check(h, cpu, "online", buf);
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
    if (knob_is_foreign(h, cpu, "online")) {
        return -EPERM;            /* Another writer's now (drv.h). */
    }
    if (h->jnl) {
        error = jnl_note_online_write(h->jnl, cpu, cur, online);
        if (error) {
            return error;
        }
    }
    /* The online state is journalled as its own kind, not as a sysfs
     * value, so write without write_cpu()'s journalling. */
    {
        char rel[32];

        snprintf(rel, sizeof rel, "cpu%u/online", cpu);
        error = sysfs_write(h->root, rel, online ? "1" : "0");
    }
    if (error) {
        if (h->jnl) {
            jnl_note_online_write(h->jnl, cpu, cur, cur);
        }
        return error;
    }
    knob_expect(h, cpu, "online", online ? "1" : "0", true);
    return 0;
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
    knob_check_u32(h, cpu, "cpufreq/scaling_min_freq", f->min_khz);
    knob_check_u32(h, cpu, "cpufreq/scaling_max_freq", f->max_khz);
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
        knob_check(h, cpu, "cpufreq/scaling_governor", buf);
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
    /* A limit another writer set stays and bounds the other one. */
    if (knob_is_foreign(h, cpu, "cpufreq/scaling_max_freq")) {
        max_khz = cur.max_khz;
        min_khz = min_khz > max_khz ? max_khz : min_khz;
    }
    if (knob_is_foreign(h, cpu, "cpufreq/scaling_min_freq")) {
        min_khz = cur.min_khz;
        max_khz = max_khz < min_khz ? min_khz : max_khz;
    }
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
        uint32_t dis = 0;
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
            error = read_cpu_num(h, cpu, file, UINT64_MAX,
                                 &idle->time_us[k]);
        }
        if (!error) {
            snprintf(file, sizeof file, "%s/disable", sub);
            error = read_cpu_u32(h, cpu, file, &dis);
            if (!error && dis > 1) {
                error = -EINVAL;
            }
            if (!error) {
                knob_check_u32(h, cpu, file, dis);
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

static size_t
sysfs_foreign(struct drv_host *h, struct drv_foreign *out, size_t max)
{
    for (size_t i = 0; i < max && i < h->n_foreign; i++) {
        out[i] = h->foreign[i];
    }
    return h->n_foreign;
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
    .foreign = sysfs_foreign,
    .set_journal = sysfs_set_journal,
    .confine_self = sysfs_confine_self,
};
