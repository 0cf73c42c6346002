/* policy/state.h -- The decision state and the steps of pol_decide().
 *
 * pol_decide() (decide.c) runs a fixed sequence of steps over one
 * 'struct pol_state': classes and own cores (own.c), the pool's core
 * order, demand and sizes (pool.c, demand.c), the frequency levels
 * (level.c), the estimate of one candidate plan (eval.c, with misfit.c
 * and idle.c), the choice among candidates (choose.c), per-core points
 * and race to idle (trim.c, race.c) and the final plan (emit.c).  The
 * state is allocated once by pol_state_create() (state.c); the steps
 * share its per-decision scratch and allocate nothing.  Outside policy/
 * the struct is opaque: only policy/ files include this header.  The
 * algorithm and its constants are described in docs/policy.md. */

#ifndef VPOWER_POLICY_STATE_H
#define VPOWER_POLICY_STATE_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/internal.h"
#include "policy/policy.h"

#define NO_CORE 0xffff
#define MAX_LEVELS 64

/* Estimator constants; the reasoning is in docs/policy.md. */
#define POOL_Z 2.0            /* Sigmas of aggregate 1 s demand covered. */
#define DOWN_MARGIN_PCT 10    /* Extra demand a smaller pool or a lower
                               * level must also hold. */
#define GAIN_PPM 10000        /* A feasible plan is only replaced for an
                               * estimated saving of 1 % of the power
                               * without the platform's. */
#define BIG_STAY_PCT 25       /* An own-core vCPU returns to the pool
                               * below 75 % of the pool's thread. */
#define RISE_READY_DIV 2      /* Last ready > spread/2: decide again soon. */
#define SAT_BUSY_PPM 950000   /* A CPU busy this share of a period had no
                               * idle time to give (saturation turbo). */

enum vm_class {
    C_UNMANAGED,
    C_EXCLUSIVE,             /* Own cores. */
    C_PACKED,
    C_ISOLATED,              /* Whole cores of its own, shared by its
                              * vCPUs only (share_smt false; iso.c). */
};

/* How a VM's share_smt false is held (pol_explain()). */
enum smt_how {
    SMT_SHARES = 0,          /* share_smt true: nothing to hold. */
    SMT_OWN,                 /* Own cores: whole cores already. */
    SMT_GROUP,               /* C_ISOLATED: whole cores of its own. */
    SMT_KERNEL,              /* Core scheduling keeps VMs apart. */
    SMT_FIXED,               /* Unmanaged: its fixed cores leave the
                              * pool. */
    SMT_NO_CORE,             /* Not held: no free core was left. */
};

struct pol_state {
    const struct pol_model *m;
    struct pol_config cfg;
    size_t max_vcpus;

    /* Topology, derived once from the model. */
    unsigned n_cores;
    uint16_t core_cpu[POL_MAX_CPUS][POL_MAX_SMT]; /* Siblings, ascending. */
    uint8_t core_nsib[POL_MAX_CPUS];
    uint16_t core_dom[POL_MAX_CPUS];
    uint16_t core_of_cpu[POL_MAX_CPUS];          /* CPU -> core index. */
    uint16_t core_order[POL_MAX_CPUS];  /* Most efficient domains first,
                                         * then core id. */
    uint16_t dom_ncpus[POL_MAX_DOMAINS]; /* CPUs of each domain. */
    /* Frequency levels: fractions (ppm of nominal capacity) at which
     * some domain has an operating point, ascending; and per domain and
     * level the lowest non-turbo point reaching it. */
    unsigned n_levels;
    uint32_t level_ppm[MAX_LEVELS];
    uint8_t (*level_opp)[MAX_LEVELS];    /* [n_domains] */
    /* Per level and domain that point and one thread's capacity there:
     * level_fill()'s row for the domains no floor, cap or boost moves. */
    uint32_t level_khz[MAX_LEVELS][POL_MAX_DOMAINS];
    uint32_t level_cap[MAX_LEVELS][POL_MAX_DOMAINS];

    /* Hysteresis. */
    bool have_prev;
    unsigned k_prev;                 /* Active cores in the packed pool. */
    unsigned l_prev;                 /* Frequency level of the pool. */
    uint64_t last_pack_ns;
    uint64_t last_shrink_ns;         /* Last pool shrink (0 none). */
    uint64_t dwell_ns;               /* Current packing dwell. */
    uint64_t interval_ns;
    uint64_t prev_hash;
    uint64_t sat_since_ns;           /* Saturated with vCPUs waiting since
                                      * (0: not saturated). */
    bool sat_on;                     /* Saturation turbo taken; held while
                                      * the host stays saturated. */
    bool race[POL_MAX_DOMAINS];          /* Scratch: race_to_idle() or
                                         * race_saturation() chose this
                                         * domain's point. */

    /* Per-decision scratch (no allocation in pol_decide). */
    uint8_t core_use[POL_MAX_CPUS];      /* 0 free, 1 own, 2 fixed (in
                                          * the pool), 3 one no-share
                                          * VM's (iso.c; not pooled). */
    uint32_t core_fixed[POL_MAX_CPUS];   /* Unmanaged load on the core. */
    uint16_t pool[POL_MAX_CPUS];         /* Packed-pool cores in order. */
    uint8_t pool_nt[POL_MAX_CPUS];       /* Usable threads per pool core. */
    unsigned n_pool, n_forced;
    uint32_t busy_ppm[POL_MAX_CPUS];
    struct trim_key {                    /* trim_pool()'s raise order. */
        double u;                        /* Measured load / capacity. */
        unsigned i;                      /* Index in its candidates. */
    } trim_by[POL_MAX_CPUS];
    double trim_top[POL_MAX_CPUS];       /* trim_cores(): each candidate's
                                          * capacity at its planned
                                          * point. */
    uint32_t dom_floor[POL_MAX_DOMAINS];
    bool dom_max[POL_MAX_DOMAINS];
    uint16_t lvl_moved[POL_MAX_DOMAINS]; /* Domains whose points a floor,
                                          * thermal cap, boost or the
                                          * override may move. */
    unsigned n_lvl_moved;
    bool dom_act[POL_MAX_DOMAINS];
    uint32_t lvl_khz[POL_MAX_DOMAINS];   /* Scratch for one level. */
    uint32_t lvl_cap[POL_MAX_DOMAINS];
    /* Rows of level_fill() computed in this decision (lc_gen == gen). */
    uint64_t gen;
    uint64_t lc_gen[MAX_LEVELS];
    uint32_t lc_khz[MAX_LEVELS][POL_MAX_DOMAINS];
    uint32_t lc_cap[MAX_LEVELS][POL_MAX_DOMAINS];
    int8_t lat_limit[POL_MAX_CPUS];      /* Per CPU, from latency bounds. */
    int8_t awake_limit[POL_MAX_CPUS];    /* Per CPU while awake (idle.c);
                                          * -1 none. */
    struct pol_plan *tmp;                /* Candidate plans. */
    struct pol_memo {                    /* Estimates made (choose.c). */
        unsigned k, l;
        uint32_t mw;
    } memo[2 * MAX_LEVELS];
    unsigned n_memo;

    /* Aggregate demand of the pool (capacity units). */
    double d_up;                         /* Must fit now. */
    double d_down;                       /* Must fit to pack / lower. */
    double d_avg;                        /* Expected load (energy). */
    uint32_t r_max;                      /* Largest one-vCPU need. */
    unsigned k_up[MAX_LEVELS], k_down[MAX_LEVELS];
    unsigned n_big[MAX_LEVELS];          /* Own-core vCPUs per level. */
    uint32_t thr[MAX_LEVELS];            /* Slowest pool thread. */
    uint32_t big_khz[POL_MAX_DOMAINS];   /* Scratch: own-core needs. */
    size_t n_bigc;                       /* Candidates for own cores. */
    uint32_t *bigc;                      /* [max_vcpus] vCPU indices. */
    uint16_t *big_core;                  /* [max_vcpus] per candidate. */
    float *vr, *vavg, *vvar, *vlast;     /* [max_vcpus] per vCPU need,
                                          * inflated avg and variance,
                                          * last sample. */
    uint8_t *prev_big;                   /* [max_vcpus] had own core. */
    uint16_t *big_prev;                  /* [max_vcpus] that core. */
    uint64_t *big_since;                 /* [max_vcpus] since when. */
    float *vslow;                        /* [max_vcpus] slow need. */
    uint64_t now;
    uint8_t taken[POL_MAX_CPUS];         /* Pool cores given as own. */
    unsigned big_end;                    /* End of the compact range. */
    bool pkg_on[POL_MAX_PKGS];           /* Packages awake with it. */
    uint32_t thr_sorted[POL_MAX_CPUS];   /* Scratch: thread capacities. */
    float *need_sorted;                  /* [max_vcpus] scratch: sorted
                                          * needs (threads_hold(), or
                                          * eval_plan() with est_points). */
    bool est_points;                     /* Scratch: eval_plan() puts pool
                                          * cores at the per-core points
                                          * of their share (top_pool()). */
    uint32_t nom_cap[POL_MAX_DOMAINS];   /* One thread at nominal. */

    /* SMT isolation (iso.c). */
    struct cpuset fixed_all;             /* Unmanaged VMs' fixed CPUs. */
    struct cpuset smt_private;           /* CPUs of cores that one
                                          * no-share VM holds whole. */
    bool sched_core;                     /* in->sched_core. */
    uint8_t *vm_smt;                     /* [max_vcpus] enum smt_how. */
    uint16_t *iso_n;                     /* [max_vcpus] per VM: cores. */
    float *iso_need;                     /* [max_vcpus] per VM: need. */
    float *iso_rmax;                     /* [max_vcpus] per VM: largest
                                          * one-vCPU need. */
    uint32_t *iso_cap;                   /* [max_vcpus] per VM: its
                                          * cores' capacity at nominal. */
    uint16_t *iso_core;                  /* [max_vcpus] per vCPU: core
                                          * j of its VM's group (j < n)
                                          * or NO_CORE. */
    uint32_t *iso_key;                   /* [max_vcpus] whose it was. */
    uint32_t iso_khz[POL_MAX_DOMAINS];   /* Point the groups' cores of
                                          * each domain need. */

    uint8_t *vm_class;                   /* [max_vcpus] per VM. */
    uint8_t *vm_reason;
    uint32_t *vm_lat;                    /* Latency bound, 0 none. */
    uint16_t *excl_core;                 /* Per vCPU own core or NO_CORE. */
    uint32_t *excl_vcpu;                 /* [max_vcpus] this decision's
                                          * vCPUs of exclusive VMs with an
                                          * own core, ascending. */
    size_t n_excl;
    uint32_t *excl_vm;                   /* [max_vcpus] the VMs own_classify()
                                          * made C_EXCLUSIVE, ascending. */
    size_t n_excl_vm;
    uint16_t *prev_core;                 /* Last decision's own core. */
    uint32_t *prev_key;
    /* This decision's input summary (pol_decide(), demand_sum()). */
    struct cpuset usable;                /* Managed, online, on the model. */
    struct cpuset all;                   /* Every CPU of the model. */
    bool dom_managed[POL_MAX_DOMAINS];   /* The domain has a managed CPU. */
    size_t n_iso;                        /* VMs in C_ISOLATED. */
    bool any_never_offline;              /* A managed VM forbids it. */
    bool any_packed;                     /* A packed VM has vCPUs. */
    bool spread;                         /* Ready time forces spreading. */
    bool unstable;                       /* Decide again soon. */
    double s_full, s_var, s_last;        /* Inflated sums over the packed
                                          * vCPUs: average, variance,
                                          * last sample. */
    double s_recent;                     /* Sum of min(average, last). */
    size_t n_run;                        /* Packed vCPUs without an idle
                                          * hint. */
};



/* ---- Small queries every step uses ---------------------------------- */

static inline uint32_t
pct_of(uint32_t v, uint32_t pct)
{
    return (uint32_t) ((uint64_t) v * pct / 100);
}

/* Whether a hint that lasts until 'until' (0 = none) is active at 'now'. */
static inline bool
active_until(uint64_t until, uint64_t now)
{
    return until && until > now;
}

/* The package index of core 'k' (bounded). */
static inline unsigned
core_pkg(const struct pol_state *st, unsigned k)
{
    const struct pol_domain *d = &st->m->domains[st->core_dom[k]];

    return d->pkg < POL_MAX_PKGS ? d->pkg : 0;
}

/* Adds the usable CPUs of core 'k' to 'set'. */
static inline void
core_cpus(const struct pol_state *st, unsigned k,
          const struct cpuset *usable, struct cpuset *set)
{
    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        if (cpuset_has(usable, st->core_cpu[k][i])) {
            cpuset_set(set, st->core_cpu[k][i]);
        }
    }
}

/* First usable CPU of core 'k' (its first CPU if none is usable). */
static inline unsigned
core_first_usable(const struct pol_state *st, unsigned k,
                  const struct cpuset *usable)
{
    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        if (cpuset_has(usable, st->core_cpu[k][i])) {
            return st->core_cpu[k][i];
        }
    }
    return st->core_cpu[k][0];
}

/* Number of usable CPUs (threads) of core 'k'. */
static inline unsigned
core_usable_threads(const struct pol_state *st, unsigned k,
                    const struct cpuset *usable)
{
    unsigned n = 0;

    for (unsigned i = 0; i < st->core_nsib[k]; i++) {
        n += cpuset_has(usable, st->core_cpu[k][i]);
    }
    return n;
}

/* One thread's capacity on domain 'di' at 'khz': the filled level's
 * (level_fill() has run in this decision) when 'khz' is its point,
 * else pol_dom_capacity_at()'s scan of the points. */
static inline uint32_t
dom_cap_at(const struct pol_state *st, unsigned di, uint32_t khz)
{
    return khz == st->lvl_khz[di] ? st->lvl_cap[di]
                                  : pol_dom_capacity_at(&st->m->domains[di],
                                                        khz);
}

/* Capacity pool core 'i' offers the packed set at the level that
 * level_fill() filled last. */
static inline uint32_t
pool_core_cap(const struct pol_state *st, unsigned i)
{
    unsigned kc = st->pool[i];
    uint32_t tc = st->lvl_cap[st->core_dom[kc]];
    uint32_t cc = st->pool_nt[i] > 1 && !st->sched_core
                  ? pct_of(tc, st->m->smt_capacity_pct) : tc;

    return cc > st->core_fixed[kc] ? cc - st->core_fixed[kc] : 0;
}

/* Whether packed vCPU 'i' gets a core of its own at level 'l' (a
 * misfit): its need exceeds the slowest pool thread there (by
 * BIG_STAY_PCT less if it had one last time, so noise does not move it
 * back and forth). */
static inline bool
is_big(const struct pol_state *st, uint32_t i, unsigned l)
{
    double t = st->thr[l];

    if (st->prev_big[i]) {
        /* Back to the pool only when the minutes-scale need is below
         * 75 % of the thread and the vCPU has had its core for the
         * dwell time: the short average's noise moves it out (fast,
         * protects its work) but never back in. */
        return st->vslow[i] > t * (100 - BIG_STAY_PCT) / 100
               || st->now - st->big_since[i] < st->dwell_ns;
    }
    return st->vr[i] > t;
}

/* The part of an estimate a plan can change: without the constant
 * platform power, so the 1 % gain rule means 1 % of what the policy
 * controls (on a 2-CPU host with a 20 W platform, halving the cores'
 * power was "0.2 %" and never taken). */
static inline uint64_t
ctl_mw(const struct pol_state *st, uint32_t mw)
{
    return mw > st->m->platform_mw ? mw - st->m->platform_mw : 0;
}

/* ---- level.c: frequency levels -------------------------------------- */

/* Builds st->n_levels, level_ppm[], level_opp[][], level_khz[][] and
 * level_cap[][] from the model (once, from pol_state_create()). */
void level_build(struct pol_state *st);

/* Whether level 'a' runs every domain at least as fast as level 'b'. */
bool level_ge(const struct pol_state *st, unsigned a, unsigned b);

/* Whether domains 'a' and 'b' have the same operating points (same
 * core type). */
bool level_same_type(const struct pol_domain *a, const struct pol_domain *b);

/* Fills st->lvl_khz / lvl_cap (one thread) for every domain at level
 * 'l' under this decision's floors, caps and boosts (cached per
 * decision: st->gen). */
void level_fill(struct pol_state *st, const struct pol_input *in,
                unsigned l);

/* ---- own.c: classes and own cores ----------------------------------- */

/* Step 1 and 2: each VM's class, reason and latency bound, and the
 * unmanaged VMs' load on their fixed cores (st->core_fixed, core_use 2).
 * Resets the per-decision core, floor and idle-limit scratch. */
void own_classify(struct pol_state *st, const struct pol_input *in);

/* Step 3: own cores for performance VMs, then latency hints, then
 * (under the override) everyone else if they all fit; a VM that does
 * not fit is packed.  Records each vCPU's own core for the next
 * decision and forgets misfit history of vCPUs that changed. */
void own_assign(struct pol_state *st, const struct pol_input *in);

/* ---- iso.c: SMT isolation ------------------------------------------- */

/* Step 3b: whole cores of its own (core_use 3, iso_core) for each packed
 * VM with share_smt false, sized by its own aggregate demand at nominal
 * (the pool's estimator), at least one while free cores remain, growing
 * at once and shrinking only with the packing margin; none under
 * in->sched_core.  Sets vm_class C_ISOLATED, vm_smt, smt_private. */
void iso_assign(struct pol_state *st, const struct pol_input *in);

/* After demand_floors(): iso_khz, the lowest point per domain at which
 * each group's cores hold its demand (floors, boosts, caps applied). */
void iso_points(struct pol_state *st, const struct pol_input *in);

/* The expected busy time of the cores with core_use 3 of plan 'p' into
 * st->busy_ppm: each group's average load shared evenly over its cores,
 * an unmanaged no-share VM's load on its fixed cores. */
void iso_busy(struct pol_state *st, const struct pol_input *in,
              const struct cpuset *usable, struct pol_plan *p);

/* Per-core points (trim_cores()) on each group's cores, holding the
 * group's recent demand with headroom.  Returns whether a core runs
 * below its planned point. */
bool iso_trim(struct pol_state *st, const struct pol_input *in,
              const struct cpuset *usable, struct pol_plan *p);

/* Whether core 'kc' may be held whole by no-share VM 'v': no CPU of it
 * is fixed to an unmanaged VM.  True for VMs that share. */
bool iso_core_ok(const struct pol_state *st, const struct pol_input *in,
                 size_t v, unsigned kc);

/* Appends to 'buf' what holds VM 'vm''s SMT isolation and what it cost
 * in cores (nothing for a VM that shares). */
void iso_explain(const struct pol_state *st, const struct pol_input *in,
                 size_t vm, char *buf, size_t len);

/* ---- pool.c: the packed pool ---------------------------------------- */

/* Step 4: st->pool[] in wake order (cores with unmanaged load, then
 * packages awake for own cores, then the rest), n_forced, pool_nt[]. */
void pool_order(struct pol_state *st);

/* Step 6: per level the slowest pool thread, the misfits and the
 * smallest pools that hold the rest now (k_up) and with the packing
 * margin (k_down), from the sums demand_sum() left in 'st'. */
void pool_table(struct pol_state *st, const struct pol_input *in);

/* ---- demand.c: what the packed set needs ---------------------------- */

/* Step 5: per-vCPU needs (vr, vavg, vvar, vlast, vslow), the misfit
 * candidates (bigc), the packed set's sums and flags (s_*, n_run,
 * any_packed, spread, unstable) and d_avg, r_max. */
void demand_sum(struct pol_state *st, const struct pol_input *in);

/* Frequency floors, boosts and latency bounds by domain and CPU
 * (dom_floor, dom_max, lat_limit): a packed VM's apply to the pool's
 * cores, an exclusive VM's to its own.  Then lvl_moved[], the domains
 * where these, a thermal cap or the override may move a level's
 * point. */
void demand_floors(struct pol_state *st, const struct pol_input *in);

/* ---- misfit.c: own cores for packed vCPUs too big for the pool ------ */

/* Gives each misfit at level 'l' a core after the first 'k' pool cores
 * (st->big_core[], taken[], big_khz[]) and adds it to p->active. */
void misfit_place(struct pol_state *st, const struct pol_input *in,
                  const struct cpuset *usable, unsigned k, unsigned l,
                  struct pol_plan *p);

/* Lowest frequency of domain 'di' whose thread holds 'r' (nominal if
 * none does), under floors, boosts and thermal caps. */
uint32_t misfit_need_khz(const struct pol_state *st,
                         const struct pol_input *in, unsigned di,
                         uint32_t r);

/* Remembers the own cores of the last misfit_place() as the next
 * decision will see them (prev_big, big_prev, big_since).  Returns
 * whether any of them changed: only then can pool_table() give another
 * table, or eval_plan() another estimate. */
bool misfit_remember(struct pol_state *st);

/* Writes into st->need_sorted the needs (vr) of the misfit candidates,
 * only those without an own core when 'pooled_only', largest first;
 * returns how many. */
size_t misfit_sort_needs(struct pol_state *st, bool pooled_only);

/* ---- idle.c: idle limits and parking -------------------------------- */

/* After demand_floors(): st->awake_limit, the idle limit of each CPU
 * while its core is awake (latency bounds; shallow on own cores and
 * under the override).  The same for every candidate of a decision. */
void idle_limits(struct pol_state *st, const struct pol_input *in);

/* Idle limits (st->awake_limit) of every CPU of the awake cores of
 * 'p'. */
void idle_awake(const struct pol_state *st, struct pol_plan *p);

/* No limit on CPUs that are not awake; parked cores offline where
 * allowed (never CPU0, never a core with unmanaged load). */
void idle_parked(const struct pol_state *st, struct pol_plan *p);

/* ---- eval.c: one candidate ------------------------------------------ */

/* Builds the plan for 'k' pool cores at level 'l' into 'p' (active set,
 * frequencies, idle limits; st->busy_ppm at the expected load) and
 * returns its estimated power (mW). */
uint32_t eval_plan(struct pol_state *st, const struct pol_input *in,
                   const struct cpuset *usable, unsigned k, unsigned l,
                   struct pol_plan *p);

/* ---- choose.c: the choice among candidates -------------------------- */

/* Step 7: the pool size '*k' and level '*l' by estimated energy among
 * the feasible candidates, with the hysteresis of docs/policy.md
 * (dwell, margin, gain, settle); updates the dwell state. */
void choose_plan(struct pol_state *st, const struct pol_input *in,
                 unsigned *k, unsigned *l);

/* ---- trim.c, race.c: per-core points -------------------------------- */

/* Lowest non-turbo point of domain 'd', at most 'top_khz', whose core
 * holds 'need' in all and 'need_thr' on one thread ('gain' = capacity
 * factor of the core's usable threads together); 'top_khz' if none. */
uint32_t trim_point(const struct pol_domain *d, uint32_t top_khz,
                    double need, double need_thr, double gain);

/* Whether per-core points can apply to core 'kc' of domain 'di'. */
bool trim_ok(const struct pol_state *st, const struct pol_input *in,
             unsigned kc, unsigned di);

/* Per-core points for the first 'k' pool cores and the misfits' own
 * cores of 'p', holding 'budget' in all.  Returns whether a core runs
 * below its level. */
bool trim_pool(struct pol_state *st, const struct pol_input *in,
               const struct cpuset *usable, unsigned k, double budget,
               struct pol_plan *p);

/* Per-core points for the cores 'cand[0..n)' of 'p', holding 'budget'
 * in all (trim_pool()'s rule).  Returns whether a core runs below its
 * planned point. */
bool trim_cores(struct pol_state *st, const struct pol_input *in,
                const struct cpuset *usable, const uint16_t *cand,
                unsigned n, double budget, struct pol_plan *p);

/* Turbo for a lone core where the model says it pays (st->race[]). */
void race_to_idle(struct pol_state *st, const struct pol_input *in,
                  const struct cpuset *usable, struct pol_plan *p);

/* Turbo for every awake domain of a host saturated for POL_SAT_HOLD_NS,
 * with saturation_turbo (st->race[] marks them so per-core points keep
 * them); held while the host stays saturated at its nominal capacity. */
void race_saturation(struct pol_state *st, const struct pol_input *in,
                     const struct cpuset *usable, struct pol_plan *p);

/* ---- emit.c: the final plan ----------------------------------------- */

/* Step 8: the plan for 'k' pool cores at level 'l' into 'plan': the
 * candidate's active set and points, per-core points, each vCPU's
 * allowed set, emulator sets, reasons, parked cores and the estimate. */
void emit_plan(struct pol_state *st, const struct pol_input *in,
               unsigned k, unsigned l, struct pol_plan *plan);

#endif /* policy/state.h */
