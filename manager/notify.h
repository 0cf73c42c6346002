/* manager/notify.h -- Telling the service manager how vpowerd is doing.
 *
 * Under systemd (Type=notify) vpowerd reports through sd_notify(3):
 * READY=1 once it is started and serving, a one-line STATUS= (shown by
 * `systemctl status`), WATCHDOG=1 keep-alives and STOPPING=1 when it
 * begins to restore the host.  The keep-alives come from a timer on the
 * daemon's own event loop (manager/sched.h), every half of the interval
 * systemd asks for in $WATCHDOG_USEC: when the loop stalls (a callback
 * that never returns, a stopped process) they stop, systemd kills and
 * restarts vpowerd, and the next start replays the restore journal.
 *
 * Everything is read from the environment once, in notify_create():
 * $NOTIFY_SOCKET (where to send), $WATCHDOG_USEC and $WATCHDOG_PID (a
 * watchdog meant for another process is ignored, as sd_watchdog_enabled(3)
 * does).  Without $NOTIFY_SOCKET, or in a build without libsystemd,
 * notify_create() returns NULL and every call below does nothing with
 * it. */

#ifndef VPOWER_NOTIFY_H
#define VPOWER_NOTIFY_H 1

#include <stddef.h>
#include <stdint.h>

struct sched;
struct notify;

/* Writes the current one-line status (no newline) into 'buf' of 'len'
 * bytes.  Called on every keep-alive tick and by notify_ready() and
 * notify_status(). */
typedef void notify_status_cb(char *buf, size_t len, void *aux);

/* Longest interval between two status refreshes, whatever the watchdog
 * interval (also the refresh period when no watchdog is asked for). */
#define NOTIFY_STATUS_MAX_NS (10 * 1000000000ull)

/* Reads the environment and, when a watchdog is asked for, arms the
 * keep-alive timer on 's' (not sent before notify_ready(): systemd's
 * start timeout covers the start).  'cb' and 'aux' must outlive the
 * object.  Returns NULL when there is nobody to notify. */
struct notify *notify_create(struct sched *s, notify_status_cb *cb,
                             void *aux);
/* Stops the timer and frees 'n'.  NULL is fine. */
void notify_destroy(struct notify *n);

/* Sends READY=1 with the current status and starts the keep-alives. */
void notify_ready(struct notify *n);
/* Sends the current status now if it changed since the last one. */
void notify_status(struct notify *n);
/* Sends STOPPING=1 and stops the keep-alives and status refreshes. */
void notify_stopping(struct notify *n);

/* Keep-alive interval in ns (half of $WATCHDOG_USEC), 0 when systemd
 * asked for no watchdog or 'n' is NULL. */
uint64_t notify_keepalive_ns(const struct notify *n);

#endif /* manager/notify.h */
