/* manager/hkset.h -- The housekeeping set: host work follows the plan.
 *
 * The decision cycle frees CPUs for power; the host's own work
 * (services, interrupts, unbound workqueues) must leave them too, or a
 * freed core keeps being woken.  After each plan is in force the cycle
 * calls hkset_follow(), which hands the housekeeping driver (drv.h,
 * struct drv_hk_ops) the CPUs host work may use: every online CPU that
 * vpowerd does not free, i.e. the plan's active CPUs, the online CPUs
 * vpowerd does not manage, and CPU0 always.  The driver is called only
 * when that set changes.  The host-wide override releases host work at
 * once (the set becomes every online CPU, which gives each thing its
 * original CPUs back).
 *
 * Host work is demand: when its CPU pressure ("some" avg10) reaches the
 * configured percent, hkset_demand() makes the policy input show every
 * VM's vCPUs waiting, as ready time above spread_ready_pct does, so the
 * policy spreads (the active set grows and never shrinks while the host
 * waits).  With no housekeeping ('struct vpd'.hks NULL: the simulator,
 * the replay, vpowerd with housekeeping off) nothing here runs.
 *
 * What still ran on the freed CPUs: each sampled period hkset_watch()
 * reads the interrupts on them (and, for a while after someone asked,
 * every thread: a walk of the whole process table is not worth doing
 * every period for nobody) and keeps the period's largest sources in
 * 'woke', for `vpowerctl explain` and status. */

#ifndef VPOWER_HKSET_H
#define VPOWER_HKSET_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/drivers/drv.h"

struct vpd;
struct pol_vcpu;

/* Sources kept per period. */
#define HKSET_TOP 8

/* What ran on the freed CPUs between the last two sampled periods. */
struct hkset_woke {
    bool valid;                     /* Two readings of the same freed
                                     * set: the rest means something. */
    bool threads;                   /* Threads were read both times. */
    struct cpuset cpus;             /* The freed CPUs. */
    uint64_t period_ns;
    uint64_t irqs;                  /* Interrupts on them. */
    uint64_t thread_runs;           /* Times threads last seen there were
                                     * scheduled in (anywhere). */
    struct drv_waker top[HKSET_TOP];/* Largest first; count is the
                                     * period's. */
    size_t n_top;
};

struct hkset {
    const struct drv_hk_ops *ops;
    struct drv_hk *h;               /* Owned: closed by hkset_destroy. */
    uint32_t spread_cpct;           /* Pressure that spreads, in 1/100 %
                                     * (housekeeping_spread_pressure_pct
                                     * x 100). */
    bool applied;                   /* 'set' was handed to the driver. */
    bool released;                  /* The set is "all": override. */
    struct cpuset set;              /* Last set handed to the driver. */
    struct drv_hk_report rep;       /* What that call moved. */
    int last_err;                   /* Its result (0 or -errno). */
    char error[256];                /* Its first error, "" if none. */
    uint64_t n_changes;             /* Calls made (set changes). */
    uint32_t pressure_cpct;         /* Last pressure read, 1/100 %. */
    bool pressure_known;
    bool spreading;                 /* The last input was spread for it. */
    uint64_t n_spread;              /* Decisions spread for it. */
    /* The last reading of what ran on the freed CPUs (counts since
     * boot, sorted by source), its set, time and whether it holds
     * threads. */
    struct drv_waker *snap;
    size_t n_snap;
    bool snap_valid, snap_threads;
    struct cpuset snap_cpus;
    uint64_t snap_ns;
    uint64_t threads_until_ns;      /* Threads are read until then. */
    struct hkset_woke woke;
};

/* Takes ownership of the driver instance 'h' of 'ops'. */
struct hkset *hkset_create(const struct drv_hk_ops *ops, struct drv_hk *h,
                           uint32_t spread_pressure_pct);
/* Closes the driver (restores nothing); NULL is fine. */
void hkset_destroy(struct hkset *);

/* After a plan is in force (or pretended, in a dry run): hands the
 * driver the housekeeping set of d->applied if it changed. */
void hkset_follow(struct vpd *d);

/* Reads the host work's CPU pressure and, at or above the threshold,
 * raises the ready time of vcpus[0..n) (the policy input being built)
 * above d->pcfg.spread_ready_ppm. */
void hkset_demand(struct vpd *d, struct pol_vcpu *vcpus, size_t n);

/* The CPUs host work may use under the plan in force (d->applied):
 * every online CPU vpowerd does not free and CPU0; every online CPU
 * under the override.  Defined with or without a housekeeping driver:
 * vpowerd keeps itself on this set too. */
void hkset_target(const struct vpd *d, struct cpuset *set);

/* Once per sampled period, at 'now_ns' (the cycle's clock): reads what
 * ran on the CPUs host work was moved off and updates s->woke. */
void hkset_watch(struct vpd *d, uint64_t now_ns);

/* Reads threads too from now until 'until_ns' (an explain asks). */
void hkset_watch_threads(struct hkset *, uint64_t until_ns);

/* s->woke as one paragraph of text for explain. */
void hkset_woke_text(const struct hkset *, char *buf, size_t len);

/* Puts host work back as found.  Returns 0 or the first error. */
int hkset_restore(struct vpd *d);

/* The "mode" string for status: the driver's cgroup mode. */
const char *hkset_mode(const struct hkset *);

#endif /* manager/hkset.h */
