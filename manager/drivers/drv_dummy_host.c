/* manager/drivers/drv_dummy_host.c -- An in-memory host for tests and dummy
 * mode.
 *
 * Behaves like the sysfs driver on a well-behaved kernel (same argument
 * checks, clamping, CPU0 rule, governor whitelist) without touching the
 * machine, so vpowerd --host-driver=dummy and the unit tests exercise the
 * daemon's apply path anywhere.  Tests steer it through
 * manager/drivers/drv_dummy_host.h: advance idle residency, inject errors. */

#include <config.h>

#include "manager/drivers/drv_dummy_host.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manager/log.h"
#include "manager/drivers/sysfs.h"
#include "manager/util.h"
#include "policy/cpuset.h"

/* Knobs of a CPU, as bits of dummy_cpu's masks. */
enum {
    KNOB_MIN, KNOB_MAX, KNOB_GOV, KNOB_ONLINE, KNOB_IDLE0,
    KNOB_N = KNOB_IDLE0 + DRV_MAX_IDLE
};

struct dummy_cpu {
    bool online;
    struct drv_freq freq;
    struct drv_idle idle;
    uint32_t written;           /* Knobs vpowerd wrote (bit per knob). */
    uint32_t foreign;           /* Knobs another agent took over. */
};

struct dummy_inject {
    int cpu;                    /* -1 = any. */
    int err;
    unsigned count;
};

struct drv_host {
    unsigned n_cpus;
    bool has_freq;
    unsigned n_freqs;
    uint32_t freqs[32];
    struct dummy_cpu *cpus;
    struct dummy_inject inject[DUMMY_N_OPS];
    uint64_t writes;
    struct drv_foreign *foreign;  /* In the order they were taken. */
    size_t n_foreign;
    unsigned n_self;              /* confine_self calls, and the last */
    struct cpuset self;           /* set asked for. */
};

#define LOG_MODULE "dummy-host"

static int
spec_u32(const char *s, size_t len, uint32_t *out)
{
    char buf[16];

    if (!len || len >= sizeof buf) {
        return -EINVAL;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return sysfs_parse_u32(buf, out);
}

static int
parse_freqs(struct drv_host *h, const char *v, size_t len)
{
    if (len == 4 && !strncmp(v, "none", 4)) {
        h->has_freq = false;
        return 0;
    }
    h->n_freqs = 0;
    while (len) {
        const char *colon = memchr(v, ':', len);
        size_t n = colon ? (size_t) (colon - v) : len;
        uint32_t f;

        if (h->n_freqs == ARRAY_SIZE(h->freqs) || spec_u32(v, n, &f)
            || !f || (h->n_freqs && f <= h->freqs[h->n_freqs - 1])) {
            return -EINVAL;
        }
        h->freqs[h->n_freqs++] = f;
        v += n;
        len -= n;
        if (colon) {
            v++;
            len--;
            if (!len) {
                return -EINVAL;
            }
        }
    }
    return h->n_freqs ? 0 : -EINVAL;
}

static int
parse_idle(struct drv_idle *idle, const char *v, size_t len)
{
    memset(idle, 0, sizeof *idle);
    while (len) {
        const char *slash = memchr(v, '/', len);
        size_t n = slash ? (size_t) (slash - v) : len;
        const char *c1 = memchr(v, ':', n);
        const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t) (c1 + 1 - v))
                         : NULL;
        unsigned k = idle->n_states;

        if (k == DRV_MAX_IDLE || !c1 || !c2 || c1 == v
            || (size_t) (c1 - v) >= sizeof idle->name[k]
            || spec_u32(c1 + 1, (size_t) (c2 - c1 - 1), &idle->latency_us[k])
            || spec_u32(c2 + 1, n - (size_t) (c2 + 1 - v),
                        &idle->residency_us[k])) {
            return -EINVAL;
        }
        memcpy(idle->name[k], v, (size_t) (c1 - v));
        idle->n_states++;
        v += n;
        len -= n;
        if (slash) {
            v++;
            len--;
        }
    }
    return idle->n_states ? 0 : -EINVAL;
}

static struct drv_host *
dummy_open(const char *spec, char *err, size_t errlen)
{
    struct drv_host *h = XNEW(struct drv_host);
    struct drv_idle idle;
    uint32_t n_cpus = 4;
    /* vpowerd passes its sysfs_root: a path means "the defaults". */
    const char *p = spec && spec[0] != '/' ? spec : "";

    h->has_freq = true;
    parse_freqs(h, "800000:1600000:2400000", 22);
    parse_idle(&idle, "POLL:0:0/C1:2:2/C6:133:600", 26);
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t) (comma - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t vlen = eq ? n - (size_t) (eq + 1 - p) : 0;
        int error = -EINVAL;

        if (eq && eq - p == 4 && !strncmp(p, "cpus", 4)) {
            error = spec_u32(eq + 1, vlen, &n_cpus);
            if (!error && (n_cpus < 1 || n_cpus > POL_MAX_CPUS)) {
                error = -EINVAL;
            }
        } else if (eq && eq - p == 5 && !strncmp(p, "freqs", 5)) {
            error = parse_freqs(h, eq + 1, vlen);
        } else if (eq && eq - p == 4 && !strncmp(p, "idle", 4)) {
            error = parse_idle(&idle, eq + 1, vlen);
        }
        if (error) {
            snprintf(err, errlen, "dummy host: bad spec item \"%.*s\"",
                     (int) n, p);
            free(h);
            return NULL;
        }
        p += n + (comma != NULL);
    }
    h->n_cpus = n_cpus;
    h->cpus = XNEWARRAY(struct dummy_cpu, n_cpus);
    for (unsigned i = 0; i < n_cpus; i++) {
        struct dummy_cpu *c = &h->cpus[i];

        c->online = true;
        c->idle = idle;
        if (h->has_freq) {
            c->freq.hw_min_khz = c->freq.min_khz = h->freqs[0];
            c->freq.hw_max_khz = c->freq.max_khz = c->freq.cur_khz =
                h->freqs[h->n_freqs - 1];
            strcpy(c->freq.governor, "schedutil");
            c->freq.has_setspeed = true;
        }
    }
    for (int op = 0; op < DUMMY_N_OPS; op++) {
        h->inject[op].cpu = -1;
    }
    return h;
}

static void
dummy_close(struct drv_host *h)
{
    if (h) {
        free(h->foreign);
        free(h->cpus);
        free(h);
    }
}

/* Common entry check: CPU range, then an injected error if armed. */
static int
enter(struct drv_host *h, enum dummy_host_op op, unsigned cpu)
{
    struct dummy_inject *in = &h->inject[op];

    if (cpu >= h->n_cpus) {
        return -EINVAL;
    }
    if (in->count && (in->cpu < 0 || (unsigned) in->cpu == cpu)) {
        in->count--;
        return in->err;
    }
    return 0;
}

static int
dummy_n_cpus(struct drv_host *h, unsigned *n)
{
    *n = h->n_cpus;
    return 0;
}

static int
dummy_is_online(struct drv_host *h, unsigned cpu, bool *online)
{
    int error = enter(h, DUMMY_OP_IS_ONLINE, cpu);

    if (!error) {
        *online = h->cpus[cpu].online;
    }
    return error;
}

static int
dummy_set_online(struct drv_host *h, unsigned cpu, bool online)
{
    int error = enter(h, DUMMY_OP_SET_ONLINE, cpu);

    if (error) {
        return error;
    }
    if (cpu == 0 && !online) {
        return -EPERM;
    }
    if (h->cpus[cpu].online != online) {
        if (h->cpus[cpu].foreign & 1u << KNOB_ONLINE) {
            return -EPERM;        /* Another agent's (drv.h). */
        }
        h->cpus[cpu].online = online;
        h->cpus[cpu].written |= 1u << KNOB_ONLINE;
        h->writes++;
    }
    return 0;
}

static int
dummy_get_freq(struct drv_host *h, unsigned cpu, struct drv_freq *f)
{
    int error = enter(h, DUMMY_OP_GET_FREQ, cpu);

    if (error) {
        return error;
    }
    if (!h->has_freq) {
        return -ENOTSUP;
    }
    *f = h->cpus[cpu].freq;
    return 0;
}

static int
dummy_set_freq_range(struct drv_host *h, unsigned cpu, uint32_t min_khz,
                     uint32_t max_khz)
{
    int error = enter(h, DUMMY_OP_SET_FREQ, cpu);
    struct drv_freq *f;

    if (error) {
        return error;
    }
    if (!h->has_freq) {
        return -ENOTSUP;
    }
    if (min_khz > max_khz) {
        return -EINVAL;
    }
    f = &h->cpus[cpu].freq;
    min_khz = min_khz < f->hw_min_khz ? f->hw_min_khz
              : min_khz > f->hw_max_khz ? f->hw_max_khz : min_khz;
    max_khz = max_khz < f->hw_min_khz ? f->hw_min_khz
              : max_khz > f->hw_max_khz ? f->hw_max_khz : max_khz;
    /* Another agent's limit stays and bounds the other one. */
    if (h->cpus[cpu].foreign & 1u << KNOB_MAX) {
        max_khz = f->max_khz;
        min_khz = min_khz > max_khz ? max_khz : min_khz;
    }
    if (h->cpus[cpu].foreign & 1u << KNOB_MIN) {
        min_khz = f->min_khz;
        max_khz = max_khz < min_khz ? min_khz : max_khz;
    }
    h->cpus[cpu].written |= (min_khz != f->min_khz) << KNOB_MIN
                            | (max_khz != f->max_khz) << KNOB_MAX;
    f->min_khz = min_khz;
    f->max_khz = max_khz;
    /* A governor would run somewhere in the range: assume the top. */
    f->cur_khz = f->max_khz;
    h->writes++;
    return 0;
}

static int
dummy_set_governor(struct drv_host *h, unsigned cpu, const char *gov)
{
    int error = enter(h, DUMMY_OP_SET_GOVERNOR, cpu);

    if (error) {
        return error;
    }
    if (!h->has_freq) {
        return -ENOTSUP;
    }
    if (!gov || !sysfs_governor_valid(gov)) {
        return -EINVAL;
    }
    if (h->cpus[cpu].foreign & 1u << KNOB_GOV) {
        return 0;                 /* Another agent's (drv.h). */
    }
    h->cpus[cpu].written |= 1u << KNOB_GOV;
    snprintf(h->cpus[cpu].freq.governor, sizeof h->cpus[cpu].freq.governor,
             "%s", gov);
    h->writes++;
    return 0;
}

static int
dummy_get_idle(struct drv_host *h, unsigned cpu, struct drv_idle *idle)
{
    int error = enter(h, DUMMY_OP_GET_IDLE, cpu);

    if (!error) {
        *idle = h->cpus[cpu].idle;
    }
    return error;
}

static int
dummy_set_idle_disable(struct drv_host *h, unsigned cpu, unsigned state,
                       bool disable)
{
    int error = enter(h, DUMMY_OP_SET_IDLE, cpu);

    if (error) {
        return error;
    }
    if (state >= h->cpus[cpu].idle.n_states) {
        return -EINVAL;
    }
    if (h->cpus[cpu].foreign & 1u << (KNOB_IDLE0 + state)) {
        return 0;                 /* Another agent's (drv.h). */
    }
    h->cpus[cpu].written |= 1u << (KNOB_IDLE0 + state);
    h->cpus[cpu].idle.disabled[state] = disable;
    h->writes++;
    return 0;
}

void
dummy_host_inject(struct drv_host *h, enum dummy_host_op op, int cpu,
                  int err, unsigned count)
{
    if ((unsigned) op < DUMMY_N_OPS) {
        h->inject[op].cpu = cpu;
        h->inject[op].err = err < 0 ? err : -err;
        h->inject[op].count = err ? count : 0;
    }
}

int
dummy_host_advance_idle(struct drv_host *h, unsigned cpu, unsigned state,
                        uint64_t us)
{
    if (cpu >= h->n_cpus || state >= h->cpus[cpu].idle.n_states) {
        return -EINVAL;
    }
    h->cpus[cpu].idle.time_us[state] += us;
    return 0;
}

uint64_t
dummy_host_writes(const struct drv_host *h)
{
    return h->writes;
}

/* The knob bit of 'file' and its current value as text into 'cur'. */
static int
knob_of(struct drv_host *h, unsigned cpu, const char *file, char *cur,
        size_t len)
{
    struct dummy_cpu *c = &h->cpus[cpu];
    unsigned k;
    char tail;

    if (!strcmp(file, "online")) {
        snprintf(cur, len, "%d", c->online);
        return KNOB_ONLINE;
    }
    if (!strncmp(file, "cpufreq/", 8) && !h->has_freq) {
        return -ENOTSUP;
    }
    if (!strcmp(file, "cpufreq/scaling_min_freq")) {
        snprintf(cur, len, "%" PRIu32, c->freq.min_khz);
        return KNOB_MIN;
    }
    if (!strcmp(file, "cpufreq/scaling_max_freq")) {
        snprintf(cur, len, "%" PRIu32, c->freq.max_khz);
        return KNOB_MAX;
    }
    if (!strcmp(file, "cpufreq/scaling_governor")) {
        snprintf(cur, len, "%s", c->freq.governor);
        return KNOB_GOV;
    }
    if (sscanf(file, "cpuidle/state%u/disabl%c", &k, &tail) == 2
        && tail == 'e' && k < c->idle.n_states) {
        snprintf(cur, len, "%d", c->idle.disabled[k]);
        return KNOB_IDLE0 + (int) k;
    }
    return -EINVAL;
}

int
dummy_host_agent_write(struct drv_host *h, unsigned cpu, const char *file,
                       const char *value)
{
    struct dummy_cpu *c;
    struct drv_foreign *f;
    char cur[32], now[32];
    uint32_t v = 0;
    int k;

    if (cpu >= h->n_cpus || !file || !value) {
        return -EINVAL;
    }
    c = &h->cpus[cpu];
    k = knob_of(h, cpu, file, cur, sizeof cur);
    if (k < 0) {
        return k;
    }
    if (k == KNOB_GOV ? !sysfs_governor_valid(value)
        : sysfs_parse_u32(value, &v)
          || ((k == KNOB_ONLINE || k >= KNOB_IDLE0) && v > 1)
          || ((k == KNOB_MIN || k == KNOB_MAX)
              && (v < c->freq.hw_min_khz || v > c->freq.hw_max_khz))) {
        return -EINVAL;
    }
    if (k == KNOB_ONLINE) {
        c->online = v;
    } else if (k == KNOB_MIN) {
        c->freq.min_khz = v;
    } else if (k == KNOB_MAX) {
        c->freq.max_khz = v;
    } else if (k == KNOB_GOV) {
        snprintf(c->freq.governor, sizeof c->freq.governor, "%s", value);
    } else {
        c->idle.disabled[k - KNOB_IDLE0] = v;
    }
    if (k == KNOB_GOV) {
        snprintf(now, sizeof now, "%s", value);
    } else {
        snprintf(now, sizeof now, "%" PRIu32, v);
    }
    if (!strcmp(cur, now) || c->foreign & 1u << k) {
        return 0;                 /* No change vpowerd could see. */
    }
    c->foreign |= 1u << k;
    h->foreign = xrealloc(h->foreign,
                          (h->n_foreign + 1) * sizeof *h->foreign);
    f = &h->foreign[h->n_foreign++];
    memset(f, 0, sizeof *f);
    f->cpu = cpu;
    snprintf(f->knob, sizeof f->knob, "%s", file);
    snprintf(f->expected, sizeof f->expected, "%s", cur);
    snprintf(f->found, sizeof f->found, "%s", now);
    f->written = c->written & 1u << k;
    f->since_s = f->when_s = (int64_t) time(NULL);
    LOG_WARN("cpu%u/%s changed by another writer: expected \"%s\", found "
             "\"%s\"; vpowerd stops managing this knob", cpu, file, cur,
             f->found);
    return 0;
}

static size_t
dummy_foreign(struct drv_host *h, struct drv_foreign *out, size_t max)
{
    for (size_t i = 0; i < max && i < h->n_foreign; i++) {
        out[i] = h->foreign[i];
    }
    return h->n_foreign;
}

/* Records the set: the process is the caller's, not the modelled host's. */
static int
dummy_confine_self(struct drv_host *h, const struct cpuset *set)
{
    h->self = *set;
    h->n_self++;
    return 0;
}

unsigned
dummy_host_self(const struct drv_host *h, struct cpuset *set)
{
    *set = h->self;
    return h->n_self;
}

const struct drv_host_ops drv_host_dummy = {
    .name = "dummy",
    .open = dummy_open,
    .close = dummy_close,
    .n_cpus = dummy_n_cpus,
    .is_online = dummy_is_online,
    .set_online = dummy_set_online,
    .get_freq = dummy_get_freq,
    .set_freq_range = dummy_set_freq_range,
    .set_governor = dummy_set_governor,
    .get_idle = dummy_get_idle,
    .set_idle_disable = dummy_set_idle_disable,
    .foreign = dummy_foreign,
    .confine_self = dummy_confine_self,
};
