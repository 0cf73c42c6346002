/* manager/drivers/drv.h -- Driver tables: the only way vpowerd touches the
 * world.
 *
 * Policy decides, drivers execute.  A hypervisor driver (libvirt, dummy)
 * lists domains, samples vCPU times and pins threads; a host driver
 * (sysfs with a configurable root, dummy) reads and sets CPU frequency,
 * idle-state limits and online state and reads idle residency.  Every
 * function returns 0 or a negative errno and never aborts on bad input
 * from the kernel or libvirt: a bad value is an error for that one CPU
 * or domain, logged and counted by the caller, never fatal.  Domains are
 * named by UUID string (36 chars + NUL), which survives libvirtd
 * restarts and id changes. */

#ifndef VPOWER_DRV_H
#define VPOWER_DRV_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "policy/cpuset.h"

struct sched;

#define DRV_UUID_LEN 37
#define DRV_NAME_LEN 128
#define DRV_PATH_LEN 108          /* sun_path. */
#define DRV_MAX_IDLE 8

/* ---- Hypervisor ------------------------------------------------------ */

struct drv_dom {
    char uuid[DRV_UUID_LEN];
    char name[DRV_NAME_LEN];
    int id;                        /* Hypervisor id, -1 if not running. */
    unsigned n_vcpus;              /* Currently online vCPUs. */
    bool persistent;
    bool static_pinning;           /* Admin's <cputune> pins: hands off. */
    struct cpuset static_cpus;     /* Union of those pins. */
    char agent_path[DRV_PATH_LEN]; /* Host end of the virtio-serial channel
                                    * org.vpower.agent.0, "" if none. */
    bool migrated_in;              /* Runs here since a migration brought
                                    * it (libvirt: RUNNING_MIGRATED).  Its
                                    * live pins, and for a transient domain
                                    * the static pins read from its live
                                    * definition, may be another host's
                                    * vpowerd's. */
};

struct drv_vcpu_stat {
    uint64_t time_ns;              /* Cumulative CPU time. */
    uint64_t delay_ns;             /* Cumulative run-queue delay. */
    bool has_delay;
    int cpu;                       /* Last host CPU, -1 unknown. */
    /* KVM halt polling (cumulative
     * poll_success + poll_fail ns, manager/inputs/haltstats.h), spin the host
     * did for the guest's wake-up latency, not guest work. */
    uint64_t halt_poll_ns;
    bool has_halt;
};

enum drv_event {
    DRV_EV_STARTED,                /* Includes migrated in, resumed. */
    DRV_EV_STOPPED,                /* Includes crashed, migrated out. */
    DRV_EV_CHANGED,                /* vCPU count or definition changed. */
    DRV_EV_DISCONNECTED,           /* Lost the hypervisor connection. */
};
typedef void drv_event_cb(void *aux, enum drv_event, const char *uuid);

/* Live migration, as the hypervisor tells it on either host.  A domain
 * that migrates still raises the plain events above (DRV_EV_STARTED when
 * it appears here, DRV_EV_STOPPED when it leaves); a driver that knows
 * migrations calls the migration callback first, with one of these:
 *
 *   DRV_MIGR_OUT_BEGIN  a migration of this running domain to another
 *                       host is under way (memory copy or the final
 *                       pause); it may still fail and stay here.
 *   DRV_MIGR_IN_BEGIN   the domain was started here, paused, to receive
 *                       an incoming migration; it is not yet ours.
 *   DRV_MIGR_GONE       it stopped here because it now runs on another
 *                       host (libvirt: STOPPED_MIGRATED).
 *   DRV_MIGR_RESUMED    it runs again after a migration: on the
 *                       destination the migration finished and the
 *                       domain arrived; on the source the migration was
 *                       cancelled or failed after the final pause and the
 *                       domain stays (libvirt: RESUMED_MIGRATED on both).
 *
 * Events can be missed (vpowerd started in the middle, a reconnect), and
 * a migration that fails before its final pause raises no event on the
 * source: the job query (drv_hv_ops.migr_job) is the authority for "a
 * migration runs now". */
enum drv_migr {
    DRV_MIGR_OUT_BEGIN,
    DRV_MIGR_IN_BEGIN,
    DRV_MIGR_GONE,
    DRV_MIGR_RESUMED,
};
typedef void drv_migr_cb(void *aux, enum drv_migr, const char *uuid);

/* The job running on a domain now. */
enum drv_job {
    DRV_JOB_NONE,                  /* No job. */
    DRV_JOB_MIGR_OUT,              /* Outgoing migration. */
    DRV_JOB_MIGR_IN,               /* Incoming migration. */
    DRV_JOB_OTHER,                 /* Save, dump, snapshot, backup... */
};

struct drv_hv;                     /* Driver instance, opaque. */

struct drv_hv_ops {
    const char *name;              /* "libvirt", "dummy". */
    unsigned caps;                 /* DRV_HV_* below. */
    /* Connects to 'uri'; events go through 'sched' into 'cb'.  Returns
     * an instance or NULL with 'err' filled. */
    struct drv_hv *(*open)(const char *uri, struct sched *,
                           drv_event_cb *cb, void *aux,
                           char *err, size_t errlen);
    void (*close)(struct drv_hv *);
    /* Running domains; '*doms' is malloc'ed, caller frees. */
    int (*list)(struct drv_hv *, struct drv_dom **doms, size_t *n);
    int (*vcpu_stats)(struct drv_hv *, const char *uuid,
                      struct drv_vcpu_stat *out, size_t max, size_t *n);
    /* Live-only (VIR_DOMAIN_AFFECT_LIVE): the persistent definition is
     * never touched.  On success the pin is in force; the hypervisor's
     * own record of it (virsh vcpupin) may follow from the loop, within
     * milliseconds, and does at the latest in close().  A pin the driver
     * knows to be in force already (it set or read it, and no event of
     * the domain said otherwise) returns 0 without calling the
     * hypervisor. */
    int (*pin_vcpu)(struct drv_hv *, const char *uuid, unsigned vcpu,
                    const struct cpuset *);
    int (*pin_emulator)(struct drv_hv *, const char *uuid,
                        const struct cpuset *);  /* And its iothreads. */
    /* -ERANGE if the domain has no vCPU 'vcpu'. */
    int (*get_vcpu_pin)(struct drv_hv *, const char *uuid, unsigned vcpu,
                        struct cpuset *);
    int (*get_emulator_pin)(struct drv_hv *, const char *uuid,
                            struct cpuset *);
    /* vpower's <metadata> element (namespace VPOWER_XML_NS) as text into
     * 'buf', "" if absent. */
    int (*get_metadata)(struct drv_hv *, const char *uuid,
                        char *buf, size_t len);
    /* Sets (xml != NULL) or removes it, live and persistent where the
     * domain is persistent. */
    int (*set_metadata)(struct drv_hv *, const char *uuid, const char *xml);
    /* Optional (NULL: the driver knows no migrations).  Sets the
     * callback for enum drv_migr events of this instance (NULL cb: none);
     * it runs from the same loop as the event callback, before the plain
     * event of the same change. */
    void (*set_migr_cb)(struct drv_hv *, drv_migr_cb *cb, void *aux);
    /* Optional.  The job running on domain 'uuid' now into '*job'.
     * Returns 0, -ENOENT if the domain is gone, -ENOTCONN while
     * disconnected or -EIO. */
    int (*migr_job)(struct drv_hv *, const char *uuid, enum drv_job *job);
    /* Optional (NULL: always true).  Whether a pin of domain 'uuid' goes
     * to the hypervisor at once, so may wait behind a job running on the
     * domain there (libvirt holds a pin call during a live migration
     * until the job ends).  A driver that answers false puts the pin in
     * force without the hypervisor and tells the hypervisor itself once
     * no migration job runs. */
    bool (*pin_may_wait)(struct drv_hv *, const char *uuid);
};

/* drv_hv_ops.caps: with a local URI (drv_hv_uri_local()) the domains
 * are QEMU processes on this host, so their vCPU threads can be read
 * directly (manager/inputs/taskstats.h). */
#define DRV_HV_LOCAL_QEMU 0x1u

/* Whether libvirt URI 'uri' (NULL or "": the default) names the system
 * QEMU driver of this host. */
static inline bool
drv_hv_uri_local(const char *uri)
{
    return !uri || !uri[0] || !strcmp(uri, "qemu:///system");
}

#define VPOWER_XML_NS "http://vpower.org/xmlns/policy/1"
#define VPOWER_XML_PREFIX "vpower"

extern const struct drv_hv_ops drv_hv_libvirt;
extern const struct drv_hv_ops drv_hv_dummy;

/* ---- Host (cpufreq, cpuidle, hotplug) ------------------------------- */

struct drv_freq {
    uint32_t cur_khz;
    uint32_t min_khz, max_khz;        /* scaling_min/max_freq. */
    uint32_t hw_min_khz, hw_max_khz;  /* cpuinfo_min/max_freq. */
    char governor[32];
    bool has_setspeed;                /* userspace governor available. */
};

struct drv_idle {
    unsigned n_states;
    char name[DRV_MAX_IDLE][32];
    uint32_t latency_us[DRV_MAX_IDLE];
    uint32_t residency_us[DRV_MAX_IDLE];
    uint64_t time_us[DRV_MAX_IDLE];   /* Cumulative residency. */
    bool disabled[DRV_MAX_IDLE];
};

/* A knob (one writable file of one CPU: scaling_min_freq,
 * scaling_max_freq, scaling_governor, a cpuidle state's disable, online)
 * that another writer changed behind vpowerd's back.  Other power agents
 * (tuned, power-profiles-daemon, Nova's cpu_power_management, an
 * administrator) write the same files; sysfs does not say who wrote, so
 * the writer is unknown and only the change is reported.  A knob is
 * foreign when, read back before vpowerd writes it (or when vpowerd reads
 * it), it holds neither the value vpowerd last wrote nor, if vpowerd
 * never wrote it, the value vpowerd first read there.  From then on the
 * driver never writes it again (it stays foreign until the driver is
 * closed) and the journal replay does not restore it (journal.h). */
struct drv_foreign {
    unsigned cpu;                 /* For a cpufreq policy of several
                                   * CPUs (one set of files), the CPU
                                   * through which it was found. */
    char knob[48];                /* Below cpuN/, e.g. "online",
                                   * "cpufreq/scaling_max_freq",
                                   * "cpuidle/state2/disable". */
    char expected[32];            /* vpowerd's value (last written, or
                                   * first read), truncated. */
    char found[32];               /* The other writer's, truncated. */
    bool written;                 /* 'expected' was written by vpowerd. */
    int64_t since_s;              /* Wall clock (s since the epoch) when
                                   * vpowerd last wrote or first read
                                   * 'expected': the change came later. */
    int64_t when_s;               /* Wall clock when it was found. */
};

struct drv_host;
struct jnl;

struct drv_host_ops {
    const char *name;                 /* "sysfs", "dummy". */
    unsigned caps;                    /* DRV_HOST_* below. */
    /* 'root' replaces /sys/devices/system/cpu (fixture trees in tests). */
    struct drv_host *(*open)(const char *root, char *err, size_t errlen);
    void (*close)(struct drv_host *);
    int (*n_cpus)(struct drv_host *, unsigned *n);   /* possible CPUs. */
    int (*is_online)(struct drv_host *, unsigned cpu, bool *online);
    int (*set_online)(struct drv_host *, unsigned cpu, bool online);
    /* -ENOTSUP where the CPU has no cpufreq. */
    int (*get_freq)(struct drv_host *, unsigned cpu, struct drv_freq *);
    /* Writes in a safe order (max before min when raising). */
    int (*set_freq_range)(struct drv_host *, unsigned cpu,
                          uint32_t min_khz, uint32_t max_khz);
    int (*set_governor)(struct drv_host *, unsigned cpu, const char *gov);
    int (*get_idle)(struct drv_host *, unsigned cpu, struct drv_idle *);
    int (*set_idle_disable)(struct drv_host *, unsigned cpu,
                            unsigned state, bool disable);
    /* Knobs other writers took over (struct drv_foreign), or NULL for a
     * driver that does not track them.  Copies the first min(max, total)
     * in the order they were found into 'out' (may be NULL when 'max' is
     * 0) and returns the total, which never decreases while the instance
     * is open: the count to export as a metric.  A write vpowerd asks
     * for on a foreign knob is not made: set_freq_range, set_governor
     * and set_idle_disable return 0 (callers read the state back through
     * get_freq/get_idle), set_online returns -EPERM unless the CPU is
     * already in the state asked (callers keep the online state from its
     * result).  Wiring: metrics and `vpowerctl status` call
     *   n = ops->foreign ? ops->foreign(h, list, ARRAY_SIZE(list)) : 0;
     * each period or on request; found knobs are also logged once (a
     * warning naming the file, both values and the time). */
    size_t (*foreign)(struct drv_host *, struct drv_foreign *out,
                      size_t max);
    /* Journals each file's original content before its first write
     * (manager/journal.h); NULL detaches.  NULL op: nothing to journal. */
    void (*set_journal)(struct drv_host *, struct jnl *);
    /* Optional (NULL: the cycle derives busy from get_idle's residency).
     * The share of the last interval 'cpu' was busy, in ppm (at most
     * 1000000), for a driver that knows it directly, e.g. a recording
     * being replayed: microsecond residencies cannot reproduce every
     * share at short periods.  Returns 0, or -ENODATA when it does not
     * know this CPU's share (the cycle then reads get_idle). */
    int (*busy_ppm)(struct drv_host *, unsigned cpu, uint32_t *ppm);
    /* Optional (NULL: vpowerd runs wherever it was started).  Keeps the
     * calling process's own threads on 'set' intersected with the CPUs
     * it was started on (on all of those when they do not meet), so the
     * power manager does not itself wake the CPUs it frees.  Only this
     * process changes: nothing to journal or restore. */
    int (*confine_self)(struct drv_host *, const struct cpuset *set);
};

/* drv_host_ops.caps: 'root' is a /sys/devices/system/cpu tree (real or
 * a fixture): the energy model can be built from it, APERF/MPERF and
 * thermal events belong to it, and a journal's sysfs entries restore
 * it. */
#define DRV_HOST_SYSFS_TREE 0x1u

extern const struct drv_host_ops drv_host_sysfs;
extern const struct drv_host_ops drv_host_dummy;

/* ---- Housekeeping (host work beside the guests) --------------------- */

/* What one confinement moved (or, in a dry run, would move). */
#define DRV_HK_REFUSED_MAX 32
struct drv_hk_report {
    unsigned n_cgroups;            /* cpuset files or systemd units set */
    unsigned n_absent;             /* configured groups not present */
    unsigned n_irqs;               /* interrupts moved */
    unsigned n_irqs_refused;       /* kernel-managed: left where they
                                    * are */
    unsigned refused[DRV_HK_REFUSED_MAX];   /* their numbers, the first
                                             * DRV_HK_REFUSED_MAX */
    bool wq_moved;                 /* unbound workqueue mask changed */
    int irqbalance_pid;            /* > 0: irqbalance runs, interrupts
                                    * left to it */
};

/* What ran on a set of CPUs, counted since boot: an interrupt source
 * (its label and description, its count on the set) or a thread (its
 * id and name, the times it was scheduled in anywhere, and whether it
 * last ran on the set).  The difference of two readings is a period's;
 * a thread with a grown count and 'on_set' ran on the set at least
 * once in it (the kernel names only a thread's last CPU). */
struct drv_waker {
    bool thread;
    bool on_set;
    uint32_t tid;                  /* 0 for an interrupt */
    char label[16];                /* interrupt label: "36", "LOC" */
    char name[48];                 /* description or thread name */
    uint64_t count;
};

struct drv_hk;

/* Moves the host's own work (processes in the configured cgroups,
 * device interrupts, unbound kernel workqueues) onto a CPU set and puts
 * it back.  Optional: a 'struct vpd' without one (the simulator, the
 * replay, vpowerd with housekeeping off) leaves host work alone.
 * Opening is the implementation's (manager/drivers/drv_hk.h); every
 * member is required. */
struct drv_hk_ops {
    const char *name;              /* "host". */
    /* Confines host work to 'set' (not empty, holds CPU0: -EINVAL
     * otherwise); 'rep' (may be NULL) says what moved.  Every part is
     * tried; returns the first error (see 'error'). */
    int (*confine)(struct drv_hk *, const struct cpuset *set,
                   struct drv_hk_report *rep);
    /* Writes back every original this instance changed; '*n_failed'
     * (may be NULL) counts those not restored. */
    int (*restore)(struct drv_hk *, unsigned *n_failed);
    /* Writes back the housekeeping originals journalled in 'j' (left by
     * a crashed run). */
    int (*restore_journal)(struct drv_hk *, const struct jnl *j,
                           unsigned *n_failed);
    /* Journals each original before its first write; NULL detaches (and
     * nothing is recorded anywhere but in memory). */
    void (*set_journal)(struct drv_hk *, struct jnl *);
    /* Interrupts per CPU since boot into counts[0..n) (CPUs not listed
     * stay 0); returns the number of CPU columns or -errno. */
    int (*irq_counts)(struct drv_hk *, uint64_t *counts, size_t n);
    /* What ran on 'cpus' since boot: every interrupt source with a
     * count there and, if 'threads' (a walk of every thread: costly),
     * every thread.  '*out' is the caller's to free; returns the number
     * of entries or -errno. */
    int (*wakers)(struct drv_hk *, const struct cpuset *cpus, bool threads,
                  struct drv_waker **out);
    /* The host work's CPU pressure: "some" avg10, in hundredths of a
     * percent (0..10000). */
    int (*pressure)(struct drv_hk *, uint32_t *some_avg10_cpct);
    /* CPU time used by the confined groups since they exist, in ns. */
    int (*cpu_time)(struct drv_hk *, uint64_t *ns);
    /* How cpusets are changed: "cgroup-v1", "cgroup-v2", "systemd" or
     * "none" (no cpuset controller). */
    const char *(*mode)(const struct drv_hk *);
    /* The first error of the last call, "PATH: reason" ("" if none). */
    const char *(*error)(const struct drv_hk *);
    void (*close)(struct drv_hk *);    /* NULL is fine; restores
                                        * nothing. */
};

extern const struct drv_hk_ops drv_hk_host;

#endif /* manager/drivers/drv.h */
