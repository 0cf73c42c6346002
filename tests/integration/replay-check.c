/* tests/integration/replay-check.c -- Replays a vpowerd record and checks
 * that every plan comes out the same.
 *
 * A minimal reader of docs/record-format.md (version 1), written from the
 * document: model from the MT lines, pol_config from CONF, each S line
 * through pol_load_update(), each block's input through pol_decide(), and
 * the result compared with the block's P/PV lines (active set, domain
 * frequencies, next interval, per-VM reason, emulator and per-vCPU
 * allowed sets).  It proves the record is complete enough to replay.
 * It is the format's second, independent implementation: vpower-sim's
 * reader (sim/trace_record.c) replays through the daemon's cycle
 * instead, so the two check each other.  Reads the first file of a
 * run (no L lines).  Exit 0 when every block matches, 1 on the first
 * mismatch (printed), 99 on a malformed record. */

#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/model.h"
#include "policy/policy.h"

#define MAX_VMS 256
#define MAX_VCPUS 1024
#define MAX_LOADS 2048

struct load {
    char uuid[40];
    unsigned idx;
    bool used, seen;
    struct pol_load l;
};

static struct pol_model model;
static struct load loads[MAX_LOADS];
static unsigned lineno;

static void
bad(const char *what, const char *line)
{
    fprintf(stderr, "replay-check: line %u: %s: %s", lineno, what, line);
    exit(99);
}

static struct load *
load_of(const char *uuid, unsigned idx)
{
    struct load *free_slot = NULL;

    for (unsigned i = 0; i < MAX_LOADS; i++) {
        if (loads[i].used && loads[i].idx == idx
            && !strcmp(loads[i].uuid, uuid)) {
            return &loads[i];
        }
        if (!loads[i].used && !free_slot) {
            free_slot = &loads[i];
        }
    }
    if (!free_slot) {
        bad("too many vCPUs", "");
    }
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = true;
    snprintf(free_slot->uuid, sizeof free_slot->uuid, "%s", uuid);
    free_slot->idx = idx;
    return free_slot;
}

static void
parse_set(struct cpuset *s, const char *t, const char *line)
{
    cpuset_zero(s);
    if (strcmp(t, "-") && cpuset_parse(s, t) < 0) {
        bad("bad cpu set", line);
    }
}

static void
parse_conf(struct pol_config *c, char *line)
{
    char *save = NULL, *tok = strtok_r(line + 5, " \n", &save);

    pol_config_default(c);
    c->saturation_turbo = false;   /* Unnamed: recorded without it. */
    for (; tok; tok = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(tok, '=');
        unsigned long long v;

        if (!eq) {
            continue;
        }
        *eq = '\0';
        v = strtoull(eq + 1, NULL, 10);
        if (!strcmp(tok, "headroom_pct")) {
            c->headroom_pct = (uint32_t) v;
        } else if (!strcmp(tok, "powersave_headroom_pct")) {
            c->powersave_headroom_pct = (uint32_t) v;
        } else if (!strcmp(tok, "spread_ready_ppm")) {
            c->spread_ready_ppm = (uint32_t) v;
        } else if (!strcmp(tok, "pack_dwell_ns")) {
            c->pack_dwell_ns = v;
        } else if (!strcmp(tok, "warmup_samples")) {
            c->warmup_samples = (uint32_t) v;
        } else if (!strcmp(tok, "min_interval_ns")) {
            c->min_interval_ns = v;
        } else if (!strcmp(tok, "max_interval_ns")) {
            c->max_interval_ns = v;
        } else if (!strcmp(tok, "allow_offline")) {
            c->allow_offline = v != 0;
        } else if (!strcmp(tok, "use_turbo")) {
            c->use_turbo = v != 0;
        } else if (!strcmp(tok, "saturation_turbo")) {
            c->saturation_turbo = v != 0;
        } else if (!strcmp(tok, "max_vcpus")) {
            c->max_vcpus = (size_t) v;
        }
    }
}

int
main(int argc, char **argv)
{
    static struct pol_vm vms[MAX_VMS];
    static struct pol_vcpu vcpus[MAX_VCPUS];
    static char uuids[MAX_VMS][64];
    static struct cpuset want_allowed[MAX_VCPUS];
    static uint32_t cbusy[POL_MAX_CPUS], ckhz[POL_MAX_CPUS];
    char line[65536], set1[8192], set2[8192], err[256];
    char *model_text = NULL;
    size_t model_len = 0;
    struct pol_config cfg;
    struct pol_state *st = NULL;
    struct pol_plan *plan = NULL;
    struct pol_input in;
    struct cpuset want_active;
    uint64_t want_next = 0;
    uint32_t want_freq[POL_MAX_DOMAINS];
    unsigned blocks = 0, samples = 0, kicks = 0;
    size_t nv = 0, nc = 0;
    int rc = 0;
    FILE *f;

    if (argc != 2 || !(f = fopen(argv[1], "r"))) {
        fprintf(stderr, "usage: replay-check RECORD\n");
        return 99;
    }
    memset(&in, 0, sizeof in);
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        cbusy[c] = UINT32_MAX;
    }
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strncmp(line, "VPREC ", 6)) {
            if (atoi(line + 6) != 1) {
                bad("unsupported version", line);
            }
        } else if (!strncmp(line, "CONF ", 5)) {
            parse_conf(&cfg, line);
        } else if (!strncmp(line, "MT ", 3)) {
            size_t n = strlen(line + 3);

            model_text = realloc(model_text, model_len + n + 1);
            memcpy(model_text + model_len, line + 3, n + 1);
            model_len += n;
        } else if (!strcmp(line, "ME\n")) {
            if (pol_model_parse(&model, model_text ? model_text : "", err,
                                sizeof err) < 0) {
                bad(err, line);
            }
            st = pol_state_create(&model, &cfg);
            plan = pol_plan_create(MAX_VMS, MAX_VCPUS);
            if (!st || !plan) {
                bad("policy refused model/config", line);
            }
        } else if (!strncmp(line, "L ", 2)) {
            bad("rotated file (L lines): replay the run's first file", line);
        } else if (!strncmp(line, "T ", 2)) {
            char kind[16], thermal[4096];
            unsigned long long now, ival;
            int ovr;

            if (!st || sscanf(line, "T %llu %llu %15s %d %8191s %8191s "
                              "%4095s", &now, &ival, kind, &ovr, set1, set2,
                              thermal) != 7) {
                bad("bad T line", line);
            }
            memset(&in, 0, sizeof in);
            in.now_ns = now;
            in.override_performance = ovr != 0;
            parse_set(&in.managed, set1, line);
            parse_set(&in.online, set2, line);
            {
                char *save = NULL, *tok = strtok_r(thermal, ",", &save);

                for (unsigned d = 0; tok && d < POL_MAX_DOMAINS; d++) {
                    in.thermal_cap_khz[d] = (uint32_t) strtoul(tok, NULL,
                                                               10);
                    tok = strtok_r(NULL, ",", &save);
                }
            }
            nv = nc = 0;
            for (unsigned i = 0; i < MAX_LOADS; i++) {
                loads[i].seen = false;
            }
            for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
                cbusy[c] = UINT32_MAX;
                ckhz[c] = 0;
            }
            in.cpu_busy_ppm = cbusy;
            in.cpu_ran_khz = ckhz;
            samples += !strcmp(kind, "sample");
            kicks += !strcmp(kind, "kick");
        } else if (!strncmp(line, "C ", 2)) {
            unsigned cpu, khz, cur, busy;

            if (sscanf(line, "C %u %u %u %u", &cpu, &khz, &cur, &busy) != 4
                || cpu >= POL_MAX_CPUS || busy > 1000000) {
                bad("bad C line", line);
            }
            cbusy[cpu] = busy;
            ckhz[cpu] = khz;
        } else if (!strncmp(line, "VM ", 3)) {
            struct pol_vm *v = &vms[nv];
            char name[512], uuid[64], kindn[32], fixed[8192];
            unsigned id, lat, minf, no, smt, unm, n, hl;
            unsigned long long lu, bu, iu, ba;
            size_t idx;

            if (nv >= MAX_VMS
                || sscanf(line, "VM %zu %511s %63s %u %31s %u %u %u %u %u "
                          "%8191s %u %llu %u %llu %llu %llu", &idx, name,
                          uuid, &id, kindn, &lat, &minf, &no, &smt, &unm,
                          fixed, &n, &lu, &hl, &bu, &iu, &ba) != 17
                || idx != nv) {
                bad("bad VM line", line);
            }
            memset(v, 0, sizeof *v);
            v->id = id;
            if (pol_kind_parse(kindn, &v->policy.kind) < 0) {
                bad("bad policy kind", line);
            }
            v->policy.latency_us = lat;
            v->policy.min_freq_khz = minf;
            v->policy.never_offline = no;
            v->policy.share_smt = smt;
            v->unmanaged = unm;
            parse_set(&v->fixed, fixed, line);
            v->first_vcpu = (uint32_t) nc;
            v->n_vcpus = n;
            v->hints.latency_until_ns = lu;
            v->hints.latency_us = hl;
            v->hints.boost_until_ns = bu;
            v->hints.idle_until_ns = iu;
            v->hints.batch_until_ns = ba;
            snprintf(uuids[nv], sizeof uuids[nv], "%s", uuid);
            nv++;
        } else if (!strncmp(line, "S ", 2)) {
            size_t vm;
            unsigned idx, khz;
            int cpu;
            unsigned long long busy, ready, ival;

            if (sscanf(line, "S %zu %u %d %u %llu %llu %llu", &vm, &idx,
                       &cpu, &khz, &busy, &ready, &ival) != 7 || vm >= nv) {
                bad("bad S line", line);
            }
            pol_load_update(&load_of(uuids[vm], idx)->l, &model, cpu, khz,
                            busy, ready, ival);
        } else if (!strncmp(line, "V ", 2)) {
            size_t vm;
            unsigned idx;
            int cpu;
            struct load *l;

            if (nc >= MAX_VCPUS
                || sscanf(line, "V %zu %u %d", &vm, &idx, &cpu) != 3
                || vm >= nv) {
                bad("bad V line", line);
            }
            l = load_of(uuids[vm], idx);
            l->seen = true;
            vcpus[nc].vm = (uint32_t) vm;
            vcpus[nc].idx = idx;
            vcpus[nc].cpu = cpu;
            vcpus[nc].load = l->l;
            nc++;
        } else if (!strncmp(line, "P ", 2)) {
            char off[8192], freqs[4096], idle[8192];
            unsigned long long next;
            unsigned mw;

            if (sscanf(line, "P %8191s %8191s %llu %u %4095s %8191s", set1,
                       off, &next, &mw, freqs, idle) != 6) {
                bad("bad P line", line);
            }
            parse_set(&want_active, set1, line);
            want_next = next;
            memset(want_freq, 0, sizeof want_freq);
            {
                char *save = NULL, *tok = strtok_r(freqs, ",", &save);

                for (unsigned d = 0; tok && d < POL_MAX_DOMAINS; d++) {
                    want_freq[d] = (uint32_t) strtoul(tok, NULL, 10);
                    tok = strtok_r(NULL, ",", &save);
                }
            }
        } else if (!strncmp(line, "PV ", 3)) {
            /* Checked at E against the replayed plan. */
            size_t vm;
            unsigned reason;
            char *save = NULL, *tok;
            size_t k = 0;

            if (sscanf(line, "PV %zu %u", &vm, &reason) != 2 || vm >= nv) {
                bad("bad PV line", line);
            }
            tok = strtok_r(line, " \n", &save);         /* PV */
            tok = strtok_r(NULL, " \n", &save);         /* vm */
            tok = strtok_r(NULL, " \n", &save);         /* reason */
            tok = strtok_r(NULL, " \n", &save);         /* emulator */
            while ((tok = strtok_r(NULL, " \n", &save))) {
                if (k >= vms[vm].n_vcpus) {
                    bad("too many allowed sets", line);
                }
                parse_set(&want_allowed[vms[vm].first_vcpu + k++], tok,
                          line);
            }
            if (k != vms[vm].n_vcpus) {
                bad("allowed sets do not match the vCPU count", line);
            }
            plan->vm_reason[vm] = (uint8_t) reason;  /* Stash. */
        } else if (!strcmp(line, "E\n")) {
            uint8_t want_reason[MAX_VMS];
            int r;

            memcpy(want_reason, plan->vm_reason, nv);
            in.vms = vms;
            in.n_vms = nv;
            in.vcpus = vcpus;
            in.n_vcpus = nc;
            r = pol_decide(st, &in, plan);
            if (r < 0) {
                fprintf(stderr, "replay-check: line %u: pol_decide: %s\n",
                        lineno, strerror(-r));
                rc = 1;
                goto done;
            }
            blocks++;
            if (!cpuset_equal(&plan->active, &want_active)
                || memcmp(plan->dom_freq_khz, want_freq,
                          model.n_domains * sizeof *want_freq)
                || plan->next_interval_ns != want_next) {
                unsigned d = 0;

                /* Names only the parts that differ. */
                fprintf(stderr, "replay-check: block %u (line %u):",
                        blocks, lineno);
                if (!cpuset_equal(&plan->active, &want_active)) {
                    cpuset_format(&plan->active, set1, sizeof set1);
                    cpuset_format(&want_active, set2, sizeof set2);
                    fprintf(stderr, " active %s, recorded %s;", set1, set2);
                }
                while (d < model.n_domains
                       && plan->dom_freq_khz[d] == want_freq[d]) {
                    d++;
                }
                if (d < model.n_domains) {
                    fprintf(stderr, " domain %u %" PRIu32 " kHz, recorded %"
                            PRIu32 ";", d, plan->dom_freq_khz[d],
                            want_freq[d]);
                }
                if (plan->next_interval_ns != want_next) {
                    fprintf(stderr, " next interval %" PRIu64 " ns, "
                            "recorded %" PRIu64 ";", plan->next_interval_ns,
                            want_next);
                }
                fputc('\n', stderr);
                rc = 1;
                goto done;
            }
            for (size_t i = 0; i < nv; i++) {
                if (plan->vm_reason[i] != want_reason[i]) {
                    fprintf(stderr, "replay-check: block %u: VM %zu reason "
                            "%u, recorded %u\n", blocks, i,
                            plan->vm_reason[i], want_reason[i]);
                    rc = 1;
                    goto done;
                }
            }
            for (size_t k = 0; k < nc; k++) {
                if (!cpuset_equal(&plan->vcpu_allowed[k],
                                  &want_allowed[k])) {
                    cpuset_format(&plan->vcpu_allowed[k], set1,
                                  sizeof set1);
                    cpuset_format(&want_allowed[k], set2, sizeof set2);
                    fprintf(stderr, "replay-check: block %u: vCPU %zu "
                            "allowed %s, recorded %s\n", blocks, k, set1,
                            set2);
                    rc = 1;
                    goto done;
                }
            }
            /* VMs gone from the input take their history with them. */
            for (unsigned i = 0; i < MAX_LOADS; i++) {
                if (loads[i].used && !loads[i].seen) {
                    loads[i].used = false;
                }
            }
        }
    }
done:
    fclose(f);
    free(model_text);
    pol_plan_destroy(plan);
    pol_state_destroy(st);
    if (rc) {
        return rc;                /* A mismatch, printed. */
    }
    if (!blocks) {
        fprintf(stderr, "replay-check: no complete block\n");
        return 99;
    }
    printf("replay-check: %u blocks (%u sampled, %u kicks) replayed, every "
           "plan identical\n", blocks, samples, kicks);
    return 0;
}
