/* manager/drivers/housekeeping_stats.c -- Readers of the housekeeping driver:
 * interrupts per CPU, CPU pressure and the confined groups' CPU time.
 *
 * /proc/interrupts: a header of "CPUn" columns (online CPUs only, so the
 * numbers may have gaps), then one row per source: "LABEL:" followed by
 * one count per column and a description.  Rows with fewer counts (ERR,
 * MIS) are system-wide and not per CPU; they are skipped. */

#include <config.h>

#include "manager/drivers/housekeeping_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manager/log.h"
#include "manager/util.h"

#define LOG_MODULE "hk"

struct irqtab {
    char *text;
    char *rows;                 /* After the header line. */
    unsigned ncol;
    unsigned col_cpu[POL_MAX_CPUS];
};

/* Reads /proc/interrupts and its header. */
static int
irqtab_load(struct hk *hk, struct irqtab *t)
{
    char path[HK_PATH_MAX], *nl, *p;
    int n;

    snprintf(path, sizeof path, "%s/interrupts", hk->proc_root);
    n = hk_read_alloc(hk, path, &t->text);
    if (n < 0) {
        hk_seterr(hk, "%s: %s", path, strerror(-n));
        return n;
    }
    nl = strchr(t->text, '\n');
    t->rows = nl ? nl + 1 : t->text + n;
    if (nl) {
        *nl = '\0';
    }
    t->ncol = 0;
    for (p = t->text; *p;) {
        uint32_t cpu;
        char tok[32];
        int used;

        if (sscanf(p, " %31s%n", tok, &used) != 1) {
            break;
        }
        p += used;
        if (strncmp(tok, "CPU", 3) || hk_parse_uint(tok + 3, &cpu)
            || cpu >= POL_MAX_CPUS || t->ncol >= POL_MAX_CPUS) {
            hk_seterr(hk, "%s: bad header column '%s'", path, tok);
            free(t->text);
            return -EINVAL;
        }
        t->col_cpu[t->ncol++] = cpu;
    }
    if (!t->ncol) {
        hk_seterr(hk, "%s: no CPU columns in the header", path);
        free(t->text);
        return -EINVAL;
    }
    return 0;
}

/* Parses the row at '*p' (advanced to the next row): its label, up to
 * ncol counts ('*got' of them) and where the description starts. */
static int
irqtab_row(const struct irqtab *t, char **p, char *label, size_t llen,
           uint64_t *counts, unsigned *got, char **desc)
{
    char *line = *p, *nl = strchr(line, '\n'), *colon, *q;

    *p = nl ? nl + 1 : line + strlen(line);
    if (nl) {
        *nl = '\0';
    }
    while (*line == ' ') {
        line++;
    }
    colon = strchr(line, ':');
    if (!colon || colon == line || (size_t) (colon - line) >= llen) {
        return -EINVAL;
    }
    snprintf(label, llen, "%.*s", (int) (colon - line), line);
    *got = 0;
    for (q = colon + 1; *got < t->ncol;) {
        char *end;
        unsigned long long v;

        while (*q == ' ') {
            q++;
        }
        if (!isdigit((unsigned char) *q)) {
            break;
        }
        v = strtoull(q, &end, 10);
        if (*end && *end != ' ') {
            return -EINVAL;
        }
        counts[(*got)++] = v;
        q = end;
    }
    while (*q == ' ') {
        q++;
    }
    *desc = q;
    return 0;
}

int
hk_irq_counts(struct hk *hk, uint64_t *counts, size_t n)
{
    struct irqtab *t = XNEW(struct irqtab);
    uint64_t *row = XNEWARRAY(uint64_t, POL_MAX_CPUS);
    char label[32], *p, *desc;
    unsigned got, lineno = 1;
    int error;
    bool loaded;

    hk->err[0] = '\0';
    error = irqtab_load(hk, t);
    loaded = !error;
    memset(counts, 0, n * sizeof *counts);
    for (p = t->rows; !error && *p;) {
        lineno++;
        if (irqtab_row(t, &p, label, sizeof label, row, &got, &desc)) {
            hk_seterr(hk, "%s/interrupts:%u: not an interrupt row",
                      hk->proc_root, lineno);
            error = -EINVAL;
            break;
        }
        if (got != t->ncol) {
            continue;
        }
        for (unsigned c = 0; c < t->ncol; c++) {
            if (t->col_cpu[c] < n) {
                counts[t->col_cpu[c]] += row[c];
            }
        }
    }
    if (loaded) {
        free(t->text);
    }
    error = error ? error : (int) t->ncol;
    free(row);
    free(t);
    return error;
}

int
hk_irq_cpus(struct hk *hk, struct cpuset *cpus)
{
    struct irqtab *t = XNEW(struct irqtab);
    int error = irqtab_load(hk, t);

    cpuset_zero(cpus);
    if (!error) {
        for (unsigned c = 0; c < t->ncol; c++) {
            cpuset_set(cpus, t->col_cpu[c]);
        }
        free(t->text);
    }
    free(t);
    return error;
}

void
hk_irq_name(struct hk *hk, unsigned irq, char *buf, size_t len)
{
    struct irqtab *t = XNEW(struct irqtab);
    uint64_t *row = XNEWARRAY(uint64_t, POL_MAX_CPUS);
    char label[32], want[16], *p, *desc;
    unsigned got;

    snprintf(buf, len, "?");
    snprintf(want, sizeof want, "%u", irq);
    if (!irqtab_load(hk, t)) {
        for (p = t->rows; *p;) {
            if (!irqtab_row(t, &p, label, sizeof label, row, &got, &desc)
                && !strcmp(label, want)) {
                size_t o = 0;

                /* The description with runs of spaces folded. */
                for (; *desc && o + 1 < len; desc++) {
                    if (*desc != ' ' || (o && buf[o - 1] != ' ')) {
                        buf[o++] = (char) (isprint((unsigned char) *desc)
                                           ? *desc : '?');
                    }
                }
                while (o && buf[o - 1] == ' ') {
                    o--;
                }
                buf[o] = '\0';
                break;
            }
        }
        free(t->text);
    }
    free(row);
    free(t);
}

/* ---- Pressure and CPU time ---------------------------------------------- */

/* True if 'g' lies inside another listed group (counted there). */
static bool
nested(const struct hk *hk, const char *g)
{
    for (size_t i = 0; i < hk->n_groups; i++) {
        size_t l = strlen(hk->groups[i]);

        if (l < strlen(g) && !strncmp(hk->groups[i], g, l) && g[l] == '/') {
            return true;
        }
    }
    return false;
}

static int
parse_pressure(struct hk *hk, const char *path, struct hk_pressure *p)
{
    char buf[1024];
    double avg10, a60, a300;
    uint64_t total;
    int n = hk->ops->read(hk->ops_aux, path, buf, sizeof buf);

    if (n < 0) {
        return n;
    }
    if (sscanf(buf, "some avg10=%lf avg60=%lf avg300=%lf total=%" SCNu64,
               &avg10, &a60, &a300, &total) != 4
        || !(avg10 >= 0 && avg10 <= 100)) {
        hk_seterr(hk, "%s: not a pressure file: '%.60s'", path, buf);
        return -EINVAL;
    }
    if (avg10 > p->some_avg10) {
        p->some_avg10 = avg10;
    }
    p->some_total_us += total;
    return 0;
}

/* Largest tasks file read (one thread id per line). */
#define HK_TASKS_MAX (256 * 1024)

/* Adds to '*ns' the run_delay (time spent runnable but waiting for a
 * CPU, /proc/TID/schedstat's second field) of every thread in the v1
 * cgroup directory 'dir' and its subgroups.  A thread that exits
 * meanwhile is skipped. */
static int
v1_delay(struct hk *hk, const char *dir, int depth, uint64_t *ns)
{
    char tasks[HK_PATH_MAX], path[HK_PATH_MAX], sb[128];
    char *buf = malloc(HK_TASKS_MAX);
    uint64_t run, delay;
    struct dirent *e;
    DIR *dp;
    int n;

    if (!buf) {
        return -ENOMEM;
    }
    snprintf(tasks, sizeof tasks, "%s/tasks", dir);
    n = hk->ops->read(hk->ops_aux, tasks, buf, HK_TASKS_MAX);
    if (n < 0 && n != -ENOENT) {
        free(buf);
        hk_seterr(hk, "%s: %s", tasks, strerror(-n));
        return n;
    }
    for (char *p = n < 0 ? "" : buf, *end; *p; p = end) {
        unsigned long tid = strtoul(p, &end, 10);

        if (end == p || (*end && *end != '\n')) {
            hk_seterr(hk, "%s: not a thread id list", tasks);
            free(buf);
            return -EINVAL;
        }
        end += *end == '\n';
        snprintf(path, sizeof path, "%s/%lu/schedstat", hk->proc_root, tid);
        if (hk->ops->read(hk->ops_aux, path, sb, sizeof sb) > 0
            && sscanf(sb, "%" SCNu64 " %" SCNu64, &run, &delay) == 2) {
            *ns += delay;
        }
    }
    free(buf);
    dp = depth < 8 ? opendir(dir) : NULL;
    while (dp && (e = readdir(dp))) {
        int error;

        if (e->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (!hk_exists(path, true)) {
            continue;
        }
        error = v1_delay(hk, path, depth + 1, ns);
        if (error) {
            closedir(dp);
            return error;
        }
    }
    if (dp) {
        closedir(dp);
    }
    return 0;
}

/* cgroup v1 keeps no pressure per group, and the system's
 * /proc/pressure/cpu also counts the guests' vCPU threads waiting on the
 * CPUs they were packed onto: spreading on it would undo every packing.
 * So the confined groups' own waiting stands for it: their summed
 * run_delay's growth over the last 10 s (or since the first call, when
 * that is more recent), in percent of that wall time, capped at 100
 * and 0 on the first call.  A window of seconds, as avg10 is, so one
 * period's burst (a process starting) is not read as host work that
 * keeps waiting, and the packing it would undo is not redone and undone
 * period after period. */
static int
v1_pressure(struct hk *hk, struct hk_pressure *out)
{
    char dir[HK_PATH_MAX];
    const struct hk_v1_reading *old;
    uint64_t ns = 0, now;
    struct timespec ts;
    unsigned k;
    int error;

    for (size_t g = 0; g < hk->n_groups; g++) {
        if (nested(hk, hk->groups[g])) {
            continue;
        }
        snprintf(dir, sizeof dir, "%s/cpuset/%s", hk->cgroup_root,
                 hk->groups[g]);
        error = v1_delay(hk, dir, 0, &ns);
        if (error) {
            return error;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
    if (!hk->v1_n) {
        hk->v1_waited_ns = ns;
    } else if (ns > hk->v1_delay_ns) {
        hk->v1_waited_ns += ns - hk->v1_delay_ns;
    }
    hk->v1_delay_ns = ns;
    /* The oldest reading inside the window: the newest when none is
     * (periods over 10 s), the oldest kept when all are. */
    old = NULL;
    for (unsigned i = 0; i < hk->v1_n; i++) {
        k = (hk->v1_head + HK_V1_RING - i) % HK_V1_RING;
        if (old && now - hk->v1_ring[k].wall_ns > HK_V1_WINDOW_NS) {
            break;
        }
        old = &hk->v1_ring[k];
    }
    if (old && now > old->wall_ns) {
        double pct = (double) (hk->v1_waited_ns - old->waited_ns) * 100.0
                     / (double) (now - old->wall_ns);

        out->some_avg10 = pct > 100.0 ? 100.0 : pct;
    }
    out->some_total_us = hk->v1_waited_ns / 1000;
    hk->v1_head = hk->v1_n ? (hk->v1_head + 1) % HK_V1_RING : 0;
    hk->v1_ring[hk->v1_head] = (struct hk_v1_reading) {
        .waited_ns = hk->v1_waited_ns, .wall_ns = now };
    if (hk->v1_n < HK_V1_RING) {
        hk->v1_n++;
    }
    return 0;
}

int
hk_cpu_pressure(struct hk *hk, struct hk_pressure *out)
{
    char path[HK_PATH_MAX];
    bool any = false;
    int error;

    hk->err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (hk->mode == HK_MODE_V1) {
        return v1_pressure(hk, out);
    }
    if (hk->mode == HK_MODE_V2 || hk->mode == HK_MODE_SYSTEMD) {
        for (size_t g = 0; g < hk->n_groups; g++) {
            if (nested(hk, hk->groups[g])) {
                continue;
            }
            snprintf(path, sizeof path, "%s/%s/cpu.pressure",
                     hk->cgroup_root, hk->groups[g]);
            error = parse_pressure(hk, path, out);
            if (error == -ENOENT) {
                continue;
            }
            if (error) {
                return error;
            }
            any = true;
        }
        if (any) {
            return 0;
        }
    }
    snprintf(path, sizeof path, "%s/pressure/cpu", hk->proc_root);
    error = parse_pressure(hk, path, out);
    if (error && error != -EINVAL) {
        hk_seterr(hk, "%s: %s", path, strerror(-error));
    }
    return error;
}

static int
group_time(struct hk *hk, const char *g, uint64_t *ns)
{
    char path[HK_PATH_MAX], buf[4096];
    const char *u;
    uint64_t v;
    int n;

    if (hk->mode == HK_MODE_V1) {
        snprintf(path, sizeof path, "%s/cpuacct/%s/cpuacct.usage",
                 hk->cgroup_root, g);
    } else {
        snprintf(path, sizeof path, "%s/%s/cpu.stat", hk->cgroup_root, g);
    }
    n = hk->ops->read(hk->ops_aux, path, buf, sizeof buf);
    if (n == -ENOENT) {
        return 0;
    }
    if (n < 0) {
        hk_seterr(hk, "%s: %s", path, strerror(-n));
        return n;
    }
    if (hk->mode == HK_MODE_V1) {
        u = buf;
    } else {
        u = strstr(buf, "usage_usec ");
        u = u && (u == buf || u[-1] == '\n') ? u + 11 : NULL;
    }
    if (!u || sscanf(u, "%" SCNu64, &v) != 1 || !isdigit((unsigned char) *u)
        || (hk->mode == HK_MODE_V1 && strspn(u, "0123456789") != strlen(u))) {
        hk_seterr(hk, "%s: no CPU usage in '%.60s'", path, buf);
        return -EINVAL;
    }
    *ns += hk->mode == HK_MODE_V1 ? v : v * 1000;
    return 0;
}

int
hk_cpu_time(struct hk *hk, uint64_t *ns)
{
    hk->err[0] = '\0';
    *ns = 0;
    if (hk->mode == HK_MODE_NONE) {
        return -ENOTSUP;
    }
    for (size_t g = 0; g < hk->n_groups; g++) {
        int error;

        if (nested(hk, hk->groups[g])) {
            continue;
        }
        error = group_time(hk, hk->groups[g], ns);
        if (error) {
            return error;
        }
    }
    return 0;
}
