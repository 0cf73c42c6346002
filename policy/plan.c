/* policy/plan.c -- Plans: the complete target state, and their diff.
 *
 * pol_decide() writes a whole target state into a 'struct pol_plan'; the
 * manager keeps the plan it applied last and calls pol_plan_diff() to get
 * the few actions that move the host from one to the other, in an order
 * that never strands a vCPU (online before pinning onto a CPU, offline
 * only after everything left it) and that makes the VMs that wait for
 * speed fast first: frequencies raised and idle limits made shallower
 * before any pin, the pins of VMs with a latency hint and of performance
 * VMs before anyone else's, sets that widen before sets that narrow. */

#include "policy/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct pol_plan *
pol_plan_create(size_t max_vms, size_t max_vcpus)
{
    struct pol_plan *p = calloc(1, sizeof *p);

    if (!p) {
        return NULL;
    }
    p->max_vms = max_vms;
    p->max_vcpus = max_vcpus;
    p->vcpu_allowed = calloc(max_vcpus ? max_vcpus : 1,
                             sizeof *p->vcpu_allowed);
    p->vcpu_vm = calloc(max_vcpus ? max_vcpus : 1, sizeof *p->vcpu_vm);
    p->vm_emulator = calloc(max_vms ? max_vms : 1, sizeof *p->vm_emulator);
    p->vm_reason = calloc(max_vms ? max_vms : 1, sizeof *p->vm_reason);
    if (!p->vcpu_allowed || !p->vcpu_vm || !p->vm_emulator
        || !p->vm_reason) {
        pol_plan_destroy(p);
        return NULL;
    }
    memset(p->idle_limit, -1, sizeof p->idle_limit);
    return p;
}

void
pol_plan_destroy(struct pol_plan *p)
{
    if (p) {
        free(p->vcpu_allowed);
        free(p->vcpu_vm);
        free(p->vm_emulator);
        free(p->vm_reason);
        free(p);
    }
}

void
pol_plan_copy(struct pol_plan *dst, const struct pol_plan *src)
{
    size_t nv = src->n_vcpus < dst->max_vcpus ? src->n_vcpus
                                              : dst->max_vcpus;
    size_t nm = src->n_vms < dst->max_vms ? src->n_vms : dst->max_vms;

    if (dst == src) {
        return;
    }
    dst->n_vms = nm;
    dst->n_vcpus = nv;
    dst->active = src->active;
    dst->offline = src->offline;
    memcpy(dst->dom_freq_khz, src->dom_freq_khz, sizeof dst->dom_freq_khz);
    memcpy(dst->idle_limit, src->idle_limit, sizeof dst->idle_limit);
    memcpy(dst->vcpu_allowed, src->vcpu_allowed,
           nv * sizeof *src->vcpu_allowed);
    memcpy(dst->vcpu_vm, src->vcpu_vm, nv * sizeof *src->vcpu_vm);
    memcpy(dst->vm_emulator, src->vm_emulator, nm * sizeof *src->vm_emulator);
    memcpy(dst->vm_reason, src->vm_reason, nm * sizeof *src->vm_reason);
    dst->next_interval_ns = src->next_interval_ns;
    dst->est_power_mw = src->est_power_mw;
}

/* cpuset_equal() as one memcmp(): nearly every pin compared per cycle
 * is unchanged, so the whole set is read anyway, and libc compares it
 * in a few wide loads instead of a branch per word. */
static inline bool
same_set(const struct cpuset *a, const struct cpuset *b)
{
    return !memcmp(a, b, sizeof *a);
}

/* Appends one action (the fields 'a' does not name are 0); counts even
 * when full so the caller learns it. */
static void
emit(struct pol_action *acts, size_t max, size_t *n, struct pol_action a)
{
    if (*n < max) {
        acts[*n] = a;
    }
    (*n)++;
}

/* Pin ranks: the VMs waiting for cores of their own go first. */
enum pin_rank {
    RANK_HINT,          /* Latency-critical hint: a guest is waiting. */
    RANK_CRITICAL,      /* Performance policy, host-wide override. */
    RANK_WIDEN,         /* Anyone else whose set only grows. */
    RANK_REST,          /* Everyone else: narrowing or moving. */
};

static enum pin_rank
vm_rank(const struct pol_plan *next, uint32_t vm)
{
    uint8_t r = vm < next->n_vms ? next->vm_reason[vm] : POL_R_PACKED;

    return r == POL_R_LATENCY_HINT ? RANK_HINT
           : r == POL_R_PERFORMANCE || r == POL_R_OVERRIDE ? RANK_CRITICAL
           : RANK_REST;
}

/* Rank of moving 'cur_set' (NULL: unknown) to 'next_set' for VM 'vm'. */
static enum pin_rank
pin_rank(const struct pol_plan *next, uint32_t vm,
         const struct cpuset *cur_set, const struct cpuset *next_set)
{
    enum pin_rank r = vm_rank(next, vm);

    if (r == RANK_REST && cur_set && cpuset_subset(cur_set, next_set)) {
        return RANK_WIDEN;
    }
    return r;
}

/* Emits the pins of rank 'rank': vCPUs, then emulator threads. */
static void
diff_pins(const struct pol_plan *cur, const struct pol_plan *next,
          enum pin_rank rank, struct pol_action *acts, size_t max,
          size_t *n)
{
    for (size_t i = 0; i < next->n_vcpus; i++) {
        const struct cpuset *c = i < cur->n_vcpus ? &cur->vcpu_allowed[i]
                                                  : NULL;

        if ((c && cpuset_equal(c, &next->vcpu_allowed[i]))
            || pin_rank(next, next->vcpu_vm[i], c, &next->vcpu_allowed[i])
               != rank) {
            continue;
        }
        emit(acts, max, n, (struct pol_action) {
            .type = POL_A_PIN_VCPU, .vm = next->vcpu_vm[i],
            .vcpu = (uint32_t) i, .set = next->vcpu_allowed[i] });
    }
    for (size_t i = 0; i < next->n_vms; i++) {
        const struct cpuset *c = i < cur->n_vms ? &cur->vm_emulator[i]
                                                : NULL;

        if ((c && cpuset_equal(c, &next->vm_emulator[i]))
            || pin_rank(next, (uint32_t) i, c, &next->vm_emulator[i])
               != rank) {
            continue;
        }
        emit(acts, max, n, (struct pol_action) {
            .type = POL_A_PIN_EMULATOR, .vm = (uint32_t) i,
            .set = next->vm_emulator[i] });
    }
}

/* Pins that change, collected once: low bits the vCPU or VM index,
 * PIN_EMU marks an emulator, the rank in the top bits. */
#define PIN_MAX_CHANGED 512
#define PIN_EMU (UINT32_C(1) << 29)
#define PIN_RANK_SHIFT 30

/* Appends to 'out' ('*n' so far) the pin 'tag' (an index, with PIN_EMU
 * for an emulator) of VM 'vm' from 'c' (NULL: unknown) to 'to', which
 * differ.  Returns -1 if 'out' is full. */
static int
add_changed(const struct pol_plan *next, uint32_t vm, const struct cpuset *c,
            const struct cpuset *to, uint32_t tag, uint32_t *out, int *n)
{
    if (*n == PIN_MAX_CHANGED) {
        return -1;
    }
    out[(*n)++] = tag | (uint32_t) pin_rank(next, vm, c, to)
                        << PIN_RANK_SHIFT;
    return 0;
}

/* Fills 'out' with the pins from 'cur' to 'next' that change, vCPUs
 * then emulators, each in index order.  Returns how many, or -1 if more
 * than PIN_MAX_CHANGED (or an index too large) change.  The equality
 * test stays in the loops: nearly every pin is unchanged, and only the
 * changed ones pay for the call. */
static int
changed_pins(const struct pol_plan *cur, const struct pol_plan *next,
             uint32_t *out)
{
    int n = 0;

    if (next->n_vcpus >= PIN_EMU || next->n_vms >= PIN_EMU) {
        return -1;
    }
    for (size_t i = 0; i < next->n_vcpus; i++) {
        const struct cpuset *c = i < cur->n_vcpus ? &cur->vcpu_allowed[i]
                                                  : NULL;

        if (c && same_set(c, &next->vcpu_allowed[i])) {
            continue;
        }
        if (add_changed(next, next->vcpu_vm[i], c, &next->vcpu_allowed[i],
                        (uint32_t) i, out, &n) < 0) {
            return -1;
        }
    }
    for (size_t i = 0; i < next->n_vms; i++) {
        const struct cpuset *c = i < cur->n_vms ? &cur->vm_emulator[i]
                                                : NULL;

        if (c && same_set(c, &next->vm_emulator[i])) {
            continue;
        }
        if (add_changed(next, (uint32_t) i, c, &next->vm_emulator[i],
                        (uint32_t) i | PIN_EMU, out, &n) < 0) {
            return -1;
        }
    }
    return n;
}

/* Emits the changed pins 'ch' ('n', from changed_pins()) of rank
 * 'rank', in the order diff_pins() would. */
static void
emit_changed(const struct pol_plan *next, const uint32_t *ch, int n,
             enum pin_rank rank, struct pol_action *acts, size_t max,
             size_t *na)
{
    for (int k = 0; k < n; k++) {
        uint32_t i = ch[k] & (PIN_EMU - 1);

        if (ch[k] >> PIN_RANK_SHIFT != (uint32_t) rank) {
            continue;
        }
        if (ch[k] & PIN_EMU) {
            emit(acts, max, na, (struct pol_action) {
                .type = POL_A_PIN_EMULATOR, .vm = i,
                .set = next->vm_emulator[i] });
        } else {
            emit(acts, max, na, (struct pol_action) {
                .type = POL_A_PIN_VCPU, .vm = next->vcpu_vm[i],
                .vcpu = i, .set = next->vcpu_allowed[i] });
        }
    }
}

/* True if an idle limit going from 'from' to 'to' is shallower (a
 * faster wake-up); -1 is no limit, the deepest. */
static bool
idle_shallower(int8_t from, int8_t to)
{
    return to >= 0 && (from < 0 || to < from);
}

/* Entries compared at once by diff_speed(): the plans cover every
 * possible domain and CPU, most of them unused or unchanged, so runs
 * that are equal in both plans are skipped whole. */
#define SPEED_RUN 8
_Static_assert(POL_MAX_DOMAINS % SPEED_RUN == 0
               && POL_MAX_CPUS % SPEED_RUN == 0, "runs tile the plans");

/* Emits the frequency and idle-limit changes that raise speed ('up') or
 * the others.  A domain whose current frequency is unknown (0) counts
 * as raised. */
static void
diff_speed(const struct pol_plan *cur, const struct pol_plan *next,
           bool up, struct pol_action *acts, size_t max, size_t *n)
{
    for (unsigned d0 = 0; d0 < POL_MAX_DOMAINS; d0 += SPEED_RUN) {
        if (!memcmp(&next->dom_freq_khz[d0], &cur->dom_freq_khz[d0],
                    SPEED_RUN * sizeof cur->dom_freq_khz[0])) {
            continue;
        }
        for (unsigned d = d0; d < d0 + SPEED_RUN; d++) {
            uint32_t to = next->dom_freq_khz[d], from = cur->dom_freq_khz[d];

            if (to && to != from && (to > from || !from) == up) {
                emit(acts, max, n, (struct pol_action) {
                    .type = POL_A_SET_FREQ, .domain = d, .khz = to });
            }
        }
    }
    for (unsigned c0 = 0; c0 < POL_MAX_CPUS; c0 += SPEED_RUN) {
        if (!memcmp(&next->idle_limit[c0], &cur->idle_limit[c0],
                    SPEED_RUN * sizeof cur->idle_limit[0])) {
            continue;
        }
        for (unsigned c = c0; c < c0 + SPEED_RUN; c++) {
            int8_t to = next->idle_limit[c], from = cur->idle_limit[c];

            if (to != from && idle_shallower(from, to) == up) {
                emit(acts, max, n, (struct pol_action) {
                    .type = POL_A_IDLE_LIMIT, .cpu = c, .state = to });
            }
        }
    }
}

int
pol_plan_diff(const struct pol_plan *cur, const struct pol_plan *next,
              struct pol_action *acts, size_t max)
{
    uint32_t ch[PIN_MAX_CHANGED];
    size_t n = 0;
    int n_ch;

    /* 1. Online CPUs that leave the offline set. */
    CPUSET_FOREACH (c, &cur->offline) {
        if (!cpuset_has(&next->offline, (unsigned) c)) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_ONLINE, .cpu = (uint32_t) c });
        }
    }
    /* 2. Speed up: higher frequencies, shallower idle limits.  Sysfs
     * writes of microseconds that make a hinted VM's new cores fast
     * before its vCPUs arrive there. */
    diff_speed(cur, next, true, acts, max, &n);
    /* 3. Pins (libvirt calls of milliseconds each): VMs with a latency
     * hint, then performance VMs, then sets that only widen, then the
     * narrowing ones, so no one loses CPUs before the VMs that need
     * them have theirs. */
    n_ch = changed_pins(cur, next, ch);
    for (enum pin_rank r = RANK_HINT; r <= RANK_REST; r++) {
        if (n_ch >= 0) {
            emit_changed(next, ch, n_ch, r, acts, max, &n);
        } else {
            diff_pins(cur, next, r, acts, max, &n);
        }
    }
    /* 4. Slow down: lower frequencies, deeper idle limits, once the
     * vCPUs have left. */
    diff_speed(cur, next, false, acts, max, &n);
    /* 5. Offline last, when nothing runs there any more. */
    CPUSET_FOREACH (c, &next->offline) {
        if (!cpuset_has(&cur->offline, (unsigned) c)) {
            emit(acts, max, &n, (struct pol_action) {
                .type = POL_A_OFFLINE, .cpu = (uint32_t) c });
        }
    }
    if (n > max) {
        return -ENOSPC;
    }
    return (int) n;
}
