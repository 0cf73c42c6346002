/* sim/replay.h -- Replaying vpowerd's decisions through the daemon's
 * cycle.
 *
 * A vpowerd recording (see docs/record-format.md) holds, per decision,
 * what the daemon measured (each vCPU's busy and ready time over the
 * period, where it ran, each CPU's busy share and frequency), the rest
 * of the input it gave pol_decide() and the plan it got back.  The
 * replayer is the format-free half of `vpower-sim --trace-format
 * record`: it runs the daemon's own cycle (manager/cycle.h) once per
 * decision, over driver tables that answer from the recording
 * (sim/replayhost.h), with a clock that gives the recorded instants and
 * the recorded policies and hints set on the VM registry.  So the loads
 * are folded, the input built and the plan post-processed by the code
 * vpowerd runs; each plan is compared with the recorded one field by
 * field (--verify-plans).  The reader that turns a recording file into
 * 'struct replay_decision's lives in sim/trace_record.c. */

#ifndef VPOWER_SIM_REPLAY_H
#define VPOWER_SIM_REPLAY_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* One vCPU of a decision and its observation since the previous one. */
struct replay_obs {
    uint32_t vm;              /* Index into replay_decision.vms. */
    uint32_t idx;             /* Guest vCPU number. */
    int32_t cpu;              /* pol_vcpu.cpu given to pol_decide(). */
    /* The pol_load_update() call, if any: */
    int32_t s_cpu;            /* Host CPU it ran on, -1 unknown. */
    uint32_t freq_khz;        /* Its domain's frequency, 0 unknown. */
    uint64_t busy_ns, ready_ns;
    uint64_t interval_ns;     /* 0 = not sampled (no update). */
};

/* One decision as recorded. */
struct replay_decision {
    uint64_t now_ns;
    bool sample;                      /* A sample block (else a kick: a
                                       * decision on the loads as
                                       * tracked). */
    uint64_t interval_ns;             /* Its measured interval. */
    const struct pol_vm *vms;         /* policy, hints, vCPU ranges. */
    size_t n_vms;
    const struct replay_obs *obs;     /* [n_vcpus], in pol_input order. */
    size_t n_vcpus;
    struct cpuset managed, online;
    bool override_performance;
    uint32_t thermal_cap_khz[POL_MAX_DOMAINS];
    const uint32_t *cpu_busy_ppm;     /* pol_input.cpu_busy_ppm / */
    const uint32_t *cpu_ran_khz;      /* .cpu_ran_khz (NULL: none). */
    const struct pol_plan *recorded;  /* The daemon's plan, or NULL. */
    const uint64_t *vm_key;           /* [n_vms] identity of each VM's
                                       * load history (NULL: pol_vm.id);
                                       * loads of keys absent from a
                                       * decision are dropped, as the
                                       * daemon drops a VM that is gone. */
};

struct replay;

/* Creates a replayer for model 'm' and config 'c' (both copied).
 * Returns NULL if the policy state cannot be created.  Sets the
 * process's log level to warnings: the cycle logs every decision that
 * acts at info level. */
struct replay *replay_create(const struct pol_model *m,
                             const struct pol_config *c);
void replay_destroy(struct replay *);         /* NULL is fine. */

/* Runs one cycle on decision 'd': the VMs it holds are found by the
 * cycle's registry (keyed by vm_key, so VMs may come and go between
 * decisions), its samples folded into their loads, and the plan the
 * cycle decided is copied into 'out' (room for d->n_vms and
 * d->n_vcpus).  Each VM's vCPUs must be its obs entries [first_vcpu,
 * first_vcpu + n_vcpus) numbered from 0 (-EINVAL with 'what' filled
 * otherwise).  If d->recorded is set, compares: returns 0 if identical,
 * 1 if not (with the first differing field in 'what'), or a negative
 * errno if pol_decide() fails (message in 'what'). */
int replay_step(struct replay *r, const struct replay_decision *d,
                struct pol_plan *out, char *what, size_t whatlen);

/* Compares two plans on everything vpowerd acts on: sizes, active and
 * offline CPUs, each domain's frequency, each CPU's idle limit, each
 * vCPU's allowed set, each VM's emulator set and reason, and the next
 * interval.  'offline' only has to hold the live plan's CPUs: the
 * daemon removes CPUs that refused to go offline before recording.
 * Returns true if identical, else false with the first difference
 * described in 'what' ("vcpu allowed 3 '0-3' live, '0-1' replayed"). */
bool replay_plan_equal(const struct pol_model *m, const struct pol_plan *live,
                       const struct pol_plan *sim, char *what,
                       size_t whatlen);

/* ---- vpowerd recordings (sim/trace_record.c) ----------------------
 *
 * Reads a recording written by `vpowerd --record` (docs/record-format.md,
 * version 1): the model from its MT lines (FNV-1a hash checked), the
 * pol_config from CONF, then every block through replay_step().  Strict:
 * a malformed line is "FILE:LINE: reason" and nothing is reported as
 * replayed; line types it does not know are skipped (the format's
 * forward-compatibility rule); a last block without 'E' is dropped (the
 * daemon was killed mid-write).  'L' lines (load history of a rotated
 * file, raw bytes) are used when their size matches this build's
 * struct pol_load, else counted as ignored. */
struct record_stats {
    uint64_t blocks;              /* Decisions replayed. */
    uint64_t same, differ;        /* Plans identical / different. */
    size_t first_line;            /* Line of the first differing block. */
    uint64_t first_now_ns;        /* Its now_ns. */
    char first_what[256];         /* What differed first. */
    size_t max_vms, max_vcpus;
    uint64_t span_ns;             /* Last now_ns - first now_ns. */
    size_t l_used, l_ignored;     /* L lines. */
    bool truncated;               /* A trailing block without E. */
    char model_src[256];          /* MODEL source (escaped, trace_esc()). */
};

/* True if 'path' is a regular file starting with "VPREC ". */
bool record_probe(const char *path);

/* Replays recording 'path' (at most 'max_bytes', 0 = the trace default)
 * into 'st'.  Returns 0, or a negative errno with "FILE:LINE: reason"
 * in 'err'. */
int record_replay(const char *path, size_t max_bytes,
                  struct record_stats *st, char *err, size_t errlen);

#endif /* sim/replay.h */
