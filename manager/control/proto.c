/* manager/control/proto.c -- JSON-lines framing and request validation.
 *
 * The daemon's only parser of client input.  Everything a client sends
 * passes proto_parse_request() before any daemon state is looked at, and
 * the function checks in one fixed order (size, syntax, shape, version,
 * id, command, arguments) so each malformed class has exactly one error
 * code; tests/unit/test-proto.c pins that mapping down and
 * tests/fuzz/fuzz-proto.c throws arbitrary bytes at it.  Replies and the
 * client side (vpowerctl, the exporter) use the same module so both ends
 * agree on the format by construction. */

#include <config.h>

#include "manager/control/proto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "manager/util.h"
#include "policy/num.h"

/* Requests are flat: {"args":{...}} is the deepest legitimate nesting.
 * A small depth bounds json-c's recursion on hostile input. */
#define PROTO_MAX_DEPTH 8

static const char *const cmd_names[PROTO_N_COMMANDS] = {
    [PROTO_CMD_VERSION] = "version",
    [PROTO_CMD_STATUS] = "status",
    [PROTO_CMD_LIST] = "list",
    [PROTO_CMD_GET_POLICY] = "get-policy",
    [PROTO_CMD_SET_POLICY] = "set-policy",
    [PROTO_CMD_EXPLAIN] = "explain",
    [PROTO_CMD_OVERRIDE] = "override",
};
_Static_assert(sizeof cmd_names / sizeof cmd_names[0] == PROTO_N_COMMANDS,
               "one name per command");

static const char *const err_names[PROTO_N_ERRS] = {
    [PROTO_OK] = NULL,
    [PROTO_E_BAD_REQUEST] = "bad-request",
    [PROTO_E_BAD_VERSION] = "bad-version",
    [PROTO_E_UNKNOWN_COMMAND] = "unknown-command",
    [PROTO_E_UNKNOWN_VM] = "unknown-vm",
    [PROTO_E_BAD_ARGUMENT] = "bad-argument",
    [PROTO_E_PERMISSION_DENIED] = "permission-denied",
    [PROTO_E_BUSY] = "busy",
    [PROTO_E_INTERNAL] = "internal",
};

/* Arguments each command accepts, and which are required.  The table is
 * the whole contract: an argument not listed is rejected. */
enum arg_type { ARG_STRING, ARG_U32, ARG_BOOL };

struct arg_spec {
    const char *name;
    enum arg_type type;
    bool required;
};

#define MAX_ARGS 6
static const struct arg_spec cmd_args[PROTO_N_COMMANDS][MAX_ARGS] = {
    [PROTO_CMD_GET_POLICY] = { { "vm", ARG_STRING, true } },
    [PROTO_CMD_EXPLAIN] = { { "vm", ARG_STRING, true } },
    [PROTO_CMD_SET_POLICY] = {
        { "vm", ARG_STRING, true },
        { "policy", ARG_STRING, true },
        { "latency_us", ARG_U32, false },
        { "min_freq_khz", ARG_U32, false },
        { "never_offline", ARG_BOOL, false },
        { "share_smt", ARG_BOOL, false },
    },
    [PROTO_CMD_OVERRIDE] = { { "mode", ARG_STRING, true } },
};

const char *
proto_cmd_name(enum proto_cmd c)
{
    return (unsigned) c < PROTO_N_COMMANDS ? cmd_names[c] : NULL;
}

int
proto_cmd_parse(const char *name, enum proto_cmd *out)
{
    for (unsigned i = 0; i < PROTO_N_COMMANDS; i++) {
        if (name && !strcmp(name, cmd_names[i])) {
            *out = (enum proto_cmd) i;
            return 0;
        }
    }
    return -EINVAL;
}

bool
proto_cmd_is_write(enum proto_cmd c)
{
    return c == PROTO_CMD_SET_POLICY || c == PROTO_CMD_OVERRIDE;
}

const char *
proto_err_name(enum proto_err e)
{
    return (unsigned) e < PROTO_N_ERRS ? err_names[e] : NULL;
}

enum proto_err
proto_err_parse(const char *name)
{
    for (unsigned i = 1; i < PROTO_N_ERRS; i++) {
        if (name && !strcmp(name, err_names[i])) {
            return (enum proto_err) i;
        }
    }
    return PROTO_E_INTERNAL;
}

int
proto_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    int r = num_parse_u64(s, max, &v);

    if (r) {
        return r;
    }
    if (v < min) {
        return -ERANGE;
    }
    *out = (uint32_t) v;
    return 0;
}

/* Parses exactly 'len' bytes as one JSON value.  NULL with 'err' set if
 * the bytes are not exactly one value (trailing text included). */
static struct json_object *
parse_json(const char *line, size_t len, char *err, size_t errlen)
{
    struct json_tokener *tok;
    struct json_object *obj;
    enum json_tokener_error jerr;
    size_t end;

    if (len && memchr(line, '\0', len)) {
        snprintf(err, errlen, "request contains a NUL byte");
        return NULL;
    }
    tok = json_tokener_new_ex(PROTO_MAX_DEPTH);
    if (!tok) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    obj = json_tokener_parse_ex(tok, line, (int) len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (!obj || jerr != json_tokener_success) {
        snprintf(err, errlen, "not valid JSON: %s",
                 jerr == json_tokener_continue
                 ? "unexpected end of line"
                 : json_tokener_error_desc(jerr));
        json_object_put(obj);
        obj = NULL;
    } else {
        /* Only whitespace may follow the value. */
        for (; end < len; end++) {
            if (!strchr(" \t\r\n", line[end])) {
                snprintf(err, errlen, "not valid JSON: text after the "
                         "object at byte %zu", end);
                json_object_put(obj);
                obj = NULL;
                break;
            }
        }
    }
    json_tokener_free(tok);
    return obj;
}

/* Finds the first key or string in 'o' (under the field name 'path')
 * that is not valid UTF-8 and writes its field name to 'where'.  JSON
 * is UTF-8 by definition (RFC 8259) and json-c passes other bytes
 * through, so this is where they are refused. */
static bool
find_bad_utf8(struct json_object *o, const char *path, char *where,
              size_t wlen)
{
    if (json_object_is_type(o, json_type_string)) {
        if (util_utf8_valid(json_object_get_string(o),
                            (size_t) json_object_get_string_len(o))) {
            return false;
        }
        snprintf(where, wlen, "field '%s'", path);
        return true;
    }
    if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            if (find_bad_utf8(json_object_array_get_idx(o, i), path, where,
                              wlen)) {
                return true;
            }
        }
        return false;
    }
    if (!json_object_is_type(o, json_type_object)) {
        return false;
    }
    json_object_object_foreach(o, key, val) {
        char sub[128];

        if (!util_utf8_valid(key, strlen(key))) {
            snprintf(where, wlen, "a field name in %s%s%s",
                     *path ? "'" : "the request", path, *path ? "'" : "");
            return true;
        }
        snprintf(sub, sizeof sub, "%s%s%.64s", path, *path ? "." : "", key);
        if (find_bad_utf8(val, sub, where, wlen)) {
            return true;
        }
    }
    return false;
}

static bool
get_u32(struct json_object *v, uint32_t max, uint32_t *out)
{
    int64_t x;

    if (!json_object_is_type(v, json_type_int)) {
        return false;
    }
    errno = 0;
    x = json_object_get_int64(v);
    if (x < 0 || (uint64_t) x > max) {
        return false;
    }
    *out = (uint32_t) x;
    return true;
}

static const char *
type_word(enum arg_type t)
{
    return t == ARG_STRING ? "a string"
           : t == ARG_U32 ? "a non-negative integer" : "true or false";
}

/* Checks args against the command's table and fills 'req'. */
static enum proto_err
parse_args(struct json_object *args, struct proto_request *req,
           char *err, size_t errlen)
{
    const struct arg_spec *spec = cmd_args[req->cmd];
    const char *cmd = cmd_names[req->cmd];

    json_object_object_foreach(args, key, val) {
        const struct arg_spec *a = NULL;

        for (unsigned i = 0; i < MAX_ARGS && spec[i].name; i++) {
            if (!strcmp(spec[i].name, key)) {
                a = &spec[i];
            }
        }
        if (!a) {
            snprintf(err, errlen, "%s takes no argument '%.64s'", cmd, key);
            return PROTO_E_BAD_ARGUMENT;
        }
        if ((a->type == ARG_STRING
             && !json_object_is_type(val, json_type_string))
            || (a->type == ARG_BOOL
                && !json_object_is_type(val, json_type_boolean))
            || (a->type == ARG_U32
                && !json_object_is_type(val, json_type_int))) {
            snprintf(err, errlen, "argument '%s' of %s must be %s", key,
                     cmd, type_word(a->type));
            return PROTO_E_BAD_ARGUMENT;
        }
    }
    for (unsigned i = 0; i < MAX_ARGS && spec[i].name; i++) {
        if (spec[i].required
            && !json_object_object_get_ex(args, spec[i].name, NULL)) {
            snprintf(err, errlen, "%s needs argument '%s'", cmd,
                     spec[i].name);
            return PROTO_E_BAD_ARGUMENT;
        }
    }

    json_object_object_foreach(args, k, v) {
        if (!strcmp(k, "vm")) {
            const char *s = json_object_get_string(v);
            size_t n = (size_t) json_object_get_string_len(v);

            if (n == 0 || n >= sizeof req->vm || strlen(s) != n) {
                snprintf(err, errlen, "argument 'vm' must be a VM name, "
                         "UUID or id of 1 to %zu bytes",
                         sizeof req->vm - 1);
                return PROTO_E_BAD_ARGUMENT;
            }
            memcpy(req->vm, s, n + 1);
        } else if (!strcmp(k, "policy")) {
            if (pol_kind_parse(json_object_get_string(v),
                               &req->policy.kind) < 0) {
                snprintf(err, errlen, "unknown policy '%.64s' (use "
                         "balanced, performance or powersave)",
                         json_object_get_string(v));
                return PROTO_E_BAD_ARGUMENT;
            }
        } else if (!strcmp(k, "latency_us")) {
            if (!get_u32(v, PROTO_MAX_LATENCY_US, &req->policy.latency_us)
                || req->policy.latency_us == 0) {
                snprintf(err, errlen, "argument 'latency_us' must be 1 to "
                         "%u microseconds", PROTO_MAX_LATENCY_US);
                return PROTO_E_BAD_ARGUMENT;
            }
        } else if (!strcmp(k, "min_freq_khz")) {
            if (!get_u32(v, PROTO_MAX_FREQ_KHZ, &req->policy.min_freq_khz)
                || req->policy.min_freq_khz == 0) {
                snprintf(err, errlen, "argument 'min_freq_khz' must be 1 "
                         "to %u kHz", PROTO_MAX_FREQ_KHZ);
                return PROTO_E_BAD_ARGUMENT;
            }
        } else if (!strcmp(k, "never_offline")) {
            req->policy.never_offline = json_object_get_boolean(v);
        } else if (!strcmp(k, "share_smt")) {
            req->policy.share_smt = json_object_get_boolean(v);
        } else if (!strcmp(k, "mode")) {
            const char *m = json_object_get_string(v);

            if (!strcmp(m, "performance")) {
                req->override_on = true;
            } else if (!strcmp(m, "off")) {
                req->override_on = false;
            } else {
                snprintf(err, errlen, "argument 'mode' of override must be "
                         "\"performance\" or \"off\", not \"%.64s\"", m);
                return PROTO_E_BAD_ARGUMENT;
            }
        }
    }
    return PROTO_OK;
}

enum proto_err
proto_parse_request(const char *line, size_t len, struct proto_request *req,
                    char *err, size_t errlen)
{
    struct json_object *root, *v, *args = NULL;
    enum proto_err ret = PROTO_E_BAD_REQUEST;
    char where[192];
    const char *cmd;
    int64_t id;

    memset(req, 0, sizeof *req);
    req->id = -1;
    req->policy.share_smt = true;     /* Absent: may share (the default). */
    if (errlen) {
        err[0] = '\0';
    }
    if (len > PROTO_MAX_LINE) {
        snprintf(err, errlen, "request longer than %d bytes",
                 PROTO_MAX_LINE);
        return PROTO_E_BAD_REQUEST;
    }
    root = parse_json(line, len, err, errlen);
    if (!root) {
        return PROTO_E_BAD_REQUEST;
    }
    if (!json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "request must be a JSON object");
        goto out;
    }
    /* The id first, so that every later error can be matched. */
    if (json_object_object_get_ex(root, "id", &v)
        && json_object_is_type(v, json_type_int)) {
        id = json_object_get_int64(v);
        if (id >= 0 && id <= PROTO_MAX_ID) {
            req->id = id;
        }
    }
    if (find_bad_utf8(root, "", where, sizeof where)) {
        snprintf(err, errlen, "%s is not valid UTF-8", where);
        goto out;
    }
    json_object_object_foreach(root, key, val) {
        if (strcmp(key, "version") && strcmp(key, "id")
            && strcmp(key, "cmd") && strcmp(key, "args")) {
            snprintf(err, errlen, "unknown field '%.64s' (a request has "
                     "version, id, cmd and args)", key);
            goto out;
        }
        (void) val;
    }
    if (!json_object_object_get_ex(root, "version", &v)) {
        snprintf(err, errlen, "missing field 'version'");
        goto out;
    }
    if (!json_object_is_type(v, json_type_int)
        || json_object_get_int64(v) != PROTO_VERSION) {
        snprintf(err, errlen, "protocol version %.32s is not supported "
                 "(this vpowerd speaks version %d)",
                 json_object_to_json_string(v), PROTO_VERSION);
        ret = PROTO_E_BAD_VERSION;
        goto out;
    }
    if (!json_object_object_get_ex(root, "id", &v)) {
        snprintf(err, errlen, "missing field 'id'");
        goto out;
    }
    if (req->id < 0) {
        snprintf(err, errlen, "field 'id' must be an integer from 0 to "
                 "%lld", PROTO_MAX_ID);
        goto out;
    }
    if (!json_object_object_get_ex(root, "cmd", &v)) {
        snprintf(err, errlen, "missing field 'cmd'");
        goto out;
    }
    if (!json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "field 'cmd' must be a string");
        goto out;
    }
    cmd = json_object_get_string(v);
    if (proto_cmd_parse(cmd, &req->cmd) < 0) {
        snprintf(err, errlen, "unknown command '%.64s'", cmd);
        ret = PROTO_E_UNKNOWN_COMMAND;
        goto out;
    }
    if (json_object_object_get_ex(root, "args", &args)
        && !json_object_is_type(args, json_type_object)) {
        snprintf(err, errlen, "field 'args' must be an object");
        goto out;
    }
    if (args) {
        ret = parse_args(args, req, err, errlen);
    } else {
        struct json_object *empty = json_object_new_object();

        ret = parse_args(empty, req, err, errlen);
        json_object_put(empty);
    }

out:
    json_object_put(root);
    return ret;
}

/* The line for 'o', which it frees.  json-c copies string bytes as they
 * are, and strings in replies come from outside too (domain names from
 * the hypervisor, a client's own words quoted in an error): invalid
 * UTF-8 becomes U+FFFD here, so every line sent is valid UTF-8. */
static char *
to_line(struct json_object *o)
{
    size_t n;
    const char *s = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN, &n);
    char *text = util_utf8_replace(s, n, &n);
    char *line = xrealloc(text, n + 2);

    line[n] = '\n';
    line[n + 1] = '\0';
    json_object_put(o);
    return line;
}

static struct json_object *
new_id(int64_t id)
{
    return id < 0 ? NULL : json_object_new_int64(id);
}

char *
proto_format_request(const struct proto_request *req)
{
    struct json_object *o = json_object_new_object();
    struct json_object *a = json_object_new_object();
    const struct pol_vm_policy *p = &req->policy;

    json_object_object_add(o, "version", json_object_new_int(PROTO_VERSION));
    json_object_object_add(o, "id", new_id(req->id));
    json_object_object_add(o, "cmd",
                           json_object_new_string(proto_cmd_name(req->cmd)
                                                  ? proto_cmd_name(req->cmd)
                                                  : "?"));
    switch (req->cmd) {
    case PROTO_CMD_GET_POLICY:
    case PROTO_CMD_EXPLAIN:
        json_object_object_add(a, "vm", json_object_new_string(req->vm));
        break;
    case PROTO_CMD_SET_POLICY:
        json_object_object_add(a, "vm", json_object_new_string(req->vm));
        json_object_object_add(a, "policy",
                               json_object_new_string(pol_kind_name(p->kind)));
        if (p->latency_us) {
            json_object_object_add(a, "latency_us",
                                   json_object_new_int64(p->latency_us));
        }
        if (p->min_freq_khz) {
            json_object_object_add(a, "min_freq_khz",
                                   json_object_new_int64(p->min_freq_khz));
        }
        json_object_object_add(a, "never_offline",
                               json_object_new_boolean(p->never_offline));
        json_object_object_add(a, "share_smt",
                               json_object_new_boolean(p->share_smt));
        break;
    case PROTO_CMD_OVERRIDE:
        json_object_object_add(a, "mode",
                               json_object_new_string(req->override_on
                                                      ? "performance"
                                                      : "off"));
        break;
    default:
        break;
    }
    json_object_object_add(o, "args", a);
    return to_line(o);
}

char *
proto_reply_ok(int64_t id, struct json_object *result)
{
    struct json_object *o = json_object_new_object();

    json_object_object_add(o, "version", json_object_new_int(PROTO_VERSION));
    json_object_object_add(o, "id", new_id(id));
    json_object_object_add(o, "ok", json_object_new_boolean(1));
    json_object_object_add(o, "result",
                           result ? result : json_object_new_object());
    return to_line(o);
}

char *
proto_reply_error(int64_t id, enum proto_err code, const char *message)
{
    struct json_object *o = json_object_new_object();
    struct json_object *e = json_object_new_object();
    const char *name = proto_err_name(code);

    json_object_object_add(e, "code",
                           json_object_new_string(name ? name : "internal"));
    json_object_object_add(e, "message",
                           json_object_new_string(message ? message : ""));
    json_object_object_add(o, "version", json_object_new_int(PROTO_VERSION));
    json_object_object_add(o, "id", new_id(id));
    json_object_object_add(o, "ok", json_object_new_boolean(0));
    json_object_object_add(o, "error", e);
    return to_line(o);
}

int
proto_parse_reply(const char *line, size_t len, struct proto_reply *r,
                  char *err, size_t errlen)
{
    struct json_object *root, *v, *e;

    memset(r, 0, sizeof *r);
    r->id = -1;
    /* Replies may be large (list of many VMs); no line limit here. */
    root = parse_json(line, len, err, errlen);
    if (!root) {
        return -EPROTO;
    }
    r->root = root;
    if (!json_object_is_type(root, json_type_object)) {
        snprintf(err, errlen, "reply is not a JSON object");
        goto bad;
    }
    if (!json_object_object_get_ex(root, "version", &v)
        || !json_object_is_type(v, json_type_int)
        || json_object_get_int64(v) != PROTO_VERSION) {
        snprintf(err, errlen, "reply is not protocol version %d",
                 PROTO_VERSION);
        goto bad;
    }
    if (json_object_object_get_ex(root, "id", &v)
        && json_object_is_type(v, json_type_int)) {
        r->id = json_object_get_int64(v);
    }
    if (!json_object_object_get_ex(root, "ok", &v)
        || !json_object_is_type(v, json_type_boolean)) {
        snprintf(err, errlen, "reply has no boolean 'ok'");
        goto bad;
    }
    r->ok = json_object_get_boolean(v);
    if (r->ok) {
        if (!json_object_object_get_ex(root, "result", &r->result)
            || !json_object_is_type(r->result, json_type_object)) {
            snprintf(err, errlen, "reply has no 'result' object");
            goto bad;
        }
        return 0;
    }
    if (!json_object_object_get_ex(root, "error", &e)
        || !json_object_is_type(e, json_type_object)
        || !json_object_object_get_ex(e, "code", &v)
        || !json_object_is_type(v, json_type_string)) {
        snprintf(err, errlen, "error reply has no 'error.code'");
        goto bad;
    }
    snprintf(r->code_name, sizeof r->code_name, "%s",
             json_object_get_string(v));
    r->code = proto_err_parse(r->code_name);
    if (json_object_object_get_ex(e, "message", &v)
        && json_object_is_type(v, json_type_string)) {
        snprintf(r->message, sizeof r->message, "%s",
                 json_object_get_string(v));
    }
    return 0;

bad:
    proto_reply_free(r);
    return -EPROTO;
}

void
proto_reply_free(struct proto_reply *r)
{
    if (r && r->root) {
        json_object_put(r->root);
        r->root = NULL;
        r->result = NULL;
    }
}
