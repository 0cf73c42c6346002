/* sim/trace_record.c -- Reader of vpowerd recordings for replay.
 *
 * Parses the line format of docs/record-format.md (version 1) block by
 * block and hands each decision to the format-free replayer
 * (sim/replay.c), which runs the daemon's cycle on it and compares the
 * plans.  Every number is parsed strictly;
 * a malformed line rejects the file with FILE:LINE. */

#include <config.h>

#include "sim/replay.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/trace.h"
#include "manager/record.h"
#include "policy/num.h"

#define REC_MAX_TOKENS 512

bool
record_probe(const char *path)
{
    struct stat st;
    char buf[8] = "";
    FILE *f;
    bool yes;

    if (stat(path, &st) || !S_ISREG(st.st_mode)) {
        return false;
    }
    f = fopen(path, "rb");
    if (!f) {
        return false;
    }
    yes = fread(buf, 1, 6, f) == 6 && !memcmp(buf, "VPREC ", 6);
    fclose(f);
    return yes;
}

/* Parser state of one file. */
struct rp {
    const char *path;
    size_t line;
    char *err;
    size_t errlen;
    struct pol_model model;
    struct pol_config cfg;
    char *mt;                     /* Model text so far. */
    size_t mt_len, mt_cap;
    uint64_t mt_hash;
    int stage;                    /* 0 before VPREC, 1 header, 2 model
                                   * read, 3 in a block. */
    struct replay *r;
    /* The block being read. */
    struct replay_decision d;
    size_t block_line;
    struct pol_vm *vms;
    uint64_t *keys;
    size_t n_vms, cap_vms;
    struct replay_obs *obs;
    size_t n_vcpus, cap_vcpus;
    bool have_s;                  /* A pending S line ... */
    struct replay_obs s;          /* ... for the next V line. */
    size_t vm_vcpus_left;         /* V lines the last VM still needs. */
    struct pol_plan *rec, *out;
    size_t plan_vms, plan_vcpus;
    bool have_p;
    size_t n_pv;
    char **uuids;                 /* uuid -> key (index). */
    size_t n_uuids;
    uint64_t first_now;
    bool have_first;
    uint32_t busy[POL_MAX_CPUS];  /* C lines of the block: busy share */
    uint32_t khz[POL_MAX_CPUS];   /* and frequency (UINT32_MAX / 0 none). */
};

/* Writes "FILE:LINE: reason" into the error buffer; 'arg' (input text,
 * for the one %s of 'fmt') is escaped and cut short (trace_esc()). */
static int
bad(struct rp *p, const char *fmt, const char *arg)
{
    char reason[300], q[200];

    trace_esc(q, sizeof q, arg, strlen(arg), 40);
    snprintf(reason, sizeof reason, fmt, q);
    snprintf(p->err, p->errlen, "%s:%zu: %s", p->path, p->line, reason);
    return -EINVAL;
}

static bool
u64_of(const char *s, uint64_t *out)
{
    return num_parse_u64(s, UINT64_MAX, out) == 0;
}

static bool
u32_of(const char *s, uint32_t *out)
{
    uint64_t v;

    if (!u64_of(s, &v) || v > UINT32_MAX) {
        return false;
    }
    *out = (uint32_t) v;
    return true;
}

static bool
i32_of(const char *s, int32_t *out)
{
    uint32_t v;

    if (!strcmp(s, "-1")) {
        *out = -1;
        return true;
    }
    if (!u32_of(s, &v) || v > INT32_MAX) {
        return false;
    }
    *out = (int32_t) v;
    return true;
}

static bool
set_of(const char *s, struct cpuset *set)
{
    if (!strcmp(s, "-")) {
        cpuset_zero(set);
        return true;
    }
    return cpuset_parse(set, s) == 0;
}

/* Comma-separated list of exactly 'n' numbers ("-1" allowed if 'neg'). */
static bool
list_of(const char *s, unsigned n, bool neg, int64_t *out)
{
    char buf[8192], *save = NULL, *tok;
    unsigned k = 0;

    if (strlen(s) >= sizeof buf) {
        return false;
    }
    strcpy(buf, s);
    for (tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int32_t v;
        uint32_t u;

        if (k == n) {
            return false;
        }
        if (neg ? !i32_of(tok, &v) : !u32_of(tok, &u)) {
            return false;
        }
        out[k++] = neg ? (int64_t) v : (int64_t) u;
    }
    return k == n;
}

static void *
grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) {
        return p;
    }
    *cap = need > 2 * *cap ? need : 2 * *cap;
    p = realloc(p, *cap * size);
    if (!p) {
        abort();
    }
    return p;
}

static int
conf_line(struct rp *p, char **tok, size_t nt)
{
    pol_config_default(&p->cfg);
    /* A recording that does not name it was made without it. */
    p->cfg.saturation_turbo = false;
    for (size_t i = 1; i < nt; i++) {
        char *eq = strchr(tok[i], '=');
        uint64_t v;

        if (!eq || !u64_of(eq + 1, &v)) {
            return bad(p, "CONF item '%s' is not key=number", tok[i]);
        }
        *eq = '\0';
#define KEY(NAME, FIELD, MAX)                                           \
        if (!strcmp(tok[i], NAME)) {                                    \
            if (v > (MAX)) {                                            \
                return bad(p, "CONF %s out of range", NAME);            \
            }                                                           \
            p->cfg.FIELD = v;                                           \
            continue;                                                   \
        }
        KEY("headroom_pct", headroom_pct, 100)
        KEY("powersave_headroom_pct", powersave_headroom_pct, 100)
        KEY("spread_ready_ppm", spread_ready_ppm, 1000000)
        KEY("pack_dwell_ns", pack_dwell_ns, UINT64_MAX)
        KEY("warmup_samples", warmup_samples, UINT32_MAX)
        KEY("min_interval_ns", min_interval_ns, UINT64_MAX)
        KEY("max_interval_ns", max_interval_ns, UINT64_MAX)
        KEY("allow_offline", allow_offline, 1)
        KEY("use_turbo", use_turbo, 1)
        KEY("saturation_turbo", saturation_turbo, 1)
        KEY("max_vcpus", max_vcpus, 1u << 20)
#undef KEY
        return bad(p, "CONF key '%s' unknown to this reader", tok[i]);
    }
    return 0;
}

static uint64_t
key_of(struct rp *p, const char *uuid)
{
    for (size_t i = 0; i < p->n_uuids; i++) {
        if (!strcmp(p->uuids[i], uuid)) {
            return i;
        }
    }
    p->uuids = realloc(p->uuids, (p->n_uuids + 1) * sizeof *p->uuids);
    if (!p->uuids || !(p->uuids[p->n_uuids] = strdup(uuid))) {
        abort();
    }
    return p->n_uuids++;
}

static int
vm_line(struct rp *p, char **tok, size_t nt)
{
    struct pol_vm *v;
    uint32_t i;
    uint64_t key;

    if (nt != 18) {
        return bad(p, "VM line has %s tokens, expected 18",
                   nt > 18 ? "more" : "fewer");
    }
    if (p->vm_vcpus_left) {
        char n[24];

        snprintf(n, sizeof n, "%zu", p->vm_vcpus_left);
        return bad(p, "VM line before the previous VM's V lines are "
                   "complete (%s missing)", n);
    }
    if (!u32_of(tok[1], &i) || i != p->n_vms) {
        return bad(p, "VM index '%s' out of order", tok[1]);
    }
    p->vms = grow(p->vms, &p->cap_vms, p->n_vms + 1, sizeof *p->vms);
    p->keys = realloc(p->keys, p->cap_vms * sizeof *p->keys);
    if (!p->keys) {
        abort();
    }
    v = &p->vms[p->n_vms];
    memset(v, 0, sizeof *v);
    key = key_of(p, tok[3]);
    if (!u32_of(tok[4], &v->id)) {
        return bad(p, "bad VM id '%s'", tok[4]);
    }
    if (pol_kind_parse(tok[5], &v->policy.kind)) {
        return bad(p, "unknown policy '%s'", tok[5]);
    }
    {
        uint32_t b[4];

        if (!u32_of(tok[6], &v->policy.latency_us)
            || !u32_of(tok[7], &v->policy.min_freq_khz)
            || !u32_of(tok[8], &b[0]) || b[0] > 1
            || !u32_of(tok[9], &b[1]) || b[1] > 1
            || !u32_of(tok[10], &b[2]) || b[2] > 1
            || !set_of(tok[11], &v->fixed)
            || !u32_of(tok[12], &v->n_vcpus)
            || !u64_of(tok[13], &v->hints.latency_until_ns)
            || !u32_of(tok[14], &v->hints.latency_us)
            || !u64_of(tok[15], &v->hints.boost_until_ns)
            || !u64_of(tok[16], &v->hints.idle_until_ns)
            || !u64_of(tok[17], &v->hints.batch_until_ns)) {
            return bad(p, "malformed VM line%s", "");
        }
        v->policy.never_offline = b[0];
        v->policy.share_smt = b[1];
        v->unmanaged = b[2];
    }
    if (v->n_vcpus > 4096) {
        return bad(p, "VM with more than 4096 vCPUs%s", "");
    }
    v->first_vcpu = (uint32_t) p->n_vcpus;
    p->keys[p->n_vms] = key;
    p->n_vms++;
    p->vm_vcpus_left = v->n_vcpus;
    return 0;
}

static int
s_line(struct rp *p, char **tok, size_t nt)
{
    struct replay_obs *o = &p->s;

    if (nt != 8 || p->have_s) {
        return bad(p, "%s", nt != 8 ? "S line needs 7 numbers"
                                    : "two S lines for one V line");
    }
    if (!u32_of(tok[1], &o->vm) || !u32_of(tok[2], &o->idx)
        || !i32_of(tok[3], &o->s_cpu) || !u32_of(tok[4], &o->freq_khz)
        || !u64_of(tok[5], &o->busy_ns) || !u64_of(tok[6], &o->ready_ns)
        || !u64_of(tok[7], &o->interval_ns)) {
        return bad(p, "malformed S line%s", "");
    }
    p->have_s = true;
    return 0;
}

static int
v_line(struct rp *p, char **tok, size_t nt)
{
    struct replay_obs o;

    memset(&o, 0, sizeof o);
    if (nt != 4 || !u32_of(tok[1], &o.vm) || !u32_of(tok[2], &o.idx)
        || !i32_of(tok[3], &o.cpu)) {
        return bad(p, "malformed V line%s", "");
    }
    if (!p->n_vms || o.vm != p->n_vms - 1 || !p->vm_vcpus_left) {
        return bad(p, "V line for VM %s outside its VM's lines", tok[1]);
    }
    if (p->have_s) {
        if (p->s.vm != o.vm || p->s.idx != o.idx) {
            return bad(p, "S line does not match this V line%s", "");
        }
        o.s_cpu = p->s.s_cpu;
        o.freq_khz = p->s.freq_khz;
        o.busy_ns = p->s.busy_ns;
        o.ready_ns = p->s.ready_ns;
        o.interval_ns = p->s.interval_ns;
        if (!o.interval_ns) {
            return bad(p, "S line with a zero interval%s", "");
        }
        p->have_s = false;
    }
    p->obs = grow(p->obs, &p->cap_vcpus, p->n_vcpus + 1, sizeof *p->obs);
    p->obs[p->n_vcpus++] = o;
    p->vm_vcpus_left--;
    return 0;
}

static void
plans_fit(struct rp *p)
{
    if (p->n_vms <= p->plan_vms && p->n_vcpus <= p->plan_vcpus && p->rec) {
        return;
    }
    pol_plan_destroy(p->rec);
    pol_plan_destroy(p->out);
    p->plan_vms = p->n_vms > p->plan_vms ? p->n_vms : p->plan_vms;
    p->plan_vcpus = p->n_vcpus > p->plan_vcpus ? p->n_vcpus
                                                : p->plan_vcpus;
    p->rec = pol_plan_create(p->plan_vms ? p->plan_vms : 1,
                             p->plan_vcpus ? p->plan_vcpus : 1);
    p->out = pol_plan_create(p->plan_vms ? p->plan_vms : 1,
                             p->plan_vcpus ? p->plan_vcpus : 1);
}

static int
p_line(struct rp *p, char **tok, size_t nt)
{
    static int64_t vals[POL_MAX_CPUS > POL_MAX_DOMAINS ? POL_MAX_CPUS
                                                       : POL_MAX_DOMAINS];
    struct pol_plan *pl;

    if (p->vm_vcpus_left || p->have_s) {
        return bad(p, "P line before the last VM's V lines%s", "");
    }
    plans_fit(p);
    pl = p->rec;
    pl->n_vms = p->n_vms;
    pl->n_vcpus = p->n_vcpus;
    if (nt != 7 || !set_of(tok[1], &pl->active)
        || !set_of(tok[2], &pl->offline)
        || !u64_of(tok[3], &pl->next_interval_ns)
        || !u32_of(tok[4], &pl->est_power_mw)) {
        return bad(p, "malformed P line%s", "");
    }
    if (!list_of(tok[5], p->model.n_domains, false, vals)) {
        return bad(p, "P needs one frequency per model domain%s", "");
    }
    for (unsigned d = 0; d < p->model.n_domains; d++) {
        pl->dom_freq_khz[d] = (uint32_t) vals[d];
    }
    if (!list_of(tok[6], p->model.n_cpus, true, vals)) {
        return bad(p, "P needs one idle limit per CPU%s", "");
    }
    for (unsigned c = 0; c < p->model.n_cpus; c++) {
        if (vals[c] < -1 || vals[c] > 127) {
            return bad(p, "idle limit out of range%s", "");
        }
        pl->idle_limit[c] = (int8_t) vals[c];
    }
    p->have_p = true;
    p->n_pv = 0;
    return 0;
}

static int
pv_line(struct rp *p, char **tok, size_t nt)
{
    uint32_t i, reason;
    const struct pol_vm *v;

    if (!p->have_p || nt < 4 || !u32_of(tok[1], &i) || i != p->n_pv
        || i >= p->n_vms) {
        return bad(p, "PV line out of order or outside a plan%s", "");
    }
    v = &p->vms[i];
    if (nt != 4 + v->n_vcpus) {
        return bad(p, "PV line needs one allowed set per vCPU%s", "");
    }
    if (!u32_of(tok[2], &reason) || reason >= POL_N_REASONS
        || !set_of(tok[3], &p->rec->vm_emulator[i])) {
        return bad(p, "malformed PV line%s", "");
    }
    p->rec->vm_reason[i] = (uint8_t) reason;
    for (uint32_t k = 0; k < v->n_vcpus; k++) {
        if (!set_of(tok[4 + k], &p->rec->vcpu_allowed[v->first_vcpu + k])) {
            return bad(p, "bad allowed set '%s'", tok[4 + k]);
        }
        p->rec->vcpu_vm[v->first_vcpu + k] = i;
    }
    p->n_pv++;
    return 0;
}

static int
e_line(struct rp *p, struct record_stats *st)
{
    char what[256] = "";
    int rc;

    if (!p->have_p || p->n_pv != p->n_vms) {
        return bad(p, "E before the whole plan (P and one PV per VM)%s",
                   "");
    }
    plans_fit(p);
    p->d.vms = p->vms;
    p->d.n_vms = p->n_vms;
    p->d.obs = p->obs;
    p->d.n_vcpus = p->n_vcpus;
    p->d.recorded = p->rec;
    p->d.vm_key = p->keys;
    rc = replay_step(p->r, &p->d, p->out, what, sizeof what);
    if (rc < 0) {
        return bad(p, "%s", what);
    }
    st->blocks++;
    if (rc == 0) {
        st->same++;
    } else {
        if (!st->differ) {
            st->first_line = p->block_line;
            st->first_now_ns = p->d.now_ns;
            snprintf(st->first_what, sizeof st->first_what, "%s", what);
        }
        st->differ++;
    }
    st->max_vms = p->n_vms > st->max_vms ? p->n_vms : st->max_vms;
    st->max_vcpus = p->n_vcpus > st->max_vcpus ? p->n_vcpus
                                               : st->max_vcpus;
    if (!p->have_first) {
        p->first_now = p->d.now_ns;
        p->have_first = true;
    }
    st->span_ns = p->d.now_ns - p->first_now;
    p->stage = 2;
    return 0;
}

/* C <cpu> <ran_khz> <cur_khz> <busy_ppm> <idle deltas>: the per-CPU part
 * of pol_input (busy share and frequency it ran at). */
static int
c_line(struct rp *p, char **tok, size_t nt)
{
    uint32_t cpu, khz, cur, busy;

    if (nt != 6 || !u32_of(tok[1], &cpu) || !u32_of(tok[2], &khz)
        || !u32_of(tok[3], &cur) || !u32_of(tok[4], &busy)) {
        return bad(p, "malformed C line%s", "");
    }
    if (cpu >= p->model.n_cpus || cpu >= POL_MAX_CPUS) {
        return bad(p, "C line names CPU %s outside the model", tok[1]);
    }
    if (busy > 1000000) {
        return bad(p, "C line busy share %s ppm above 1000000", tok[4]);
    }
    p->busy[cpu] = busy;
    p->khz[cpu] = khz;
    return 0;
}

static int
t_line(struct rp *p, char **tok, size_t nt)
{
    int64_t caps[POL_MAX_DOMAINS];
    uint64_t interval;
    uint32_t ov;

    memset(&p->d, 0, sizeof p->d);
    if (nt != 8 || !u64_of(tok[1], &p->d.now_ns)
        || !u64_of(tok[2], &interval)
        || (strcmp(tok[3], "sample") && strcmp(tok[3], "kick"))
        || !u32_of(tok[4], &ov) || ov > 1
        || !set_of(tok[5], &p->d.managed) || !set_of(tok[6], &p->d.online)
        || !list_of(tok[7], p->model.n_domains, false, caps)) {
        return bad(p, "malformed T line%s", "");
    }
    p->d.override_performance = ov;
    p->d.sample = !strcmp(tok[3], "sample");
    p->d.interval_ns = interval;
    for (unsigned d = 0; d < p->model.n_domains; d++) {
        p->d.thermal_cap_khz[d] = (uint32_t) caps[d];
    }
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        p->busy[c] = UINT32_MAX;
        p->khz[c] = 0;
    }
    p->d.cpu_busy_ppm = p->busy;
    p->d.cpu_ran_khz = p->khz;
    p->n_vms = p->n_vcpus = 0;
    p->have_s = p->have_p = false;
    p->vm_vcpus_left = 0;
    p->n_pv = 0;
    p->block_line = p->line;
    p->stage = 3;
    return 0;
}

static int
header_line(struct rp *p, char **tok, size_t nt, struct record_stats *st)
{
    if (!strcmp(tok[0], "CONF")) {
        return conf_line(p, tok, nt);
    }
    if (!strcmp(tok[0], "MODEL")) {
        char *end;

        if (nt != 3 || strlen(tok[2]) != 16) {
            return bad(p, "malformed MODEL line%s", "");
        }
        /* Printed by vpower-sim: escaped like every quoted input. */
        trace_esc(st->model_src, sizeof st->model_src, tok[1],
                  strlen(tok[1]), SIZE_MAX);
        p->mt_hash = strtoull(tok[2], &end, 16);
        if (*end) {
            return bad(p, "bad model hash '%s'", tok[2]);
        }
        return 0;
    }
    if (!strcmp(tok[0], "ME")) {
        char err[256];

        if (rec_fnv1a64(p->mt, p->mt_len) != p->mt_hash) {
            return bad(p, "model text does not match its MODEL hash%s",
                       "");
        }
        p->mt = grow(p->mt, &p->mt_cap, p->mt_len + 1, 1);
        p->mt[p->mt_len] = '\0';
        if (pol_model_parse(&p->model, p->mt, err, sizeof err)) {
            char q[200];

            trace_esc(q, sizeof q, err, strlen(err), 150);
            snprintf(p->err, p->errlen, "%s:%zu: embedded model: %s",
                     p->path, p->line, q);
            return -EINVAL;
        }
        p->r = replay_create(&p->model, &p->cfg);
        if (!p->r) {
            return bad(p, "cannot create the policy state%s", "");
        }
        p->stage = 2;
        return 0;
    }
    return 0;                         /* Unknown header line: skip. */
}

int
record_replay(const char *path, size_t max_bytes, struct record_stats *st,
              char *err, size_t errlen)
{
    struct rp p;
    char *text = NULL, *line, *next, dir[4096];
    const char *slash = strrchr(path, '/');
    size_t len;
    int rc;

    memset(st, 0, sizeof *st);
    memset(&p, 0, sizeof p);
    p.path = path;
    p.err = err;
    p.errlen = errlen;
    pol_config_default(&p.cfg);
    if (slash) {
        snprintf(dir, sizeof dir, "%.*s", (int) (slash - path), path);
    } else {
        snprintf(dir, sizeof dir, ".");
    }
    rc = trace_read_file_max(slash == path ? "" : dir,
                             slash ? slash + 1 : path, max_bytes, &text,
                             &len, err, errlen);
    if (rc) {
        return rc;
    }
    if (strlen(text) != len) {
        free(text);
        snprintf(err, errlen, "%s: contains a NUL byte", path);
        return -EINVAL;
    }
    for (line = text; !rc && line && *line; line = next) {
        char *tok[REC_MAX_TOKENS], *save = NULL, *raw = line;
        size_t nt = 0;

        next = strchr(line, '\n');
        if (next) {
            *next++ = '\0';
        } else if (p.stage == 3) {
            break;                    /* Cut mid-line in a block. */
        }
        p.line++;
        if (p.stage == 1 && !strncmp(raw, "MT ", 3)) {
            size_t n = strlen(raw + 3);

            p.mt = grow(p.mt, &p.mt_cap, p.mt_len + n + 2, 1);
            memcpy(p.mt + p.mt_len, raw + 3, n);
            p.mt_len += n;
            p.mt[p.mt_len++] = '\n';
            continue;
        }
        for (char *t = strtok_r(line, " ", &save); t;
             t = strtok_r(NULL, " ", &save)) {
            if (nt == REC_MAX_TOKENS) {
                rc = bad(&p, "more than %s tokens", "512");
                break;
            }
            tok[nt++] = t;
        }
        if (rc) {
            break;
        }
        if (!nt) {
            rc = bad(&p, "empty line%s", "");
            break;
        }
        if (p.stage == 0) {
            if (strcmp(tok[0], "VPREC") || nt < 2) {
                rc = bad(&p, "not a vpowerd recording (no VPREC header)%s",
                         "");
            } else if (strcmp(tok[1], "1")) {
                rc = bad(&p, "record format version %s, this reader "
                         "knows 1", tok[1]);
            }
            p.stage = 1;
            continue;
        }
        if (p.stage == 1) {
            rc = header_line(&p, tok, nt, st);
            continue;
        }
        if (!strcmp(tok[0], "L")) {
            st->l_ignored++;          /* Raw bytes: see replay.h. */
            continue;
        }
        if (p.stage == 2) {
            if (!strcmp(tok[0], "T")) {
                rc = t_line(&p, tok, nt);
            } else if (!strcmp(tok[0], "VPREC")) {
                rc = bad(&p, "second header in one file%s", "");
            } else if (!strcmp(tok[0], "VM") || !strcmp(tok[0], "S")
                       || !strcmp(tok[0], "V") || !strcmp(tok[0], "P")
                       || !strcmp(tok[0], "PV") || !strcmp(tok[0], "E")) {
                rc = bad(&p, "%s line outside a block", tok[0]);
            }
            continue;
        }
        if (!strcmp(tok[0], "C")) {
            rc = c_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "VM")) {
            rc = vm_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "S")) {
            rc = s_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "V")) {
            rc = v_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "P")) {
            rc = p_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "PV")) {
            rc = pv_line(&p, tok, nt);
        } else if (!strcmp(tok[0], "E")) {
            rc = e_line(&p, st);
        } else if (!strcmp(tok[0], "T")) {
            rc = bad(&p, "T line inside a block (no E before it)%s", "");
        }
    }
    if (!rc && p.stage < 2) {
        p.line++;
        rc = bad(&p, "recording ends inside its header%s", "");
    }
    st->truncated = !rc && p.stage == 3;
    replay_destroy(p.r);
    pol_plan_destroy(p.rec);
    pol_plan_destroy(p.out);
    for (size_t i = 0; i < p.n_uuids; i++) {
        free(p.uuids[i]);
    }
    free(p.uuids);
    free(p.vms);
    free(p.keys);
    free(p.obs);
    free(p.mt);
    free(text);
    if (rc) {
        struct record_stats zero;

        memset(&zero, 0, sizeof zero);
        *st = zero;
    }
    return rc;
}
