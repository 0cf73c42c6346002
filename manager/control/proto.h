/* manager/control/proto.h -- The control protocol's wire format: JSON lines.
 *
 * vpowerd's control socket (manager/control/ctl.c) speaks one JSON object per
 * line in each direction; vpowerctl and vpower-exporter are clients.
 * This module is pure (strings in, structs or strings out; no I/O, no
 * clock, no globals) so that the unit tests and the fuzzer drive exactly
 * the code the daemon runs.  docs/control-protocol.md is the reference;
 * docs/schema/ holds one JSON schema per result.
 *
 *   request:  {"version":1,"id":7,"cmd":"status","args":{}}
 *   ok:       {"version":1,"id":7,"ok":true,"result":{...}}
 *   error:    {"version":1,"id":7,"ok":false,
 *              "error":{"code":"unknown-vm","message":"..."}}
 *
 * Validation runs in a fixed order, chrony-style, and stops at the first
 * failure: size, JSON syntax, top-level object, UTF-8 of every string
 * and key, its keys, version, id, command, then the command's exact
 * argument set (every argument known, every type right, every required
 * one present, every value in range).  Reply lines are always valid
 * UTF-8: invalid bytes in their strings become U+FFFD. */

#ifndef VPOWER_PROTO_H
#define VPOWER_PROTO_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

struct json_object;

#define PROTO_VERSION 1
#define PROTO_MAX_LINE 65536        /* Bytes per request line, '\n' incl. */
#define PROTO_MAX_INFLIGHT 16       /* Unanswered requests per client. */
#define PROTO_MAX_CLIENTS 64        /* Connections at once. */
#define PROTO_ADMIN_RESERVE 16      /* Of those, kept for administrators. */
#define PROTO_MAX_PER_USER 8        /* Per uid other than root. */
#define PROTO_REQUEST_TIMEOUT_MS 5000  /* From a request's first byte (or
                                        * from connecting) to its '\n'. */
#define PROTO_MAX_ID 9007199254740991LL  /* 2^53 - 1: exact in a double. */
#define PROTO_VM_LEN 256            /* Name, UUID or id, NUL incl. */
#define PROTO_MAX_LATENCY_US 10000000u
#define PROTO_MAX_FREQ_KHZ 10000000u
#define PROTO_DEFAULT_SOCKET "/run/vpower/vpowerd.sock"

enum proto_cmd {
    PROTO_CMD_VERSION,
    PROTO_CMD_STATUS,
    PROTO_CMD_LIST,
    PROTO_CMD_GET_POLICY,
    PROTO_CMD_SET_POLICY,
    PROTO_CMD_EXPLAIN,
    PROTO_CMD_OVERRIDE,
    PROTO_N_COMMANDS
};

/* "version", "status", ... ; NULL out of range. */
const char *proto_cmd_name(enum proto_cmd);
/* 0 and '*out', or -EINVAL. */
int proto_cmd_parse(const char *name, enum proto_cmd *out);
/* True for commands that change something: only admins may send them. */
bool proto_cmd_is_write(enum proto_cmd);

enum proto_err {
    PROTO_OK = 0,
    PROTO_E_BAD_REQUEST,        /* Not JSON, not an object, bad keys. */
    PROTO_E_BAD_VERSION,
    PROTO_E_UNKNOWN_COMMAND,
    PROTO_E_UNKNOWN_VM,
    PROTO_E_BAD_ARGUMENT,
    PROTO_E_PERMISSION_DENIED,
    PROTO_E_BUSY,
    PROTO_E_INTERNAL,
    PROTO_N_ERRS
};

/* "bad-request", ... ; NULL for PROTO_OK or out of range. */
const char *proto_err_name(enum proto_err);
/* Error code name to enum; PROTO_E_INTERNAL for unknown names (a newer
 * daemon's code is still an error). */
enum proto_err proto_err_parse(const char *name);

/* A validated request.  Only the fields of 'cmd' are meaningful. */
struct proto_request {
    int64_t id;                     /* -1 if the line had no usable id. */
    enum proto_cmd cmd;
    char vm[PROTO_VM_LEN];          /* get-policy, set-policy, explain. */
    struct pol_vm_policy policy;    /* set-policy: absent options are 0
                                     * and false (the whole policy is
                                     * replaced, never merged). */
    bool override_on;               /* override: "performance" / "off". */
};

/* Parses and validates one request line of 'len' bytes (a trailing '\n'
 * or "\r\n" is allowed; 'line' need not be NUL-terminated).  Returns
 * PROTO_OK with 'req' filled, or an error code with a message for the
 * client in 'err' ("field 'args.latency_us' must be ...").  req->id is
 * set whenever the line carried a valid id, even on error, so the error
 * reply can name it. */
enum proto_err proto_parse_request(const char *line, size_t len,
                                   struct proto_request *req,
                                   char *err, size_t errlen);

/* Builds the request line (with '\n') for 'req'; malloc'ed. */
char *proto_format_request(const struct proto_request *req);

/* Reply lines (with '\n'), malloc'ed.  'id' < 0 is sent as null.
 * proto_reply_ok() takes ownership of 'result' (NULL: empty object). */
char *proto_reply_ok(int64_t id, struct json_object *result);
char *proto_reply_error(int64_t id, enum proto_err, const char *message);

/* A parsed reply, for clients. */
struct proto_reply {
    int64_t id;                     /* -1 for null. */
    bool ok;
    struct json_object *result;     /* ok: owned by the reply. */
    enum proto_err code;            /* !ok */
    char code_name[32];             /* As sent, for unknown codes. */
    char message[1024];             /* !ok */
    struct json_object *root;       /* Owns everything; free with
                                     * proto_reply_free(). */
};

/* Parses one reply line.  Returns 0, or -EPROTO with a reason in 'err'
 * if the line is not a well-formed reply of this protocol version. */
int proto_parse_reply(const char *line, size_t len, struct proto_reply *,
                      char *err, size_t errlen);
void proto_reply_free(struct proto_reply *);

/* Strict decimal parse of a whole string into [min, max] (no sign, no
 * spaces, no trailing text).  Shared by vpowerctl so the CLI and the
 * daemon agree on what a number is.  0 or -EINVAL / -ERANGE. */
int proto_parse_u32(const char *s, uint32_t min, uint32_t max,
                    uint32_t *out);

#endif /* manager/control/proto.h */
