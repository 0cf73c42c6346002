/* manager/control/ctlclient.h -- The control socket's client side.
 *
 * vpowerctl and vpower-exporter talk to vpowerd through this module:
 * connect to the socket, send a request, wait for its reply line with a
 * deadline and parse the envelope (manager/control/proto.h).  It prints
 * nothing and never exits: every failure comes back as a kind and a
 * message naming the socket, and the caller decides what to show and
 * which exit code it means.
 *
 * A reply with a null id (busy, bad request) is a connection-level
 * error that still answers the call in flight, so it is returned as
 * that call's reply.  vpowerd may send such a reply and close before it
 * reads the request: a failed send is then reported as the reply when
 * one arrives, and as the send error otherwise. */

#ifndef VPOWER_CTLCLIENT_H
#define VPOWER_CTLCLIENT_H 1

#include <stddef.h>
#include <stdint.h>

struct proto_reply;
struct proto_request;

/* What went wrong in a call; the message says it in words. */
enum ctlc_err {
    CTLC_OK = 0,
    CTLC_E_PATH,        /* Socket path too long for sockaddr_un. */
    CTLC_E_PERM,        /* Connecting was refused (EACCES, EPERM). */
    CTLC_E_SYSTEM,      /* socket(2) or fcntl(2) failed here. */
    CTLC_E_CONNECT,     /* No socket file, or nobody listening. */
    CTLC_E_SEND,        /* Sending failed or timed out. */
    CTLC_E_TIMEOUT,     /* No whole reply before the deadline. */
    CTLC_E_CLOSED,      /* vpowerd closed the connection first. */
    CTLC_E_PROTO        /* Reply too large, malformed or not ours. */
};

/* One connection.  Fields are private to ctlclient.c. */
struct ctlc {
    int fd;                         /* -1 when closed. */
    const char *path;               /* Borrowed; outlives the conn. */
    unsigned timeout_ms;            /* Per call, send to reply. */
    int64_t next_id;                /* Id of the next request, from 1. */
    size_t max_reply;               /* Bytes a reply line may have. */
    char *buf;                      /* Received bytes not yet parsed. */
    size_t len, cap;
    char err[512];                  /* Message of the last failure. */
};

/* Connects to the socket at 'path' ('path' is borrowed for the life of
 * 'c').  'timeout_ms' bounds the connect and later each call, from its
 * first byte sent to its reply's '\n'; 'max_reply' bounds a reply line in
 * bytes.  Returns CTLC_OK, or an error with ctlc_error() set; 'c' must
 * be closed with ctlc_close() either way. */
enum ctlc_err ctlc_connect(struct ctlc *c, const char *path,
                           unsigned timeout_ms, size_t max_reply);

/* Sends 'req' (its id is set here, from the connection's counter) and
 * reads its reply into 'rep' (free with proto_reply_free()).  CTLC_OK
 * means a reply arrived, which may be an error reply (rep->ok false).
 * Otherwise nothing is left in 'rep' to free. */
enum ctlc_err ctlc_call(struct ctlc *c, struct proto_request *req,
                        struct proto_reply *rep);

/* Bounds the calls that follow by 'timeout_ms' each instead. */
void ctlc_set_timeout(struct ctlc *c, unsigned timeout_ms);

/* The socket path given to ctlc_connect(). */
const char *ctlc_path(const struct ctlc *c);

/* The message of the last failure ("cannot connect to vpowerd at
 * /run/vpower/vpowerd.sock: No such file or directory"). */
const char *ctlc_error(const struct ctlc *c);

/* Closes the connection and frees its buffer; safe to call twice. */
void ctlc_close(struct ctlc *c);

#endif /* manager/control/ctlclient.h */
