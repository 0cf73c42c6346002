/* manager/record.c -- Writer of vpowerd's replay record.
 *
 * The daemon's cycle (manager/daemon.c) calls rec_cycle() once per
 * decision, after pol_decide() and before the plan is applied; this
 * module only formats what it is handed and owns the file: header per
 * file (version, pol_config, the model as energy-model text), one block
 * per decision, rotation to FILE.1 past the size limit.  The format is
 * docs/record-format.md; a change to what is written there is a change
 * of REC_VERSION. */

#include <config.h>

#include "manager/record.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "record"

#define SET_LEN 8192

struct rec {
    char *path;
    FILE *f;
    uint64_t max_bytes;
    uint64_t bytes;                 /* In the current file. */
    unsigned rotations;
    bool header_done;
    char *model_text;
    char model_src[256];
    struct pol_config pcfg;
    unsigned n_cpus;
    /* Per-CPU idle residency at the last block, for the deltas. */
    uint64_t last_idle_us[POL_MAX_CPUS][DRV_MAX_IDLE];
    bool idle_valid[POL_MAX_CPUS];
};

uint64_t
rec_fnv1a64(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static const char *
set_text(const struct cpuset *s, char *buf, size_t len)
{
    if (cpuset_format(s, buf, len) < 0 || !buf[0]) {
        snprintf(buf, len, "-");
    }
    return buf;
}

/* Names go into one space-separated token: anything but printable
 * non-space ASCII (and '%') is %XX-escaped. */
static void
put_word(FILE *f, const char *s)
{
    if (!*s) {
        fputs("%00", f);            /* Empty stays one token. */
        return;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;

        if (c <= ' ' || c >= 0x7f || c == '%') {
            fprintf(f, "%%%02X", c);
        } else {
            fputc(c, f);
        }
    }
}

/* ---- The model as energy-model text --------------------------------- */

static void
model_word(FILE *f, const char *s)
{
    for (; *s; s++) {
        fputc(*s > ' ' && *s < 0x7f && *s != '#' ? *s : '_', f);
    }
}

char *
rec_model_text(const struct pol_model *m)
{
    char *text = NULL, set[SET_LEN];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    unsigned n_cores = 0, per_core = 0;
    bool smt_ok = true;
    unsigned count[POL_MAX_CPUS];

    if (!f) {
        return NULL;
    }
    fputs("name ", f);
    model_word(f, m->name[0] ? m->name : "recorded");
    fprintf(f, "\ncpus %u\n", m->n_cpus);

    /* SMT: CPUs sharing cpu_core are siblings; the i-th list holds the
     * i-th sibling of every core, in core order. */
    memset(count, 0, sizeof count);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned core = m->cpu_core[c];

        if (core >= POL_MAX_CPUS) {
            smt_ok = false;
            break;
        }
        if (!count[core]++) {
            n_cores++;
        }
    }
    for (unsigned k = 0; smt_ok && k < POL_MAX_CPUS; k++) {
        if (count[k]) {
            if (!per_core) {
                per_core = count[k];
            } else if (count[k] != per_core) {
                smt_ok = false;
            }
        }
    }
    if (smt_ok && per_core >= 2 && per_core <= 4) {
        fputs("smt", f);
        for (unsigned j = 0; j < per_core; j++) {
            struct cpuset l;

            cpuset_zero(&l);
            for (unsigned core = 0; core < POL_MAX_CPUS; core++) {
                unsigned seen = 0;

                if (!count[core]) {
                    continue;
                }
                for (unsigned c = 0; c < m->n_cpus; c++) {
                    if (m->cpu_core[c] == core && seen++ == j) {
                        cpuset_set(&l, c);
                        break;
                    }
                }
            }
            fprintf(f, " %s", set_text(&l, set, sizeof set));
        }
        fprintf(f, "\nsmt-capacity %u\n", (unsigned) m->smt_capacity_pct);
    }
    fprintf(f, "platform %" PRIu32 "\n", m->platform_mw);
    for (unsigned p = 0; p < m->n_pkgs; p++) {
        fprintf(f, "package %u %s %" PRIu32 " %" PRIu32 "\n", p,
                set_text(&m->pkgs[p].cpus, set, sizeof set),
                m->pkgs[p].uncore_active_mw, m->pkgs[p].uncore_idle_mw);
    }
    for (unsigned dm = 0; dm < m->n_domains; dm++) {
        const struct pol_domain *d = &m->domains[dm];

        fprintf(f, "domain %s\n", set_text(&d->cpus, set, sizeof set));
        for (unsigned o = 0; o < d->n_opps; o++) {
            const struct pol_opp *op = &d->opps[o];

            fprintf(f, "    opp %" PRIu32 " %" PRIu32 " %" PRIu32 "%s",
                    op->freq_khz, op->capacity, op->busy_mw,
                    op->turbo ? " turbo" : "");
            if (op->cluster_mw) {
                fprintf(f, " cluster %" PRIu32, op->cluster_mw);
            }
            fputc('\n', f);
        }
        for (unsigned i = 0; i < d->n_idle; i++) {
            fputs("    idle ", f);
            model_word(f, d->idle[i].name[0] ? d->idle[i].name : "idle");
            fprintf(f, " %" PRIu32 " %" PRIu32 " %" PRIu32 "\n",
                    d->idle[i].exit_latency_us,
                    d->idle[i].target_residency_us, d->idle[i].power_mw);
        }
        if (d->cluster_active_mw || d->cluster_idle_mw) {
            fprintf(f, "    cluster %" PRIu32 " %" PRIu32 "\n",
                    d->cluster_active_mw, d->cluster_idle_mw);
        }
    }
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* ---- File handling -------------------------------------------------- */

/* Opens the record for appending.  vpowerd runs as root and the path
 * comes from the configuration, so the file must be one no other user
 * can redirect: its directory and the file itself pass the trust check
 * the journal gets, a symlink or anything but a regular file is refused,
 * and a FIFO cannot block the open. */
static int
open_file(struct rec *r, char *err, size_t errlen)
{
    char *dir = xstrdup(r->path), *slash = strrchr(dir, '/'), why[512];
    struct stat st;
    long pos;
    int fd, flags, rc;

    if (slash) {
        *(slash == dir ? slash + 1 : slash) = '\0';
    }
    rc = util_check_trusted_dir(slash ? dir : ".", "directory",
                                "replace the record", why, sizeof why);
    free(dir);
    if (rc < 0) {
        snprintf(err, errlen, "record %s: %s", r->path, why);
        return rc;
    }
    fd = open(r->path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW
              | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0640);
    if (fd < 0) {
        int e = errno;

        snprintf(err, errlen, "record %s: %s", r->path,
                 e == ELOOP ? "is a symbolic link; give the real path"
                 : e == ENXIO ? "is not a regular file" : strerror(e));
        return -e;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "record %s: is not a regular file", r->path);
        close(fd);
        return -EINVAL;
    }
    rc = util_check_trusted(r->path, &st, "record", "change what the "
                            "record says vpowerd did", err, errlen);
    flags = rc < 0 ? -1 : fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0
        || !(r->f = fdopen(fd, "a"))) {
        int e = rc < 0 ? -rc : errno;

        if (rc == 0) {
            snprintf(err, errlen, "record %s: %s", r->path, strerror(e));
        }
        close(fd);
        return -e;
    }
    setvbuf(r->f, NULL, _IOFBF, 65536);
    fseek(r->f, 0, SEEK_END);
    pos = ftell(r->f);
    r->bytes = pos > 0 ? (uint64_t) pos : 0;
    r->header_done = false;
    memset(r->idle_valid, 0, sizeof r->idle_valid);
    return 0;
}

static void
write_header(struct rec *r)
{
    FILE *f = r->f;
    const struct pol_config *c = &r->pcfg;
    const char *p;
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(f, "VPREC %d vpowerd %s %lld %" PRIu64 "\n", REC_VERSION,
            PACKAGE_VERSION, (long long) ts.tv_sec, clk_now_ns());
    fprintf(f, "CONF headroom_pct=%" PRIu32 " powersave_headroom_pct=%"
            PRIu32 " spread_ready_ppm=%" PRIu32 " pack_dwell_ns=%" PRIu64
            " warmup_samples=%" PRIu32 " min_interval_ns=%" PRIu64
            " max_interval_ns=%" PRIu64 " allow_offline=%d use_turbo=%d"
            " saturation_turbo=%d max_vcpus=%zu\n",
            c->headroom_pct, c->powersave_headroom_pct, c->spread_ready_ppm,
            c->pack_dwell_ns, c->warmup_samples, c->min_interval_ns,
            c->max_interval_ns, c->allow_offline, c->use_turbo,
            c->saturation_turbo, c->max_vcpus);
    fprintf(f, "MODEL ");
    put_word(f, r->model_src);
    fprintf(f, " %016" PRIx64 "\n",
            rec_fnv1a64(r->model_text, strlen(r->model_text)));
    for (p = r->model_text; *p;) {
        size_t n = strcspn(p, "\n");

        fprintf(f, "MT %.*s\n", (int) n, p);
        p += n + (p[n] == '\n');
    }
    fputs("ME\n", f);
    r->header_done = true;
}

struct rec *
rec_open(const char *path, uint64_t max_bytes, const struct pol_model *model,
         const char *model_src, const struct pol_config *pcfg, char *err,
         size_t errlen)
{
    struct rec *r = XNEW(struct rec);

    r->path = xstrdup(path);
    r->max_bytes = max_bytes ? max_bytes : (64u << 20);
    r->pcfg = *pcfg;
    r->n_cpus = model->n_cpus;
    snprintf(r->model_src, sizeof r->model_src, "%s", model_src);
    r->model_text = rec_model_text(model);
    if (!r->model_text) {
        snprintf(err, errlen, "record %s: cannot format the model", path);
        rec_close(r);
        return NULL;
    }
    if (open_file(r, err, errlen) < 0) {
        rec_close(r);
        return NULL;
    }
    return r;
}

void
rec_close(struct rec *r)
{
    if (!r) {
        return;
    }
    if (r->f) {
        fclose(r->f);
    }
    free(r->model_text);
    free(r->path);
    free(r);
}

uint64_t
rec_bytes(const struct rec *r)
{
    return r ? r->bytes : 0;
}

unsigned
rec_rotations(const struct rec *r)
{
    return r ? r->rotations : 0;
}

static int
rotate(struct rec *r)
{
    char old[4096], err[256];
    int ret = 0;

    snprintf(old, sizeof old, "%s.1", r->path);
    fclose(r->f);
    r->f = NULL;
    if (rename(r->path, old) < 0) {
        ret = -errno;
        LOG_WARN_RL("record: cannot rename %s to %s: %s", r->path, old,
                    strerror(errno));
        /* Start anew anyway: the size bound matters more. */
        if (truncate(r->path, 0) < 0) {
            return ret;
        }
    }
    r->rotations++;
    if (open_file(r, err, sizeof err) < 0) {
        LOG_WARN_RL("%s", err);
        return -EIO;
    }
    return ret;
}

/* ---- One block ------------------------------------------------------ */

static void
write_cpus(struct rec *r, const struct vpd *d, const uint32_t *ran_khz,
           const uint32_t *busy_ppm)
{
    FILE *f = r->f;

    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        const struct vpd_cpu *vc = &d->cpus[c];
        const struct drv_idle *id = &vc->idle;
        bool valid = r->idle_valid[c];

        if (!vc->managed || !vc->online) {
            r->idle_valid[c] = false;
            continue;
        }
        fprintf(f, "C %u %" PRIu32 " %" PRIu32 " %" PRIu32 " ", c,
                ran_khz ? ran_khz[c] : 0, vc->freq_khz,
                busy_ppm && busy_ppm[c] != UINT32_MAX ? busy_ppm[c] : 0);
        if (!id->n_states) {
            fputc('-', f);
        }
        for (unsigned s = 0; s < id->n_states && s < DRV_MAX_IDLE; s++) {
            uint64_t t = id->time_us[s], prev = r->last_idle_us[c][s];

            if (s) {
                fputc(',', f);
            }
            /* '?' where there is no earlier reading to subtract. */
            if (valid && t >= prev) {
                fprintf(f, "%" PRIu64, t - prev);
            } else {
                fputc('?', f);
            }
            r->last_idle_us[c][s] = t;
        }
        r->idle_valid[c] = id->n_states > 0;
        fputc('\n', f);
    }
}

static void
write_vms(struct rec *r, const struct vpd *d, const struct pol_input *in,
          struct vpd_vm *const *vm_of, bool sampled, uint64_t interval_ns,
          const uint32_t *ran_khz)
{
    FILE *f = r->f;
    char set[SET_LEN];

    for (size_t i = 0; i < in->n_vms; i++) {
        const struct pol_vm *pv = &in->vms[i];
        const struct pol_hints *h = &pv->hints;
        const struct vpd_vm *vm = vm_of[i];

        fprintf(f, "VM %zu ", i);
        put_word(f, vm->dom.name);
        fprintf(f, " %s %" PRIu32 " %s %" PRIu32 " %" PRIu32 " %d %d %d %s"
                " %" PRIu32 " %" PRIu64 " %" PRIu32 " %" PRIu64 " %" PRIu64
                " %" PRIu64 "\n",
                vm->dom.uuid, pv->id, pol_kind_name(pv->policy.kind),
                pv->policy.latency_us, pv->policy.min_freq_khz,
                pv->policy.never_offline, pv->policy.share_smt,
                pv->unmanaged, set_text(&pv->fixed, set, sizeof set),
                pv->n_vcpus, h->latency_until_ns, h->latency_us,
                h->boost_until_ns, h->idle_until_ns, h->batch_until_ns);
        for (uint32_t k = 0; k < pv->n_vcpus; k++) {
            const struct pol_vcpu *pc = &in->vcpus[pv->first_vcpu + k];
            const struct vpd_vcpu *vc = &vm->vcpus[k];

            if (sampled && vc->sampled) {
                uint32_t khz = vc->cpu >= 0 && vc->cpu < (int) d->n_cpus
                               && ran_khz ? ran_khz[vc->cpu] : 0;

                fprintf(f, "S %zu %" PRIu32 " %d %" PRIu32 " %" PRIu64
                        " %" PRIu64 " %" PRIu64 "\n", i, pc->idx, vc->cpu,
                        khz, vc->busy_ns, vc->ready_ns, interval_ns);
            }
            fprintf(f, "V %zu %" PRIu32 " %d\n", i, pc->idx, (int) pc->cpu);
        }
    }
}

static void
write_plan(struct rec *r, const struct vpd *d)
{
    FILE *f = r->f;
    const struct pol_plan *p = d->plan;
    char set[SET_LEN];

    fprintf(f, "P %s", set_text(&p->active, set, sizeof set));
    fprintf(f, " %s %" PRIu64 " %" PRIu32 " ",
            set_text(&p->offline, set, sizeof set), p->next_interval_ns,
            p->est_power_mw);
    for (unsigned dm = 0; dm < d->model.n_domains; dm++) {
        fprintf(f, "%s%" PRIu32, dm ? "," : "", p->dom_freq_khz[dm]);
    }
    if (!d->model.n_domains) {
        fputc('-', f);
    }
    fputc(' ', f);
    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        fprintf(f, "%s%d", c ? "," : "", p->idle_limit[c]);
    }
    fputc('\n', f);
    for (size_t i = 0; i < p->n_vms; i++) {
        fprintf(f, "PV %zu %u %s", i, (unsigned) p->vm_reason[i],
                set_text(&p->vm_emulator[i], set, sizeof set));
        for (size_t k = 0; k < p->n_vcpus; k++) {
            if (p->vcpu_vm[k] == i) {
                fprintf(f, " %s", set_text(&p->vcpu_allowed[k], set,
                                           sizeof set));
            }
        }
        fputc('\n', f);
    }
}

/* Each vCPU's pol_load as raw bytes: exact, but only meaningful to the
 * same build (the header names the version; the size is on the line). */
static void
write_loads(struct rec *r, const struct vpd *d)
{
    for (const struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            const unsigned char *b = (const void *) &vm->vcpus[i].load;

            fprintf(r->f, "L %s %u %zu ", vm->dom.uuid, vm->vcpus[i].idx,
                    sizeof vm->vcpus[i].load);
            for (size_t k = 0; k < sizeof vm->vcpus[i].load; k++) {
                fprintf(r->f, "%02x", b[k]);
            }
            fputc('\n', r->f);
        }
    }
}

int
rec_cycle(struct rec *r, const struct vpd *d, const struct pol_input *in,
          struct vpd_vm *const *vm_of, bool sampled, uint64_t interval_ns,
          const uint32_t *ran_khz, const uint32_t *busy_ppm)
{
    char set[SET_LEN], set2[SET_LEN];
    long pos;

    if (!r || !r->f) {
        return -EBADF;
    }
    if (!r->header_done) {
        write_header(r);
    }
    fprintf(r->f, "T %" PRIu64 " %" PRIu64 " %s %d %s %s ", in->now_ns,
            sampled ? interval_ns : 0, sampled ? "sample" : "kick",
            in->override_performance,
            set_text(&in->managed, set, sizeof set),
            set_text(&in->online, set2, sizeof set2));
    for (unsigned dm = 0; dm < d->model.n_domains; dm++) {
        fprintf(r->f, "%s%" PRIu32, dm ? "," : "", in->thermal_cap_khz[dm]);
    }
    if (!d->model.n_domains) {
        fputc('-', r->f);
    }
    fputc('\n', r->f);
    if (sampled) {
        write_cpus(r, d, ran_khz, busy_ppm);
    }
    write_vms(r, d, in, vm_of, sampled, interval_ns, ran_khz);
    write_plan(r, d);
    fputs("E\n", r->f);
    if (fflush(r->f) != 0 || ferror(r->f)) {
        int e = errno ? errno : EIO;

        clearerr(r->f);
        return -e;
    }
    pos = ftell(r->f);
    r->bytes = pos > 0 ? (uint64_t) pos : r->bytes;
    if (r->bytes >= r->max_bytes) {
        int ret = rotate(r);

        if (r->f) {
            /* The new file starts with the header and the load history
             * so far, so it replays without the old one. */
            write_header(r);
            write_loads(r, d);
            fflush(r->f);
            pos = ftell(r->f);
            r->bytes = pos > 0 ? (uint64_t) pos : r->bytes;
        }
        return ret;
    }
    return 0;
}
