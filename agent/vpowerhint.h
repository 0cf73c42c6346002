/* agent/vpowerhint.h -- libvpowerhint: task hints from guest programs.
 *
 * A program inside a VM tells the host what it is about to do ("the next
 * part is latency critical, 200 us", "batch work", "boost for 500 ms",
 * "idle for 2 s").  The library sends one message per call to
 * vpower-agent over the UNIX socket GCH_AGENT_SOCK (or, with
 * vph_open_port(), straight to the virtio-serial port when no agent
 * runs), and by default waits until the host acknowledges that the plan
 * resulting from the hint is in force.  Hints are advice: the host's
 * policy decides, rate-limits and may ignore them.
 *
 * Not thread-safe per handle; use one handle per thread.  All functions
 * return 0 or a negative errno:
 *   -ENOENT / -ECONNREFUSED  no agent (socket) or no channel (port)
 *   -ETIMEDOUT               sent, but no acknowledgement in time
 *   -EAGAIN                  the host rate-limited the hint
 *   -EINVAL                  an argument is out of range (or the host
 *                            refused a field)
 *   -ENOTCONN                the host has not answered the handshake
 *   -EOPNOTSUPP              the host does not act on this hint
 *   other                    I/O errors from the system calls. */

#ifndef VPOWERHINT_H
#define VPOWERHINT_H 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct vph;

/* Connects to the agent's socket ('path' NULL = /run/vpower-agent.sock).
 * Returns a handle, or NULL with '*err' = -errno. */
struct vph *vph_open(const char *path, int *err);

/* Opens the virtio-serial port directly ('path' NULL = find the port
 * named org.vpower.agent.0 in /sys/class/virtio-ports) and performs the
 * handshake.  For when no agent runs; only one process may hold the
 * port, so this fails with -EBUSY while the agent runs. */
struct vph *vph_open_port(const char *path, int *err);

void vph_close(struct vph *);

/* How long each call waits for the host's acknowledgement; 0 = do not
 * wait (the call returns once the message is written).  Default 2000. */
void vph_set_timeout(struct vph *, int timeout_ms);

/* Latency-critical work begins: wake-up latency should stay below
 * 'latency_us' (1..1000000; 0 = as low as the host can). */
int vph_latency_begin(struct vph *, uint32_t latency_us);
int vph_latency_end(struct vph *);
/* Throughput work that tolerates tight packing for 'ms' (0 = default). */
int vph_batch(struct vph *, uint32_t ms);
/* Full speed for 'ms' (1..60000). */
int vph_boost(struct vph *, uint32_t ms);
/* The guest expects to be idle for 'ms' (1..3600000). */
int vph_idle(struct vph *, uint32_t ms);

/* Round trip of the last acknowledged call in ns (write -> ack read),
 * 0 if none: the end-to-end hint latency, measured on one clock. */
uint64_t vph_last_rtt_ns(const struct vph *);

/* Text for a return value of the functions above. */
const char *vph_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* agent/vpowerhint.h */
