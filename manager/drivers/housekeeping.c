/* manager/drivers/housekeeping.c -- Confines host work to the housekeeping
 * CPUs.
 *
 * Instance state, records, the three parts (cpusets, interrupts,
 * workqueues) and their restore.  The real host operations are in
 * housekeeping_ops.c, the readers for metrics in housekeeping_stats.c. */

#include <config.h>

#include "manager/drivers/housekeeping.h"
#include "manager/drivers/housekeeping_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "manager/journal.h"
#include "manager/log.h"
#include "manager/util.h"

#define LOG_MODULE "hk"

/* ---- Configuration and instance ------------------------------------ */

void
hk_conf_init(struct hk_conf *c)
{
    static const char *const groups[] = HK_DEFAULT_GROUPS;

    memset(c, 0, sizeof *c);
    c->cgroup_root = HK_DEFAULT_CGROUP_ROOT;
    c->proc_root = HK_DEFAULT_PROC_ROOT;
    c->wq_path = HK_DEFAULT_WQ_PATH;
    c->run_root = HK_DEFAULT_RUN_ROOT;
    for (size_t i = 0; i < HK_DEFAULT_N_GROUPS; i++) {
        c->groups[i] = groups[i];
    }
    c->n_groups = HK_DEFAULT_N_GROUPS;
    c->cpusets = c->irqs = c->workqueues = true;
}

const char *
hk_mode_name(enum hk_mode m)
{
    switch (m) {
    case HK_MODE_V1:
        return "cgroup-v1";
    case HK_MODE_V2:
        return "cgroup-v2";
    case HK_MODE_SYSTEMD:
        return "systemd";
    case HK_MODE_NONE:
        break;
    }
    return "none";
}

void
hk_seterr(struct hk *hk, const char *fmt, ...)
{
    char msg[sizeof hk->err];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    LOG_ERR("%s", msg);
    if (!hk->err[0]) {
        memcpy(hk->err, msg, sizeof msg);     /* The first one counts. */
    }
}

/* A group name is a relative cgroup path: no "..", no empty component,
 * nothing a journal line could not carry. */
static bool
group_valid(const char *g)
{
    size_t len = strlen(g);

    if (!len || len > HK_KEY_LEN - 32 || g[0] == '/' || g[len - 1] == '/') {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char) g[i] <= ' ' || g[i] == 0x7f
            || (g[i] == '/' && g[i + 1] == '/')) {
            return false;
        }
    }
    for (const char *c = g; c; c = strchr(c, '/')) {
        c += *c == '/';
        if (c[0] == '.' && (c[1] == '/' || !c[1]
                            || (c[1] == '.' && (c[2] == '/' || !c[2])))) {
            return false;
        }
    }
    return true;
}

bool
hk_exists(const char *path, bool dir)
{
    struct stat st;

    return !stat(path, &st) && (dir ? S_ISDIR(st.st_mode)
                                : !S_ISDIR(st.st_mode));
}

static enum hk_mode
detect_mode(const struct hk *hk)
{
    char p[HK_PATH_MAX], buf[512];
    bool v2 = false;

    snprintf(p, sizeof p, "%s/cgroup.controllers", hk->cgroup_root);
    if (hk->ops->read(hk->ops_aux, p, buf, sizeof buf) >= 0) {
        v2 = hk_has_token(buf, "cpuset");
    }
    if (v2) {
        snprintf(p, sizeof p, "%s/systemd/system", hk->run_root);
        return hk_exists(p, true) ? HK_MODE_SYSTEMD : HK_MODE_V2;
    }
    snprintf(p, sizeof p, "%s/cpuset/cpuset.cpus", hk->cgroup_root);
    return hk_exists(p, false) ? HK_MODE_V1 : HK_MODE_NONE;
}

int
hk_open(const struct hk_conf *c, const struct hk_ops *ops, void *ops_aux,
        struct hk **out, char *err, size_t errlen)
{
    const char *roots[] = { c->cgroup_root, c->proc_root, c->wq_path,
                            c->run_root };
    struct hk *hk;

    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (!roots[i] || roots[i][0] != '/'
            || strlen(roots[i]) > HK_PATH_MAX - HK_KEY_LEN - 64) {
            snprintf(err, errlen, "housekeeping: root '%s' must be an "
                     "absolute path of at most %d bytes",
                     roots[i] ? roots[i] : "(null)",
                     HK_PATH_MAX - HK_KEY_LEN - 64);
            return -EINVAL;
        }
    }
    if (c->n_groups > HK_MAX_GROUPS) {
        snprintf(err, errlen, "housekeeping: more than %d groups",
                 HK_MAX_GROUPS);
        return -EINVAL;
    }
    for (size_t i = 0; i < c->n_groups; i++) {
        if (!c->groups[i] || !group_valid(c->groups[i])) {
            snprintf(err, errlen, "housekeeping: bad group name '%s' "
                     "(a relative cgroup path without '.', '..', "
                     "whitespace or empty parts)",
                     c->groups[i] ? c->groups[i] : "(null)");
            return -EINVAL;
        }
    }
    hk = XNEW(struct hk);
    hk->cgroup_root = xstrdup(c->cgroup_root);
    hk->proc_root = xstrdup(c->proc_root);
    hk->wq_path = xstrdup(c->wq_path);
    hk->run_root = xstrdup(c->run_root);
    for (size_t i = 0; i < c->n_groups; i++) {
        hk->groups[i] = xstrdup(c->groups[i]);
    }
    hk->n_groups = c->n_groups;
    hk->do_cpusets = c->cpusets;
    hk->do_irqs = c->irqs;
    hk->do_wq = c->workqueues;
    hk->dry_run = c->dry_run;
    if (ops) {
        hk->ops = ops;
        hk->ops_aux = ops_aux;
    } else {
        hk->own_bus = hk_sdbus_new();
        hk->ops = &hk_ops_real;
        hk->ops_aux = hk->own_bus;
    }
    hk->mode = detect_mode(hk);
    *out = hk;
    return 0;
}

void
hk_close(struct hk *hk)
{
    if (!hk) {
        return;
    }
    for (size_t i = 0; i < hk->n_groups; i++) {
        free(hk->groups[i]);
    }
    free(hk->cgroup_root);
    free(hk->proc_root);
    free(hk->wq_path);
    free(hk->run_root);
    free(hk->recs);
    free(hk->refused);
    hk_sdbus_free(hk->own_bus);
    free(hk);
}

enum hk_mode
hk_mode(const struct hk *hk)
{
    return hk->mode;
}

void
hk_set_recorder(struct hk *hk, hk_record_cb *cb, void *aux)
{
    hk->rec_cb = cb;
    hk->rec_aux = aux;
}

const struct hk_record *
hk_records(const struct hk *hk, size_t *n)
{
    *n = hk->n_recs;
    return hk->recs;
}

const char *
hk_error(const struct hk *hk)
{
    return hk->err;
}

/* ---- Records ------------------------------------------------------------ */

const struct hk_record *
hk_find(const struct hk *hk, enum hk_rec_kind kind, const char *key)
{
    for (size_t i = 0; i < hk->n_recs; i++) {
        if (hk->recs[i].kind == kind && !strcmp(hk->recs[i].key, key)) {
            return &hk->recs[i];
        }
    }
    return NULL;
}

int
hk_note(struct hk *hk, enum hk_rec_kind kind, const char *key,
        const char *orig)
{
    struct hk_record r;
    int error;

    if (hk_find(hk, kind, key)) {
        return 0;
    }
    if (strlen(key) >= HK_KEY_LEN || strlen(orig) >= HK_VALUE_LEN) {
        hk_seterr(hk, "%s: original value '%.40s...' too long to record: "
                  "not changed", key, orig);
        return -ENAMETOOLONG;
    }
    memset(&r, 0, sizeof r);
    r.kind = kind;
    strcpy(r.key, key);
    strcpy(r.value, orig);
    if (hk->rec_cb) {
        error = hk->rec_cb(hk->rec_aux, &r);
        if (error) {
            hk_seterr(hk, "%s: cannot record the original '%s' (%s): not "
                      "changed", key, orig, strerror(error < 0 ? -error
                                                     : EIO));
            return error < 0 ? error : -EIO;
        }
    }
    if (hk->n_recs == hk->cap_recs) {
        hk->cap_recs = hk->cap_recs ? hk->cap_recs * 2 : 16;
        hk->recs = xrealloc(hk->recs, hk->cap_recs * sizeof *hk->recs);
    }
    hk->recs[hk->n_recs++] = r;
    return 0;
}

int
hk_jnl_record(void *jnl, const struct hk_record *r)
{
    struct jnl *j = jnl;
    uint32_t irq;

    switch (r->kind) {
    case HK_REC_CGROUP:
        return jnl_record_cgroup(j, r->key, r->value);
    case HK_REC_UNIT:
        return jnl_record_unit(j, r->key, r->value);
    case HK_REC_IRQ:
        if (hk_parse_uint(r->key, &irq)) {
            return -EINVAL;
        }
        return jnl_record_irq(j, irq, r->value);
    case HK_REC_WQMASK:
        return jnl_record_wqmask(j, r->value);
    }
    return -EINVAL;
}

bool
hk_record_from_jnl(const struct jnl_entry *e, struct hk_record *r)
{
    memset(r, 0, sizeof *r);
    switch (e->kind) {
    case JNL_CGROUP:
        r->kind = HK_REC_CGROUP;
        break;
    case JNL_UNIT:
        r->kind = HK_REC_UNIT;
        break;
    case JNL_IRQ:
        r->kind = HK_REC_IRQ;
        snprintf(r->key, sizeof r->key, "%u", e->irq);
        break;
    case JNL_WQMASK:
        r->kind = HK_REC_WQMASK;
        break;
    default:
        return false;
    }
    if (r->kind == HK_REC_CGROUP || r->kind == HK_REC_UNIT) {
        snprintf(r->key, sizeof r->key, "%s", e->path);
    }
    snprintf(r->value, sizeof r->value, "%s", e->value);
    return true;
}

/* ---- Small helpers ------------------------------------------------------ */

int
hk_parse_uint(const char *s, uint32_t *out)
{
    unsigned long v = 0;

    if (!*s) {
        return -EINVAL;
    }
    for (; *s; s++) {
        if (!isdigit((unsigned char) *s) || v > 100000000UL) {
            return -EINVAL;
        }
        v = v * 10 + (unsigned long) (*s - '0');
    }
    *out = (uint32_t) v;
    return 0;
}

bool
hk_has_token(const char *list, const char *tok)
{
    size_t n = strlen(tok);

    for (const char *p = list; (p = strstr(p, tok)); p += n) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]
                                           || p[n] == '\n')) {
            return true;
        }
    }
    return false;
}

/* Reads a cpulist file into 'raw' and 'set'; a parse failure is -EINVAL
 * with the file named in the error. */
int
hk_read_list(struct hk *hk, const char *path, char *raw, size_t len,
             struct cpuset *set)
{
    int n = hk->ops->read(hk->ops_aux, path, raw, len);

    if (n < 0) {
        return n;
    }
    if (cpuset_parse(set, raw)) {
        hk_seterr(hk, "%s: not a CPU list: '%.60s'", path, raw);
        return -EINVAL;
    }
    return 0;
}

/* The part of 'orig' inside 'set', or 'fallback' if there is none. */
void
hk_confine(struct cpuset *out, const struct cpuset *orig,
           const struct cpuset *set, const struct cpuset *fallback)
{
    cpuset_and(out, orig, set);
    if (cpuset_empty(out)) {
        *out = *fallback;
    }
}

/* ---- Workqueues ------------------------------------------------------- */

int
hk_mask_parse(const char *s, struct cpuset *set)
{
    size_t len = strlen(s), ngroups = 1, bit = 0;

    while (len && (s[len - 1] == '\n' || s[len - 1] == ' ')) {
        len--;
    }
    if (!len || s[0] == ',') {
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        ngroups += s[i] == ',';
    }
    if (ngroups * 32 > POL_MAX_CPUS) {
        return -EINVAL;
    }
    cpuset_zero(set);
    /* From the last (lowest) digit up; groups are 32 bits, at most 8
     * digits, only the first may be shorter. */
    for (size_t i = len, digits = 0; i-- > 0;) {
        int v;

        if (s[i] == ',') {
            if (digits != 8) {
                return -EINVAL;
            }
            digits = 0;
            continue;
        }
        if (!isxdigit((unsigned char) s[i]) || ++digits > 8) {
            return -EINVAL;
        }
        v = isdigit((unsigned char) s[i]) ? s[i] - '0'
            : tolower((unsigned char) s[i]) - 'a' + 10;
        for (int b = 0; b < 4; b++) {
            if (v & (1 << b)) {
                cpuset_set(set, (unsigned) (bit + (size_t) b));
            }
        }
        bit += 4;
        if (i == 0 || s[i - 1] == ',') {
            bit = (bit + 31) / 32 * 32;
        }
    }
    return 0;
}

int
hk_mask_format(const struct cpuset *set, const char *like, char *buf,
               size_t len)
{
    size_t nd = 0, out = 0, total = strlen(like);
    int top = -1;

    for (size_t i = 0; i < total; i++) {
        nd += isxdigit((unsigned char) like[i]) != 0;
    }
    CPUSET_FOREACH(cpu, set) {
        top = cpu;
    }
    if (top >= 0 && (size_t) top >= nd * 4) {
        return -ERANGE;         /* The set does not fit the layout. */
    }
    if (total + 1 > len) {
        return -EOVERFLOW;
    }
    /* Digit k from the left stands for bits of nibble nd - 1 - k. */
    for (size_t i = 0, k = 0; i < total; i++) {
        unsigned nib, v = 0;

        if (!isxdigit((unsigned char) like[i])) {
            buf[out++] = like[i];
            continue;
        }
        nib = (unsigned) (nd - 1 - k++);
        for (unsigned b = 0; b < 4; b++) {
            if (nib * 4 + b < POL_MAX_CPUS
                && cpuset_has(set, nib * 4 + b)) {
                v |= 1u << b;
            }
        }
        buf[out++] = "0123456789abcdef"[v];
    }
    buf[out] = '\0';
    return 0;
}

static int
apply_wq(struct hk *hk, const struct cpuset *set, struct hk_report *rep)
{
    const struct hk_record *r = hk_find(hk, HK_REC_WQMASK, "");
    char cur[HK_VALUE_LEN * 4], want[HK_VALUE_LEN * 4];
    struct cpuset now, orig, target;
    int error;

    error = hk->ops->read(hk->ops_aux, hk->wq_path, cur, sizeof cur);
    if (error == -ENOENT) {
        LOG_DEBUG("%s: absent, workqueues left alone", hk->wq_path);
        return 0;
    }
    if (error < 0) {
        hk_seterr(hk, "%s: %s", hk->wq_path, strerror(-error));
        return error;
    }
    if (hk_mask_parse(cur, &now)
        || (r && hk_mask_parse(r->value, &orig))) {
        hk_seterr(hk, "%s: not a CPU mask: '%.60s'", hk->wq_path,
                  r ? r->value : cur);
        return -EINVAL;
    }
    if (!r) {
        orig = now;
    }
    hk_confine(&target, &orig, set, set);
    if (cpuset_equal(&target, &now)) {
        return 0;
    }
    error = hk_mask_format(&target, cur, want, sizeof want);
    if (error) {
        hk_seterr(hk, "%s: the set does not fit the mask '%s'",
                  hk->wq_path, cur);
        return error;
    }
    if (rep) {
        rep->wq_moved = true;
    }
    LOG_INFO("%sunbound workqueues %s -> %s", hk->dry_run ? "would move "
             : "", cur, want);
    if (hk->dry_run) {
        return 0;
    }
    error = hk_note(hk, HK_REC_WQMASK, "", cur);
    if (!error) {
        error = hk->ops->write(hk->ops_aux, hk->wq_path, want);
        if (error) {
            hk_seterr(hk, "%s <- %s: %s", hk->wq_path, want,
                      strerror(-error));
        }
    }
    return error;
}

/* ---- Apply and restore -------------------------------------------------- */

int
hk_apply(struct hk *hk, const struct cpuset *set, struct hk_report *rep)
{
    int first = 0, error;

    if (rep) {
        memset(rep, 0, sizeof *rep);
    }
    hk->err[0] = '\0';
    if (cpuset_empty(set) || !cpuset_has(set, 0)) {
        hk_seterr(hk, "housekeeping set %s: must hold CPU0",
                  cpuset_empty(set) ? "empty" : "without CPU0");
        return -EINVAL;
    }
    if (hk->do_cpusets) {
        first = hk_apply_cpusets(hk, set, rep);
    }
    if (hk->do_irqs) {
        error = hk_apply_irqs(hk, set, rep);
        first = first ? first : error;
    }
    if (hk->do_wq) {
        error = apply_wq(hk, set, rep);
        first = first ? first : error;
    }
    return first;
}

/* Writes 'orig' to 'path' unless the file already holds it; a file that
 * is gone is 1 (nothing to restore). */
int
hk_put_back(struct hk *hk, const char *path, const char *orig)
{
    char cur[HK_VALUE_LEN * 4];
    int n = hk->ops->read(hk->ops_aux, path, cur, sizeof cur);

    if (n == -ENOENT) {
        LOG_INFO("restore %s: gone, nothing to restore", path);
        return 1;
    }
    if (n >= 0 && !strcmp(cur, orig)) {
        return 0;
    }
    n = hk->ops->write(hk->ops_aux, path, orig);
    if (n) {
        hk_seterr(hk, "restore %s <- '%s': %s", path, orig, strerror(-n));
    }
    return n;
}

static int
restore_other(struct hk *hk, const struct hk_record *r)
{
    char path[HK_PATH_MAX], err[256];
    struct cpuset cpus;
    int error;

    switch (r->kind) {
    case HK_REC_UNIT:
        if (cpuset_parse(&cpus, r->value)) {
            hk_seterr(hk, "unit %s: bad recorded CPU list '%s'", r->key,
                      r->value);
            return -EINVAL;
        }
        error = hk->ops->unit_set_cpus(hk->ops_aux, r->key, &cpus, err,
                                       sizeof err);
        if (error == -ENOENT) {
            LOG_INFO("restore unit %s: gone, nothing to restore", r->key);
            return 0;
        }
        if (error) {
            hk_seterr(hk, "restore unit %s AllowedCPUs='%s': %s", r->key,
                      r->value, err);
        }
        return error;
    case HK_REC_IRQ:
        snprintf(path, sizeof path, "%s/irq/%s/smp_affinity_list",
                 hk->proc_root, r->key);
        break;
    case HK_REC_WQMASK:
        snprintf(path, sizeof path, "%s", hk->wq_path);
        break;
    case HK_REC_CGROUP:
        return 0;
    }
    error = hk_put_back(hk, path, r->value);
    return error > 0 ? 0 : error;
}

int
hk_restore(struct hk *hk, const struct hk_record *recs, size_t n,
           unsigned *n_failed)
{
    bool own = !recs;
    unsigned failed = 0;
    int first, error;

    if (own) {
        recs = hk->recs;
        n = hk->n_recs;
    }
    hk->err[0] = '\0';
    first = hk_restore_cgroups(hk, recs, n, &failed);
    for (size_t i = n; i-- > 0;) {
        error = restore_other(hk, &recs[i]);
        if (error) {
            failed++;
            first = first ? first : error;
        }
    }
    if (own && !failed) {
        hk->n_recs = 0;
        hk->n_refused = 0;
    }
    if (n_failed) {
        *n_failed = failed;
    }
    return first;
}
