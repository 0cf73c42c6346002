/* manager/inputs/taskstats.h -- Per-thread run and ready time of vCPU threads.
 *
 * The policy needs, per vCPU, how long its host thread ran and how long
 * it was runnable but waiting for a CPU ("ready" or run-queue delay).
 * Two kernel interfaces give both: the TASKSTATS generic-netlink family
 * (cpu_run_real_total, cpu_delay_total; one request per thread id) and
 * /proc/<tid>/task/<tid>/schedstat (run ns, wait ns, timeslices).  A
 * 'ts_source' picks one at run time and falls back cleanly; ts_name()
 * says which one is in use so `vpowerctl status` can report it.  The
 * netlink request is synchronous but bounded by a receive timeout
 * (TS_NL_TIMEOUT_MS) so a stuck kernel cannot stall the event loop
 * longer than that (see docs/inputs.md).
 *
 * vcpu_tids() finds vCPU thread ids of a QEMU process from the thread
 * names QEMU gives them ("CPU N/KVM", "CPU N/TCG"), which works for both
 * accelerators without libvirt-qemu.  All times are nanoseconds; all
 * functions return 0 or a negative errno. */

#ifndef VPOWER_TASKSTATS_H
#define VPOWER_TASKSTATS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nlmsghdr;

#define TS_NL_TIMEOUT_MS 100

enum ts_kind {
    TS_AUTO = 0,        /* Taskstats if the family resolves, else schedstat. */
    TS_TASKSTATS,       /* Generic netlink TASKSTATS only. */
    TS_SCHEDSTAT,       /* /proc schedstat only. */
};

struct ts_source;

/* Opens a source of kind 'preferred'.  TS_AUTO falls back to schedstat
 * when netlink or the TASKSTATS family is unavailable (the reason is
 * kept, see ts_fallback_reason()).  'proc_root' replaces "/proc" (NULL
 * for the real one; fixtures in tests).  Returns NULL with 'err' filled
 * when the preferred kind cannot be opened. */
struct ts_source *ts_open(enum ts_kind preferred, const char *proc_root,
                          char *err, size_t errlen);
void ts_close(struct ts_source *);          /* NULL is fine. */

/* "taskstats" or "schedstat". */
const char *ts_name(const struct ts_source *);
enum ts_kind ts_kind_of(const struct ts_source *);
/* Why TS_AUTO did not get taskstats ("" if it did or was not asked). */
const char *ts_fallback_reason(const struct ts_source *);

/* Cumulative run time and run-queue delay of thread 'tid' since it
 * started.  -ESRCH if the thread is gone, -ETIMEDOUT if the kernel did
 * not answer within TS_NL_TIMEOUT_MS, -EPROTO on a malformed reply. */
int ts_read(struct ts_source *, pid_t tid, uint64_t *run_ns,
            uint64_t *delay_ns);

/* Reads /proc/sys/kernel/task_delayacct (under 'proc_root', NULL for
 * /proc): 1 on, 0 off, -errno if absent (kernel without the knob).
 * vpowerd only reports it; it never enables delay accounting itself. */
int ts_delayacct_state(const char *proc_root);
/* Operator advice for when delay accounting is off. */
#define TS_DELAYACCT_HINT \
    "enable with 'sysctl kernel.task_delayacct=1' or boot with 'delayacct'"

/* ---- Parsers, exposed for unit tests on recorded input ------------- */

/* Parses the text of a schedstat file: "<run ns> <wait ns> <slices>". */
int ts_parse_schedstat(const char *text, uint64_t *run_ns,
                       uint64_t *wait_ns, uint64_t *slices);

/* Parses one TASKSTATS reply 'nlh' ('len' bytes available) for thread
 * 'tid' ('family' is the resolved family id).  Returns 0, -ESRCH for a
 * netlink error reply of ESRCH, other -errno from an error reply, or
 * -EPROTO when the message is not a well-formed reply for 'tid'. */
int ts_parse_reply(const struct nlmsghdr *nlh, size_t len, int family,
                   pid_t tid, uint64_t *run_ns, uint64_t *delay_ns);

/* ---- vCPU threads -------------------------------------------------- */

/* Parses a QEMU thread name "CPU <n>/<accel>" (trailing newline ok).
 * Returns 0 with '*vcpu' set, or -EINVAL if it is not a vCPU thread. */
int vcpu_parse_comm(const char *comm, unsigned *vcpu);

/* Fills tids[vcpu] for every vCPU thread of 'qemu_pid' found in
 * /proc/<pid>/task/<tid>/comm; '*n' becomes the highest vCPU number + 1
 * (entries without a thread are 0).  -ENOENT if the process does not
 * exist, -ESRCH if it has no vCPU threads, -ENOSPC if a vCPU number is
 * >= 'max'. */
int vcpu_tids(pid_t qemu_pid, pid_t *tids, unsigned max, unsigned *n);
/* The same under 'proc_root' instead of /proc (fixtures). */
int vcpu_tids_at(const char *proc_root, pid_t qemu_pid, pid_t *tids,
                 unsigned max, unsigned *n);

/* Reads the QEMU pid libvirt records in <run_dir>/<name>.pid ('run_dir'
 * NULL: /run/libvirt/qemu). */
int qemu_pid_of(const char *run_dir, const char *name, pid_t *pid);

#endif /* manager/inputs/taskstats.h */
