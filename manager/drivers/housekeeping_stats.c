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

/* One parsed row of /proc/interrupts, for irqtab_walk()'s visitor:
 * 'got' counts (of the table's 'ncol'), in header column order. */
struct irqrow {
    const struct irqtab *t;
    char label[32];
    uint64_t *counts;
    unsigned got;
    char *desc;
};

/* Calls 'visit' for each row of /proc/interrupts until it returns
 * nonzero.  A row that does not parse is an error when 'strict' (named
 * by line in hk's error), skipped otherwise.  Returns the number of CPU
 * columns, or a negative errno. */
static int
irqtab_walk(struct hk *hk, bool strict,
            int (*visit)(const struct irqrow *r, void *aux), void *aux)
{
    struct irqtab *t = XNEW(struct irqtab);
    struct irqrow r = { .t = t };
    unsigned lineno = 1;
    char *p;
    int error = irqtab_load(hk, t);

    if (error) {
        free(t);
        return error;
    }
    r.counts = XNEWARRAY(uint64_t, POL_MAX_CPUS);
    for (p = t->rows; *p;) {
        lineno++;
        if (irqtab_row(t, &p, r.label, sizeof r.label, r.counts, &r.got,
                       &r.desc)) {
            if (!strict) {
                continue;
            }
            hk_seterr(hk, "%s/interrupts:%u: not an interrupt row",
                      hk->proc_root, lineno);
            error = -EINVAL;
            break;
        }
        if (visit(&r, aux)) {
            break;
        }
    }
    error = error ? error : (int) t->ncol;
    free(r.counts);
    free(t->text);
    free(t);
    return error;
}

struct counts_aux {
    uint64_t *counts;
    size_t n;
};

static int
count_row(const struct irqrow *r, void *aux_)
{
    struct counts_aux *a = aux_;

    if (r->got == r->t->ncol) {
        for (unsigned c = 0; c < r->got; c++) {
            if (r->t->col_cpu[c] < a->n) {
                a->counts[r->t->col_cpu[c]] += r->counts[c];
            }
        }
    }
    return 0;
}

int
hk_irq_counts(struct hk *hk, uint64_t *counts, size_t n)
{
    struct counts_aux a = { counts, n };

    hk->err[0] = '\0';
    memset(counts, 0, n * sizeof *counts);
    return irqtab_walk(hk, true, count_row, &a);
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

/* 'text' into buf[len], runs of spaces folded, trailing ones dropped,
 * unprintable bytes as '?': kernel and device text is not trusted. */
static void
fold(const char *text, char *buf, size_t len)
{
    size_t o = 0;

    for (; *text && o + 1 < len; text++) {
        if (*text != ' ' || (o && buf[o - 1] != ' ')) {
            buf[o++] = (char) (isprint((unsigned char) *text) ? *text : '?');
        }
    }
    while (o && buf[o - 1] == ' ') {
        o--;
    }
    buf[o] = '\0';
}

struct name_aux {
    char want[16];
    char *buf;
    size_t len;
};

static int
name_row(const struct irqrow *r, void *aux_)
{
    struct name_aux *a = aux_;

    if (strcmp(r->label, a->want)) {
        return 0;
    }
    fold(r->desc, a->buf, a->len);
    return 1;
}

void
hk_irq_name(struct hk *hk, unsigned irq, char *buf, size_t len)
{
    struct name_aux a = { .buf = buf, .len = len };

    snprintf(buf, len, "?");
    snprintf(a.want, sizeof a.want, "%u", irq);
    (void) irqtab_walk(hk, false, name_row, &a);
}

/* ---- What ran on a set of CPUs ------------------------------------------- */

struct wlist {
    struct hk_waker *w;
    size_t n, cap;
};

static struct hk_waker *
wlist_add(struct wlist *l)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->w = xrealloc(l->w, l->cap * sizeof *l->w);
    }
    memset(&l->w[l->n], 0, sizeof *l->w);
    return &l->w[l->n++];
}

struct wakers_aux {
    const struct cpuset *cpus;
    struct wlist *l;
};

/* An interrupt row with a nonzero count on the CPUs asked about. */
static int
waker_row(const struct irqrow *r, void *aux_)
{
    struct wakers_aux *a = aux_;
    char text[256];
    uint64_t sum = 0;
    struct hk_waker *w;

    if (r->got != r->t->ncol) {
        return 0;
    }
    for (unsigned c = 0; c < r->got; c++) {
        if (cpuset_has(a->cpus, r->t->col_cpu[c])) {
            sum += r->counts[c];
        }
    }
    if (!sum) {
        return 0;
    }
    w = wlist_add(a->l);
    fold(r->label, w->label, sizeof w->label);
    fold(r->desc, text, sizeof text);
    /* The device's name is at the end: a long description keeps its
     * tail. */
    if (strlen(text) >= sizeof w->name) {
        snprintf(w->name, sizeof w->name, "...%s",
                 text + strlen(text) - (sizeof w->name - 4));
    } else {
        snprintf(w->name, sizeof w->name, "%s", text);
    }
    w->count = sum;
    return 0;
}

/* The interrupt rows with a nonzero count on 'cpus'. */
static int
irq_wakers(struct hk *hk, const struct cpuset *cpus, struct wlist *l)
{
    struct wakers_aux a = { cpus, l };
    int n = irqtab_walk(hk, true, waker_row, &a);

    return n < 0 ? n : 0;
}

/* One thread: its name and last CPU from 'stat' ("TID (NAME) S ..."; the
 * name may hold spaces and parentheses, so it ends at the last ')'; the
 * CPU is field 39, the 37th after the name), its scheduled-in count from
 * 'schedstat'.  A thread that exits meanwhile is skipped (1). */
static int
thread_waker(struct hk *hk, const char *dir, uint32_t tid,
             const struct cpuset *cpus, struct hk_waker *w)
{
    char path[HK_PATH_MAX], buf[1024], *open, *close, *q;
    unsigned long long run, delay, slices;
    unsigned long cpu = 0;
    int n;

    if (snprintf(path, sizeof path, "%s/stat", dir) >= (int) sizeof path) {
        return 1;                       /* No such path on a real /proc. */
    }
    n = hk->ops->read(hk->ops_aux, path, buf, sizeof buf);
    if (n <= 0) {
        return 1;
    }
    open = strchr(buf, '(');
    close = strrchr(buf, ')');
    if (!open || !close || close < open) {
        hk_seterr(hk, "%s: not a stat line: '%.40s'", path, buf);
        return -EINVAL;
    }
    *close = '\0';
    fold(open + 1, w->name, sizeof w->name);
    q = close + 1;
    for (unsigned f = 0; f < 36 && q; f++) {
        q = strchr(q + 1, ' ');
    }
    if (!q || sscanf(q, " %lu", &cpu) != 1) {
        hk_seterr(hk, "%s: no CPU field", path);
        return -EINVAL;
    }
    if (snprintf(path, sizeof path, "%s/schedstat", dir)
        >= (int) sizeof path) {
        return 1;
    }
    n = hk->ops->read(hk->ops_aux, path, buf, sizeof buf);
    if (n <= 0) {
        return 1;
    }
    if (sscanf(buf, "%llu %llu %llu", &run, &delay, &slices) != 3) {
        hk_seterr(hk, "%s: not a schedstat line: '%.40s'", path, buf);
        return -EINVAL;
    }
    w->thread = true;
    w->tid = tid;
    w->count = slices;
    w->on_set = cpu < POL_MAX_CPUS && cpuset_has(cpus, (unsigned) cpu);
    return 0;
}

static bool
parse_id(const char *s, uint32_t *id)
{
    return isdigit((unsigned char) *s) && !hk_parse_uint(s, id);
}

/* Every thread of every process under the proc root. */
static int
thread_wakers(struct hk *hk, const struct cpuset *cpus, struct wlist *l)
{
    char dir[HK_PATH_MAX];
    struct dirent *pe, *te;
    DIR *pd = opendir(hk->proc_root), *td;
    uint32_t id;
    int error = 0;

    if (!pd) {
        error = -errno;
        hk_seterr(hk, "%s: %s", hk->proc_root, strerror(-error));
        return error;
    }
    while (!error && (pe = readdir(pd))) {
        if (!parse_id(pe->d_name, &id)) {
            continue;
        }
        if (snprintf(dir, sizeof dir, "%s/%s/task", hk->proc_root,
                     pe->d_name) >= (int) sizeof dir) {
            continue;
        }
        td = opendir(dir);
        while (td && !error && (te = readdir(td))) {
            char tdir[HK_PATH_MAX];
            int r;

            if (!parse_id(te->d_name, &id)) {
                continue;
            }
            if (snprintf(tdir, sizeof tdir, "%s/%s", dir, te->d_name)
                >= (int) sizeof tdir) {
                continue;
            }
            r = thread_waker(hk, tdir, id, cpus, wlist_add(l));
            if (r) {
                l->n--;                 /* Gone, or an error. */
                error = r < 0 ? r : 0;
            }
        }
        if (td) {
            closedir(td);
        }
    }
    closedir(pd);
    return error;
}

int
hk_wakers(struct hk *hk, const struct cpuset *cpus, bool threads,
          struct hk_waker **out)
{
    struct wlist l = { 0 };
    int error;

    hk->err[0] = '\0';
    error = irq_wakers(hk, cpus, &l);
    if (!error && threads) {
        error = thread_wakers(hk, cpus, &l);
    }
    if (error) {
        free(l.w);
        *out = NULL;
        return error;
    }
    *out = l.w;
    return (int) l.n;
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
    now = util_clock_ns(CLOCK_MONOTONIC);
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
