/* manager/record.h -- vpowerd's replay record: what each decision saw.
 *
 * With `record FILE` (or --record) vpowerd appends one block per decision
 * to FILE: the interval it measured (per vCPU busy and ready time, the
 * CPU it ran on and that CPU's frequency, per-core idle residency
 * deltas), the rest of the policy input (each VM's policy and active
 * hints, managed and online CPUs, thermal caps, the monotonic time) and
 * the plan pol_decide returned.  Every file starts with a header holding
 * the format version, the pol_config values and the energy model itself
 * (as energy-model text), so replaying the samples through
 * pol_load_update() + pol_decide() reproduces the plans without access
 * to the host.  The format is line-based text, versioned and documented
 * in docs/record-format.md; the simulator's reader is built from that
 * document.  Size is bounded: past 'max_bytes' FILE is renamed to FILE.1
 * (replacing an older one) and a new FILE with a fresh header begun.
 *
 * Writing is buffered and flushed once per block; an I/O error is
 * returned (the daemon logs it rate-limited and keeps running). */

#ifndef VPOWER_RECORD_H
#define VPOWER_RECORD_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/model.h"
#include "policy/policy.h"

#define REC_VERSION 1

struct vpd;
struct vpd_vm;
struct rec;

/* Opens (appends to) 'path'; the header is written before the first
 * block of each file.  'model_src' names where the model came from (a
 * file path or "sysfs:ROOT"); 'model', 'pcfg' are copied.  Returns NULL
 * with 'err' filled. */
struct rec *rec_open(const char *path, uint64_t max_bytes,
                     const struct pol_model *model, const char *model_src,
                     const struct pol_config *pcfg, char *err,
                     size_t errlen);
void rec_close(struct rec *);              /* NULL is fine. */

/* Writes one decision block.  'in' is the pol_input the decision used,
 * 'vm_of[i]' the VM of its i-th VM, d->plan the (post-processed) plan.
 * With 'sampled' the block carries the interval's samples: vCPUs with
 * vpd_vcpu.sampled get an S line (the arguments pol_load_update() got:
 * vpd_vcpu.cpu, ran_khz[cpu], busy_ns, ready_ns, 'interval_ns'), every
 * online managed CPU a C line from d->cpus[] and ran_khz[] and
 * 'busy_ppm[]' (the energy estimate's per-CPU busy).  Rotates after the
 * block if the file grew past max_bytes.  Returns 0 or -errno. */
int rec_cycle(struct rec *, const struct vpd *d, const struct pol_input *in,
              struct vpd_vm *const *vm_of, bool sampled,
              uint64_t interval_ns, const uint32_t *ran_khz,
              const uint32_t *busy_ppm);

/* Bytes written to the current file, and rotations so far (tests). */
uint64_t rec_bytes(const struct rec *);
unsigned rec_rotations(const struct rec *);

/* The model as energy-model text (docs/energy-model.md) that
 * pol_model_parse() reads back into the same model; malloc'ed. SMT is
 * written only when every core has the same number of siblings. */
char *rec_model_text(const struct pol_model *);

/* 64-bit FNV-1a of 'len' bytes (the header's model hash). */
uint64_t rec_fnv1a64(const void *buf, size_t len);

#endif /* manager/record.h */
