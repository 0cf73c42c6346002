/* manager/drivers/housekeeping_cg.c -- Host processes: cgroup cpusets and
 * systemd units of the housekeeping driver.
 *
 * cgroup v1 requires every cpuset to be a subset of its parent's, so a
 * named group's whole subtree is changed in two passes: first top-down
 * to the union of the current and the wanted CPUs (only ever widening,
 * parents before children), then bottom-up to the wanted CPUs (only ever
 * narrowing, children before parents).  Every step keeps the rule, for
 * confining and restoring alike.  cgroup v2 has no such rule (a child's
 * effective CPUs are intersected with its parent's), but a child only
 * has cpuset.cpus once its parent lists cpuset in subtree_control. */

#include <config.h>

#include "manager/drivers/housekeeping_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/log.h"
#include "manager/util.h"

#define LOG_MODULE "hk"

#define HK_MAX_NODES 4096       /* Bound on a v1 subtree walk. */
#define HK_LIST_LEN (HK_VALUE_LEN * 4)

static unsigned
depth_of(const char *rel)
{
    unsigned d = 0;

    for (; *rel; rel++) {
        d += *rel == '/';
    }
    return d;
}

static void
fmt_list(const struct cpuset *s, char *buf, size_t len)
{
    cpuset_format(s, buf, len);
}

/* ---- systemd ------------------------------------------------------------ */

static int
apply_unit(struct hk *hk, const char *unit, const struct cpuset *set,
           struct hk_report *rep)
{
    const struct hk_record *r = hk_find(hk, HK_REC_UNIT, unit);
    struct cpuset now, orig, target;
    char err[256], from[HK_LIST_LEN], to[HK_LIST_LEN];
    int error;

    error = hk->ops->unit_get_cpus(hk->ops_aux, unit, &now, err,
                                   sizeof err);
    if (error == -ENOENT) {
        LOG_DEBUG("unit %s: not loaded, skipped", unit);
        if (rep) {
            rep->n_absent++;
        }
        return 0;
    }
    if (error) {
        hk_seterr(hk, "unit %s: %s", unit, err);
        return error;
    }
    orig = now;
    if (r && cpuset_parse(&orig, r->value)) {
        hk_seterr(hk, "unit %s: bad recorded CPU list '%s'", unit,
                  r->value);
        return -EINVAL;
    }
    hk_confine(&target, &orig, set, set);
    if (cpuset_equal(&target, &now)) {
        return 0;
    }
    fmt_list(&now, from, sizeof from);
    fmt_list(&target, to, sizeof to);
    if (rep) {
        rep->n_cgroups++;
    }
    LOG_INFO("%sunit %s AllowedCPUs '%s' -> '%s'",
             hk->dry_run ? "would move " : "", unit, from, to);
    if (hk->dry_run) {
        return 0;
    }
    error = hk_note(hk, HK_REC_UNIT, unit, from);
    if (error) {
        return error;
    }
    error = hk->ops->unit_set_cpus(hk->ops_aux, unit, &target, err,
                                   sizeof err);
    if (error) {
        hk_seterr(hk, "unit %s AllowedCPUs='%s': %s", unit, to, err);
    }
    return error;
}

/* ---- cgroup v2 ------------------------------------------------------- */

/* True if the ancestor 'anc' ('len' bytes of a group path, 0 for the
 * root) is also an ancestor of a present group listed before 'gidx': a
 * dry run has counted it there already. */
static bool
v2_counted(const struct hk *hk, size_t gidx, const char *anc, size_t len)
{
    char path[HK_PATH_MAX];

    for (size_t h = 0; h < gidx; h++) {
        const char *g = hk->groups[h];

        snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, g);
        if (hk_exists(path, true) && strlen(g) > len
            && !strncmp(g, anc, len) && (!len || g[len] == '/')) {
            return true;
        }
    }
    return false;
}

/* Enables the cpuset controller in the subtree_control of every ancestor
 * of group 'gidx' that lacks it, root first. */
static int
v2_enable(struct hk *hk, size_t gidx, struct hk_report *rep)
{
    const char *group = hk->groups[gidx];
    char rel[HK_KEY_LEN], path[HK_PATH_MAX], cur[HK_LIST_LEN];
    size_t glen = strlen(group);
    int error;

    for (size_t end = 0; end < glen; end++) {
        if (end && group[end] != '/') {
            continue;
        }
        snprintf(rel, sizeof rel, "%.*s%scgroup.subtree_control",
                 (int) end, group, end ? "/" : "");
        snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, rel);
        error = hk->ops->read(hk->ops_aux, path, cur, sizeof cur);
        if (error < 0) {
            hk_seterr(hk, "%s: %s", path, strerror(-error));
            return error;
        }
        if (hk_has_token(cur, "cpuset")
            || (hk->dry_run && v2_counted(hk, gidx, group, end))) {
            continue;
        }
        if (rep) {
            rep->n_controllers++;
        }
        LOG_INFO("%senable cpuset in %s", hk->dry_run ? "would " : "",
                 path);
        if (hk->dry_run) {
            continue;
        }
        error = hk_note(hk, HK_REC_CGROUP, rel, cur);
        if (!error) {
            error = hk->ops->write(hk->ops_aux, path, "+cpuset");
            if (error) {
                hk_seterr(hk, "%s <- +cpuset: %s", path, strerror(-error));
            }
        }
        if (error) {
            return error;
        }
    }
    return 0;
}

static int
apply_v2(struct hk *hk, size_t gidx, const struct cpuset *set,
         struct hk_report *rep)
{
    const char *group = hk->groups[gidx];
    char rel[HK_KEY_LEN], path[HK_PATH_MAX], raw[HK_LIST_LEN];
    char to[HK_LIST_LEN];
    const struct hk_record *r;
    struct cpuset now, orig, target;
    int error;

    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, group);
    if (!hk_exists(path, true)) {
        LOG_DEBUG("%s: absent, skipped", path);
        if (rep) {
            rep->n_absent++;
        }
        return 0;
    }
    error = v2_enable(hk, gidx, rep);
    if (error) {
        return error;
    }
    snprintf(rel, sizeof rel, "%s/cpuset.cpus", group);
    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, rel);
    error = hk_read_list(hk, path, raw, sizeof raw, &now);
    if (error == -ENOENT && hk->dry_run) {
        raw[0] = '\0';
        cpuset_zero(&now);
    } else if (error) {
        if (error != -EINVAL) {
            hk_seterr(hk, "%s: %s", path, strerror(-error));
        }
        return error;
    }
    r = hk_find(hk, HK_REC_CGROUP, rel);
    orig = now;
    if (r && cpuset_parse(&orig, r->value)) {
        hk_seterr(hk, "%s: bad recorded CPU list '%s'", path, r->value);
        return -EINVAL;
    }
    hk_confine(&target, &orig, set, set);
    if (cpuset_equal(&target, &now)) {
        return 0;
    }
    fmt_list(&target, to, sizeof to);
    if (rep) {
        rep->n_cgroups++;
    }
    LOG_INFO("%s%s '%s' -> '%s'", hk->dry_run ? "would move " : "", path,
             raw, to);
    if (hk->dry_run) {
        return 0;
    }
    error = hk_note(hk, HK_REC_CGROUP, rel, raw);
    if (!error) {
        error = hk->ops->write(hk->ops_aux, path, to);
        if (error) {
            hk_seterr(hk, "%s <- %s: %s", path, to, strerror(-error));
        }
    }
    return error;
}

/* ---- cgroup v1 ------------------------------------------------------- */

struct node {
    char rel[HK_KEY_LEN];       /* cpuset.cpus below the cgroup root */
    int parent;                 /* index, -1 for a named group */
    char raw[HK_LIST_LEN];
    struct cpuset now, target;
};

struct walk {
    struct node *n;
    size_t len, cap;
};

static bool
walk_has(const struct walk *w, const char *rel)
{
    for (size_t i = 0; i < w->len; i++) {
        if (!strcmp(w->n[i].rel, rel)) {
            return true;
        }
    }
    return false;
}

/* Adds 'dir' (relative to the cgroup root) and its subtree, preorder. */
static int
walk_add(struct hk *hk, struct walk *w, const char *dir, int parent)
{
    char path[HK_PATH_MAX], sub[HK_KEY_LEN];
    struct dirent *de;
    DIR *d;
    int idx, error = 0;

    if (w->len >= HK_MAX_NODES) {
        hk_seterr(hk, "%s/%s: more than %d cpusets below the named groups",
                  hk->cgroup_root, dir, HK_MAX_NODES);
        return -E2BIG;
    }
    if (snprintf(sub, sizeof sub, "%s/cpuset.cpus", dir)
        >= (int) sizeof sub) {
        hk_seterr(hk, "%s/%s: cgroup path too long", hk->cgroup_root, dir);
        return -ENAMETOOLONG;
    }
    if (w->len == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 16;
        w->n = xrealloc(w->n, w->cap * sizeof *w->n);
    }
    idx = (int) w->len++;
    memset(&w->n[idx], 0, sizeof w->n[idx]);
    strcpy(w->n[idx].rel, sub);
    w->n[idx].parent = parent;

    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, dir);
    d = opendir(path);
    if (!d) {
        hk_seterr(hk, "%s: %s", path, strerror(errno));
        return -errno;
    }
    while (!error && (de = readdir(d))) {
        char child[HK_KEY_LEN], cpath[HK_PATH_MAX];

        if (de->d_name[0] == '.'
            || snprintf(child, sizeof child, "%s/%s", dir, de->d_name)
               >= (int) sizeof child) {
            continue;
        }
        snprintf(cpath, sizeof cpath, "%s/%s", hk->cgroup_root, child);
        if (hk_exists(cpath, true)) {
            error = walk_add(hk, w, child, idx);
        }
    }
    closedir(d);
    return error;
}

/* Reads every node and computes its target. */
static int
v1_plan(struct hk *hk, struct walk *w, const struct cpuset *set)
{
    char path[HK_PATH_MAX];
    int error;

    for (size_t i = 0; i < w->len; i++) {
        struct node *n = &w->n[i];
        const struct hk_record *r = hk_find(hk, HK_REC_CGROUP, n->rel);
        struct cpuset orig;

        snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, n->rel);
        error = hk_read_list(hk, path, n->raw, sizeof n->raw, &n->now);
        if (error) {
            if (error != -EINVAL) {
                hk_seterr(hk, "%s: %s", path, strerror(-error));
            }
            return error;
        }
        orig = n->now;
        if (r && cpuset_parse(&orig, r->value)) {
            hk_seterr(hk, "%s: bad recorded CPU list '%s'", path, r->value);
            return -EINVAL;
        }
        hk_confine(&n->target, &orig, set,
                   n->parent < 0 ? set : &w->n[n->parent].target);
    }
    return 0;
}

/* Writes 'to' into node 'n', recording its original first. */
static int
v1_write(struct hk *hk, struct node *n, const struct cpuset *to)
{
    char path[HK_PATH_MAX], list[HK_LIST_LEN];
    int error;

    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, n->rel);
    fmt_list(to, list, sizeof list);
    error = hk_note(hk, HK_REC_CGROUP, n->rel, n->raw);
    if (!error) {
        error = hk->ops->write(hk->ops_aux, path, list);
        if (error) {
            hk_seterr(hk, "%s <- %s: %s", path, list, strerror(-error));
        }
    }
    if (!error) {
        n->now = *to;
    }
    return error;
}

static int
apply_v1(struct hk *hk, const struct cpuset *set, struct hk_report *rep)
{
    struct walk w = { NULL, 0, 0 };
    char path[HK_PATH_MAX], dir[HK_KEY_LEN], rel[HK_KEY_LEN];
    char to[HK_LIST_LEN];
    int error = 0;

    /* Shallow names first so a listed group inside another is reached
     * through its parent's walk. */
    for (unsigned depth = 0; depth < HK_KEY_LEN && !error; depth++) {
        for (size_t g = 0; g < hk->n_groups && !error; g++) {
            if (depth_of(hk->groups[g]) != depth) {
                continue;
            }
            /* hk_open bounds group names well below these sizes. */
            snprintf(dir, sizeof dir, "cpuset/%.100s", hk->groups[g]);
            snprintf(rel, sizeof rel, "%.110s/cpuset.cpus", dir);
            snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, rel);
            if (!hk_exists(path, false)) {
                LOG_DEBUG("%s: absent, skipped", path);
                if (rep) {
                    rep->n_absent++;
                }
            } else if (!walk_has(&w, rel)) {
                error = walk_add(hk, &w, dir, -1);
            }
        }
    }
    if (!error) {
        error = v1_plan(hk, &w, set);
    }
    for (size_t i = 0; !error && i < w.len; i++) {
        struct node *n = &w.n[i];
        struct cpuset wide;

        if (cpuset_equal(&n->target, &n->now)) {
            continue;
        }
        fmt_list(&n->target, to, sizeof to);
        if (rep) {
            rep->n_cgroups++;
        }
        LOG_INFO("%s%s/%s '%s' -> '%s'", hk->dry_run ? "would move " : "",
                 hk->cgroup_root, n->rel, n->raw, to);
        cpuset_or(&wide, &n->now, &n->target);
        if (!hk->dry_run && !cpuset_equal(&wide, &n->now)) {
            error = v1_write(hk, n, &wide);
        }
    }
    for (size_t i = w.len; !error && !hk->dry_run && i-- > 0;) {
        if (!cpuset_equal(&w.n[i].target, &w.n[i].now)) {
            error = v1_write(hk, &w.n[i], &w.n[i].target);
        }
    }
    free(w.n);
    return error;
}

int
hk_apply_cpusets(struct hk *hk, const struct cpuset *set,
                 struct hk_report *rep)
{
    int first = 0, error = 0;

    switch (hk->mode) {
    case HK_MODE_NONE:
        LOG_WARN_RL("%s: no cpuset controller (neither cgroup v2 with "
                    "cpuset nor a v1 cpuset hierarchy): host processes are "
                    "not confined", hk->cgroup_root);
        return 0;
    case HK_MODE_V1:
        return apply_v1(hk, set, rep);
    case HK_MODE_V2:
    case HK_MODE_SYSTEMD:
        break;
    }
    for (size_t g = 0; g < hk->n_groups; g++) {
        if (hk->mode == HK_MODE_SYSTEMD) {
            const char *unit = strrchr(hk->groups[g], '/');

            error = apply_unit(hk, unit ? unit + 1 : hk->groups[g], set,
                               rep);
        } else {
            error = apply_v2(hk, g, set, rep);
        }
        first = first ? first : error;
    }
    return first;
}

/* ---- Restore ------------------------------------------------------------ */

static const struct hk_record *sort_recs;

static int
by_depth(const void *a, const void *b)
{
    size_t ia = *(const size_t *) a, ib = *(const size_t *) b;
    unsigned da = depth_of(sort_recs[ia].key);
    unsigned db = depth_of(sort_recs[ib].key);

    if (da != db) {
        return da < db ? -1 : 1;
    }
    return ia < ib ? -1 : ia > ib;
}

static bool
ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);

    return a >= b && !strcmp(s + a - b, suffix);
}

/* v1 pass 1: widen to current | original, parents first. */
static void
restore_widen(struct hk *hk, const struct hk_record *r)
{
    char path[HK_PATH_MAX], raw[HK_LIST_LEN], list[HK_LIST_LEN];
    struct cpuset now, orig, wide;

    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, r->key);
    if (hk->ops->read(hk->ops_aux, path, raw, sizeof raw) < 0
        || cpuset_parse(&now, raw) || cpuset_parse(&orig, r->value)) {
        return;                 /* Pass 2 reports it. */
    }
    cpuset_or(&wide, &now, &orig);
    if (!cpuset_equal(&wide, &now)) {
        fmt_list(&wide, list, sizeof list);
        hk->ops->write(hk->ops_aux, path, list);
    }
}

/* Gives a subtree_control its original controller list back: "-c" for
 * every controller added since, "+c" for every one removed. */
static int
restore_subtree(struct hk *hk, const struct hk_record *r)
{
    char path[HK_PATH_MAX], cur[HK_LIST_LEN], tok[64], op[66];
    int n, error = 0;

    snprintf(path, sizeof path, "%s/%s", hk->cgroup_root, r->key);
    n = hk->ops->read(hk->ops_aux, path, cur, sizeof cur);
    if (n == -ENOENT) {
        return 0;
    }
    if (n < 0) {
        hk_seterr(hk, "restore %s: %s", path, strerror(-n));
        return n;
    }
    for (int pass = 0; pass < 2 && !error; pass++) {
        const char *from = pass ? r->value : cur;
        const char *other = pass ? cur : r->value;

        for (const char *p = from; !error && sscanf(p, " %63s", tok) == 1;) {
            p = strstr(p, tok) + strlen(tok);
            if (hk_has_token(other, tok)) {
                continue;
            }
            snprintf(op, sizeof op, "%c%s", pass ? '+' : '-', tok);
            error = hk->ops->write(hk->ops_aux, path, op);
            if (error) {
                hk_seterr(hk, "restore %s <- %s: %s", path, op,
                          strerror(-error));
            }
        }
    }
    return error;
}

int
hk_restore_cgroups(struct hk *hk, const struct hk_record *recs, size_t n,
                   unsigned *n_failed)
{
    size_t *idx = XNEWARRAY(size_t, n + 1), m = 0;
    char path[HK_PATH_MAX];
    int first = 0, error;

    for (size_t i = 0; i < n; i++) {
        if (recs[i].kind == HK_REC_CGROUP) {
            idx[m++] = i;
        }
    }
    sort_recs = recs;
    qsort(idx, m, sizeof *idx, by_depth);
    for (size_t k = 0; hk->mode == HK_MODE_V1 && k < m; k++) {
        if (ends_with(recs[idx[k]].key, "cpuset.cpus")) {
            restore_widen(hk, &recs[idx[k]]);
        }
    }
    /* Deepest first: cpusets narrow children before parents, and a
     * controller leaves a child's subtree_control before its parent's. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = m; k-- > 0;) {
            const struct hk_record *r = &recs[idx[k]];
            bool subtree = ends_with(r->key, "cgroup.subtree_control");

            if (subtree != (pass == 1)) {
                continue;
            }
            if (subtree) {
                error = restore_subtree(hk, r);
            } else {
                snprintf(path, sizeof path, "%s/%s", hk->cgroup_root,
                         r->key);
                error = hk_put_back(hk, path, r->value);
                error = error > 0 ? 0 : error;
            }
            if (error) {
                (*n_failed)++;
                first = first ? first : error;
            }
        }
    }
    free(idx);
    return first;
}
