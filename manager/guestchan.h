/* manager/guestchan.h -- Host end of the per-VM guest channel.
 *
 * Each running domain with a virtio-serial channel named
 * org.vpower.agent.0 has a UNIX socket on the host (drv_dom.agent_path)
 * on which QEMU listens; vpowerd connects to it as a client, on the one
 * sched loop, non-blocking.  Whatever arrives is untrusted: it is
 * decoded with agent/gchproto.c, bounds-checked against this VM only
 * (the VM's identity is the socket, never a field of a message; a guest
 * names only vCPUs 0..n_vcpus-1), rate-limited with a per-VM token
 * bucket (conf.hint_rate per second), and only then handed to policy as
 * an input through the owner's hint() entry point (struct gch_ops; in
 * vpowerd, vpd_hint()).  Once hint() returns -- the decision
 * it triggered has been applied -- the hint is acknowledged with its
 * sequence number, so the guest measures the end-to-end latency on its
 * own clock.  The owner's clock is read as soon as bytes have been read
 * from the socket, and each hint carries that time, so the owner can
 * time its own part (vpowerd: vpower_hint_apply_seconds).  Malformed,
 * oversized, unknown, out-of-range and over-rate messages are counted
 * (vm->hints_rejected, ops->count_error(VPD_E_GUEST)), logged
 * rate-limited, answered when they were well framed, and ignored.
 * Memory per VM is one fixed struct (input and output buffers included),
 * whatever the guest sends.  When QEMU closes the socket (domain stops or
 * restarts the chardev) or connecting fails, a timer retries with
 * exponential backoff (100 ms .. 10 s) until gch_detach(). */

#ifndef VPOWER_GUESTCHAN_H
#define VPOWER_GUESTCHAN_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "manager/vpd_types.h"

#define GCH_IN_CAP 4096             /* Bytes buffered per VM, inbound. */
#define GCH_OUT_CAP 4096            /* Outbound (acks); full = drop. */
#define GCH_READ_BUDGET 65536       /* Bytes per wakeup, then yield. */
#define GCH_BURST_MAX 10            /* Token bucket depth (messages). */
#define GCH_BACKOFF_MIN_NS 100000000ull     /* 100 ms. */
#define GCH_BACKOFF_MAX_NS 10000000000ull   /* 10 s. */

/* What a channel hands to its owner, given at attach time: the daemon
 * passes its own functions, tests pass recorders.  So the channel depends
 * only on the state types (vpd_types.h), never on the daemon's code.
 * Both are called on the loop, from inside the dispatch of 'vm''s
 * socket; either may detach 'vm' (gch_detach) before it returns. */
struct gch_ops {
    /* A well-formed, in-range, in-rate hint of 'vm': decide on it and
     * return once the decision has been applied (the guest is then
     * acknowledged).  'text' is a human description; 'read_ns' is
     * now_ns() taken when the bytes holding it were read from the
     * channel (0 without now_ns). */
    void (*hint)(struct vpd *, struct vpd_vm *vm, enum vpd_hint_kind,
                 uint32_t arg, const char *text, uint64_t read_ns);
    /* The owner's clock in ns (vpowerd: its cycle's); NULL = none. */
    uint64_t (*now_ns)(struct vpd *);
    /* Counts one rejected guest message (kind VPD_E_GUEST). */
    void (*count_error)(struct vpd *, enum vpd_err_kind);
};

/* Starts serving 'vm''s channel at vm->dom.agent_path (no-op when that
 * is "" or vm->gch is already set); sets vm->gch.  Connecting happens on
 * the loop (at once, then with backoff), so this never blocks or fails;
 * d->sched and d->conf.hint_rate must be set.  'ops' (static, not
 * copied) must outlive the channel. */
void gch_attach(struct vpd *d, struct vpd_vm *vm, const struct gch_ops *ops);

/* Same, but adopts the already connected stream socket 'fd' (tests use
 * a socketpair) and never reconnects; 'fd' is closed by gch_detach. */
void gch_attach_fd(struct vpd *d, struct vpd_vm *vm, int fd,
                   const struct gch_ops *ops);

/* Stops serving 'vm': closes the socket, cancels timers, frees vm->gch
 * and sets it to NULL.  Safe to call from inside ops->hint() (the
 * connection is then freed when the dispatch unwinds).  NULL gch is
 * fine.  Call it before freeing 'vm'. */
void gch_detach(struct vpd *d, struct vpd_vm *vm);

/* Processes 'len' bytes as if read from 'vm''s channel (the fuzz target
 * and tests use it to drive the decoder without a socket).  Returns 0,
 * or -ENOENT when 'vm' has no channel or it was detached meanwhile. */
int gch_input(struct vpd *d, struct vpd_vm *vm, const void *buf,
              size_t len);

/* Re-reads d->conf.hint_rate for every channel (after a config reload). */
void gch_set_rate(struct vpd *d);

/* Introspection for status output and tests. */
struct gch_info {
    bool connected;                 /* Socket connected. */
    bool hello;                     /* Guest completed the handshake. */
    char agent_version[17];
    uint64_t n_msgs;                /* Well-framed messages received. */
    uint64_t n_acks_dropped;        /* Output buffer full. */
    uint64_t n_connects;
    size_t in_buffered, out_buffered;
};
int gch_info(const struct vpd_vm *vm, struct gch_info *out);

#endif /* manager/guestchan.h */
