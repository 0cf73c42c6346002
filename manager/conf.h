/* manager/conf.h -- vpowerd.conf: directives, defaults and the parser.
 *
 * One directive per line, '#' comments, chrony style.  The parser is pure
 * (text in, struct out) so it is unit-tested and fuzzed without files.
 * Errors are "FILE:LINE: reason" and the daemon refuses to start.  What
 * can only be checked against the running system (does the admin group
 * exist, does every managed CPU exist) is checked by conf_check_system()
 * and conf_check_cpus() before vpowerd changes anything, still naming
 * the directive's FILE:LINE. */

#ifndef VPOWER_CONF_H
#define VPOWER_CONF_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/cpuset.h"
#include "policy/policy.h"

/* Longest control socket path: a sockaddr_un's sun_path less its NUL. */
#define CONF_SOCKET_MAX 107
#define CONF_AT_LEN 280         /* "FILE:LINE" of a directive. */
/* housekeeping_groups: the default list and the most entries (as the
 * housekeeping driver's HK_DEFAULT_GROUPS and HK_MAX_GROUPS). */
#define CONF_HK_DEFAULT_GROUPS \
    "system.slice,user.slice,init.scope,system.slice/libvirtd.service," \
    "system.slice/virtqemud.service"
#define CONF_HK_MAX_GROUPS 64

struct vpd_conf {
    char connect_uri[256];          /* connect qemu:///system */
    char sysfs_root[256];           /* sysfs_root /sys/devices/system/cpu */
    char model_file[256];           /* energy_model FILE ("" = from sysfs) */
    char journal_path[256];         /* journal /run/vpower/journal */
    char powercap_root[256];        /* powercap_root /sys/class/powercap
                                     * (RAPL meters are looked for here) */
    char hwmon_root[256];           /* hwmon_root /sys/class/hwmon
                                     * (hwmon power/energy sensors) */
    char socket_path[256];          /* control_socket /run/vpower/vpowerd.sock */
    char admin_group[64];           /* admin_group NAME ("" = root only) */
    char record_path[256];          /* record FILE ("" = off) */
    struct cpuset managed;          /* managed_cpus LIST (default: all) */
    bool managed_set;
    enum pol_kind default_policy;   /* default_policy balanced */
    bool override_performance;      /* override performance|off */
    bool manage_static_pinned;      /* manage_static_pinned no */
    bool allow_offline;             /* offline_cores no */
    bool dry_run;                   /* dry_run no */
    uint32_t period_ms;             /* period_ms 1000 (min interval) */
    uint32_t max_period_ms;         /* max_period_ms 10000 */
    uint32_t headroom_pct;          /* headroom_pct 20 */
    uint32_t spread_ready_pct;      /* spread_ready_pct 5 */
    uint32_t pack_dwell_ms;         /* pack_dwell_ms 30000 */
    uint32_t hint_rate;             /* hint_rate 20 (per second per VM) */
    uint32_t sched_priority;        /* sched_priority 0 (off) .. 99:
                                     * SCHED_FIFO priority of vpowerd */
    /* turbo saturated (the default): turbo points only on a host
     * saturated for long (saturation_turbo); yes: wherever they serve
     * (both); no: never (neither). */
    bool use_turbo;
    bool saturation_turbo;
    /* The record file (record_path) is renamed to FILE.1 and started anew
     * past this size. */
    uint32_t record_max_bytes;      /* record_max_bytes 67108864 */
    /* "FILE:LINE" of the directive that set the field last ("" for the
     * default), for the checks against the running system. */
    char admin_group_at[CONF_AT_LEN];
    char managed_at[CONF_AT_LEN];
    /* share_smt of VMs without their own policy: false keeps each off
     * cores whose sibling threads run another VM's vCPUs. */
    bool default_share_smt;         /* default_share_smt yes */
    /* Host work (services, interrupts, unbound workqueues) follows the
     * active set (docs/housekeeping.md). */
    bool housekeeping;              /* housekeeping no */
    bool hk_cpusets;                /* housekeeping_cpusets yes */
    bool hk_irqs;                   /* housekeeping_irqs yes */
    bool hk_workqueues;             /* housekeeping_workqueues yes */
    char hk_groups[1024];           /* housekeeping_groups LIST: cgroups
                                     * relative to the cgroup root, comma
                                     * separated */
    char hk_cgroup_root[256];       /* housekeeping_cgroup_root
                                     * /sys/fs/cgroup */
    char hk_proc_root[256];         /* housekeeping_proc_root /proc */
    char hk_wq_path[256];           /* housekeeping_workqueue_mask
                                     * /sys/devices/virtual/workqueue/
                                     * cpumask */
    char hk_run_root[256];          /* housekeeping_run_root /run (systemd
                                     * is PID 1 if RUN/systemd/system
                                     * exists) */
    uint32_t hk_spread_pressure_pct;/* housekeeping_spread_pressure_pct
                                     * 10 */
    /* The model against the whole-host meter (manager/modelcheck.h). */
    uint32_t model_error_pct;       /* model_error_pct 10 */
    uint32_t model_error_periods;   /* model_error_periods 30 */
    bool model_correction;          /* model_correction no */
};

void conf_defaults(struct vpd_conf *);

/* Parses the whole 'text' of 'file' into 'c' (which holds defaults or an
 * earlier include's values).  Returns 0, or -EINVAL with "FILE:LINE:
 * reason" in 'err'. */
int conf_parse(struct vpd_conf *c, const char *file, const char *text,
               char *err, size_t errlen);

/* Reads 'path' and parses it; I/O errors are reported the same way.  The
 * file and every included one must be a regular file (opened without
 * blocking: a FIFO or a device is refused at once, "is not a regular
 * file"; a directory "is a directory"), at most 1 MiB, owned by root or
 * vpowerd's effective uid and not writable by group or others (-EPERM:
 * whoever can write it controls what vpowerd does as root). */
int conf_load(struct vpd_conf *c, const char *path, char *err,
              size_t errlen);

/* Checks 'c' against the running system before anything is changed: the
 * admin_group exists; an energy_model file is a regular file as trusted
 * as the configuration itself.  Returns 0, or a negative errno with
 * "FILE:LINE: directive: reason" (the file name alone for a value given
 * on the command line) in 'err'. */
int conf_check_system(const struct vpd_conf *c, char *err, size_t errlen);

/* Checks that every CPU of managed_cpus exists on a host with CPUs 0 to
 * 'n_cpus' - 1: a list naming others (a typo, a config copied from a
 * bigger host) is refused rather than silently trimmed.  Returns 0 or
 * -EINVAL with "FILE:LINE: managed_cpus: ..." naming the missing CPUs. */
int conf_check_cpus(const struct vpd_conf *c, unsigned n_cpus, char *err,
                    size_t errlen);

/* Fills a policy config from the daemon config. */
void conf_to_policy(const struct vpd_conf *, struct pol_config *);

/* The 'turbo' directive's value 'when' ("no", "saturated" or "yes") as
 * the two fields it sets; -EINVAL (and nothing set) for any other. */
int conf_turbo_of(const char *when, bool *use_turbo,
                  bool *saturation_turbo);

#endif /* manager/conf.h */
