/* manager/control/ctl.c -- Control socket server: accept, frame, authorise.
 *
 * The only way operators reach vpowerd at run time.  It runs on the
 * daemon's one loop and never blocks: the listening socket and every
 * client are non-blocking and registered with sched; each client has a
 * bounded input buffer (one request line) and an output queue that
 * holds at most PROTO_MAX_INFLIGHT replies, after which reading pauses
 * until the client drains its replies (backpressure, not drops).  Peer
 * credentials are read once at accept: the access decision is a bool
 * per connection, and write commands from non-admins are answered
 * "permission-denied" here, before the dispatcher (manager/control/cmds.c)
 * sees
 * them.  Anything a client can trigger is logged rate-limited. */

#include <config.h>

#include "manager/control/ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "ctl"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

#define CTL_MAX_GROUPS 256
#define CTL_ACCEPT_BACKOFF_NS 100000000ull  /* After EMFILE. */
/* Request lines handled per client per wakeup; the rest of a pipelined
 * batch goes on the next loop iteration, after the other ready fds. */
#define CTL_LINES_PER_WAKEUP 32

struct ctl_client {
    struct ctl_server *srv;
    int fd;
    struct ctl_peer peer;
    char *in;                       /* [PROTO_MAX_LINE] */
    size_t in_len;
    char *out;
    size_t out_len, out_sent, out_cap;
    size_t ends[PROTO_MAX_INFLIGHT]; /* Offsets in 'out' where queued */
    size_t n_pending;                /* replies end. */
    bool eof;                       /* Peer shut its side down. */
    bool closing;                   /* Close once 'out' is sent. */
    bool served;                    /* Sent at least one request. */
    bool progress;                  /* Took a line since the deadline
                                     * was armed. */
    uint64_t deadline_timer;        /* Request deadline; 0: none. */
    uint64_t resume_timer;          /* More buffered lines; 0: none. */
    uint32_t events;                /* As registered with sched. */
    struct ctl_client *next;
};

struct ctl_server {
    struct sched *sched;
    int fd;
    char path[sizeof ((struct sockaddr_un *) 0)->sun_path];
    bool have_admin_gid;
    gid_t admin_gid;
    ctl_dispatch_cb *dispatch;
    void *aux;
    struct ctl_client *clients;
    size_t n_clients;
    uint64_t backoff_timer;
};

static void client_cb(int fd, uint32_t events, void *aux);
static void listen_cb(int fd, uint32_t events, void *aux);

/* ---- Access ---------------------------------------------------------- */

static bool
in_groups(gid_t g, const gid_t *groups, int n)
{
    for (int i = 0; i < n; i++) {
        if (groups[i] == g) {
            return true;
        }
    }
    return false;
}

/* Is the peer of 'fd' (credentials 'cr') an administrator?  Root always;
 * otherwise its primary or a supplementary group must be the admin
 * group.  SO_PEERGROUPS gives the groups the connecting process had;
 * kernels without it fall back to the user's groups in the group
 * database. */
static bool
peer_is_admin(const struct ctl_server *srv, int fd, const struct ucred *cr)
{
    gid_t groups[CTL_MAX_GROUPS];
    socklen_t len = sizeof groups;
    int n;

    if (cr->uid == 0) {
        return true;
    }
    if (!srv->have_admin_gid) {
        return false;
    }
    if (cr->gid == srv->admin_gid) {
        return true;
    }
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
        return in_groups(srv->admin_gid, groups, (int) (len / sizeof *groups));
    }
    if (errno != ENOPROTOOPT) {
        return false;
    } else {
        struct passwd *pw = getpwuid(cr->uid);

        n = CTL_MAX_GROUPS;
        if (!pw || getgrouplist(pw->pw_name, cr->gid, groups, &n) < 0) {
            return false;
        }
        return in_groups(srv->admin_gid, groups, n);
    }
}

/* ---- Clients -------------------------------------------------------- */

static void
client_free(struct ctl_client *c)
{
    struct ctl_server *srv = c->srv;

    for (struct ctl_client **p = &srv->clients; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    srv->n_clients--;
    if (c->deadline_timer) {
        sched_del_timer(srv->sched, c->deadline_timer);
    }
    if (c->resume_timer) {
        sched_del_timer(srv->sched, c->resume_timer);
    }
    sched_del_fd(srv->sched, c->fd);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

static void
update_events(struct ctl_client *c)
{
    uint32_t ev = 0;

    if (!c->closing && !c->eof && c->n_pending < PROTO_MAX_INFLIGHT
        && c->in_len < PROTO_MAX_LINE) {
        ev |= EPOLLIN;
    }
    if (c->out_sent < c->out_len) {
        ev |= EPOLLOUT;
    }
    if (ev != c->events) {
        sched_mod_fd(c->srv->sched, c->fd, ev);
        c->events = ev;
    }
}

/* Sends what the socket takes now.  Returns false if the client is
 * gone (and freed). */
static bool
flush_out(struct ctl_client *c)
{
    while (c->out_sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_sent,
                         c->out_len - c->out_sent, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            LOG_DEBUG("client pid %d: send: %s", (int) c->peer.pid,
                      strerror(errno));
            client_free(c);
            return false;
        }
        c->out_sent += (size_t) n;
    }
    /* Replies fully sent are no longer in flight. */
    while (c->n_pending && c->ends[0] <= c->out_sent) {
        memmove(c->ends, c->ends + 1, (c->n_pending - 1) * sizeof c->ends[0]);
        c->n_pending--;
    }
    if (c->out_sent == c->out_len) {
        c->out_sent = c->out_len = 0;
        c->n_pending = 0;
        if (c->closing || (c->eof && !c->in_len)) {
            client_free(c);
            return false;
        }
    } else if (c->out_sent) {
        /* Keep the unsent tail at the front, so a client that pipelines
         * forever and never quite drains cannot grow the buffer beyond
         * PROTO_MAX_INFLIGHT replies. */
        memmove(c->out, c->out + c->out_sent, c->out_len - c->out_sent);
        for (size_t i = 0; i < c->n_pending; i++) {
            c->ends[i] -= c->out_sent;
        }
        c->out_len -= c->out_sent;
        c->out_sent = 0;
    }
    return true;
}

static void
queue_reply(struct ctl_client *c, char *line)
{
    size_t n = strlen(line);

    if (c->out_len + n > c->out_cap) {
        c->out_cap = c->out_len + n + 4096;
        c->out = xrealloc(c->out, c->out_cap);
    }
    memcpy(c->out + c->out_len, line, n);
    c->out_len += n;
    free(line);
    if (c->n_pending < PROTO_MAX_INFLIGHT) {
        c->ends[c->n_pending++] = c->out_len;
    } else {
        /* Cannot happen: lines are not taken while full.  Keep the
         * accounting conservative anyway. */
        c->ends[PROTO_MAX_INFLIGHT - 1] = c->out_len;
    }
}

/* Handles one complete line.  A request that is not even a well-formed
 * request object ends the connection after its error reply: the client
 * is not speaking this protocol, and resynchronising is guesswork. */
static void
handle_line(struct ctl_client *c, const char *line, size_t len)
{
    struct ctl_server *srv = c->srv;
    struct proto_request req;
    char err[512];
    enum proto_err e;

    e = proto_parse_request(line, len, &req, err, sizeof err);
    if (e != PROTO_OK) {
        LOG_WARN_RL("client pid %d uid %u: %s: %s", (int) c->peer.pid,
                    (unsigned) c->peer.uid, proto_err_name(e), err);
        queue_reply(c, proto_reply_error(req.id, e, err));
        if (e == PROTO_E_BAD_REQUEST) {
            c->closing = true;
        }
        return;
    }
    if (proto_cmd_is_write(req.cmd) && !c->peer.admin) {
        char msg[256];

        snprintf(msg, sizeof msg, "%s changes vpowerd's behaviour: only "
                 "root%s may do it (run it with sudo%s)",
                 proto_cmd_name(req.cmd),
                 srv->have_admin_gid ? " or the admin group" : "",
                 srv->have_admin_gid ? " or join the admin group" : "");
        LOG_WARN_RL("client pid %d uid %u: %s refused: not an admin",
                    (int) c->peer.pid, (unsigned) c->peer.uid,
                    proto_cmd_name(req.cmd));
        queue_reply(c, proto_reply_error(req.id, PROTO_E_PERMISSION_DENIED,
                                         msg));
        return;
    }
    queue_reply(c, srv->dispatch(&req, &c->peer, srv->aux));
}

/* True if a line is buffered and may be taken now. */
static bool
have_line(const struct ctl_client *c)
{
    return !c->closing && c->n_pending < PROTO_MAX_INFLIGHT && c->in_len
           && (c->eof || memchr(c->in, '\n', c->in_len));
}

/* Takes complete lines from the input buffer while replies may queue,
 * at most '*budget' of them (decremented). */
static void
process_input(struct ctl_client *c, int *budget)
{
    while (!c->closing && c->n_pending < PROTO_MAX_INFLIGHT && *budget > 0) {
        char *nl = memchr(c->in, '\n', c->in_len);
        size_t len;

        if (!nl) {
            if (c->in_len >= PROTO_MAX_LINE) {
                char msg[128];

                snprintf(msg, sizeof msg, "request line longer than %d "
                         "bytes; closing the connection", PROTO_MAX_LINE);
                LOG_WARN_RL("client pid %d uid %u: %s", (int) c->peer.pid,
                            (unsigned) c->peer.uid, msg);
                queue_reply(c, proto_reply_error(-1, PROTO_E_BAD_REQUEST,
                                                 msg));
                c->closing = true;
                c->in_len = 0;
            } else if (c->eof && c->in_len) {
                /* A last request without '\n' (echo -n | socat). */
                handle_line(c, c->in, c->in_len);
                c->in_len = 0;
                c->served = c->progress = true;
                (*budget)--;
            }
            return;
        }
        len = (size_t) (nl - c->in) + 1;
        if (len > 1 && !(len == 2 && c->in[0] == '\r')) {
            handle_line(c, c->in, len);
            c->served = true;
            (*budget)--;
        }
        c->progress = true;
        memmove(c->in, c->in + len, c->in_len - len);
        c->in_len -= len;
    }
}

/* Closes 'c' now with an error reply saying why.  One non-blocking try
 * to send it: a client that does not read does not keep the connection
 * either. */
static void
client_drop(struct ctl_client *c, enum proto_err code, const char *msg)
{
    queue_reply(c, proto_reply_error(-1, code, msg));
    c->closing = true;
    c->in_len = 0;
    if (flush_out(c)) {
        client_free(c);
    }
}

/* The request deadline: a client must deliver each request line within
 * PROTO_REQUEST_TIMEOUT_MS of its first byte, and its first one within
 * that time of connecting; otherwise it only holds a connection others
 * need.  Between requests (vpowerctl top waits up to a day) and while
 * vpowerd itself holds reading back (replies unread) no clock runs. */
static void
deadline_cb(void *aux)
{
    struct ctl_client *c = aux;
    char msg[160];

    c->deadline_timer = 0;
    snprintf(msg, sizeof msg, "no complete request line within %d ms; "
             "closing the connection", PROTO_REQUEST_TIMEOUT_MS);
    LOG_WARN_RL("client pid %d uid %u: %s", (int) c->peer.pid,
                (unsigned) c->peer.uid, msg);
    client_drop(c, PROTO_E_BAD_REQUEST, msg);
}

static void
update_deadline(struct ctl_client *c)
{
    struct sched *s = c->srv->sched;
    bool waiting = (c->in_len || !c->served) && !c->closing && !c->eof
                   && c->n_pending < PROTO_MAX_INFLIGHT;

    if (c->deadline_timer && (c->progress || !waiting)) {
        sched_del_timer(s, c->deadline_timer);
        c->deadline_timer = 0;
    }
    c->progress = false;
    if (waiting && !c->deadline_timer) {
        c->deadline_timer = sched_add_timer(
            s, (uint64_t) PROTO_REQUEST_TIMEOUT_MS * 1000000u, deadline_cb,
            c);
    }
}

static void resume_cb(void *aux);

/* Answers what is buffered, sends what the socket takes and re-arms.
 * Returns false if the client is gone (and freed). */
static bool
client_service(struct ctl_client *c)
{
    int budget = CTL_LINES_PER_WAKEUP;

    do {
        process_input(c, &budget);
        if (!flush_out(c)) {
            return false;
        }
        /* Replies drained: lines held back by the in-flight limit go
         * now, up to the budget. */
    } while (budget > 0 && have_line(c));
    if (c->eof && !c->in_len && c->out_sent == c->out_len) {
        client_free(c);
        return false;
    }
    if (have_line(c) && !c->resume_timer) {
        /* Lines already read wait for no socket event: come back on the
         * next loop iteration. */
        c->resume_timer = sched_add_timer(c->srv->sched, 0, resume_cb, c);
    }
    update_deadline(c);
    update_events(c);
    return true;
}

static void
resume_cb(void *aux)
{
    struct ctl_client *c = aux;

    c->resume_timer = 0;
    client_service(c);
}

static void
client_cb(int fd, uint32_t events, void *aux)
{
    struct ctl_client *c = aux;

    if ((events & EPOLLIN) && c->in_len < PROTO_MAX_LINE) {
        ssize_t n = recv(fd, c->in + c->in_len, PROTO_MAX_LINE - c->in_len,
                         0);

        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            client_free(c);
            return;
        }
        if (n == 0) {
            c->eof = true;
        } else if (n > 0) {
            c->in_len += (size_t) n;
        }
    } else if (events & (EPOLLHUP | EPOLLERR)) {
        client_free(c);
        return;
    }
    client_service(c);
}

/* ---- Listening ----------------------------------------------------- */

static size_t
count_uid(const struct ctl_server *srv, uid_t uid)
{
    size_t n = 0;

    for (const struct ctl_client *c = srv->clients; c; c = c->next) {
        n += c->peer.uid == uid;
    }
    return n;
}

/* The connection to close for a newcomer: the oldest of the non-admin
 * uid that holds the most connections, if that is at least 'min', else
 * NULL.  Clients are listed newest first. */
static struct ctl_client *
pick_victim(const struct ctl_server *srv, size_t min)
{
    struct ctl_client *victim = NULL;
    size_t most = min;

    for (struct ctl_client *c = srv->clients; c; c = c->next) {
        size_t n = c->peer.admin ? 0 : count_uid(srv, c->peer.uid);

        if (n >= most) {
            most = n;
            victim = c;
        }
    }
    return victim;
}

/* Whether a new connection from 'peer' may be served: false with the
 * reason in 'msg' if not; true, and in '*victim' a connection to close
 * first or NULL, if it may.  No uid but root holds more than
 * PROTO_MAX_PER_USER.  Users who are not admins share all but
 * PROTO_ADMIN_RESERVE connections, and when those are taken a uid with
 * fewer takes the oldest connection of the uid with the most, so even
 * many uids cannot shut one out.  An admin who finds every connection
 * taken takes one from a non-admin the same way: no unprivileged user
 * can take the connections an administrator needs to repair things. */
static bool
admit(const struct ctl_server *srv, const struct ctl_peer *peer,
      struct ctl_client **victim, char *msg, size_t msglen)
{
    size_t n_user = count_uid(srv, peer->uid), n_plain = 0;

    *victim = NULL;
    for (const struct ctl_client *c = srv->clients; c; c = c->next) {
        n_plain += !c->peer.admin;
    }
    if (peer->uid != 0 && n_user >= PROTO_MAX_PER_USER) {
        snprintf(msg, msglen, "vpowerd already serves %d clients of uid %u, "
                 "the most one user may have; close one and try again",
                 PROTO_MAX_PER_USER, (unsigned) peer->uid);
        return false;
    }
    if (srv->n_clients >= PROTO_MAX_CLIENTS) {
        *victim = peer->admin ? pick_victim(srv, 1) : NULL;
        snprintf(msg, msglen, "vpowerd already serves %d clients; try "
                 "again later", PROTO_MAX_CLIENTS);
        return *victim != NULL;
    }
    if (!peer->admin
        && n_plain >= PROTO_MAX_CLIENTS - PROTO_ADMIN_RESERVE) {
        /* Only from a uid with two more: the two end up at most one
         * apart, and equals do not take turns evicting each other. */
        *victim = pick_victim(srv, n_user + 2);
        snprintf(msg, msglen, "vpowerd already serves %d clients; try "
                 "again later (%d more connections are kept for "
                 "administrators)", PROTO_MAX_CLIENTS - PROTO_ADMIN_RESERVE,
                 PROTO_ADMIN_RESERVE);
        return *victim != NULL;
    }
    return true;
}

static void
refuse_busy(int fd, const char *msg)
{
    char *line;

    line = proto_reply_error(-1, PROTO_E_BUSY, msg);
    /* Best effort: a fresh socket's buffer takes one short line. */
    if (send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        LOG_DEBUG("busy reply: %s", strerror(errno));
    }
    free(line);
    close(fd);
}

static void
backoff_done(void *aux)
{
    struct ctl_server *srv = aux;

    srv->backoff_timer = 0;
    sched_mod_fd(srv->sched, srv->fd, EPOLLIN);
}

static void
listen_cb(int fd, uint32_t events, void *aux)
{
    struct ctl_server *srv = aux;

    /* A bounded number per wakeup keeps the loop fair to the cycle. */
    for (int i = 0; i < 16; i++) {
        struct ucred cr;
        socklen_t len = sizeof cr;
        struct ctl_peer peer;
        struct ctl_client *c, *victim;
        char msg[256];
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (cfd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS
                || errno == ENOMEM) {
                /* Level-triggered: without a pause this would spin. */
                LOG_WARN_RL("control socket: accept: %s; pausing",
                            strerror(errno));
                sched_mod_fd(srv->sched, fd, 0);
                srv->backoff_timer = sched_add_timer(srv->sched,
                                                     CTL_ACCEPT_BACKOFF_NS,
                                                     backoff_done, srv);
            }
            return;
        }
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
            LOG_WARN_RL("control socket: SO_PEERCRED: %s", strerror(errno));
            close(cfd);
            continue;
        }
        peer.pid = cr.pid;
        peer.uid = cr.uid;
        peer.gid = cr.gid;
        peer.admin = peer_is_admin(srv, cfd, &cr);
        if (!admit(srv, &peer, &victim, msg, sizeof msg)) {
            LOG_WARN_RL("control socket: client pid %d uid %u refused: %s",
                        (int) cr.pid, (unsigned) cr.uid, msg);
            refuse_busy(cfd, msg);
            continue;
        }
        if (victim) {
            snprintf(msg, sizeof msg, "vpowerd closed this connection for "
                     "a client of another user (uid %u holds the most of "
                     "the %d connections shared by non-administrators)",
                     (unsigned) victim->peer.uid,
                     PROTO_MAX_CLIENTS - PROTO_ADMIN_RESERVE);
            LOG_WARN_RL("control socket: closing a connection of pid %d "
                        "uid %u for pid %d uid %u", (int) victim->peer.pid,
                        (unsigned) victim->peer.uid, (int) cr.pid,
                        (unsigned) cr.uid);
            client_drop(victim, PROTO_E_BUSY, msg);
        }
        c = XNEW(struct ctl_client);
        c->srv = srv;
        c->fd = cfd;
        c->peer = peer;
        c->in = xmalloc(PROTO_MAX_LINE);
        c->events = EPOLLIN;
        if (sched_add_fd(srv->sched, cfd, EPOLLIN, client_cb, c) < 0) {
            close(cfd);
            free(c->in);
            free(c);
            continue;
        }
        c->next = srv->clients;
        srv->clients = c;
        srv->n_clients++;
        update_deadline(c);
        LOG_DEBUG("client pid %d uid %u connected (%s)", (int) cr.pid,
                  (unsigned) cr.uid, c->peer.admin ? "admin" : "read-only");
    }
}

/* Creates or checks the socket's directory. */
static int
check_dir(const char *path, char *err, size_t errlen)
{
    char *copy = xstrdup(path);
    const char *dir = dirname(copy);
    int r = 0;

    if (mkdir(dir, 0755) == 0) {
        /* The umask may have narrowed it; readers need to traverse. */
        if (chmod(dir, 0755) < 0) {
            snprintf(err, errlen, "cannot chmod %s: %s", dir,
                     strerror(errno));
            r = -errno;
        }
    } else if (errno != EEXIST) {
        snprintf(err, errlen, "cannot create the control socket directory "
                 "%s: %s", dir, strerror(errno));
        r = -errno;
    }
    if (!r) {
        r = util_check_trusted_dir(dir, "control socket directory",
                                   "replace the socket", err, errlen);
    }
    free(copy);
    return r;
}

/* Removes a socket left by a dead daemon; refuses to steal a live one. */
static int
clear_stale(const char *path, const struct sockaddr_un *sa, char *err,
            size_t errlen)
{
    struct stat st;
    int fd, r;

    if (lstat(path, &st) < 0) {
        return errno == ENOENT ? 0 : -errno;
    }
    if (!S_ISSOCK(st.st_mode)) {
        snprintf(err, errlen, "%s exists and is not a socket; remove it or "
                 "set control_socket to another path", path);
        return -EEXIST;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -errno;
    }
    r = connect(fd, (const struct sockaddr *) sa, sizeof *sa);
    close(fd);
    if (r == 0) {
        snprintf(err, errlen, "another vpowerd is already listening on %s",
                 path);
        return -EADDRINUSE;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "cannot remove the stale socket %s: %s", path,
                 strerror(errno));
        return -errno;
    }
    return 0;
}

struct ctl_server *
ctl_server_create(struct sched *sched, const char *path,
                  const char *admin_group, ctl_dispatch_cb *dispatch,
                  void *aux, char *err, size_t errlen)
{
    struct sockaddr_un sa;
    struct ctl_server *srv;
    int fd;

    if (!path || !*path || path[0] != '/') {
        snprintf(err, errlen, "control socket path '%s' must be absolute",
                 path ? path : "");
        return NULL;
    }
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "control socket path %s is longer than %zu "
                 "bytes", path, sizeof sa.sun_path - 1);
        return NULL;
    }
    srv = XNEW(struct ctl_server);
    srv->sched = sched;
    srv->fd = -1;
    srv->dispatch = dispatch;
    srv->aux = aux;
    snprintf(srv->path, sizeof srv->path, "%s", path);
    if (admin_group && *admin_group) {
        struct group *gr = getgrnam(admin_group);

        if (!gr) {
            snprintf(err, errlen, "admin_group '%s' is not a group on this "
                     "host (create it with groupadd, or remove the "
                     "directive to allow root only)", admin_group);
            free(srv);
            return NULL;
        }
        srv->have_admin_gid = true;
        srv->admin_gid = gr->gr_gid;
    }
    if (check_dir(path, err, errlen) < 0) {
        free(srv);
        return NULL;
    }
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (clear_stale(path, &sa, err, errlen) < 0) {
        if (!*err) {
            snprintf(err, errlen, "cannot inspect %s: %s", path,
                     strerror(errno));
        }
        free(srv);
        return NULL;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        free(srv);
        return NULL;
    }
    /* The backlog is the kernel's largest, not the client table's size:
     * a burst of connections (many users at once, or one attacker) must
     * wait to be accepted and judged by the limits in listen_cb(), not
     * make an administrator's connect() fail with EAGAIN. */
    if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0
        || chmod(path, 0666) < 0
        || listen(fd, SOMAXCONN) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path,
                 strerror(errno));
        close(fd);
        unlink(path);
        free(srv);
        return NULL;
    }
    srv->fd = fd;
    if (sched_add_fd(sched, fd, EPOLLIN, listen_cb, srv) < 0) {
        snprintf(err, errlen, "cannot watch the control socket");
        ctl_server_destroy(srv);
        return NULL;
    }
    LOG_INFO("control socket %s (admin: root%s%s)", path,
             srv->have_admin_gid ? " and group " : "",
             srv->have_admin_gid ? admin_group : "");
    return srv;
}

void
ctl_server_destroy(struct ctl_server *srv)
{
    if (!srv) {
        return;
    }
    while (srv->clients) {
        client_free(srv->clients);
    }
    if (srv->backoff_timer) {
        sched_del_timer(srv->sched, srv->backoff_timer);
    }
    if (srv->fd >= 0) {
        sched_del_fd(srv->sched, srv->fd);
        close(srv->fd);
        unlink(srv->path);
    }
    free(srv);
}

size_t
ctl_server_n_clients(const struct ctl_server *srv)
{
    return srv ? srv->n_clients : 0;
}
