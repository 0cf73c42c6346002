/* manager/vpd_types.h -- The state of vpowerd: 'struct vpd', its VMs,
 * vCPUs and CPUs, with no functions.
 *
 * The modules that read or update this state (the cycle, the VM registry,
 * restore, the recorder, the guest channels) include this header, not
 * daemon.h, so none of them depends on the daemon's own functions: the
 * daemon sits above them all.  'struct vpd' is one instance, created in
 * vpowerd.c (or one per simulated host in vpower-sim) and passed
 * explicitly (no globals). */

#ifndef VPOWER_VPD_TYPES_H
#define VPOWER_VPD_TYPES_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "manager/conf.h"
#include "manager/drivers/drv.h"
#include "policy/policy.h"

struct histo;

struct sched;
struct gch_conn;
struct ctl_server;
struct cycle;
struct meter_list;
struct hkset;
struct mchk;

enum vpd_hint_kind {
    VPD_HINT_LATENCY_BEGIN, VPD_HINT_LATENCY_END, VPD_HINT_BATCH,
    VPD_HINT_BOOST, VPD_HINT_IDLE, VPD_HINT_UTIL, VPD_N_HINTS
};

struct vpd_vcpu {
    unsigned idx;                   /* Guest vCPU number. */
    uint64_t last_time_ns;          /* Cumulative counters at last sample. */
    uint64_t last_delay_ns;
    uint64_t busy_total_ns;         /* Sums since vpowerd saw the vCPU. */
    uint64_t ready_total_ns;
    int cpu;                        /* Last host CPU, -1 unknown. */
    struct pol_load load;           /* Policy's per-vCPU history. */
    struct cpuset applied;          /* Allowed set as last applied. */
    struct cpuset original;         /* As found, restored on exit. */
    uint64_t busy_ns, ready_ns;     /* Deltas of the last sampled interval
                                     * (what went into pol_load_update). */
    bool sampled;                   /* The last sample updated the load
                                     * (false while a counter source is
                                     * re-primed). */
    uint8_t src;                    /* enum cycle_src of last_*_ns. */
    pid_t tid;                      /* Host thread, 0 = unknown. */
    uint64_t last_halt_ns;          /* Halt-poll ns (KVM) at last sample. */
};

struct vpd_vm {
    struct drv_dom dom;             /* Identity and static facts. */
    struct pol_vm_policy policy;    /* From libvirt metadata or default. */
    bool policy_from_metadata;
    struct pol_hints hints;
    bool unmanaged;
    unsigned n_vcpus;
    struct vpd_vcpu *vcpus;         /* [n_vcpus], owned. */
    struct cpuset emu_applied, emu_original;
    uint64_t hints_total[VPD_N_HINTS];
    uint64_t hints_rejected;        /* Malformed, rate-limited, invalid. */
    char last_hint[128];            /* Human text of the last hint. */
    double energy_j;                /* Attributed energy (measured with a
                                     * meter, else estimated). */
    double energy_busy_j;           /* Of which its own busy work; the
                                     * rest keeps cores awake for it
                                     * (manager/attrib.h). */
    enum pol_reason reason;         /* From the last plan. */
    struct gch_conn *gch;           /* Guest channel, NULL if none. */
    bool migr_frozen;               /* A live migration job runs on it
                                     * (manager/migration.h): its pins
                                     * are neither changed nor restored;
                                     * the plan keeps them as they are. */
    struct histo *hint_apply;       /* The host side of its own hints
                                     * (cycle.hint_apply, this VM's
                                     * share); NULL until the first one
                                     * is timed; owned. */
    uint64_t job_seq;               /* cycle.exec_seq when asked for a */
    bool job_running;               /* running job, and the answer. */
    struct vpd_vm *next;
};

enum vpd_err_kind {
    VPD_E_LIBVIRT, VPD_E_SYSFS, VPD_E_GUEST, VPD_E_CONFIG, VPD_E_JOURNAL,
    VPD_N_ERRS
};

struct vpd_cpu {
    bool present, online, managed;
    uint32_t freq_khz;              /* Current, 0 unknown. */
    struct drv_idle idle;           /* Last read. */
    uint64_t nonidle_us;            /* Since start, from residency. */
};

struct vpd {
    struct sched *sched;
    struct vpd_conf conf;
    const struct drv_hv_ops *hv_ops;
    struct drv_hv *hv;
    const struct drv_host_ops *host_ops;
    struct drv_host *host;
    struct pol_model model;
    struct pol_config pcfg;
    struct pol_state *pol;
    struct pol_plan *plan;          /* Last decided. */
    struct pol_plan *applied;       /* What is in force now. */
    struct vpd_vm *vms;
    /* Domains whose name does not start with this prefix are not
     * registered (NULL or "": all).  vpowerd takes it from the test
     * hook $VPOWER_ONLY_DOMAINS, so integration tests sharing a
     * libvirtd leave each other's guests alone; the replay leaves it
     * NULL, its domains being the recording's. */
    const char *only_domains;
    size_t n_vms;
    unsigned n_cpus;
    struct vpd_cpu cpus[POL_MAX_CPUS];
    bool override_performance;
    bool dry_run;
    bool sched_core;                /* libvirt's core scheduling keeps
                                     * different VMs off sibling threads
                                     * (qemu.conf sched_core): copied to
                                     * pol_input.sched_core. */
    uint64_t start_ns, last_cycle_ns;
    uint64_t n_decisions;
    uint64_t n_actions[POL_A_OFFLINE + 1];
    uint64_t n_errors[VPD_N_ERRS];
    double host_energy_j;           /* Estimated since start. */
    double baseline_energy_j;       /* Same load under 'performance'. */
    uint32_t est_power_mw;
    uint64_t cycle_timer;
    /* State private to daemon.c (originals to restore, work arrays,
     * journal); NULL outside vpd_start(). */
    struct vpd_priv *priv;
    /* The control socket server (manager/control/ctl.h), owned by
     * cmds_start()/cmds_stop(); NULL when not serving. */
    struct ctl_server *ctl;
    /* set_freq actions applied per frequency domain (status
     * freq_domains[].changes_total); the cycle increments it next to
     * n_actions[POL_A_SET_FREQ]. */
    uint64_t dom_freq_changes[POL_MAX_DOMAINS];
    /* For status and the exporter: */
    double unattributed_energy_j;   /* The "_host" pseudo-VM's share of
                                     * host_energy_j (manager/attrib.h). */
    double saved_energy_j;          /* Sum over intervals of max(0,
                                     * baseline - actual): monotonic. */
    const char *energy_source;      /* "model" (static strings, never
                                     * NULL after vpd_start). */
    const char *ready_source;       /* "taskstats", "schedstat",
                                     * "libvirt", "dummy", or two joined
                                     * by '+' when VMs differ. */
    const char *freq_source;        /* "aperf-mperf", "cpufreq",
                                     * "nominal", "host-driver". */
    const char *thermal_source;     /* "netlink" or "none". */
    uint32_t thermal_cap_khz[POL_MAX_DOMAINS]; /* Caps of the last decision,
                                     * 0 = none. */
    uint64_t thermal_events;        /* Capacity changes reported. */
    const char *record_path;        /* Record file in use, NULL if off. */
    struct cycle *cyc;              /* The decision cycle (manager/cycle.h),
                                     * NULL outside vpd_start(). */
    struct meter_list *meters;      /* Power meters found at start below
                                     * conf.powercap_root and hwmon_root
                                     * (manager/drivers/meter.h), for
                                     * status; NULL outside vpd_start(). */
    struct hkset *hks;              /* Host work follows the active set
                                     * (manager/hkset.h); NULL: no
                                     * housekeeping. */
    struct mchk *mchk;              /* The model checked against the
                                     * whole-host meter each sampled
                                     * period (manager/modelcheck.h);
                                     * NULL without a meter.  Owned. */
};

#endif /* manager/vpd_types.h */
