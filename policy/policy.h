/* policy/policy.h -- The pure power policy: load tracking, consolidation,
 * frequency and idle choice.
 *
 * vpower is the "power scheduler" of the 2013 kernel debate: it decides
 * capacity (which cores are awake, at what frequency, how deep the others
 * may sleep) and leaves the host kernel scheduler to balance vCPU threads
 * inside the sets it allows.  pol_decide() turns one snapshot into a plan.
 * It performs no I/O, reads no clock, keeps no globals and allocates
 * nothing: what it remembers between calls lives in the caller-owned
 * 'struct pol_state', and per-vCPU load history in 'struct pol_load'
 * which the caller keeps next to each vCPU.  vpowerd, vpower-sim and the
 * unit tests all call exactly this code. */

#ifndef VPOWER_POLICY_H
#define VPOWER_POLICY_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/cpuset.h"
#include "policy/model.h"

/* ---- Per-VM policy, as operators set it ---------------------------- */

enum pol_kind {
    POL_BALANCED = 0,      /* Default: pack with headroom, EAS choice. */
    POL_PERFORMANCE,       /* Never packed, own cores, max frequency,
                            * shallow idle: power does not matter. */
    POL_POWERSAVE,         /* Pack tighter, lower frequency. */
    POL_N_KINDS
};

const char *pol_kind_name(enum pol_kind);           /* "balanced", ... */
int pol_kind_parse(const char *name, enum pol_kind *out); /* 0 / -EINVAL */

struct pol_vm_policy {
    enum pol_kind kind;
    uint32_t latency_us;     /* 0 = none; else caps idle depth (exit
                              * latency) on every core the VM may use. */
    uint32_t min_freq_khz;   /* 0 = none; floor for the VM's domains. */
    bool never_offline;      /* Cores this VM may use are never offlined. */
    bool share_smt;          /* May share SMT siblings with other VMs
                              * (the default).  False: no core whose
                              * thread runs one of its vCPUs runs
                              * another VM's vCPU on a sibling thread,
                              * neither in the plan nor in the allowed
                              * sets (docs/policy.md, "SMT isolation").
                              * Zero-initialised callers must set it. */
};

/* Guest hints, already validated and rate-limited by the manager.  Times
 * are absolute on the caller's monotonic clock; 0 = not active. */
struct pol_hints {
    uint64_t latency_until_ns;   /* Latency-critical work in progress. */
    uint32_t latency_us;         /* Bound given with that hint (0=none). */
    uint64_t boost_until_ns;     /* Max frequency until then. */
    uint64_t idle_until_ns;      /* Guest expects to be idle until then. */
    uint64_t batch_until_ns;     /* Throughput work: may be packed tight. */
};

struct pol_vm {
    uint32_t id;                 /* Caller's stable id (for messages). */
    struct pol_vm_policy policy;
    struct pol_hints hints;
    bool unmanaged;              /* Statically pinned by the admin: never
                                  * moved; its load still counts on the
                                  * CPUs it is pinned to ('fixed'). */
    struct cpuset fixed;         /* For unmanaged VMs: their CPUs. */
    uint32_t first_vcpu;         /* Its vCPUs are vcpus[first_vcpu ..
                                  * first_vcpu + n_vcpus - 1]. */
    uint32_t n_vcpus;
};

/* ---- Load tracking -------------------------------------------------- */

/* Caller-owned, one per vCPU, zero-initialised when the vCPU appears. */
struct pol_load {
    uint32_t avg_cap;        /* Decayed average busy, capacity units. */
    uint32_t peak_cap;       /* Recent peak busy (fast up, slow decay). */
    uint32_t ready_ppm;      /* Decayed run-queue delay, ppm of time. */
    uint32_t last_cap;       /* Busy in the last interval. */
    uint32_t last_ready_ppm; /* Ready in the last interval. */
    uint32_t n_samples;      /* Saturates; used for warm-up. */
    uint32_t var_cap2;       /* Decayed variance of busy, capacity units
                              * squared, scaled to a 1 s sample (see
                              * docs/policy.md): what statistical
                              * multiplexing of a shared set needs. */
    uint32_t run_cap;        /* Capacity of one thread where it ran in
                              * the last interval (0 = unknown). */
    uint32_t slow_cap;       /* Busy averaged with a 60 s time constant
                              * whatever the interval: what one vCPU
                              * needs of its thread over minutes. */
    /* slow_cap's weight for an interval of 'slow_interval_ns' (0: none
     * yet): the interval rarely changes, and exp() is the costliest
     * step of an update. */
    uint64_t slow_interval_ns;
    double slow_weight;
};

/* Folds one interval's observation into 'l'.  'busy_ns' and 'ready_ns'
 * were measured over 'interval_ns' (> 0; else nothing happens) while the
 * vCPU ran on 'cpu' (-1 unknown: nominal capacity is assumed) whose domain
 * ran at 'freq_khz' (0 = unknown: nominal).  Busy time is converted to
 * capacity units at that frequency, so a slowed core does not look
 * busier.  Values above the interval are clamped. */
void pol_load_update(struct pol_load *l, const struct pol_model *m,
                     int cpu, uint32_t freq_khz, uint64_t busy_ns,
                     uint64_t ready_ns, uint64_t interval_ns);

/* ---- Decision input and output -------------------------------------- */

struct pol_vcpu {
    uint32_t vm;             /* Index into pol_input.vms. */
    uint32_t idx;            /* Guest vCPU number. */
    struct pol_load load;
    int32_t cpu;             /* Host CPU it last ran on, -1 unknown. */
};

struct pol_input {
    const struct pol_vm *vms;
    size_t n_vms;
    const struct pol_vcpu *vcpus;
    size_t n_vcpus;
    struct cpuset managed;       /* CPUs the policy may use and change. */
    /* CPUs the policy may wake: those online now plus those the caller
     * took offline itself on an earlier plan's word (it brings them back
     * with POL_A_ONLINE).  A CPU offline for any other reason is left
     * out.  Passing only the online ones makes every parked-offline CPU
     * look foreign: the next plan leaves it out of 'offline', so it is
     * onlined, and the plan after offlines it again. */
    struct cpuset online;
    uint64_t now_ns;             /* Caller's monotonic clock. */
    bool override_performance;   /* Host-wide "power does not matter". */
    uint32_t thermal_cap_khz[POL_MAX_DOMAINS]; /* 0 = no cap. */
    /* What each CPU did over the last interval,
     * indexed by CPU, borrowed for the call; NULL = not measured.  Busy
     * share in ppm (UINT32_MAX = unknown for that CPU) and the frequency
     * it ran at (kHz, 0 = nominal).  With them a pool core that is alone
     * in its frequency domain runs at the point its own measured load
     * needs (schedutil's 1.25 x rule, never above the pool's level):
     * the kernel does not spread a packed set evenly at the 1 s scale. */
    const uint32_t *cpu_busy_ppm;
    const uint32_t *cpu_ran_khz;
    /* Core scheduling is on (libvirt's qemu.conf 'sched_core' other than
     * "none"): the kernel never runs vCPUs of two VMs on sibling threads
     * at once.  VMs that may not share siblings (share_smt false) then
     * need no cores of their own, and the pool counts no SMT gain: a
     * core's second thread adds capacity only for the same VM's vCPUs,
     * which the pool's estimate cannot count on. */
    bool sched_core;
};

struct pol_config {
    uint32_t headroom_pct;       /* Spare capacity kept on packed cores
                                  * (default 20: fill to 80%). */
    uint32_t powersave_headroom_pct; /* For powersave VMs (default 10). */
    uint32_t spread_ready_ppm;   /* Ready time that forces spreading
                                  * at once (default 50000 = 5%). */
    uint64_t pack_dwell_ns;      /* Min time between two packing steps
                                  * (default 30 s); spreading is never
                                  * delayed. */
    uint32_t warmup_samples;     /* Samples before a vCPU may be packed
                                  * (default 3). */
    uint64_t min_interval_ns;    /* Adaptive period bounds (1 s, 10 s). */
    uint64_t max_interval_ns;
    bool allow_offline;          /* Offline parked cores (never CPU0). */
    bool use_turbo;              /* Turbo points for boosts and the
                                  * override, and for a lone core's race
                                  * to idle when the model says it pays
                                  * (default false). */
    bool saturation_turbo;       /* Turbo points on a host saturated for
                                  * POL_SAT_HOLD_NS, even without use_turbo
                                  * (default true): vpowerd then never
                                  * holds a saturated host below what
                                  * the kernel would run it at. */
    size_t max_vcpus;            /* Most vCPUs (and VMs) one
                                  * decision may see; pol_state_create()
                                  * sizes its scratch for it (default
                                  * 4096); more gives -ENOSPC. */
};

/* How long a host stays saturated (every usable CPU awake at its top
 * non-turbo point and busy, vCPUs waiting) before saturation_turbo takes
 * the turbo points: saturation that lasts this long is demand above the
 * host's nominal capacity, not a burst that idle time later absorbs. */
#define POL_SAT_HOLD_NS UINT64_C(5000000000)

/* Fills 'c' with the documented defaults above. */
void pol_config_default(struct pol_config *c);

/* Why a VM is placed where it is; see pol_explain(). */
enum pol_reason {
    POL_R_PACKED = 0,        /* Shares the packed active set. */
    POL_R_PERFORMANCE,       /* Own cores: performance policy. */
    POL_R_LATENCY_HINT,      /* Own cores: latency-critical hint. */
    POL_R_OVERRIDE,          /* Host-wide performance override. */
    POL_R_READY_SPREAD,      /* Spread: ready time above threshold. */
    POL_R_UNMANAGED,         /* Static pinning by the admin. */
    POL_R_WARMUP,            /* Not enough samples yet: left spread. */
    POL_R_SMT_ISOLATED,      /* Whole cores of its own: may not share
                              * SMT siblings with other VMs. */
    POL_N_REASONS
};
const char *pol_reason_text(enum pol_reason);

/* A plan: the complete target state of everything vpower controls.  Also
 * used to describe what is currently applied, so pol_plan_diff() can turn
 * two plans into actions.  Create with pol_plan_create() for a maximum
 * number of VMs and vCPUs; caller owns it. */
struct pol_plan {
    size_t max_vms, max_vcpus;
    size_t n_vms, n_vcpus;           /* As in the input it came from. */
    struct cpuset active;            /* CPUs kept awake for guests. */
    struct cpuset offline;           /* CPUs to take offline (only with
                                      * allow_offline; never CPU0). */
    uint32_t dom_freq_khz[POL_MAX_DOMAINS]; /* Target; 0 = leave alone. */
    int8_t idle_limit[POL_MAX_CPUS]; /* Deepest allowed idle state index
                                      * per CPU; -1 = no limit. */
    struct cpuset *vcpu_allowed;     /* [max_vcpus]: where each may run. */
    struct cpuset *vm_emulator;      /* [max_vms]: emulator/IO threads. */
    uint8_t *vm_reason;              /* [max_vms]: enum pol_reason. */
    uint64_t next_interval_ns;       /* When to decide again. */
    uint32_t est_power_mw;           /* Model estimate for this plan at
                                      * the tracked load. */
    uint32_t *vcpu_vm;               /* [max_vcpus]: VM index of
                                      * each vCPU, so pol_plan_diff() can
                                      * fill pol_action.vm. */
};

struct pol_plan *pol_plan_create(size_t max_vms, size_t max_vcpus);
void pol_plan_destroy(struct pol_plan *);     /* NULL is fine. */
void pol_plan_copy(struct pol_plan *dst, const struct pol_plan *src);

/* Opaque hysteresis state (current active count, last packing time...). */
struct pol_state;
struct pol_state *pol_state_create(const struct pol_model *m,
                                   const struct pol_config *c);
void pol_state_destroy(struct pol_state *);   /* NULL is fine. */

/* Decides the target state for 'in' into 'plan' (which must have room:
 * in->n_vms <= max_vms, in->n_vcpus <= max_vcpus, else -ENOSPC and
 * nothing changes).  Returns 0, or -EINVAL if a vCPU names a VM out of
 * range or a VM's vCPU range is outside 'vcpus'.  Guarantees: every
 * managed vCPU's allowed set is non-empty and inside managed & online &
 * active; performance VMs never share a physical core; a VM with
 * share_smt false shares no core with another VM's vCPUs (allowed sets
 * included) unless no free core is left for it (pol_explain() says so)
 * or in->sched_core; no active core is
 * planned over capacity * (100 - headroom)% unless all managed cores are
 * already active.  Updates 'st'. */
int pol_decide(struct pol_state *st, const struct pol_input *in,
               struct pol_plan *plan);

/* ---- Plans as actions ---------------------------------------------- */

enum pol_action_type {
    POL_A_ONLINE,         /* cpu */
    POL_A_PIN_VCPU,       /* vm, vcpu (index into vcpus), set */
    POL_A_PIN_EMULATOR,   /* vm, set */
    POL_A_SET_FREQ,       /* domain, khz */
    POL_A_IDLE_LIMIT,     /* cpu, state (-1 = none) */
    POL_A_OFFLINE,        /* cpu */
};

struct pol_action {
    enum pol_action_type type;
    uint32_t vm, vcpu, cpu, domain, khz;
    int32_t state;
    struct cpuset set;
};

/* Writes into 'acts' (room for 'max') the actions that turn 'cur' into
 * 'next', in a safe order that makes waiting VMs fast first: online;
 * frequency raises (and domains whose current frequency is 0, unknown)
 * and idle limits made shallower; pins (each rank's vCPUs, then its
 * emulators) of VMs whose next reason is POL_R_LATENCY_HINT, then of
 * POL_R_PERFORMANCE and POL_R_OVERRIDE VMs, then of other VMs whose set
 * only widens, then the rest; frequency cuts and deeper idle limits;
 * offline last.  Within a group, vCPU and VM index order.  Returns the
 * number of actions, or -ENOSPC if 'max' is too small.  Identical plans
 * give 0. */
int pol_plan_diff(const struct pol_plan *cur, const struct pol_plan *next,
                  struct pol_action *acts, size_t max);

/* ---- Energy ----------------------------------------------------------- */

/* Estimated host power (mW) for 'plan' when each CPU is busy
 * 'cpu_busy_ppm[cpu]' of the time at its planned frequency: busy power of
 * each physical core at its operating point, idle power of the rest of
 * the time in the deepest state its limit allows (parked and offline
 * cores: the deepest), cluster, uncore and platform power.  The one
 * energy function shared by decide (EAS choice), the simulator and the
 * exporter. */
uint32_t pol_energy_power_mw(const struct pol_model *m,
                             const struct pol_plan *plan,
                             const uint32_t *cpu_busy_ppm);

/* Writes a one-paragraph human explanation of why VM 'vm' (index into
 * in->vms) is placed as in 'plan' and what would change it. */
void pol_explain(const struct pol_state *st, const struct pol_input *in,
                 const struct pol_plan *plan, size_t vm,
                 char *buf, size_t len);

#endif /* policy/policy.h */
