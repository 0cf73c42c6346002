/* manager/journal.c -- Crash-safe record of the host state vpowerd found.
 *
 * The journal is small (a few entries per CPU and per vCPU), so every
 * record simply rewrites the whole file: write PATH.tmp, rename it over
 * PATH.  A crash of vpowerd at any point leaves either the previous or
 * the new complete journal.  Records are not fsync()ed: what they
 * describe (sysfs values, CPUs online, live pins, IRQ affinities) does
 * not outlive the boot either, so durability across a power cut buys
 * nothing, while an fsync costs a millisecond or more where /run or the
 * journal path is on disk, and every frequency or idle-limit write
 * (those for a latency hint among them) waits for its record.  The text
 * format is line based:
 *
 *   vpower-journal 3
 *   vcpu UUID VCPU CPULIST
 *   emulator UUID CPULIST
 *   online CPU 0|1
 *   wrote-online CPU 0|1 [0|1]   (what vpowerd last set, and before)
 *   sysfs RELPATH VALUE          (VALUE is the rest of the line)
 *   cgroup RELPATH VALUE         (VALUE is the rest, may be empty)
 *   unit NAME VALUE              (VALUE is the rest, may be empty)
 *   irq N VALUE                  (VALUE is the rest of the line)
 *   wqmask VALUE                 (VALUE is the rest of the line)
 *   wrote RELPATH VALUE          (what vpowerd last wrote there)
 *   wrote-prev RELPATH VALUE     (what it wrote before that)
 *   end COUNT                    (COUNT does not include wrote lines)
 *
 * Wrote lines follow the line of their key in this order.
 *
 * A sysfs VALUE is the file's content exactly as read, so a restore puts
 * back the same bytes; its trailing newline is written "\n" and a
 * backslash "\\"; a wrote VALUE the same way.  Version 2 journals (no
 * wrote lines) and version 1 journals (no escapes either) are still
 * read, so a journal left by an older vpowerd is replayed.  The "end"
 * line lets jnl_load() refuse a journal that was cut short by something
 * other than our rename (a full disk, a hand edit).
 *
 * The journal is replayed as root, so jnl_load() refuses one that another
 * user could have written or replaced: the file and its directory must
 * be owned by root or vpowerd's uid and not writable by group or others
 * (util_check_trusted(), the check the control socket's directory
 * gets). */

#include <config.h>

#include "manager/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/log.h"
#include "manager/drivers/sysfs_io.h"
#include "manager/util.h"
#include "policy/num.h"

#define LOG_MODULE "jnl"

#define JNL_MAGIC "vpower-journal 3"
#define JNL_MAGIC_V2 "vpower-journal 2"  /* No wrote lines. */
#define JNL_MAGIC_V1 "vpower-journal 1"  /* No escapes in sysfs values. */
#define JNL_MAX_FILE (JNL_MAX_ENTRIES * 512)

struct jnl {
    char *path;
    struct jnl_entry *e;
    size_t n, cap;
};

/* ---- Validation -------------------------------------------------------- */

static bool
uuid_valid(const char *u)
{
    size_t i;

    for (i = 0; u[i]; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        char c = u[i];

        if (dash ? c != '-'
            : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
                || (c >= 'A' && c <= 'F'))) {
            return false;
        }
    }
    return i == DRV_UUID_LEN - 1;
}

static bool
relpath_valid(const char *p)
{
    size_t len = strlen(p);

    if (!len || len >= JNL_PATH_LEN || p[0] == '/') {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char) p[i] <= ' ' || p[i] == 0x7f) {
            return false;
        }
    }
    /* No ".." component: restore must stay below the root. */
    for (const char *c = p; c; c = strchr(c, '/')) {
        c += *c == '/';
        if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2])) {
            return false;
        }
    }
    return true;
}

/* One line of text, optionally ending in the newline sysfs files end
 * with. */
static bool
value_valid(const char *v)
{
    size_t len = strlen(v);

    if (len >= JNL_VALUE_LEN) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '\n' && i == len - 1) {
            continue;
        }
        if ((unsigned char) v[i] < ' ' || v[i] == 0x7f) {
            return false;
        }
    }
    return true;
}

/* ---- Writing --------------------------------------------------------- */

struct sbuf {
    char *s;
    size_t len, cap;
};

static void __attribute__((format(printf, 2, 3)))
sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t) n < b->cap - b->len) {
            b->len += (size_t) n;
            return;
        }
        b->cap = b->cap * 2 + (size_t) (n > 0 ? n : 0) + 256;
        b->s = xrealloc(b->s, b->cap);
    }
}

/* A sysfs value and the line's end; newline and backslash escaped. */
static void
format_value(struct sbuf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\n') {
            sbuf_printf(b, "\\n");
        } else if (*v == '\\') {
            sbuf_printf(b, "\\\\");
        } else {
            sbuf_printf(b, "%c", *v);
        }
    }
    sbuf_printf(b, "\n");
}

static void
format_entry(struct sbuf *b, const struct jnl_entry *e)
{
    char list[8192];

    switch (e->kind) {
    case JNL_VCPU_PIN:
        cpuset_format(&e->cpus, list, sizeof list);
        sbuf_printf(b, "vcpu %s %u %s\n", e->uuid, e->vcpu, list);
        break;
    case JNL_EMULATOR_PIN:
        cpuset_format(&e->cpus, list, sizeof list);
        sbuf_printf(b, "emulator %s %s\n", e->uuid, list);
        break;
    case JNL_SYSFS:
        sbuf_printf(b, "sysfs %s ", e->path);
        format_value(b, e->value);
        if (e->has_last) {
            sbuf_printf(b, "wrote %s ", e->path);
            format_value(b, e->last);
        }
        if (e->has_last && e->has_prev) {
            sbuf_printf(b, "wrote-prev %s ", e->path);
            format_value(b, e->prev);
        }
        break;
    case JNL_ONLINE:
        sbuf_printf(b, "online %u %d\n", e->cpu, e->online ? 1 : 0);
        if (e->has_last && e->has_prev) {
            sbuf_printf(b, "wrote-online %u %d %d\n", e->cpu,
                        e->last_online ? 1 : 0, e->prev_online ? 1 : 0);
        } else if (e->has_last) {
            sbuf_printf(b, "wrote-online %u %d\n", e->cpu,
                        e->last_online ? 1 : 0);
        }
        break;
    case JNL_CGROUP:
        sbuf_printf(b, "cgroup %s %s\n", e->path, e->value);
        break;
    case JNL_UNIT:
        sbuf_printf(b, "unit %s %s\n", e->path, e->value);
        break;
    case JNL_IRQ:
        sbuf_printf(b, "irq %u %s\n", e->irq, e->value);
        break;
    case JNL_WQMASK:
        sbuf_printf(b, "wqmask %s\n", e->value);
        break;
    case JNL_N_KINDS:
        break;
    }
}

static int
fsync_dir_of(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    int fd, error = 0;

    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == dir) {
        dir[1] = '\0';
    } else {
        *slash = '\0';
    }
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) < 0) {
        error = -errno;
    }
    if (fd >= 0) {
        close(fd);
    }
    free(dir);
    return error;
}

static int
write_all(int fd, const char *s, size_t len)
{
    while (len) {
        ssize_t n = write(fd, s, len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0) {
            return -EIO;
        }
        s += n;
        len -= (size_t) n;
    }
    return 0;
}

/* Writes the whole journal to PATH atomically. */
static int
jnl_save(struct jnl *j)
{
    struct sbuf b = { NULL, 0, 0 };
    char *tmp = xasprintf("%s.tmp", j->path);
    int fd, error = 0;

    sbuf_printf(&b, "%s\n", JNL_MAGIC);
    for (size_t i = 0; i < j->n; i++) {
        format_entry(&b, &j->e[i]);
    }
    sbuf_printf(&b, "end %zu\n", j->n);

    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
              0600);
    if (fd < 0) {
        error = -errno;
        goto out;
    }
    /* The umask cannot widen 0600, but an old file could be wider. */
    if (fchmod(fd, 0600) < 0) {
        error = -errno;
    }
    if (!error) {
        error = write_all(fd, b.s, b.len);
    }
    if (close(fd) < 0 && !error) {
        error = -errno;
    }
    if (!error && rename(tmp, j->path) < 0) {
        error = -errno;
    }
    if (error) {
        unlink(tmp);
    }
out:
    if (error) {
        LOG_ERR("%s: cannot write journal: %s", j->path, strerror(-error));
    }
    free(tmp);
    free(b.s);
    return error;
}

static int
jnl_add(struct jnl *j, const struct jnl_entry *e)
{
    int error;

    if (j->n >= JNL_MAX_ENTRIES) {
        return -ENOSPC;
    }
    if (j->n == j->cap) {
        j->cap = j->cap ? j->cap * 2 : 16;
        j->e = xrealloc(j->e, j->cap * sizeof *j->e);
    }
    j->e[j->n++] = *e;
    error = jnl_save(j);
    if (error) {
        j->n--;                   /* Not on disk: not recorded. */
    }
    return error;
}

/* ---- Public API ------------------------------------------------------- */

static struct jnl *
jnl_new(const char *path)
{
    struct jnl *j = XNEW(struct jnl);

    j->path = xstrdup(path);
    return j;
}

int
jnl_create(const char *path, struct jnl **out)
{
    if (!path || !*path || strlen(path) >= 4000) {
        return -EINVAL;
    }
    *out = jnl_new(path);
    return 0;
}

void
jnl_close(struct jnl *j)
{
    if (j) {
        free(j->e);
        free(j->path);
        free(j);
    }
}

int
jnl_remove(struct jnl *j)
{
    j->n = 0;
    if (unlink(j->path) < 0) {
        return errno == ENOENT ? 0 : -errno;
    }
    return fsync_dir_of(j->path);
}

const char *
jnl_path(const struct jnl *j)
{
    return j->path;
}

size_t
jnl_count(const struct jnl *j)
{
    return j->n;
}

static struct jnl_entry *
find(const struct jnl *j, const struct jnl_entry *key)
{
    for (size_t i = 0; i < j->n; i++) {
        struct jnl_entry *e = &j->e[i];

        if (e->kind != key->kind) {
            continue;
        }
        switch (key->kind) {
        case JNL_VCPU_PIN:
            if (!strcmp(e->uuid, key->uuid) && e->vcpu == key->vcpu) {
                return e;
            }
            break;
        case JNL_EMULATOR_PIN:
            if (!strcmp(e->uuid, key->uuid)) {
                return e;
            }
            break;
        case JNL_SYSFS:
            if (!strcmp(e->path, key->path)) {
                return e;
            }
            break;
        case JNL_ONLINE:
            if (e->cpu == key->cpu) {
                return e;
            }
            break;
        case JNL_CGROUP:
        case JNL_UNIT:
            if (!strcmp(e->path, key->path)) {
                return e;
            }
            break;
        case JNL_IRQ:
            if (e->irq == key->irq) {
                return e;
            }
            break;
        case JNL_WQMASK:
            return e;
        case JNL_N_KINDS:
            break;
        }
    }
    return NULL;
}

static int
record(struct jnl *j, const struct jnl_entry *e)
{
    return find(j, e) ? 0 : jnl_add(j, e);
}

int
jnl_record_vcpu_pin(struct jnl *j, const char *uuid, unsigned vcpu,
                    const struct cpuset *orig)
{
    struct jnl_entry e;

    if (!uuid || !uuid_valid(uuid) || !orig || cpuset_empty(orig)) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_VCPU_PIN;
    strcpy(e.uuid, uuid);
    e.vcpu = vcpu;
    e.cpus = *orig;
    return record(j, &e);
}

int
jnl_record_emulator_pin(struct jnl *j, const char *uuid,
                        const struct cpuset *orig)
{
    struct jnl_entry e;

    if (!uuid || !uuid_valid(uuid) || !orig || cpuset_empty(orig)) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_EMULATOR_PIN;
    strcpy(e.uuid, uuid);
    e.cpus = *orig;
    return record(j, &e);
}

int
jnl_record_sysfs(struct jnl *j, const char *relpath, const char *orig)
{
    struct jnl_entry e;

    if (!relpath || !orig || !relpath_valid(relpath)
        || !value_valid(orig)) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_SYSFS;
    strcpy(e.path, relpath);
    strcpy(e.value, orig);
    return record(j, &e);
}

int
jnl_record_online(struct jnl *j, unsigned cpu, bool was_online)
{
    struct jnl_entry e;

    if (cpu >= POL_MAX_CPUS) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_ONLINE;
    e.cpu = cpu;
    e.online = was_online;
    return record(j, &e);
}

/* A housekeeping entry of 'kind' with 'key' (a path, or the IRQ number
 * for JNL_IRQ) and 'orig'. */
static int
record_hk(struct jnl *j, enum jnl_kind kind, const char *key, unsigned irq,
          const char *orig)
{
    struct jnl_entry e;

    if (!orig || !value_valid(orig) || strpbrk(orig, "\n\\")
        || (key && !relpath_valid(key)) || (kind == JNL_WQMASK && !*orig)) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = kind;
    if (key) {
        strcpy(e.path, key);
    }
    e.irq = irq;
    strcpy(e.value, orig);
    return record(j, &e);
}

int
jnl_record_cgroup(struct jnl *j, const char *relpath, const char *orig)
{
    return relpath ? record_hk(j, JNL_CGROUP, relpath, 0, orig) : -EINVAL;
}

int
jnl_record_unit(struct jnl *j, const char *unit, const char *orig)
{
    if (!unit || strchr(unit, '/')) {
        return -EINVAL;
    }
    return record_hk(j, JNL_UNIT, unit, 0, orig);
}

int
jnl_record_irq(struct jnl *j, unsigned irq, const char *orig)
{
    return record_hk(j, JNL_IRQ, NULL, irq, orig);
}

int
jnl_record_wqmask(struct jnl *j, const char *orig)
{
    return record_hk(j, JNL_WQMASK, NULL, 0, orig);
}

/* Records 'key' (with its last written value) if new, else sets the
 * last written value of its entry; saves if anything changed.  On an
 * error the journal is as before. */
static int
note_write(struct jnl *j, const struct jnl_entry *key)
{
    struct jnl_entry *e = find(j, key), old;
    int error;

    if (!e) {
        return jnl_add(j, key);
    }
    if (e->has_last && !strcmp(e->last, key->last)
        && e->last_online == key->last_online) {
        return 0;
    }
    old = *e;
    if (e->has_last) {
        /* Until the new value is written, the file holds this one. */
        e->has_prev = true;
        strcpy(e->prev, e->last);
        e->prev_online = e->last_online;
    }
    e->has_last = true;
    strcpy(e->last, key->last);
    e->last_online = key->last_online;
    error = jnl_save(j);
    if (error) {
        *e = old;                 /* Not on disk: not recorded. */
    }
    return error;
}

int
jnl_note_sysfs_write(struct jnl *j, const char *relpath, const char *orig,
                     const char *value)
{
    struct jnl_entry e;

    if (!relpath || !orig || !value || !relpath_valid(relpath)
        || !value_valid(orig) || !value_valid(value)) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_SYSFS;
    strcpy(e.path, relpath);
    strcpy(e.value, orig);
    e.has_last = true;
    strcpy(e.last, value);
    return note_write(j, &e);
}

int
jnl_note_online_write(struct jnl *j, unsigned cpu, bool was_online,
                      bool online)
{
    struct jnl_entry e;

    if (cpu >= POL_MAX_CPUS) {
        return -EINVAL;
    }
    memset(&e, 0, sizeof e);
    e.kind = JNL_ONLINE;
    e.cpu = cpu;
    e.online = was_online;
    e.has_last = true;
    e.last_online = online;
    return note_write(j, &e);
}

bool
jnl_has_sysfs(const struct jnl *j, const char *relpath, const char **value)
{
    for (size_t i = 0; i < j->n; i++) {
        if (j->e[i].kind == JNL_SYSFS && !strcmp(j->e[i].path, relpath)) {
            if (value) {
                *value = j->e[i].value;
            }
            return true;
        }
    }
    return false;
}

int
jnl_forget_domain(struct jnl *j, const char *uuid)
{
    size_t out = 0, old = j->n;

    for (size_t i = 0; i < j->n; i++) {
        const struct jnl_entry *e = &j->e[i];

        if ((e->kind == JNL_VCPU_PIN || e->kind == JNL_EMULATOR_PIN)
            && !strcmp(e->uuid, uuid)) {
            continue;
        }
        j->e[out++] = *e;
    }
    j->n = out;
    return out == old ? 0 : jnl_save(j);
}

int
jnl_foreach(const struct jnl *j, enum jnl_kind kind, jnl_entry_cb *cb,
            void *aux)
{
    int first = 0;

    for (size_t i = 0; i < j->n; i++) {
        if (kind == JNL_N_KINDS || j->e[i].kind == kind) {
            int error = cb(aux, &j->e[i]);

            if (error && !first) {
                first = error;
            }
        }
    }
    return first;
}

/* True if 'a' and 'b' are the same value but for trailing whitespace
 * (a sysfs file's newline). */
static bool
value_same(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);

    while (la && (a[la - 1] == '\n' || a[la - 1] == ' ')) {
        la--;
    }
    while (lb && (b[lb - 1] == '\n' || b[lb - 1] == ' ')) {
        lb--;
    }
    return la == lb && !memcmp(a, b, la);
}

/* True if the file of 'e' under 'root' holds neither what vpowerd last
 * wrote there nor the original: another writer's value, newer than both,
 * which a restore must not overwrite.  Logs it.  False without a last
 * written value, or if the file cannot be read (the restore then tries
 * and reports the error). */
static bool
changed_by_other(const struct jnl_entry *e, const char *root)
{
    char rel[32], cur[JNL_VALUE_LEN];
    const char *path = e->path, *last = e->last, *orig = e->value;
    const char *prev = e->has_prev ? e->prev : orig;

    if (!e->has_last) {
        return false;
    }
    if (e->kind == JNL_ONLINE) {
        snprintf(rel, sizeof rel, "cpu%u/online", e->cpu);
        path = rel;
        last = e->last_online ? "1" : "0";
        orig = e->online ? "1" : "0";
        prev = !e->has_prev ? orig : e->prev_online ? "1" : "0";
    }
    /* Empty is no writer's value (the kernel refuses an empty write);
     * it is what a crash in the middle of vpowerd's own write leaves in
     * a fixture tree (truncated, not yet written). */
    if (sysfs_read(root, path, cur, sizeof cur) <= 0
        || value_same(cur, last) || value_same(cur, orig)
        || value_same(cur, prev)) {
        return false;
    }
    LOG_WARN("restore %s: left as found, changed by another writer after "
             "vpowerd (vpowerd last wrote \"%.*s\", found \"%s\"; "
             "original \"%.*s\" not restored)", path,
             (int) strcspn(last, "\n"), last, cur,
             (int) strcspn(orig, "\n"), orig);
    return true;
}

int
jnl_restore_sysfs(const struct jnl *j, const char *root,
                  unsigned *n_failed)
{
    return jnl_restore_sysfs_counted(j, root, n_failed, NULL);
}

int
jnl_restore_sysfs_counted(const struct jnl *j, const char *root,
                          unsigned *n_failed, unsigned *n_foreign)
{
    bool *done = XNEWARRAY(bool, j->n + 1);
    unsigned failed = 0, foreign = 0;
    int first = 0;

    /* 0: an online state another writer changed after vpowerd stays as
     * it is (values are checked in 2, once their CPU is online). */
    for (size_t i = 0; i < j->n; i++) {
        const struct jnl_entry *e = &j->e[i];

        if (e->kind == JNL_ONLINE && changed_by_other(e, root)) {
            done[i] = true;
            foreign++;
        }
    }
    /* 1: CPUs that were online come back, so their files exist. */
    for (size_t i = 0; i < j->n; i++) {
        const struct jnl_entry *e = &j->e[i];
        char rel[32];

        if (e->kind == JNL_ONLINE && e->online && !done[i]) {
            snprintf(rel, sizeof rel, "cpu%u/online", e->cpu);
            int error = sysfs_write(root, rel, "1\n");

            done[i] = true;
            if (error) {
                LOG_ERR("restore %s <- 1: %s", rel, strerror(-error));
                failed++;
                first = first ? first : error;
            }
        }
    }
    /* 2: values, newest first, in two passes: a value refused because of
     * another one not yet restored (min above the current max) gets its
     * second chance once the others are back. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = j->n; i-- > 0;) {
            const struct jnl_entry *e = &j->e[i];
            int error;

            if (e->kind != JNL_SYSFS || done[i]) {
                continue;
            }
            if (pass == 0 && changed_by_other(e, root)) {
                done[i] = true;
                foreign++;
                continue;
            }
            error = sysfs_write(root, e->path, e->value);
            if (!error) {
                done[i] = true;
            } else if (pass == 1) {
                LOG_ERR("restore %s <- %.*s: %s", e->path,
                        (int) strcspn(e->value, "\n"), e->value,
                        strerror(-error));
                failed++;
                first = first ? first : error;
            }
        }
    }
    /* 3: CPUs that were offline go back offline (never CPU0). */
    for (size_t i = 0; i < j->n; i++) {
        const struct jnl_entry *e = &j->e[i];
        char rel[32];

        if (e->kind == JNL_ONLINE && !e->online && e->cpu != 0
            && !done[i]) {
            snprintf(rel, sizeof rel, "cpu%u/online", e->cpu);
            int error = sysfs_write(root, rel, "0\n");

            if (error) {
                LOG_ERR("restore %s <- 0: %s", rel, strerror(-error));
                failed++;
                first = first ? first : error;
            }
        }
    }
    free(done);
    if (n_failed) {
        *n_failed = failed;
    }
    if (n_foreign) {
        *n_foreign = foreign;
    }
    return first;
}

/* ---- Loading ----------------------------------------------------------- */

/* Refuses a journal directory another user could write to: they could
 * put a journal of their own there, which vpowerd replays as root. */
static int
check_dir(const char *path, char *err, size_t errlen)
{
    char *copy = xstrdup(path);
    int error = util_check_trusted_dir(dirname(copy), "journal directory",
                                       "plant a journal that vpowerd "
                                       "replays as root", err, errlen);

    free(copy);
    return error;
}

/* Reads the journal at 'path' if it is a regular file vpowerd can trust;
 * -ENOENT without a message if there is none. */
static int
read_file(const char *path, char **text, char *err, size_t errlen)
{
    struct stat st;
    char *buf;
    size_t got = 0;
    int fd, error;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        error = -errno;
        if (error == -ELOOP) {
            snprintf(err, errlen, "journal %s is a symlink; vpowerd writes "
                     "it itself and never follows one (remove it)", path);
        } else if (error != -ENOENT) {
            snprintf(err, errlen, "%s: %s", path, strerror(-error));
        }
        return error;
    }
    if (fstat(fd, &st) < 0) {
        error = -errno;
        snprintf(err, errlen, "%s: %s", path, strerror(-error));
        close(fd);
        return error;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "journal %s is not a regular file (remove "
                 "it)", path);
        close(fd);
        return -EINVAL;
    }
    error = util_check_trusted(path, &st, "journal", "forge the values "
                               "vpowerd restores as root", err, errlen);
    if (error) {
        close(fd);
        return error;
    }
    if (st.st_size > JNL_MAX_FILE) {
        snprintf(err, errlen, "journal %s: larger than %d bytes", path,
                 JNL_MAX_FILE);
        close(fd);
        return -EFBIG;
    }
    buf = xmalloc((size_t) st.st_size + 1);
    while (got < (size_t) st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t) st.st_size - got);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            error = n < 0 ? -errno : -EIO;
            snprintf(err, errlen, "%s: %s", path, strerror(-error));
            free(buf);
            close(fd);
            return error;
        }
        got += (size_t) n;
    }
    close(fd);
    buf[got] = '\0';
    if (strlen(buf) != got) {
        snprintf(err, errlen, "%s: NUL byte (not a vpower journal)", path);
        free(buf);
        return -EINVAL;
    }
    *text = buf;
    return 0;
}

/* Undoes format_entry()'s escapes of a version 2 sysfs value, in place;
 * false on an unknown escape. */
static bool
unescape(char *v)
{
    char *out = v;

    for (; *v; v++) {
        if (*v != '\\') {
            *out++ = *v;
        } else if (v[1] == 'n' || v[1] == '\\') {
            *out++ = v[1] == 'n' ? '\n' : '\\';
            v++;
        } else {
            return false;
        }
    }
    *out = '\0';
    return true;
}

static int
parse_uint(const char *s, unsigned max, unsigned *out)
{
    uint64_t v;

    if (num_parse_u64(s, max, &v)) {
        return -EINVAL;
    }
    *out = (unsigned) v;
    return 0;
}

/* Parses a housekeeping line ("cgroup", "unit", "irq" or "wqmask") into
 * 'e'; returns a reason, or NULL (and sets '*done') if it was one. */
static const char *
parse_hk_line(char *line, struct jnl_entry *e, bool *done)
{
    static const struct {
        const char *kw;
        enum jnl_kind kind;
    } kws[] = {
        { "cgroup ", JNL_CGROUP }, { "unit ", JNL_UNIT },
        { "irq ", JNL_IRQ }, { "wqmask ", JNL_WQMASK },
    };
    char *key, *val;
    size_t i;

    for (i = 0; i < sizeof kws / sizeof kws[0]; i++) {
        if (!strncmp(line, kws[i].kw, strlen(kws[i].kw))) {
            break;
        }
    }
    *done = i < sizeof kws / sizeof kws[0];
    if (!*done) {
        return NULL;
    }
    e->kind = kws[i].kind;
    key = line + strlen(kws[i].kw);
    val = key;
    if (e->kind != JNL_WQMASK) {
        val = strchr(key, ' ');
        if (!val) {
            return "housekeeping entry: expected KEY VALUE";
        }
        *val++ = '\0';
    }
    if (!value_valid(val) || strchr(val, '\\')
        || (e->kind == JNL_WQMASK && !*val)) {
        return "housekeeping entry: bad value";
    }
    if (e->kind == JNL_IRQ) {
        if (parse_uint(key, 1u << 24, &e->irq)) {
            return "irq: bad IRQ number";
        }
    } else if (e->kind != JNL_WQMASK) {
        if (!relpath_valid(key)
            || (e->kind == JNL_UNIT && strchr(key, '/'))) {
            return "housekeeping entry: bad path or unit";
        }
        strcpy(e->path, key);
    }
    strcpy(e->value, val);
    return NULL;
}

/* Parses one line (modified in place) of a journal of format 'version'
 * into 'e'; returns a reason or NULL. */
static const char *
parse_line(char *line, int version, struct jnl_entry *e)
{
    char *save, *kw, *a, *b, *c;
    const char *reason;
    bool hk;

    memset(e, 0, sizeof *e);
    reason = parse_hk_line(line, e, &hk);
    if (hk) {
        return reason;
    }
    if (!strncmp(line, "sysfs ", 6)) {
        char *path = line + 6;
        char *sp = strchr(path, ' ');

        if (!sp) {
            return "sysfs: expected PATH VALUE";
        }
        *sp = '\0';
        if (!relpath_valid(path)) {
            return "sysfs: bad path";
        }
        if (version > 1 && !unescape(sp + 1)) {
            return "sysfs: bad escape in value";
        }
        if (!value_valid(sp + 1)) {
            return "sysfs: bad value";
        }
        e->kind = JNL_SYSFS;
        strcpy(e->path, path);
        strcpy(e->value, sp + 1);
        return NULL;
    }
    kw = strtok_r(line, " ", &save);
    a = strtok_r(NULL, " ", &save);
    b = strtok_r(NULL, " ", &save);
    c = strtok_r(NULL, " ", &save);
    if (!kw) {
        return "empty line";
    }
    if (!strcmp(kw, "vcpu")) {
        if (!a || !b || !c || strtok_r(NULL, " ", &save)) {
            return "vcpu: expected UUID VCPU CPULIST";
        }
        if (!uuid_valid(a)) {
            return "vcpu: bad UUID";
        }
        if (parse_uint(b, 65535, &e->vcpu)) {
            return "vcpu: bad vCPU number";
        }
        if (cpuset_parse(&e->cpus, c) || cpuset_empty(&e->cpus)) {
            return "vcpu: bad CPU list";
        }
        e->kind = JNL_VCPU_PIN;
        strcpy(e->uuid, a);
    } else if (!strcmp(kw, "emulator")) {
        if (!a || !b || c) {
            return "emulator: expected UUID CPULIST";
        }
        if (!uuid_valid(a)) {
            return "emulator: bad UUID";
        }
        if (cpuset_parse(&e->cpus, b) || cpuset_empty(&e->cpus)) {
            return "emulator: bad CPU list";
        }
        e->kind = JNL_EMULATOR_PIN;
        strcpy(e->uuid, a);
    } else if (!strcmp(kw, "online")) {
        unsigned v;

        if (!a || !b || c) {
            return "online: expected CPU 0|1";
        }
        if (parse_uint(a, POL_MAX_CPUS - 1, &e->cpu)) {
            return "online: bad CPU number";
        }
        if (parse_uint(b, 1, &v)) {
            return "online: expected 0 or 1";
        }
        e->kind = JNL_ONLINE;
        e->online = v;
    } else {
        return "unknown entry";
    }
    return NULL;
}

/* A wrote or wrote-online line (modified in place): the last written
 * value of the entry on the line before it; returns a reason or NULL. */
static const char *
parse_wrote(struct jnl *j, char *line)
{
    struct jnl_entry *e = j->n ? &j->e[j->n - 1] : NULL;
    char *save, *a, *b, *sp;

    bool prev;

    if (!strncmp(line, "wrote-online ", 13)) {
        unsigned cpu, v, p = 0;
        char *c;

        a = strtok_r(line + 13, " ", &save);
        b = strtok_r(NULL, " ", &save);
        c = strtok_r(NULL, " ", &save);
        if (!a || !b || strtok_r(NULL, " ", &save)
            || parse_uint(a, POL_MAX_CPUS - 1, &cpu)
            || parse_uint(b, 1, &v) || (c && parse_uint(c, 1, &p))) {
            return "wrote-online: expected CPU 0|1 [0|1]";
        }
        if (!e || e->kind != JNL_ONLINE || e->cpu != cpu || e->has_last) {
            return "wrote-online: not right after its CPU's online line";
        }
        e->has_last = true;
        e->last_online = v;
        e->has_prev = c != NULL;
        e->prev_online = p;
        return NULL;
    }
    prev = !strncmp(line, "wrote-prev ", 11);
    if (!prev && strncmp(line, "wrote ", 6)) {
        return "unknown entry";
    }
    a = line + (prev ? 11 : 6);
    sp = strchr(a, ' ');
    if (!sp) {
        return "wrote: expected PATH VALUE";
    }
    *sp = '\0';
    if (!unescape(sp + 1) || !value_valid(sp + 1)) {
        return "wrote: bad value";
    }
    if (!e || e->kind != JNL_SYSFS || strcmp(e->path, a)
        || (prev ? !e->has_last || e->has_prev : e->has_last)) {
        return prev ? "wrote-prev: not right after the wrote line of its "
                      "path"
                    : "wrote: not right after the sysfs line of its path";
    }
    if (prev) {
        e->has_prev = true;
        strcpy(e->prev, sp + 1);
    } else {
        e->has_last = true;
        strcpy(e->last, sp + 1);
    }
    return NULL;
}

int
jnl_load(const char *path, struct jnl **out, char *err, size_t errlen)
{
    struct jnl *j;
    char *text = NULL, *line, *next;
    const char *reason = NULL;
    unsigned lineno = 0;
    bool ended = false;
    int version = 0, error;

    error = check_dir(path, err, errlen);
    if (!error) {
        error = read_file(path, &text, err, errlen);
    }
    if (error) {
        return error;
    }
    j = jnl_new(path);
    for (line = text; line && *line; line = next) {
        struct jnl_entry e;

        next = strchr(line, '\n');
        if (!next) {
            reason = "last line not terminated (truncated journal)";
            lineno++;
            break;
        }
        *next++ = '\0';
        lineno++;
        if (ended) {
            reason = "data after the end line";
            break;
        }
        if (lineno == 1) {
            version = !strcmp(line, JNL_MAGIC) ? 3
                      : !strcmp(line, JNL_MAGIC_V2) ? 2
                      : !strcmp(line, JNL_MAGIC_V1) ? 1 : 0;
            if (!version) {
                reason = "not a vpower journal (bad first line)";
                break;
            }
            continue;
        }
        if (!strncmp(line, "end ", 4)) {
            unsigned count;

            if (parse_uint(line + 4, JNL_MAX_ENTRIES, &count)
                || count != j->n) {
                reason = "entry count does not match the end line";
                break;
            }
            ended = true;
            continue;
        }
        if (version >= 3 && !strncmp(line, "wrote", 5)) {
            reason = parse_wrote(j, line);
            if (reason) {
                break;
            }
            continue;
        }
        reason = parse_line(line, version, &e);
        if (reason) {
            break;
        }
        if (find(j, &e)) {
            reason = "duplicate entry";
            break;
        }
        if (j->n >= JNL_MAX_ENTRIES) {
            reason = "too many entries";
            break;
        }
        if (j->n == j->cap) {
            j->cap = j->cap ? j->cap * 2 : 16;
            j->e = xrealloc(j->e, j->cap * sizeof *j->e);
        }
        j->e[j->n++] = e;
    }
    if (!reason && !ended) {
        reason = "no end line (truncated journal)";
        lineno++;
    }
    free(text);
    if (reason) {
        snprintf(err, errlen, "%s:%u: %s", path, lineno, reason);
        jnl_close(j);
        return -EINVAL;
    }
    *out = j;
    return 0;
}
