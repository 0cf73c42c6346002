/* manager/drivers/housekeeping.h -- Confines host work to the housekeeping
 * CPUs.
 *
 * The housekeeping driver moves what is not a guest onto a given CPU set
 * (the housekeeping set) so that freed CPUs are not woken by the host,
 * and puts everything back afterwards:
 *
 *  - host processes, through the cpusets of the cgroups named in the
 *    configuration (default HK_DEFAULT_GROUPS, paths relative to the
 *    cgroup root).  Where systemd is PID 1 on the unified hierarchy the
 *    units are changed through systemd's D-Bus API (SetUnitProperties,
 *    runtime AllowedCPUs) so systemd's view stays true; otherwise the
 *    cpuset.cpus files are written: cgroup v2 (enabling the cpuset
 *    controller in each ancestor's cgroup.subtree_control where needed)
 *    or the cgroup v1 cpuset hierarchy (whole subtrees, in an order that
 *    keeps every child a subset of its parent).  systemd does not manage
 *    v1 cpusets, so on v1 the files are written even under systemd.
 *    Groups that do not exist are skipped and counted.
 *  - device interrupts: /proc/irq/N/smp_affinity_list.  An interrupt the
 *    kernel refuses to move (EIO or EPERM: kernel-managed) is skipped
 *    and logged with its /proc/interrupts name.  If irqbalance runs,
 *    interrupts are left alone (it would move them back) and the
 *    operator is told which IRQBALANCE_BANNED_CPULIST to set; see
 *    docs/housekeeping.md.
 *  - unbound kernel workqueues: the hex mask in
 *    /sys/devices/virtual/workqueue/cpumask.
 *
 * Each thing gets the part of its original CPUs inside the set, or the
 * whole set when none of its CPUs are in it, so a thing pinned to CPU0 by
 * the administrator stays there.  The set must not be empty and must
 * hold CPU0 (-EINVAL otherwise).
 *
 * Every original value is handed to the recorder (hk_set_recorder), for
 * instance the restore journal through hk_jnl_record, BEFORE the first
 * write of that thing; if the recorder fails the write is not made.  The
 * driver keeps the records too (each at most HK_VALUE_LEN - 1 bytes: a
 * longer original is not recorded, so its thing is not changed);
 * hk_restore() writes every original back
 * byte for byte, from the driver's own records or from records loaded
 * from a journal after a crash.  In dry-run mode nothing is written and
 * nothing recorded: the report and the log say what would move.
 *
 * All host access goes through struct hk_ops (files and systemd units),
 * so tests run the driver on fixture trees with failing or recording
 * operations; directory listings (cgroup children, /proc/irq, /proc PIDs)
 * are read directly below the configured roots.  Host files are hostile
 * input: a malformed value is -EINVAL with an error naming the file
 * (hk_error), never a crash.  Not thread-safe; all functions return 0 or
 * a negative errno unless stated otherwise. */

#ifndef VPOWER_HOUSEKEEPING_H
#define VPOWER_HOUSEKEEPING_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/cpuset.h"

struct jnl;
struct jnl_entry;

#define HK_DEFAULT_CGROUP_ROOT "/sys/fs/cgroup"
#define HK_DEFAULT_PROC_ROOT "/proc"
#define HK_DEFAULT_WQ_PATH "/sys/devices/virtual/workqueue/cpumask"
#define HK_DEFAULT_RUN_ROOT "/run"
/* libvirt runs as libvirtd.service (monolithic) or virtqemud.service
 * (modular); whichever is absent is skipped. */
#define HK_DEFAULT_GROUPS \
    { "system.slice", "user.slice", "init.scope", \
      "system.slice/libvirtd.service", "system.slice/virtqemud.service" }
#define HK_DEFAULT_N_GROUPS 5

#define HK_MAX_GROUPS 64
#define HK_KEY_LEN 128          /* Same bounds as the journal's. */
#define HK_VALUE_LEN 128
#define HK_PATH_MAX 512         /* Longest root + relative path. */
#define HK_REPORT_IRQS 32       /* Refused IRQ numbers kept in a report. */

/* What a record restores; the key and value are strings as read. */
enum hk_rec_kind {
    HK_REC_CGROUP,  /* key: file relative to the cgroup root, e.g.
                     * "cpuset/system.slice/cpuset.cpus" (v1),
                     * "system.slice/cpuset.cpus" or
                     * "cgroup.subtree_control" (v2). */
    HK_REC_UNIT,    /* key: systemd unit; value: its AllowedCPUs as a
                     * cpulist, "" for none (all CPUs). */
    HK_REC_IRQ,     /* key: IRQ number; value: smp_affinity_list. */
    HK_REC_WQMASK   /* key: ""; value: the workqueue cpumask. */
};

struct hk_record {
    enum hk_rec_kind kind;
    char key[HK_KEY_LEN];
    char value[HK_VALUE_LEN];   /* Original content, trailing newline
                                 * removed. */
};

/* Host access.  Paths are absolute (root included).  read: content into
 * 'buf' (NUL-terminated, one trailing newline removed), the length or a
 * negative errno (-EOVERFLOW if it does not fit).  write: 'value' plus a
 * newline in one write(2); a negative errno as the kernel returned it.
 * unit_get_cpus: a unit's AllowedCPUs (empty: not set), -ENOENT if the
 * unit is not loaded.  unit_set_cpus: sets it at runtime (empty: unset).
 * The unit functions fill 'err' on failure. */
struct hk_ops {
    int (*read)(void *aux, const char *path, char *buf, size_t len);
    int (*write)(void *aux, const char *path, const char *value);
    int (*unit_get_cpus)(void *aux, const char *unit, struct cpuset *cpus,
                         char *err, size_t errlen);
    int (*unit_set_cpus)(void *aux, const char *unit,
                         const struct cpuset *cpus, char *err,
                         size_t errlen);
};

/* The real host: files with open/read/write, units through sd-bus on the
 * system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured).  'aux' must be an
 * hk_sdbus.  Without libsystemd at build time the unit functions fail
 * with -ENOTSUP. */
extern const struct hk_ops hk_ops_real;
struct hk_sdbus;
struct hk_sdbus *hk_sdbus_new(void);    /* Connects lazily. */
void hk_sdbus_free(struct hk_sdbus *);  /* NULL is fine. */

struct hk_conf {
    const char *cgroup_root;
    const char *proc_root;
    const char *wq_path;
    const char *run_root;       /* systemd is PID 1 if RUN/systemd/system
                                 * exists (sd_booted()'s test). */
    const char *groups[HK_MAX_GROUPS];
    size_t n_groups;
    bool cpusets, irqs, workqueues;     /* Parts to act on. */
    bool dry_run;
};

/* Default roots and groups, every part on, not a dry run. */
void hk_conf_init(struct hk_conf *);

enum hk_mode {
    HK_MODE_NONE,       /* No cpuset controller found: cpusets skipped. */
    HK_MODE_V1,
    HK_MODE_V2,
    HK_MODE_SYSTEMD     /* v2 through systemd's D-Bus API. */
};
const char *hk_mode_name(enum hk_mode);

/* What one hk_apply() moved (or would move, in a dry run). */
struct hk_report {
    unsigned n_cgroups;         /* cpuset files or units changed */
    unsigned n_controllers;     /* subtree_control files given +cpuset */
    unsigned n_absent;          /* named groups/units not present */
    unsigned n_irqs;            /* interrupts moved */
    unsigned n_irqs_refused;    /* kernel-managed, left where they are */
    unsigned refused[HK_REPORT_IRQS];
    bool wq_moved;
    int irqbalance_pid;         /* > 0: irqbalance runs, IRQs untouched */
};

struct hk;

/* Copies 'conf' (strings included) and detects the mode.  'ops' NULL is
 * hk_ops_real with an hk_sdbus of its own ('ops_aux' ignored).  -EINVAL
 * with a reason in 'err' for a bad group name (empty, absolute, "..",
 * whitespace, too long) or root. */
int hk_open(const struct hk_conf *, const struct hk_ops *ops, void *ops_aux,
            struct hk **out, char *err, size_t errlen);
void hk_close(struct hk *);     /* NULL is fine; restores nothing. */

enum hk_mode hk_mode(const struct hk *);

/* The recorder is called with each original before its first write; a
 * non-zero return stops that write.  'aux' is not owned. */
typedef int hk_record_cb(void *aux, const struct hk_record *);
void hk_set_recorder(struct hk *, hk_record_cb *, void *aux);

/* Confines the enabled parts to 'set'.  May be called again with another
 * set: the originals recorded first stay the reference.  Every part is
 * tried; the first error is returned (hk_error says which file).  'rep'
 * may be NULL. */
int hk_apply(struct hk *, const struct cpuset *set, struct hk_report *rep);

/* Writes back the originals of 'recs' ('n' entries), or of the driver's
 * own records if 'recs' is NULL (forgotten when all went back).  Only
 * what differs from its original is written; a thing that is gone (a
 * stopped unit, a removed cgroup, a freed IRQ) is not a failure.
 * '*n_failed' (may be NULL) counts the records not restored; returns the
 * first error. */
int hk_restore(struct hk *, const struct hk_record *recs, size_t n,
               unsigned *n_failed);

/* The driver's records, oldest first, valid until the next call. */
const struct hk_record *hk_records(const struct hk *, size_t *n);

/* The first error of the last call as "PATH: reason" ("" if none). */
const char *hk_error(const struct hk *);

/* Journal adapters: hk_jnl_record is an hk_record_cb whose 'aux' is a
 * struct jnl; hk_record_from_jnl converts a housekeeping journal entry
 * back (false for other kinds). */
int hk_jnl_record(void *jnl, const struct hk_record *);
bool hk_record_from_jnl(const struct jnl_entry *, struct hk_record *);

/* ---- Readers for metrics and the policy ------------------------------ */

/* Interrupts per CPU summed over every /proc/interrupts row: 'counts'
 * has 'n' slots indexed by CPU number; CPUs the file does not list stay
 * 0.  Returns the number of CPU columns. */
int hk_irq_counts(struct hk *, uint64_t *counts, size_t n);

/* CPU pressure of the host work: on cgroup v2 the confined groups'
 * cpu.pressure (avg10 the highest, total the sum); on cgroup v1, which
 * has no per-group pressure, the growth of the groups' threads' summed
 * run_delay (/proc/TID/schedstat) over the time since the previous call
 * (0 on the first); without a cpuset controller the system's
 * /proc/pressure/cpu.  avg10 in percent, total in microseconds. */
struct hk_pressure {
    double some_avg10;
    uint64_t some_total_us;
};
int hk_cpu_pressure(struct hk *, struct hk_pressure *);

/* CPU time used by the confined groups, in nanoseconds: cpuacct.usage
 * below CGROUP_ROOT/cpuacct on v1, cpu.stat usage_usec on v2.  A group
 * inside another listed group is not counted twice; absent groups count
 * 0. */
int hk_cpu_time(struct hk *, uint64_t *ns);

/* What ran on a set of CPUs, counted since boot (the caller takes the
 * difference of two calls for a period).  One entry per interrupt
 * source with a nonzero count on the set (its /proc/interrupts label,
 * its description, the count summed over the set's columns) and, when
 * asked, one per thread on the host (its id, its name from
 * /proc/PID/task/TID/stat, the times it was scheduled in from
 * schedstat's third field, and whether the CPU it last ran on lies in
 * the set).  The kernel names a thread's last CPU only, so a thread
 * seen with a grown count and 'on_set' ran on the set at least once;
 * one that ran there and then moved away is not seen.  '*out' is the
 * caller's to free; returns the number of entries or -errno. */
struct hk_waker {
    bool thread;
    bool on_set;                /* thread: last ran on the set */
    uint32_t tid;               /* thread id; 0 for an interrupt */
    char label[16];             /* interrupt label ("36", "LOC") */
    char name[48];              /* description or thread name */
    uint64_t count;
};
int hk_wakers(struct hk *, const struct cpuset *cpus, bool threads,
              struct hk_waker **out);

/* Parsers, exposed for tests: a kernel hex cpumask ("ff,ffffffff") and
 * its formatting in the digit layout of 'like' (same group widths). */
int hk_mask_parse(const char *s, struct cpuset *);
int hk_mask_format(const struct cpuset *, const char *like, char *buf,
                   size_t len);

#endif /* manager/drivers/housekeeping.h */
