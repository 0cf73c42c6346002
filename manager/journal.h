/* manager/journal.h -- Crash-safe record of the host state vpowerd found.
 *
 * Before vpowerd changes anything on the host (a vCPU or emulator pin, a
 * sysfs value such as scaling_max_freq or an idle state's 'disable', a
 * CPU's online state) it records the ORIGINAL value here; only the first
 * value per key is kept, so however often vpowerd changes a thing, the
 * journal holds what the administrator had.  Every record rewrites the
 * file atomically (write temp, rename; mode 0600), so after a crash or
 * SIGKILL of vpowerd the journal is either the old or the new complete
 * version, never a torn one.  Records are not made durable across a
 * power cut: nothing they describe outlives the boot.
 *
 * Life cycle in vpowerd:
 *   1. At startup, jnl_load() the configured path.  If a journal is left
 *      over (-ENOENT means none), restore: pins through the hypervisor
 *      driver with jnl_foreach(JNL_VCPU_PIN / JNL_EMULATOR_PIN), sysfs
 *      values and online states with jnl_restore_sysfs(); then
 *      jnl_remove() and jnl_close().
 *   2. jnl_create() a fresh, empty journal (no file until the first
 *      record).  Attach it to the sysfs host driver with
 *      sysfs_set_journal() so every sysfs write is journalled by the
 *      driver itself; record pins with jnl_record_*_pin() before pinning.
 *   3. On clean shutdown, restore the same way, then jnl_remove().
 *
 * Since vpowerd shares the host's power knobs with other agents, the
 * journal also holds, for each sysfs value and online state, the value
 * vpowerd last wrote (jnl_note_sysfs_write(), jnl_note_online_write()),
 * so a replay leaves alone what someone else changed since.
 *
 * Keys: vCPU pin (uuid, vcpu); emulator pin (uuid); sysfs value (path
 * relative to the sysfs root, e.g. "cpu3/cpufreq/scaling_max_freq");
 * online state (cpu).  Paths are relative, have no "..", no whitespace
 * and are at most JNL_PATH_LEN - 1 bytes; values are the file's content
 * as read (one line, with or without the trailing newline sysfs files
 * have), at most JNL_VALUE_LEN - 1 bytes, and are restored byte for
 * byte.
 *
 * Housekeeping keys: cgroup file (path below the cgroup root), systemd
 * unit (name), IRQ (number), workqueue mask (one); their values may be
 * empty (an unset AllowedCPUs or cpuset.cpus) except the mask's.
 *
 * Not thread-safe (vpowerd has one thread).  All functions return 0 or a
 * negative errno. */

#ifndef VPOWER_JOURNAL_H
#define VPOWER_JOURNAL_H 1

#include <stdbool.h>
#include <stddef.h>

#include "manager/drivers/drv.h"
#include "policy/cpuset.h"

#define JNL_PATH_LEN 128
#define JNL_VALUE_LEN 128
#define JNL_MAX_ENTRIES 65536   /* Far above 1024 CPUs x a few files. */

enum jnl_kind {
    JNL_VCPU_PIN,           /* uuid, vcpu, cpus */
    JNL_EMULATOR_PIN,       /* uuid, cpus */
    JNL_SYSFS,              /* path, value */
    JNL_ONLINE,             /* cpu, online */
    JNL_CGROUP,             /* path (below the cgroup root), value */
    JNL_UNIT,               /* path (systemd unit name), value */
    JNL_IRQ,                /* irq, value (smp_affinity_list) */
    JNL_WQMASK,             /* value (workqueue cpumask) */
    JNL_N_KINDS
};

struct jnl_entry {
    enum jnl_kind kind;
    char uuid[DRV_UUID_LEN];
    unsigned vcpu;
    struct cpuset cpus;
    char path[JNL_PATH_LEN];
    char value[JNL_VALUE_LEN];
    unsigned cpu;
    bool online;
    unsigned irq;
    /* JNL_SYSFS and JNL_ONLINE: what vpowerd last wrote there ('last'
     * for a value, 'last_online' for an online state), if 'has_last'.
     * Replay tells "still vpowerd's" from "changed by another writer"
     * with it.  Absent in journals of older versions and for keys
     * recorded with jnl_record_sysfs()/jnl_record_online() alone. */
    bool has_last;
    char last[JNL_VALUE_LEN];
    bool last_online;
    /* The last written value before that one, if 'has_prev': a crash
     * between recording a write and making it leaves this in the file,
     * still vpowerd's. */
    bool has_prev;
    char prev[JNL_VALUE_LEN];
    bool prev_online;
};

struct jnl;

/* A new, empty journal that will live at 'path' (the file is written at
 * the first record; an existing file there is replaced then).  '*out' is
 * owned by the caller: jnl_close(). */
int jnl_create(const char *path, struct jnl **out);

/* Loads the leftover journal at 'path' into '*out'.  Returns -ENOENT if
 * there is none (nothing to restore).  Another user must not be able to
 * have written it: if the file or its directory is not owned by root or
 * vpowerd's effective uid, or is writable by group or others, the result
 * is -EPERM (-ENOTDIR if the directory is a symlink or no directory),
 * also when there is no journal yet, since vpowerd writes one there;
 * 'err' says how to fix it.  -EINVAL with "PATH:LINE: reason" if it is
 * malformed or truncated (it is left in place for the administrator),
 * other negative errnos for I/O errors.  'err' is set for every error
 * but -ENOENT.  The loaded journal stays bound to 'path': further
 * records append to it. */
int jnl_load(const char *path, struct jnl **out, char *err, size_t errlen);

/* Frees the object; the file stays.  NULL is fine. */
void jnl_close(struct jnl *);

/* Unlinks the file (and fsyncs the directory) and forgets all entries;
 * the object stays usable.  A missing file is not an error. */
int jnl_remove(struct jnl *);

const char *jnl_path(const struct jnl *);
size_t jnl_count(const struct jnl *);

/* Record the original value of a key before changing it.  If the key is
 * already journalled nothing happens and 0 is returned (first value
 * wins).  Otherwise the entry is added and the file rewritten; on an I/O
 * error the entry is NOT kept and the error is returned: the caller must
 * then not make the change.  -EINVAL for a bad uuid/path/value,
 * -ENOSPC beyond JNL_MAX_ENTRIES. */
int jnl_record_vcpu_pin(struct jnl *, const char *uuid, unsigned vcpu,
                        const struct cpuset *orig);
int jnl_record_emulator_pin(struct jnl *, const char *uuid,
                            const struct cpuset *orig);
int jnl_record_sysfs(struct jnl *, const char *relpath, const char *orig);
int jnl_record_online(struct jnl *, unsigned cpu, bool was_online);

/* Originals of the housekeeping driver (manager/drivers/housekeeping.h), which
 * restores them itself (hk_record_from_jnl, hk_restore).  Keys: a cgroup
 * file relative to the cgroup root; a systemd unit name; an IRQ number;
 * the one workqueue mask.  Values may be empty except the mask's. */
int jnl_record_cgroup(struct jnl *, const char *relpath, const char *orig);
int jnl_record_unit(struct jnl *, const char *unit, const char *orig);
int jnl_record_irq(struct jnl *, unsigned irq, const char *orig);
int jnl_record_wqmask(struct jnl *, const char *orig);
/* Before writing 'value' to 'relpath' (or setting 'cpu' online or
 * offline): records 'orig' as above if the key is new, and 'value' as
 * the key's last written value, in one rewrite of the file (none if
 * nothing changed).  On an error nothing is kept and the caller must not
 * write.  If the write then fails, call again with the value the file
 * still holds (the previous last value, or the original).  Same errors
 * as jnl_record_sysfs()/jnl_record_online(); 'value' follows the rules
 * of an original. */
int jnl_note_sysfs_write(struct jnl *, const char *relpath,
                         const char *orig, const char *value);
int jnl_note_online_write(struct jnl *, unsigned cpu, bool was_online,
                          bool online);

/* True if the key is journalled; '*value' (may be NULL) then points at
 * the stored original, valid until the journal changes. */
bool jnl_has_sysfs(const struct jnl *, const char *relpath,
                   const char **value);

/* Drops every pin entry of domain 'uuid' without restoring it (it
 * stopped or migrated away: its pins are gone with its threads here) and
 * rewrites the file if anything changed.  Host entries stay; a later
 * record for the same domain starts afresh. */
int jnl_forget_domain(struct jnl *, const char *uuid);

/* Calls 'cb' for each entry of 'kind' (JNL_N_KINDS = all kinds) in
 * recording order.  A callback error does not stop the iteration (restore
 * as much as possible); the first error is returned. */
typedef int jnl_entry_cb(void *aux, const struct jnl_entry *);
int jnl_foreach(const struct jnl *, enum jnl_kind kind, jnl_entry_cb *cb,
                void *aux);

/* Writes every JNL_ONLINE and JNL_SYSFS entry back under 'root' (the
 * sysfs_root, e.g. /sys/devices/system/cpu): first CPUs that were online
 * are brought online (their cpufreq/cpuidle files may only exist then),
 * then sysfs values in two passes (a scaling_min_freq may only be
 * accepted after its scaling_max_freq), then CPUs that were offline are
 * taken offline.  Values are written exactly as journalled, online
 * states as "1\n" or "0\n" like the kernel shows them.  Does not write
 * the journal.  '*n_failed' (may be NULL)
 * gets the number of entries that could not be restored; returns the
 * first error or 0. */
int jnl_restore_sysfs(const struct jnl *, const char *root,
                      unsigned *n_failed);

/* jnl_restore_sysfs(), also reporting in '*n_foreign' (may be NULL) the
 * entries left alone because another writer changed them after vpowerd
 * (see below).  jnl_restore_sysfs() skips them the same way.
 *
 * Other writers: an entry with a last written value (has_last) is only
 * restored while the file still holds that value, the one written before
 * it (has_prev) or the original (compared without trailing whitespace);
 * any other content was written by someone else (tuned,
 * power-profiles-daemon, an administrator) after vpowerd, and is newer:
 * it is left as found, with a warning naming the file, the value
 * expected and the value found.  Entries
 * without one (older journals) are restored unconditionally. */
int jnl_restore_sysfs_counted(const struct jnl *, const char *root,
                              unsigned *n_failed, unsigned *n_foreign);

#endif /* manager/journal.h */
