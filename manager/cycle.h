/* manager/cycle.h -- One decision cycle: measure, decide, apply, account.
 *
 * cycle_run() is the step vpowerd repeats each period and the simulator
 * repeats for each simulated host: it samples every managed CPU's idle
 * residency (or busy share, where the host driver reports it directly)
 * and frequency through the host driver and every vCPU's cumulative
 * run, run-queue-delay and halt-poll time through the hypervisor
 * driver, folds the deltas into each vCPU's load history
 * (pol_load_update), builds the policy input, asks pol_decide() for a
 * plan, executes the difference to what is in force (pol_plan_diff)
 * through the drivers, and attributes the interval's energy to the VMs:
 * measured where 'struct vpd' has a whole-host meter, whose check of the
 * model (manager/modelcheck.h) runs before the decision so that a
 * corrected model is what decides; else estimated.  It touches the world
 * only through the driver tables of the 'struct vpd' it runs on
 * (manager/drivers/drv.h and the meter's, manager/drivers/meter.h),
 * reads time only from the clock its caller hands in, and reaches
 * everything else (finer vCPU counters, measured frequency, thermal caps, the
 * journal, the record) through optional hooks.  So vpowerd (libvirt and sysfs
 * drivers, the monotonic clock), the simulator (drivers backed by its
 * execution model, a virtual clock), the replay of a recording (drivers
 * answering from it, sim/replayhost.h) and the unit tests (dummy drivers) run
 * the same code.
 *
 * What is in force is kept per VM (vpd_vcpu.applied, vpd_vm.emu_applied)
 * and per host (d->applied's host fields), so VMs may come and go between
 * cycles without index confusion: the "applied" plan is rebuilt in the
 * current VM order before each diff.  A failed action is logged
 * rate-limited, counted, and the rest of the plan continues; a domain
 * that disappeared in the middle is dropped quietly.  Before a CPU
 * setting is changed for the first time its original is kept in
 * cycle.orig[] (vpowerd puts them back on exit). */

#ifndef VPOWER_CYCLE_H
#define VPOWER_CYCLE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/control/histo.h"
#include "manager/drivers/drv.h"
#include "policy/policy.h"

struct attrib_vcpu;
struct vpd;
struct vpd_vm;

/* The time source: monotonic nanoseconds (CLOCK_MONOTONIC in vpowerd,
 * simulated time in vpower-sim and the tests). */
struct cycle_clock {
    uint64_t (*now_ns)(void *aux);
    void *aux;
};

/* Where a vCPU's cumulative run/ready counters came from (vpd_vcpu.src).
 * Two sources count from different origins, so a vCPU whose source
 * changes is re-primed instead of producing a bogus delta. */
enum cycle_src { CYCLE_SRC_NONE = 0, CYCLE_SRC_DRV, CYCLE_SRC_FINE };

/* Optional inputs and observers beside the drivers; a NULL member is
 * "none".  All are called with 'aux'. */
struct cycle_hooks {
    void *aux;
    /* Replaces the driver's run and ready counters in 'st[0..n)' of
     * 'vm''s vCPUs where a finer per-thread source knows them, setting
     * src[i] to CYCLE_SRC_FINE there (CYCLE_SRC_DRV elsewhere). */
    void (*vcpu_counters)(void *aux, struct vpd_vm *vm,
                          struct drv_vcpu_stat *st, uint8_t *src, size_t n);
    const char *fine_name;        /* That source's name ("taskstats"). */
    /* Looks up the host threads of 'vm''s vCPUs (vpd_vcpu.tid). */
    void (*find_threads)(void *aux, struct vpd_vm *vm);
    /* The average frequency 'cpu' ran at over the last interval, 0 =
     * nominal; false if unknown (the host driver's cur_khz is used). */
    bool (*ran_khz)(void *aux, unsigned cpu, uint32_t *khz);
    /* Capacity caps the policy must respect now, per domain (0 = none;
     * the array is zeroed before the call). */
    void (*thermal_caps)(void *aux, const struct pol_model *m,
                         uint32_t caps[POL_MAX_DOMAINS]);
    /* Before a CPU's online state is first changed: 0, or -errno to
     * refuse the change (the journal could not record it). */
    int (*save_online)(void *aux, unsigned cpu, bool was_online);
    /* VM registry events (manager/vmreg.h): after a VM was added, after
     * it changed (its old identity in 'old'), before it is freed. */
    void (*vm_added)(void *aux, struct vpd_vm *vm);
    void (*vm_changed)(void *aux, struct vpd_vm *vm,
                       const struct drv_dom *old, unsigned old_n_vcpus);
    void (*vm_gone)(void *aux, struct vpd_vm *vm);
    /* After each decision: the input it used ('vm_of[i]' is the VM of
     * its i-th VM), whether the VMs were sampled and over which
     * interval, each CPU's frequency that ran and busy estimate. */
    void (*decided)(void *aux, const struct pol_input *in,
                    struct vpd_vm *const *vm_of, bool sampled,
                    uint64_t interval_ns, const uint32_t *ran_khz,
                    const uint32_t *busy_ppm);
    /* A stopwatch (ns) read around pol_decide() to sum the time spent
     * inside it in cycle.decide_ns (the simulator's benchmark). */
    uint64_t (*stopwatch_ns)(void *aux);
};

/* Originals of one CPU, saved before the cycle first changes them. */
struct cycle_orig {
    bool freq_saved;
    uint32_t min_khz, max_khz;
    bool idle_saved;
    unsigned n_idle;
    bool disabled[DRV_MAX_IDLE];
    bool online_saved;
    bool online;
    uint64_t last_idle_us;          /* Residency sum at the last sample. */
    bool idle_valid;
};

/* The cycle's state, owned by its 'struct vpd' (vpd.cyc).  The caller
 * fills 'managed' and 'online' before the first cycle_prime(); the rest
 * is the cycle's. */
struct cycle {
    struct cycle_clock clock;
    struct cycle_hooks hooks;
    struct cpuset managed;          /* Managed and present CPUs. */
    struct cpuset online;           /* Of those, online now. */
    bool hv_up;                     /* The hypervisor answers: sample. */
    struct cycle_orig orig[POL_MAX_CPUS];
    bool idle_live;                 /* Some CPU's residency has grown: the
                                     * counters are live, so one standing
                                     * still is a CPU that never idled. */
    unsigned offline_tries[POL_MAX_CPUS];
    /* Policy input and its back-references, grown as needed. */
    struct pol_vm *pvms;
    bool *pvm_fixed;                /* [cap_vms] pvms[i].fixed may be
                                     * non-empty (else it is empty). */
    struct pol_vcpu *pvcpus;
    struct vpd_vm **vm_of;          /* Input VM index -> VM. */
    struct vpd_vcpu **vcpu_of;      /* Input vCPU index -> vCPU. */
    bool applied_stale;             /* Some VM's or vCPU's set in force
                                     * changed other than by the cycle's
                                     * pins, which keep d->applied's
                                     * slots of vm_of/vcpu_of current:
                                     * the next build copies all slots. */
    size_t cap_vms, cap_vcpus;
    /* Energy attribution's input and output, the same capacities. */
    struct attrib_vcpu *attr_vcpus; /* [cap_vcpus] */
    double *vm_j, *vm_busy_j;       /* [cap_vms] joules per input VM. */
    struct pol_action *acts;
    size_t cap_acts;
    /* One VM's vCPU counters and their sources (cycle_read_vcpus), as
     * each sample reads them; 'cap_st' vCPUs, grown as needed. */
    struct drv_vcpu_stat *st;
    uint8_t *st_src;
    size_t cap_st;
    struct pol_plan *baseline;
    uint32_t busy_ppm[POL_MAX_CPUS];/* Busy of each CPU last interval,
                                     * UINT32_MAX unknown. */
    uint32_t base_ppm[POL_MAX_CPUS];
    uint32_t ran_khz[POL_MAX_CPUS]; /* Frequency that ran, 0 = nominal. */
    uint32_t in_busy[POL_MAX_CPUS]; /* pol_input.cpu_busy_ppm: busy_ppm of
                                     * managed online CPUs, UINT32_MAX
                                     * elsewhere. */
    uint32_t in_khz[POL_MAX_CPUS];  /* pol_input.cpu_ran_khz. */
    uint64_t poll_ns[POL_MAX_CPUS]; /* Halt polling of the vCPUs that
                                     * ran there, this sample. */
    uint64_t last_sample_ns;
    bool in_cycle, kick_pending;
    bool have_plan;
    char ready_src[40];
    uint64_t decide_ns;             /* Inside pol_decide(), by
                                     * hooks.stopwatch_ns. */
    bool hint_pending;              /* The next decision is a guest
                                     * hint's (cycle_hint)... */
    uint64_t hint_read_ns;          /* ...read at this time (clock)... */
    struct vpd_vm *hint_vm;         /* ...from this VM (NULL: unknown). */
    struct histo hint_apply;        /* Hint read to last action returned,
                                     * of hints whose decision changed
                                     * something (status, metrics). */
    bool self_known;                /* 'self_set' was handed to the host
                                     * driver's confine_self. */
    struct cpuset self_set;
    bool check_jobs;                /* The next decision asks each VM
                                     * whose pins it changes whether it
                                     * migrates (cycle_check_jobs)... */
    uint64_t exec_seq;              /* ...once per VM and execution:
                                     * vpd_vm.job_seq. */
};

/* Creates d->cyc with 'clock' and 'hooks' (copied; NULL = none) and
 * sets the source names of 'd' that it reports. */
void cycle_create(struct vpd *d, const struct cycle_clock *clock,
                  const struct cycle_hooks *hooks);
/* Frees d->cyc and d's plans (NULL is fine). */
void cycle_destroy(struct vpd *d);

/* The clock's current time. */
uint64_t cycle_now_ns(const struct vpd *d);

/* Takes the first sample of the CPUs (so the first period has deltas)
 * and sizes the plans for the VMs known now. */
void cycle_prime(struct vpd *d);

/* One cycle: with 'sample', a new sample of every CPU and vCPU first
 * (else the loads as tracked, e.g. after a hint); then decide, apply and,
 * with 'sample', account the interval's energy.  A call made while a
 * cycle runs (from a hook) makes that cycle decide once more instead. */
void cycle_run(struct vpd *d, bool sample);

/* Ties the next decision to a guest hint that was read from the channel
 * of 'vm' (NULL: not known) at 'read_ns' (this cycle's clock); call it
 * before the cycle_run() the hint causes.  If that decision executes at
 * least one action, the time from 'read_ns' until its last action has
 * returned (the plan is in effect) is added to cycle.hint_apply and to
 * vm->hint_apply.  A decision without actions, a refused one and dry
 * runs add nothing. */
void cycle_hint(struct vpd *d, struct vpd_vm *vm, uint64_t read_ns);

/* The next decision comes without the period's refresh of every VM's
 * running job (manager/migration.h): before its first pin of a VM it asks
 * that VM through hv_ops->migr_job, and leaves the VM's pins alone while a
 * migration runs (libvirt would hold the pin behind the migration job, up
 * to its state-change lock's timeout).  A guest hint's decision uses this
 * so that it asks the few VMs it pins rather than every VM on the host. */
void cycle_check_jobs(struct vpd *d);

/* How long until the next cycle: the plan's next_interval_ns clamped
 * to [conf.period_ms, conf.max_period_ms]. */
uint64_t cycle_next_delay_ns(const struct vpd *d);

/* Unlinks 'gone' from d->vms (hooks.vm_gone first) and frees it: the
 * one way a VM leaves, whether the registry drops it or a sample finds
 * its domain gone. */
void cycle_drop_vm(struct vpd *d, struct vpd_vm *gone);

/* Reads 'vm''s vCPU counters into 'st[0..max)' ('*n' of them): the
 * hypervisor driver's, where the vcpu_counters hook knows finer ones
 * those; src[i] says which (enum cycle_src).  Returns the driver's
 * result (-ENOENT: the domain is gone). */
int cycle_read_vcpus(struct vpd *d, struct vpd_vm *vm,
                     struct drv_vcpu_stat *st, uint8_t *src, size_t max,
                     size_t *n);

/* Sets managed CPU 'cpu' online or offline through the host driver
 * (saving its original state first).  Never offlines CPU 0 (-EPERM). */
int cycle_set_online(struct vpd *d, unsigned cpu, bool online);

#endif /* manager/cycle.h */
