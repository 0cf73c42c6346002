/* sim/simrun.h -- Lock-step replay of a trace set under every policy.
 *
 * sim_run() replays one trace set, in virtual time with 1-second steps,
 * through vpowerd's own decision cycle (manager/cycle.h, one instance
 * per simulated host on the drivers of sim/simhost.h) and every
 * baseline at once: the same
 * bursts, the same hosts, the same execution model and energy function.
 * vpower decides at the instants it asks for (next_interval_ns, bounded
 * to [1 s, 10 s]), the static baselines with it; schedutil and DPDK's
 * monitor, which run on their own clocks, plan at every 1 s step.  VM i
 * (in file-name order) goes to host i mod H.  It is the whole simulator
 * minus option parsing and output, so tests and the benchmark call it
 * directly. */

#ifndef VPOWER_SIM_SIMRUN_H
#define VPOWER_SIM_SIMRUN_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/model.h"
#include "sim/trace.h"

enum sim_pol {
    SIM_P_VPOWER = 0,
    SIM_P_PERFORMANCE,
    SIM_P_SCHEDUTIL,
    SIM_P_POWERSAVE,
    SIM_P_DPDK,
    SIM_P_NOVA,
    SIM_P_HWP_BALPERF,        /* intel_pstate HWP, balance_performance. */
    SIM_P_HWP_BALPOWER,       /* intel_pstate HWP, balance_power. */
    SIM_P_TUNED_VHOST,        /* tuned virtual-host. */
    SIM_P_SCHED_NOTURBO,      /* schedutil, turbo off. */
    /* vpower with one input signal off (its own pol_state, decision
     * instants and execution; the baselines follow SIM_P_VPOWER): */
    SIM_P_VPOWER_NOHALT,      /* No halt stats: fed busy + halt-polled
                               * time, i.e. plain CPU time. */
    SIM_P_VPOWER_NOCAP,       /* Not told of the thermal cap (the cap
                               * still throttles it). */
    SIM_P_LOWER,              /* Offline lower bound (energy only). */
    SIM_N_POL
};

/* The last baseline (they run SIM_P_PERFORMANCE..SIM_P_LAST_BASELINE,
 * in the order of enum baseline_kind). */
#define SIM_P_LAST_BASELINE SIM_P_SCHED_NOTURBO

/* vpower, the baselines and the lower bound (the --compare table). */
#define SIM_MASK_POLICIES \
    (((1u << SIM_N_POL) - 1) & ~(1u << SIM_P_VPOWER_NOHALT) \
     & ~(1u << SIM_P_VPOWER_NOCAP))

/* True for the vpower variants with a signal off. */
bool sim_pol_is_variant(int p);

/* "vpower", "performance", ..., "lower-bound". */
const char *sim_pol_name(enum sim_pol);
/* Returns the policy called 'name', or -1. */
int sim_pol_parse(const char *name);

#define SIM_MAX_THREADS 64

/* vpower-sim's default placement costs (docs/baselines.md, "Placement
 * costs"): run time a vCPU loses per move to another core and per
 * change of its allowed set, microseconds. */
#define SIM_MIGRATION_COST_US 500.0
#define SIM_PIN_COST_US 20.0

struct sim_opts {
    const struct pol_model *m;    /* Borrowed. */
    const struct pol_model *true_m; /* NULL, or the model the hosts really
                                   * follow (borrowed, same topology as
                                   * 'm'): energy is charged with it, and
                                   * each vpower host gets a meter that
                                   * reads that energy, which vpowerd's
                                   * model check compares with 'm'. */
    bool model_correction;        /* The daemon's model_correction: with
                                   * true_m, vpower decides with 'm'
                                   * corrected online to the meter. */
    const struct trace_set *ts;   /* Borrowed. */
    unsigned hosts;               /* >= 1 identical hosts. */
    uint64_t seed;
    unsigned threads;             /* Hosts simulated in parallel on this
                                   * many threads (0 = online CPUs); the
                                   * output does not depend on it. */
    double on_mean_s;             /* Burst model: mean busy phase (2). */
    uint32_t mask;                /* Bit per enum sim_pol to run; vpower
                                   * always runs (it sets the instants). */
    const struct pol_vm_policy *vm_policy; /* [ts->n_vms] per trace VM,
                                   * given to pol_decide(); NULL = all
                                   * balanced.  Baselines ignore it. */
    uint32_t thermal_cap_khz;     /* 0 = none; else every domain of package
                                   * thermal_cap_pkg runs at most this fast
                                   * from thermal_from_s to thermal_to_s
                                   * (sim time), for every policy (the
                                   * hardware throttles); vpower also sees
                                   * it in pol_input.thermal_cap_khz. */
    unsigned thermal_cap_pkg;
    uint64_t thermal_from_s, thermal_to_s;
    uint32_t halt_poll_ns;        /* KVM halt-poll window of every host
                                   * (sim/halt.h); 0 = polling disabled.
                                   * vpower sees busy time without the
                                   * polled time (halt stats), the
                                   * baselines and SIM_P_VPOWER_NOHALT
                                   * with it (plain CPU time). */
    bool sched_core;              /* pol_input.sched_core for vpower:
                                   * the hosts run core scheduling (the
                                   * execution model does not model it). */
    const char *turbo;            /* vpowerd.conf's 'turbo' for every
                                   * vpower row: "no", "saturated" or
                                   * "yes"; NULL: its default (the
                                   * baselines keep their own rules). */
    /* Placement costs, charged by exec_charge_moves(): */
    double migration_cost_us;     /* Run time a vCPU loses to each move
                                   * of its home to another core (cache
                                   * refill, wake-up), every policy;
                                   * 0 = free (vpower-sim's default is
                                   * docs/baselines.md's). */
    double pin_cost_us;           /* ... to each change of its allowed
                                   * set. */
    uint32_t headroom_pct;        /* vpower's headroom_pct (vpowerd.conf)
                                   * for every vpower row; 0 = vpowerd's
                                   * default (sim/equal.h raises it). */
    bool profile;                 /* Measure the time of vpower's
                                   * cycles and of pol_decide() in them
                                   * on the monotonic clock
                                   * (sim_result.cycle_s, decide_s). */
};

/* Per-VM results of one policy. */
struct sim_vm_row {
    double demand_core_s;         /* Work demanded, nominal-vCPU seconds. */
    double unmet_core_s;          /* Of which not served in its interval. */
    double ready_s;               /* Ready time of all its vCPUs. */
    double ready_p99_pct;         /* Nearest-rank p99 over its (vCPU,
                                   * interval) pairs, % of the interval. */
};

/* Results of one policy, summed over hosts. */
struct sim_row {
    bool ran;
    double energy_j;
    double avg_power_w;
    double unmet_pct;             /* % of demanded work not served within
                                   * its trace interval. */
    double ready_p50_pct;         /* Over all (vCPU, interval) pairs: % of */
    double ready_p99_pct;         /* the interval runnable but waiting. */
    double pin_changes_h;         /* vCPU allowed-set changes per hour. */
    double freq_changes_h;        /* Domain frequency changes per hour. */
    double avg_active_cpus;       /* Per host, time-averaged. */
    double *power_w;              /* [n_intervals] all hosts (owned). */
    double *active_cpus;          /* [n_intervals] per host average. */
    double poll_cpu_s;            /* Host CPU seconds spent halt-polling,
                                   * all hosts. */
    double poll_ok_pct;           /* % of halts a poll caught. */
    double fed_load_s;            /* vpower rows: load given to
                                   * pol_load_update(), busy time at its
                                   * CPU's capacity, in nominal-vCPU
                                   * seconds, all hosts. */
    double left_pct;              /* % of demanded work still waiting when
                                   * the replay ends (part of unmet_pct:
                                   * never served, so never charged). */
    double left_finish_j;         /* What running that work would cost at
                                   * the model's cheapest rate per unit of
                                   * work (sim_finish_mj_per_unit_s()): a
                                   * lower bound, in the policy's favour;
                                   * not included in energy_j. */
    double late_pct;              /* Work not run in the step it was
                                   * demanded in (exec_host.late_work),
                                   * % of the demanded work. */
    double late_core_s;           /* That work, nominal-core seconds. */
    double migrations_h;          /* vCPU moves to another core per hour. */
    double overhead_pct;          /* Run time placement costs added, % of
                                   * the demanded work (included in the
                                   * demand, energy and unmet demand). */
    double delay_ms;              /* Mean time a unit of work waits past
                                   * the step it was demanded in (work-
                                   * weighted backlog), ms: what running
                                   * slowly defers, which unmet demand
                                   * and ready time do not show. */
    bool refused;                 /* A 1:1 pinning baseline (DPDK, Nova)
                                   * on a host with more vCPUs than CPUs:
                                   * the real system would refuse the VMs
                                   * (its row models wrapped pins). */
};

/* vpower's model against the simulated meter (sim_opts.true_m), summed
 * over hosts (manager/modelcheck.h). */
struct sim_model_check {
    bool ran;
    double meter_j, model_j;      /* Over the periods compared. */
    double orig_error_pct;        /* Last period, the model as given,
                                   * mean over hosts. */
    double busy_scale, idle_scale;/* The fit, mean over hosts. */
    unsigned warned, correcting;  /* Hosts that warned / correct. */
};

struct sim_result {
    size_t n_intervals;
    double hours;
    unsigned hosts;
    size_t n_vms, n_vcpus;
    uint64_t n_decisions;         /* vpower cycles (pol_decide() calls). */
    double decide_s;              /* Time inside pol_decide() and */
    double cycle_s;               /* inside vpowerd's cycles
                                   * (cycle_run(), pol_decide() and the
                                   * simulated drivers' answers to its
                                   * calls included; not the commits to
                                   * the execution model); both 0
                                   * without sim_opts.profile. */
    struct sim_row rows[SIM_N_POL];
    double late_j_per_core_s;     /* sim_late_j_per_core_s() of the model. */
    double cheap_j_per_core_s;    /* sim_finish_mj_per_unit_s(), per
                                   * nominal-core second, J. */
    struct sim_model_check check; /* SIM_P_VPOWER, with sim_opts.true_m. */
    /* [n_vms] per trace VM for each policy that ran (owned;
     * NULL for the lower bound and policies that did not run). */
    struct sim_vm_row *vm_rows[SIM_N_POL];
};

/* The least energy (mJ) one capacity unit of work for one second can
 * cost on 'm': over every domain's non-turbo points, busy power less the
 * deepest idle state's (the idle power the work displaces), divided by
 * the capacity of a core with every thread busy (SMT counted).  Charges
 * work a policy left undone as cheaply as any plan could run it. */
double sim_finish_mj_per_unit_s(const struct pol_model *m);

/* What the equal-service comparison (sim/equal.h) charges per
 * nominal-core second of work run late, J: the largest, over the
 * model's domains, of one core's busy power plus its cluster's at the
 * nominal point, per nominal-core second of work at that point.  As if
 * the late work had run in its step on a core of its own at the speed
 * the trace's demand is counted in, with nothing credited for the late
 * run the policy already paid for. */
double sim_late_j_per_core_s(const struct pol_model *m);

/* Runs the simulation.  Returns 0, or a negative errno with a message in
 * 'err' (e.g. pol_decide() failing).  'res' is caller-owned; release
 * with sim_result_free() in both cases. */
int sim_run(const struct sim_opts *o, struct sim_result *res, char *err,
            size_t errlen);
void sim_result_free(struct sim_result *res);

#endif /* sim/simrun.h */
