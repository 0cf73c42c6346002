/* manager/control/ctl.h -- The control socket server on the daemon's loop.
 *
 * ctl owns the UNIX stream socket, its directory checks, the clients'
 * connections and buffers, peer credentials and the access rule; it
 * knows nothing about the daemon's state.  Each complete request line is
 * validated with proto_parse_request(); read-only commands go to the
 * dispatch callback for anyone, commands that change something
 * (proto_cmd_is_write) only for administrators (uid 0 or a member of the
 * configured admin group, judged by SO_PEERCRED/SO_PEERGROUPS at
 * connect time).  Everything is non-blocking on the one sched loop and
 * bounded: PROTO_MAX_LINE bytes per request, PROTO_MAX_INFLIGHT
 * unanswered requests per client (reading pauses, nothing is dropped),
 * PROTO_MAX_CLIENTS connections, of which non-admins share all but
 * PROTO_ADMIN_RESERVE and a uid other than root holds at most
 * PROTO_MAX_PER_USER (one more gets a "busy" reply and is closed; when
 * the shared ones are taken, a uid holding fewer takes the oldest
 * connection of the uid holding the most, and so does an admin who
 * finds every connection taken), and
 * PROTO_REQUEST_TIMEOUT_MS for a request line to arrive whole (else an
 * error reply and the connection is closed).  Buffered pipelined lines
 * are answered without waiting for another socket event.  A client
 * that sends an over-long line or something that is not a JSON object
 * gets an error reply and is disconnected; other errors (unknown VM, bad
 * argument...) leave the connection open. */

#ifndef VPOWER_CTL_H
#define VPOWER_CTL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "manager/control/proto.h"

struct sched;
struct ctl_server;

/* Who is asking: from SO_PEERCRED, fixed for the connection's life. */
struct ctl_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    bool admin;
};

/* Executes one validated request for 'peer' (already authorised) and
 * returns the reply line from proto_reply_ok()/proto_reply_error(),
 * malloc'ed; ctl sends and frees it. */
typedef char *ctl_dispatch_cb(const struct proto_request *,
                              const struct ctl_peer *, void *aux);

/* Creates the socket at 'path' and starts serving on 'sched'.  The
 * directory holding it is created (mode 0755) if missing; an existing
 * directory must be owned by root or the daemon's user and not be
 * writable by group or others (util_check_trusted_dir()), or nothing
 * starts ("... is writable by every user ... (fix: chmod 755 DIR)").
 * A leftover socket from a dead daemon is replaced; a live one is an
 * error (another vpowerd is running).  The
 * socket itself is mode 0666: any local user may read status, while
 * changes are authorised per request by peer credentials.  'admin_group'
 * "" means root only; a name that is not a group is an error.  Returns
 * the server, or NULL with a message in 'err'. */
struct ctl_server *ctl_server_create(struct sched *, const char *path,
                                     const char *admin_group,
                                     ctl_dispatch_cb *, void *aux,
                                     char *err, size_t errlen);

/* Closes every connection and the listening socket and removes the
 * socket file.  NULL is fine. */
void ctl_server_destroy(struct ctl_server *);

/* Number of connected clients (tests, status). */
size_t ctl_server_n_clients(const struct ctl_server *);

#endif /* manager/control/ctl.h */
