/* sim/exec.h -- Execution model of one host under a plan.
 *
 * Every policy and baseline hands its 'struct pol_plan' to the same
 * execution model, which advances the host one 1-second sim step at a
 * time and charges energy through the policy library's
 * pol_energy_power_mw(), so policies differ only in their decisions.
 *
 * Per step: each vCPU wants its new burst demand plus its backlog (work
 * in capacity-unit-seconds; 1024 = one nominal core for one second).
 * vCPUs with the same allowed set form a group; groups are served
 * smallest set first from the remaining capacity of the physical cores in
 * their set (a core's capacity at its domain's frequency, times
 * smt_capacity_pct/100 when two of its threads are usable): max-min fair
 * over that pooled capacity (CFS load balancing at the 1 s scale), each
 * vCPU at most one thread of the fastest core in its set.  Work not
 * served is ready time (runnable - running) and backlog.  Backlog is
 * never dropped: CPU work that a VM could not run is still to be done
 * (a request waits, a batch job finishes later), so it carries into the
 * next interval and costs energy when it runs.  An interval's unmet
 * demand is its shortfall, max(0, demand - served) = the growth of the
 * backlog over the interval, so a shortfall is counted once even when a
 * saturated vCPU (demand = one whole vCPU) can never drain it.
 *
 * Placement: every vCPU has a sticky home CPU in its set (new ones go to
 * the least loaded core, ties to the package with fewer vCPUs, as the
 * load balancer spreads running tasks over sockets); its work lands
 * there, and what exceeds that core's capacity moves to cores of the set
 * with room.  A core's work is split over its online threads in
 * proportion to the work of the vCPUs homed on each and their halt
 * polling (all to the first thread when none is homed there).  Each
 * thread's busy fraction then follows from its share with the siblings
 * busy independently (as pol_energy_power_mw() assumes): while both
 * run, each runs at smt_capacity_pct/200 of one thread's capacity
 * (exec_split_threads()).  So a thread's utilisation is what runs on
 * it, never its sibling's work (cores with more than two threads book
 * on their first two online ones).  Idle depth: each vCPU wakes
 * 10 + 240 * busy times per second (guest housekeeping up to a 250 Hz
 * tick) on its home core; the core's mean idle gap selects the deepest
 * state whose target residency fits (menu governor with a right guess),
 * capped by the plan's limit; cores without wakeups keep the plan's
 * limit, and pol_energy_power_mw() applies its own rules on top.  KVM
 * halt polling, if attached (sim/halt.h), fills idle time before the
 * busy times and idle depths are taken. */

#ifndef VPOWER_SIM_EXEC_H
#define VPOWER_SIM_EXEC_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* Wake-ups per second of each vCPU: WAKE_IDLE_HZ + WAKE_BUSY_HZ * busy
 * (also the halts of the halt-poll model, sim/halt.h). */
#define WAKE_IDLE_HZ 10.0
#define WAKE_BUSY_HZ 240.0

struct exec_group;
struct exec_halt;

struct exec_host {
    const struct pol_model *m;
    const struct pol_model *energy_m; /* Charges the energy when not NULL
                                   * (vpower-sim --true-model: the host's
                                   * real powers, which the policies'
                                   * model 'm' may get wrong); same
                                   * topology as 'm'. */
    size_t n_vms, n_vcpus;
    struct pol_plan *plan;        /* Applied plan, effective freqs. */
    int8_t *pol_idle_limit;       /* [n_cpus] the plan's own limits. */
    unsigned n_awake;             /* CPUs active and online in 'plan'. */

    /* Per vCPU (host-local index). */
    double *backlog;              /* Capacity-unit-seconds waiting. */
    double *carried;              /* Backlog at the last interval end. */
    double *want;                 /* Scratch. */
    double *served;               /* Scratch: served this step. */
    void *order;                  /* Scratch for water-filling. */
    int32_t *vcpu_home;           /* Home CPU (-1 none): where its work
                                   * lands unless balanced away. */
    int32_t *vcpu_cpu;            /* CPU reported to the policy: the
                                   * fastest of its set. */
    double *vcpu_rate;            /* Capacity/s of one thread there. */
    double *busy_s, *ready_s;     /* Since the last decision. */
    double *ready_ivl_s;          /* In the current trace interval. */
    uint32_t *vcpu_group;

    /* Groups of vCPUs with one allowed set, smallest set first. */
    size_t n_groups;
    struct exec_group *groups;
    uint32_t *group_members;      /* [n_vcpus]: the groups' members. */
    uint64_t *group_hash;         /* [n_vcpus]: each group's set hash. */
    size_t *group_slot;           /* [n_group_slots]: hash table of the
                                   * groups' sets, SIZE_MAX empty. */
    size_t n_group_slots;         /* A power of two > 2 n_vcpus. */

    /* Per physical core (index = model core id) and per CPU. */
    unsigned n_cores;
    double *core_cap;             /* One thread's capacity. */
    uint32_t *cpu_cap;            /* [POL_MAX_CPUS] each CPU's capacity
                                   * at its domain's frequency in 'plan'
                                   * (pol_model_capacity_at()). */
    unsigned *core_threads;       /* Online threads of each core. */
    double *core_full;            /* Whole core's capacity. */
    double *core_rem, *core_work; /* Scratch. */
    double *core_wake;            /* Scratch: wakeups this step. */
    double *core_tmp;             /* Scratch. */
    uint32_t *core_homed, *cpu_homed; /* vCPUs homed there. */
    uint32_t pkg_homed[POL_MAX_PKGS];
    uint32_t *busy_ppm;           /* [POL_MAX_CPUS] this step. */
    bool *cpu_first;              /* First online thread of its core. */
    double *cpu_work_last;        /* Capacity units in the last step. */
    double *cpu_work_period;      /* Since the last decision. */
    double *cpu_busy_period;      /* Busy seconds of each CPU since the
                                   * last decision (what cpuidle
                                   * residency shows a real host). */
    double *cpu_guest_period;     /* The same without halt polling (what
                                   * vpowerd derives with halt stats). */
    double *core_guest;           /* Scratch: core work before polling. */
    double period_s;              /* Length since the last decision. */

    /* Totals. */
    double energy_j;
    double demand_work, unmet_work;
    uint64_t pin_changes, freq_changes;
    double active_cpu_s;          /* Sum over steps of active CPUs. */
    double last_power_w;
    unsigned last_active;
    int applied;                  /* Plans applied so far. */
    struct exec_halt *halt;       /* KVM halt polling (sim/halt.h), NULL
                                   * = none; owned. */

    /* Per-thread booking. */
    int32_t *core_thr;            /* [2 * n_cores] online threads of each
                                   * core in CPU order, -1 = none. */
    double *cpu_home_w;           /* Scratch: work of the vCPUs homed on
                                   * each CPU this step. */
    double *cpu_poll_w;           /* Halt-poll work on each CPU in the
                                   * last step (capacity units). */

    /* Placement costs (exec_charge_moves()). */
    double mig_cost_s;            /* Run time one cross-core migration
                                   * costs the vCPU (cache refill,
                                   * wake-up), seconds; 0 = free. */
    double pin_cost_s;            /* Run time one allowed-set change
                                   * costs, seconds. */
    uint64_t migrations;          /* Cross-core home changes. */
    double overhead_work;         /* Capacity-unit-seconds charged. */
    double wait_work_s;           /* Sum over steps of the backlog left
                                   * at the step's end: work-weighted
                                   * waiting, capacity-unit-seconds x s
                                   * (a 1 s lag of all work = demand). */
    double late_work;             /* Sum over steps and vCPUs of the
                                   * backlog's growth in the step: work
                                   * not run in the step it was demanded
                                   * (or charged) in, capacity-unit-
                                   * seconds.  What a policy serving
                                   * every step's work in that step would
                                   * have run on top (sim/equal.h). */
    struct cpuset *old_sets;      /* Scratch [n_vcpus] for exec_apply(). */
    int32_t *old_home;            /* Scratch [n_vcpus]. */
};

/* Creates a host for 'n_vms' VMs with 'n_vcpus' vCPUs in all on model
 * 'm' (borrowed; must outlive the host).  Frequencies start at nominal.
 * Never returns NULL (aborts on allocation failure). */
struct exec_host *exec_host_create(const struct pol_model *m, size_t n_vms,
                                   size_t n_vcpus);
void exec_host_destroy(struct exec_host *);   /* NULL is fine. */

/* Applies 'plan' (not modified): allowed sets, active/offline CPUs,
 * idle limits and domain frequencies (0 = keep the current one).  Counts
 * vCPUs whose allowed set changed and domains whose frequency changed
 * (the first plan is the initial state and counts nothing).  Resets the
 * per-decision accumulators. */
void exec_apply(struct exec_host *h, const struct pol_plan *plan);

/* exec_apply() of a plan whose allowed sets are those of the applied
 * plan except perhaps those of the vCPUs 'vcpus[0..n_vcpus)', and whose
 * emulator sets are those of the applied plan except perhaps those of
 * the VMs 'vms[0..n_vms)' (host-local indices, any order, repeats
 * allowed): the same result, comparing and copying only the sets
 * listed.  For a caller that knows which sets it was told to change
 * (sim/simhost.c).  The first plan is applied whole. */
void exec_apply_changes(struct exec_host *h, const struct pol_plan *plan,
                        const uint32_t *vcpus, size_t n_vcpus,
                        const uint32_t *vms, size_t n_vms);

/* exec_apply() of a plan that differs from the applied one only in its
 * frequencies 'dom_freq_khz' (one per domain, 0 = keep): the same
 * counting and resets, without copying or comparing the allowed sets.
 * For baselines that re-plan frequency every step. */
void exec_apply_freqs(struct exec_host *h, const uint32_t *dom_freq_khz);

/* Charges the cost of moving vCPUs when a new placement takes effect:
 * 'old_sets' ([n_vcpus] allowed sets before, NULL = none known) and
 * 'old_home' ([n_vcpus] home CPUs before, -1 = none) against the host's
 * current sets and homes.  Every vCPU whose allowed set changed costs
 * pin_cost_s, every vCPU whose home moved to another physical core
 * mig_cost_s, of run time at its new thread's rate: work added to its
 * backlog (and to the demand, so unmet demand stays a share of all
 * work), which costs energy when it runs and delays what waits behind
 * it.  exec_apply() calls it; a caller that applies placements another
 * way calls it itself. */
void exec_charge_moves(struct exec_host *h, const struct cpuset *old_sets,
                       const int32_t *old_home);

/* Moves vCPU 'v''s home to 'cpu' (which must be online and in its
 * allowed set; returns -EINVAL otherwise), as the kernel's wake-up path
 * does when it places a task elsewhere: no allowed set changes; a move
 * to another physical core is charged as in exec_charge_moves(). */
int exec_set_home(struct exec_host *h, size_t v, unsigned cpu);

/* Whether exec_set_home(h, v, cpu) would accept 'cpu'. */
bool exec_may_home(const struct exec_host *h, size_t v, unsigned cpu);

/* Busy fractions '*ba', '*bb' of the two threads of one core that run
 * 'wa' and 'wb' capacity-unit-seconds in one second at one thread's
 * capacity 'cap', with SMT throughput 'smt' (1.25 = both threads
 * together do 1.25 threads' work).  The threads are busy independently:
 * both run a fraction ba * bb of the time, each then at cap * smt / 2.
 * Work a thread cannot fit moves to its sibling (the scheduler pulls a
 * runnable task to an idle sibling).  Each result is in [0, 1]. */
void exec_split_threads(double wa, double wb, double cap, double smt,
                        double *ba, double *bb);

/* What a governor sampling every few milliseconds sees during the next
 * step: each CPU's utilisation (capacity units, busy fraction times its
 * capacity at the frequency, halt polling of the last step included)
 * if the step ran with the new demands 'demand' (as for exec_step())
 * at the domain frequencies 'khz' (0 = the current one).  Changes only
 * scratch state: the next exec_step() is unaffected. */
void exec_probe_util(struct exec_host *h, const float *demand,
                     const uint32_t *khz, double *util);

/* Runs one 1-second step in which vCPU v's new demand is 'demand[v]'
 * (fraction of one nominal vCPU, 0..1), charging energy. */
void exec_step(struct exec_host *h, const float *demand);

/* Ends a trace interval: the interval's shortfall (backlog growth) is
 * added to unmet demand (and stored in 'late_out[v]', capacity-unit-
 * seconds, if not NULL); the backlog carries on; each vCPU's ready time over
 * the
 * interval is appended to 'ready_out' (seconds, n_vcpus values) if not
 * NULL; then resets the interval accumulators. */
void exec_interval_end(struct exec_host *h, float *ready_out,
                       double *late_out);

#endif /* sim/exec.h */
