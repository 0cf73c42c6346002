/* manager/control/vpowerctl.c -- The operator's command line for vpowerd.
 *
 * A thin client of the control socket (manager/control/proto.h): every verb is
 * one request, checked locally first where it can be (syntax, numbers,
 * policy names -> exit 2 before anything is sent), then rendered as
 * aligned columns for people or, with --json, as the daemon's result
 * object pretty-printed for scripts.  `top` repeats status and list on
 * one connection and redraws in place.  Exit codes: 0 ok, 1 the daemon
 * refused (unknown VM, bad argument), 2 usage, 3 cannot reach vpowerd,
 * 4 permission denied.  It links json-c and the pure policy library,
 * never libvirt: VM names are resolved by the daemon. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "manager/control/ctlclient.h"
#include "manager/control/jsonget.h"
#include "manager/control/proto.h"
#include "manager/util.h"
#include "policy/cpuset.h"
#include "policy/policy.h"

#define EXIT_DAEMON 1
#define EXIT_USAGE 2
#define EXIT_CONNECT 3
#define EXIT_PERM 4

#define MAX_REPLY (64u << 20)

struct opts {
    const char *socket;
    bool json;
    double timeout_s;
    bool names;
    double delay_s;
    long iterations;               /* top: -1 = until q. */
    struct pol_vm_policy policy;
    bool set_opts;                 /* Any set-policy option given. */
    bool top_opts;
};

struct conn {
    struct ctlc cc;
    bool json;                      /* --json: leave strings as sent. */
};

static void usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void
usage_error(const char *fmt, ...)
{
    va_list ap;

    fputs("vpowerctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see 'vpowerctl help')\n", stderr);
    exit(EXIT_USAGE);
}

static void die(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

static void
die(int code, const char *fmt, ...)
{
    va_list ap;

    fputs("vpowerctl: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

static void
help(FILE *f)
{
    fprintf(f,
"Usage: vpowerctl [OPTION]... COMMAND [ARG]...\n"
"Query and steer vpowerd, the vCPU power manager.\n"
"\n"
"Commands:\n"
"  status                 host state: power, energy, CPUs, counters\n"
"  list [--names]         running VMs with policy, placement and load\n"
"  get-policy VM          a VM's power policy\n"
"  set-policy VM POLICY [--latency-us N] [--min-freq-khz N]\n"
"             [--never-offline|--may-offline] [--share-smt|--no-share-smt]\n"
"                         set a VM's policy (balanced, performance,\n"
"                         powersave); options not given are reset\n"
"  explain VM             why a VM is placed where it is\n"
"  override performance|off\n"
"                         host-wide maximum performance on or off\n"
"  top [-d SECONDS] [-n N]  live view; q quits\n"
"  version                client and daemon versions\n"
"  help                   this text\n"
"\n"
"VM is a domain name, UUID or id, as in virsh.\n"
"\n"
"Options:\n"
"  -s, --socket PATH      control socket (default $VPOWER_SOCKET or\n"
"                         " PROTO_DEFAULT_SOCKET ")\n"
"  -j, --json             print the daemon's result as JSON\n"
"  -t, --timeout SECONDS  give up waiting for vpowerd (default 10)\n"
"  -h, --help             this text\n"
"  -V, --version          client version\n"
"\n"
"Exit status: 0 ok, 1 vpowerd refused the request, 2 usage error,\n"
"3 cannot reach vpowerd, 4 permission denied.\n");
}

/* ---- Numbers ---------------------------------------------------------- */

static uint32_t
parse_u32_opt(const char *opt, const char *s, uint32_t min, uint32_t max,
              const char *unit)
{
    uint32_t v;
    int r = proto_parse_u32(s, min, max, &v);

    if (r == -EINVAL) {
        usage_error("%s needs a whole number of %s, not '%s'", opt, unit, s);
    }
    if (r < 0) {
        usage_error("%s %s is out of range (%u to %u %s)", opt, s,
                    (unsigned) min, (unsigned) max, unit);
    }
    return v;
}

static double
parse_seconds(const char *opt, const char *s, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || *s == ' ') {
        usage_error("%s needs a number of seconds, not '%s'", opt, s);
    }
    if (v < min || v > max) {
        usage_error("%s %s is out of range (%g to %g seconds)", opt, s, min,
                    max);
    }
    return v;
}

/* ---- Connection ------------------------------------------------------- */

/* Exits with the exit code and hint that fit a failed connect or call. */
static void
conn_die(const struct ctlc *c, enum ctlc_err e)
{
    switch (e) {
    case CTLC_E_PATH:
        usage_error("%s", ctlc_error(c));
    case CTLC_E_PERM:
        die(EXIT_PERM, "%s (ask an administrator for access to the socket, "
            "or use sudo)", ctlc_error(c));
    case CTLC_E_CONNECT:
        die(EXIT_CONNECT, "%s (is vpowerd running? start it with "
            "'vpowerd' or 'systemctl start vpowerd'%s)", ctlc_error(c),
            getenv("VPOWER_SOCKET") ? "; VPOWER_SOCKET is set" : "");
    case CTLC_E_TIMEOUT:
        die(EXIT_CONNECT, "%s (use --timeout to wait longer)",
            ctlc_error(c));
    default:
        break;
    }
    die(EXIT_CONNECT, "%s", ctlc_error(c));
}

static void
conn_open(struct conn *c, const struct opts *o)
{
    enum ctlc_err e;

    c->json = o->json;
    e = ctlc_connect(&c->cc, o->socket,
                     (unsigned) (o->timeout_s * 1000.0 + 0.5), MAX_REPLY);
    if (e != CTLC_OK) {
        conn_die(&c->cc, e);
    }
}

/* Replaces every string in 'o' by its escaped form (manager/util.h's
 * text rule): names come from the hypervisor and messages quote what
 * someone typed, and neither may move the cursor or recolour the
 * terminal of whoever reads vpowerctl's columns. */
static void
escape_strings(struct json_object *o)
{
    if (json_object_is_type(o, json_type_string)) {
        char *e = util_escape_dup(json_object_get_string(o));

        if (strcmp(e, json_object_get_string(o))
            || strlen(e) != (size_t) json_object_get_string_len(o)) {
            json_object_set_string(o, e);
        }
        free(e);
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++) {
            escape_strings(json_object_array_get_idx(o, i));
        }
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, val) {
            escape_strings(val);
            (void) key;
        }
    }
}

/* Sends 'req' and reads its reply into 'rep'.  Exits on transport
 * errors (3); the caller handles error replies. */
static void
conn_call(struct conn *c, struct proto_request *req, struct proto_reply *rep)
{
    char safe[sizeof rep->message];
    enum ctlc_err e = ctlc_call(&c->cc, req, rep);

    if (e != CTLC_OK) {
        conn_die(&c->cc, e);
    }
    if (!c->json) {
        escape_strings(rep->result);
    }
    util_escape(rep->message, safe, sizeof safe);
    memcpy(rep->message, safe, sizeof safe);
}

static void
conn_close(struct conn *c)
{
    ctlc_close(&c->cc);
}

/* Exits with the right code if 'rep' is an error. */
static void
check_reply(struct proto_reply *rep)
{
    int code;

    if (rep->ok) {
        return;
    }
    code = rep->code == PROTO_E_PERMISSION_DENIED ? EXIT_PERM : EXIT_DAEMON;
    fprintf(stderr, "vpowerctl: %s\n", rep->message[0] ? rep->message
                                                       : rep->code_name);
    proto_reply_free(rep);
    exit(code);
}

/* One request, one reply, connection closed. */
static void
call_once(const struct opts *o, struct proto_request *req,
          struct proto_reply *rep)
{
    struct conn c;

    conn_open(&c, o);
    conn_call(&c, req, rep);
    conn_close(&c);
    check_reply(rep);
}

/* Pretty JSON on stdout, always valid UTF-8 and free of terminal
 * controls and of characters that hide or reorder text: json-c escapes
 * the C0 controls in strings but copies every other byte as received,
 * so invalid UTF-8 becomes U+FFFD, and DEL, the C1 controls (CSI among
 * them) and the util_utf8_hidden() characters (a right-to-left override
 * in a domain name could reverse the line) become \u escapes, which
 * decode to the same string.  All of these are in the BMP, so one \u
 * each.  Outside strings the text is ASCII with C0 only as layout, so
 * this never touches the structure. */
static void
print_json(struct json_object *o)
{
    size_t n;
    const char *s = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
        | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    char *text = util_utf8_replace(s, n, &n);

    for (size_t i = 0; i < n;) {
        const char *c = text + i;
        size_t k = util_utf8_len(c, n - i);

        if (!k) {
            /* util_utf8_replace() leaves none; never pass one raw. */
            fputs("\\ufffd", stdout);
            k = 1;
        } else if (util_utf8_unprintable(c, k)
                   && !(k == 1 && (unsigned char) c[0] < 0x20)) {
            /* A C0 byte here is the layout's newline: json-c has
             * already escaped those in strings. */
            printf("\\u%04" PRIx32, util_utf8_codepoint(c, k));
        } else {
            fwrite(c, 1, k, stdout);
        }
        i += k;
    }
    putchar('\n');
    free(text);
}

/* ---- Tables ----------------------------------------------------------- */

#define TBL_MAX_COLS 12

struct table {
    size_t n_cols, n_rows, cap;
    char **cells;                   /* [n_rows * n_cols] */
};

static void
tbl_init(struct table *t, size_t n_cols)
{
    memset(t, 0, sizeof *t);
    t->n_cols = n_cols;
}

static void tbl_row(struct table *t, ...);

/* Appends a row of n_cols strings (copied). */
static void
tbl_row(struct table *t, ...)
{
    va_list ap;

    if (t->n_rows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = xrealloc(t->cells, t->cap * t->n_cols * sizeof *t->cells);
    }
    va_start(ap, t);
    for (size_t i = 0; i < t->n_cols; i++) {
        const char *s = va_arg(ap, const char *);

        t->cells[t->n_rows * t->n_cols + i] = xstrdup(s ? s : "");
    }
    va_end(ap);
    t->n_rows++;
}

/* Left-aligned columns, two spaces apart, no trailing blanks. */
static void
tbl_print(struct table *t, FILE *f)
{
    size_t w[TBL_MAX_COLS] = { 0 };

    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t i = 0; i < t->n_cols; i++) {
            size_t n = strlen(t->cells[r * t->n_cols + i]);

            w[i] = n > w[i] ? n : w[i];
        }
    }
    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t i = 0; i < t->n_cols; i++) {
            const char *s = t->cells[r * t->n_cols + i];

            if (i + 1 == t->n_cols) {
                fprintf(f, "%s\n", s);
            } else {
                fprintf(f, "%-*s  ", (int) w[i], s);
            }
        }
    }
    for (size_t i = 0; i < t->n_rows * t->n_cols; i++) {
        free(t->cells[i]);
    }
    free(t->cells);
    memset(t, 0, sizeof *t);
}

static const char *
fmt(char *buf, size_t len, const char *f, ...)
    __attribute__((format(printf, 3, 4)));

static const char *
fmt(char *buf, size_t len, const char *f, ...)
{
    va_list ap;

    va_start(ap, f);
    vsnprintf(buf, len, f, ap);
    va_end(ap);
    return buf;
}

static const char *
duration(char *buf, size_t len, double s)
{
    unsigned long t = (unsigned long) s;

    if (t >= 86400) {
        return fmt(buf, len, "%lud %luh %02lum", t / 86400, t % 86400 / 3600,
                   t % 3600 / 60);
    }
    if (t >= 3600) {
        return fmt(buf, len, "%luh %02lum", t / 3600, t % 3600 / 60);
    }
    if (t >= 60) {
        return fmt(buf, len, "%lum %02lus", t / 60, t % 60);
    }
    return fmt(buf, len, "%.1fs", s);
}

static void
kv(struct table *t, const char *k, const char *v)
{
    tbl_row(t, k, v);
}

/* "online 0, pin_vcpu 3, ..." from an object of counters. */
static const char *
counters(char *buf, size_t len, struct json_object *o)
{
    size_t n = 0;

    buf[0] = '\0';
    if (!o || !json_object_is_type(o, json_type_object)) {
        return buf;
    }
    json_object_object_foreach(o, k, v) {
        n += (size_t) snprintf(buf + n, n < len ? len - n : 0, "%s%s %lld",
                               n ? ", " : "", k,
                               (long long) json_object_get_int64(v));
    }
    return buf;
}

/* ---- Renderers -------------------------------------------------------- */

/* The model against the whole-host meter, when there is one: the last
 * period's powers and error, the original model's error, and the fit
 * with whether the decisions use it. */
static void
render_model_check(struct table *t, struct json_object *r)
{
    struct json_object *mc = jsonget_field(r, "model_check");
    char b[256], c[160];

    if (!mc || !json_object_is_type(mc, json_type_object)) {
        return;
    }
    snprintf(c, sizeof c, "busy x%.3f, idle x%.3f",
             jsonget_num_or(mc, "busy_scale", 1),
             jsonget_num_or(mc, "idle_scale", 1));
    kv(t, "Model:", fmt(b, sizeof b, "%.1f W vs meter %s %.1f W, error "
                        "%+.1f %% (as loaded %+.1f %%)",
                        jsonget_num_or(mc, "model_watts", 0),
                        jsonget_str(mc, "meter", "?"),
                        jsonget_num_or(mc, "meter_watts", 0),
                        100 * jsonget_num_or(mc, "error_ratio", 0),
                        100 * jsonget_num_or(mc, "original_error_ratio", 0)));
    kv(t, "Correction:",
       fmt(b, sizeof b, "%s; fit %s; %lld warnings",
           jsonget_bool(mc, "correcting") ? "in use"
           : jsonget_bool(mc, "correction") ? "on, not needed yet"
                                            : "off",
           c, (long long) jsonget_int(mc, "warnings_total", 0)));
}

/* Power meters found at start: a line with their number and what the
 * whole-host meter covers, then one line each, marked "(host)" when it
 * is part of the whole-host meter. */
static void
render_meters(struct table *t, struct json_object *r)
{
    struct json_object *a = jsonget_arr(r, "meters");
    const char *scope = jsonget_str(r, "host_meter_scope", "");
    char b[1024];
    size_t n = jsonget_len(a);

    if (!a) {
        return;
    }
    kv(t, "Meters:", fmt(b, sizeof b, "%zu found; whole host: %s", n,
                         *scope ? scope : "none"));
    for (size_t i = 0; i < n; i++) {
        struct json_object *m = json_object_array_get_idx(a, i);

        kv(t, "", fmt(b, sizeof b, "%s%s",
                      jsonget_str(m, "description", "?"),
                      jsonget_bool(m, "host") ? " (host)" : ""));
    }
}

/* Knobs another writer took over: one line each, "cpuN KNOB: VALUE
 * (vpowerd's VALUE)", after a line with their number. */
static void
render_foreign(struct table *t, struct json_object *r)
{
    struct json_object *a = jsonget_arr(r, "foreign_knobs");
    int64_t total = jsonget_int(r, "foreign_knobs_total", 0);
    char b[256];

    if (total <= 0) {
        return;
    }
    kv(t, "Foreign knobs:", fmt(b, sizeof b, "%lld (changed by another "
                                "writer; left alone)", (long long) total));
    for (size_t i = 0; i < jsonget_len(a); i++) {
        struct json_object *k = json_object_array_get_idx(a, i);

        kv(t, "", fmt(b, sizeof b, "cpu%lld %s: %s (vpowerd's %s)",
                      (long long) jsonget_int(k, "cpu", -1),
                      jsonget_str(k, "knob", "?"),
                      jsonget_str(k, "found", "?"),
                      jsonget_str(k, "expected", "?")));
    }
}

/* Housekeeping: its state, mode and CPUs, then what the last change
 * moved; "off" when the daemon does not confine host work. */
static void
render_housekeeping(struct table *t, struct json_object *r)
{
    struct json_object *h = jsonget_field(r, "housekeeping");
    int64_t ib = jsonget_int(h, "irqbalance_pid", 0);
    const char *err = jsonget_str(h, "error", "");
    char b[512], irqs[96];

    if (!h) {
        return;
    }
    if (!jsonget_bool(h, "enabled")) {
        kv(t, "Housekeeping:", "off (host work runs anywhere)");
        return;
    }
    kv(t, "Housekeeping:", fmt(b, sizeof b, "%s on %s (%s)",
                               jsonget_str(h, "state", "?"),
                               *jsonget_str(h, "cpus", "")
                               ? jsonget_str(h, "cpus", "") : "-",
                               jsonget_str(h, "mode", "?")));
    if (ib > 0) {
        fmt(irqs, sizeof irqs, "interrupts left to irqbalance (pid %lld)",
            (long long) ib);
    } else {
        fmt(irqs, sizeof irqs, "%lld interrupts moved, %lld refused",
            (long long) jsonget_int(h, "irqs_moved", 0),
            (long long) jsonget_int(h, "irqs_refused", 0));
    }
    kv(t, "", fmt(b, sizeof b, "last change: %lld cgroups moved, %s, "
                  "workqueues %s", (long long) jsonget_int(h,
                  "cgroups_moved", 0), irqs,
                  jsonget_bool(h, "workqueues_moved") ? "moved"
                                                      : "unchanged"));
    if (jsonget_field(h, "cpu_pressure_percent")) {
        kv(t, "", fmt(b, sizeof b, "host CPU pressure %.2f %%%s",
                      jsonget_num_or(h, "cpu_pressure_percent", 0),
                      jsonget_bool(h, "spreading") ? ": spreading" : ""));
    }
    if (*err) {
        kv(t, "", fmt(b, sizeof b, "error: %s", err));
    }
}

/* The host side of guest hints (read to applied), when there were any:
 * exact p50 and p99 of the latest ones, the maximum of all. */
static void
render_hint_apply(struct table *t, struct json_object *r)
{
    struct json_object *h = jsonget_field(r, "hint_apply_seconds");
    int64_t n = jsonget_int(h, "count", 0);
    char b[256];

    if (n <= 0) {
        return;
    }
    kv(t, "Hints applied:", fmt(b, sizeof b, "%lld, host side p50 %.3f ms, "
                                "p99 %.3f ms (last %lld), max %.3f ms",
                                (long long) n,
                                jsonget_num_or(h, "p50", 0) * 1e3,
                                jsonget_num_or(h, "p99", 0) * 1e3,
                                (long long) jsonget_int(h, "window", 0),
                                jsonget_num_or(h, "max", 0) * 1e3));
}

static void
render_status_head(struct json_object *r, FILE *f)
{
    struct table t;
    char b1[64], b2[512];
    double e = jsonget_num_or(r, "energy_joules", 0);
    double base = jsonget_num_or(r, "baseline_energy_joules", 0);
    double saved = jsonget_num_or(r, "saved_joules", 0);
    double up = jsonget_num_or(r, "uptime_seconds", 0);
    double cpu = jsonget_num_or(r, "cpu_seconds", 0);

    tbl_init(&t, 2);
    kv(&t, "vpowerd:", fmt(b2, sizeof b2, "%s, up %s",
                           jsonget_str(r, "version", "?"),
                           duration(b1, sizeof b1, up)));
    /* The manager's own cost, as a share of one CPU since it started. */
    if (jsonget_field(r, "cpu_seconds")) {
        kv(&t, "Own CPU:", fmt(b2, sizeof b2, "%.2f s (%.2f %% of one CPU)",
                               cpu, up > 0 ? 100.0 * cpu / up : 0.0));
    }
    kv(&t, "Driver:", fmt(b2, sizeof b2, "%s (%s)",
                          jsonget_str(r, "driver", "?"),
                          jsonget_bool(r, "connected") ? "connected"
                                                       : "NOT connected"));
    kv(&t, "Mode:", jsonget_bool(r, "dry_run")
                    ? "dry run (plans are logged, nothing is changed)"
                    : "active");
    kv(&t, "Override:", jsonget_str(r, "override", "?"));
    kv(&t, "Period:", fmt(b2, sizeof b2, "%.1f s",
                          jsonget_num_or(r, "period_seconds", 0)));
    kv(&t, "Decisions:",
       fmt(b2, sizeof b2, "%lld",
           (long long) jsonget_int(r, "decisions_total", 0)));
    kv(&t, "Power:", fmt(b2, sizeof b2, "%.1f W (%s)",
                         jsonget_num_or(r, "power_watts", 0),
                         strcmp(jsonget_str(r, "energy_source", "?"),
                                "meter") ? "model estimate"
                                         : "measured, last period"));
    render_model_check(&t, r);
    /* The baseline is what the model says the performance governor
     * would have used: a counterfactual no meter can read. */
    kv(&t, "Energy:", fmt(b2, sizeof b2, "%.1f J (modelled performance "
                          "baseline %.1f J, saved %.1f J, %.1f%%)", e, base,
                          saved, base > 0 ? 100.0 * saved / base : 0.0));
    if (jsonget_field(r, "ready_source")) {
        struct json_object *th = jsonget_field(r, "thermal");

        kv(&t, "Inputs:", fmt(b2, sizeof b2, "ready time from %s, "
                              "frequency from %s",
                              jsonget_str(r, "ready_source", "?"),
                              jsonget_str(r, "frequency_source", "?")));
        if (th) {
            kv(&t, "Thermal:",
               fmt(b2, sizeof b2, "%s (events from %s, %lld changes)",
                   jsonget_str(th, "state", "?"),
                   jsonget_str(th, "source", "?"),
                   (long long) jsonget_int(th, "events_total", 0)));
        }
    }
    kv(&t, "CPUs:", fmt(b2, sizeof b2, "%lld active, %lld parked, %lld "
                        "offline",
                        (long long) jsonget_int(r, "active_cpus", 0),
                        (long long) jsonget_int(r, "parked_cpus", 0),
                        (long long) jsonget_int(r, "offline_cpus", 0)));
    kv(&t, "Actions:",
       counters(b2, sizeof b2, jsonget_field(r, "actions_total")));
    kv(&t, "Errors:",
       counters(b2, sizeof b2, jsonget_field(r, "errors_total")));
    render_hint_apply(&t, r);
    render_foreign(&t, r);
    render_meters(&t, r);
    render_housekeeping(&t, r);
    tbl_print(&t, f);
}

static void
render_cpus(struct json_object *r, FILE *f)
{
    struct json_object *cpus = jsonget_field(r, "cpus");
    struct table t;

    tbl_init(&t, 6);
    tbl_row(&t, "CPU", "STATE", "MANAGED", "FREQ_MHZ", "NONIDLE_S",
            "IDLE_S");
    for (size_t i = 0; i < jsonget_len(cpus); i++) {
        struct json_object *c = json_object_array_get_idx(cpus, i);
        struct json_object *idle = jsonget_field(c, "idle");
        char b1[32], b2[32], b3[32], b4[512];
        int64_t hz;
        size_t n = 0;

        b4[0] = '\0';
        for (size_t k = 0; k < jsonget_len(idle); k++) {
            struct json_object *s = json_object_array_get_idx(idle, k);

            n += (size_t) snprintf(b4 + n, n < sizeof b4 ? sizeof b4 - n : 0,
                                   "%s%s %.1f%s", n ? ", " : "",
                                   jsonget_str(s, "state", "?"),
                                   jsonget_num_or(s, "seconds", 0),
                                   jsonget_bool(s, "disabled") ? " (off)"
                                                               : "");
        }
        hz = jsonget_int(c, "frequency_hertz", 0);
        tbl_row(&t, fmt(b1, sizeof b1, "%lld",
                        (long long) jsonget_int(c, "cpu", 0)),
                jsonget_str(c, "state", "?"),
                jsonget_bool(c, "managed") ? "yes" : "no",
                hz ? fmt(b2, sizeof b2, "%lld", (long long) (hz / 1000000))
                   : "-",
                fmt(b3, sizeof b3, "%.1f",
                    jsonget_num_or(c, "nonidle_seconds", 0)),
                n ? b4 : "-");
    }
    tbl_print(&t, f);
}

/* Union of a VM's vCPU allowed sets, as a cpulist. */
static const char *
vm_cpus(char *buf, size_t len, struct json_object *vm)
{
    struct json_object *vcpus = jsonget_field(vm, "vcpus");
    struct cpuset u, s;

    cpuset_zero(&u);
    for (size_t i = 0; i < jsonget_len(vcpus); i++) {
        const char *a = jsonget_str(json_object_array_get_idx(vcpus, i),
                                    "allowed", "?");

        if (cpuset_parse(&s, a) == 0) {
            cpuset_or(&u, &u, &s);
        }
    }
    if (cpuset_empty(&u)) {
        return "-";
    }
    cpuset_format(&u, buf, len);
    return buf;
}

static void
render_vms(struct json_object *r, FILE *f)
{
    struct json_object *vms = jsonget_field(r, "vms");
    struct table t;

    tbl_init(&t, 9);
    tbl_row(&t, "ID", "NAME", "POLICY", "REASON", "VCPUS", "LOAD%",
            "READY%", "ENERGY_J", "CPUS");
    for (size_t i = 0; i < jsonget_len(vms); i++) {
        struct json_object *v = json_object_array_get_idx(vms, i);
        char b1[32], b2[32], b3[32], b4[32], b5[32], b6[1024];
        int64_t id = jsonget_int(v, "id", 0);

        tbl_row(&t, id >= 0 ? fmt(b1, sizeof b1, "%lld", (long long) id)
                            : "-",
                jsonget_str(v, "name", "?"), jsonget_str(v, "policy", "?"),
                jsonget_str(v, "reason", "?"),
                fmt(b2, sizeof b2, "%zu",
                    jsonget_len(jsonget_field(v, "vcpus"))),
                fmt(b3, sizeof b3, "%.1f", jsonget_num_or(v, "load_pct", 0)),
                fmt(b4, sizeof b4, "%.1f",
                    jsonget_num_or(v, "ready_pct", 0)),
                fmt(b5, sizeof b5, "%.1f",
                    jsonget_num_or(v, "energy_joules", 0)),
                vm_cpus(b6, sizeof b6, v));
    }
    if (!jsonget_len(vms)) {
        fputs("No running VMs.\n", f);
        for (size_t i = 0; i < t.n_cols; i++) {
            free(t.cells[i]);
        }
        free(t.cells);
        return;
    }
    tbl_print(&t, f);
}

static void
render_policy(struct json_object *r, FILE *f)
{
    struct table t;
    char b[64];
    int64_t lat = jsonget_int(r, "latency_us", 0);
    int64_t fq = jsonget_int(r, "min_freq_khz", 0);
    const char *src = jsonget_str(r, "source", "?");

    tbl_init(&t, 2);
    kv(&t, "Name:", jsonget_str(r, "name", "?"));
    kv(&t, "UUID:", jsonget_str(r, "uuid", "?"));
    kv(&t, "Policy:", jsonget_str(r, "policy", "?"));
    kv(&t, "Latency bound:", lat ? fmt(b, sizeof b, "%lld us",
                                       (long long) lat) : "none");
    kv(&t, "Min frequency:", fq ? fmt(b, sizeof b, "%lld kHz",
                                      (long long) fq) : "none");
    kv(&t, "Never offline:", jsonget_bool(r, "never_offline") ? "yes" : "no");
    kv(&t, "Share SMT:", jsonget_bool(r, "share_smt") ? "yes" : "no");
    kv(&t, "Source:", !strcmp(src, "metadata") ? "domain metadata"
                      : !strcmp(src, "default")
                      ? "default (default_policy in vpowerd.conf)" : src);
    tbl_print(&t, f);
}

/* Prints 'text' wrapped at 78 columns. */
static void
wrap(const char *text, FILE *f)
{
    size_t col = 0;

    while (*text) {
        size_t w = strcspn(text, " ");

        if (col && col + 1 + w > 78) {
            fputc('\n', f);
            col = 0;
        } else if (col) {
            fputc(' ', f);
            col++;
        }
        fwrite(text, 1, w, f);
        col += w;
        text += w;
        while (*text == ' ') {
            text++;
        }
    }
    fputc('\n', f);
}

/* ---- Verbs ------------------------------------------------------------ */

/* Checks a VM argument as the daemon would and puts it in 'req'.  The
 * protocol is UTF-8; a VM whose name is not is reached by id or UUID. */
static void
set_vm(struct proto_request *req, const char *vm)
{
    if (!*vm || strlen(vm) >= sizeof req->vm) {
        usage_error("VM must be a name, UUID or id of 1 to %zu bytes",
                    sizeof req->vm - 1);
    }
    if (!util_utf8_valid(vm, strlen(vm))) {
        usage_error("VM name is not valid UTF-8 (use the VM's id or UUID "
                    "from 'vpowerctl list')");
    }
    snprintf(req->vm, sizeof req->vm, "%s", vm);
}

static int
cmd_simple(const struct opts *o, enum proto_cmd cmd, const char *vm)
{
    struct proto_request req;
    struct proto_reply rep;
    struct json_object *r;

    memset(&req, 0, sizeof req);
    req.cmd = cmd;
    if (vm) {
        set_vm(&req, vm);
    }
    call_once(o, &req, &rep);
    r = rep.result;
    if (o->json) {
        print_json(r);
    } else if (cmd == PROTO_CMD_STATUS) {
        render_status_head(r, stdout);
        fputc('\n', stdout);
        render_cpus(r, stdout);
    } else if (cmd == PROTO_CMD_LIST && o->names) {
        struct json_object *vms = jsonget_field(r, "vms");

        for (size_t i = 0; i < jsonget_len(vms); i++) {
            puts(jsonget_str(json_object_array_get_idx(vms, i), "name", "?"));
        }
    } else if (cmd == PROTO_CMD_LIST) {
        render_vms(r, stdout);
    } else if (cmd == PROTO_CMD_GET_POLICY) {
        render_policy(r, stdout);
    } else if (cmd == PROTO_CMD_EXPLAIN) {
        printf("%s: %s\n", jsonget_str(r, "name", "?"),
               jsonget_str(r, "reason", "?"));
        wrap(jsonget_str(r, "text", "?"), stdout);
    }
    proto_reply_free(&rep);
    return 0;
}

static int
cmd_set_policy(const struct opts *o, const char *vm, const char *policy)
{
    struct proto_request req;
    struct proto_reply rep;

    memset(&req, 0, sizeof req);
    req.cmd = PROTO_CMD_SET_POLICY;
    req.policy = o->policy;
    if (pol_kind_parse(policy, &req.policy.kind) < 0) {
        usage_error("unknown policy '%s' (use balanced, performance or "
                    "powersave)", policy);
    }
    set_vm(&req, vm);
    call_once(o, &req, &rep);
    if (o->json) {
        print_json(rep.result);
    } else {
        printf("Policy of %s set to %s.\n",
               jsonget_str(rep.result, "name", "?"),
               jsonget_str(rep.result, "policy", "?"));
    }
    proto_reply_free(&rep);
    return 0;
}

static int
cmd_override(const struct opts *o, const char *mode)
{
    struct proto_request req;
    struct proto_reply rep;

    memset(&req, 0, sizeof req);
    req.cmd = PROTO_CMD_OVERRIDE;
    if (!strcmp(mode, "performance")) {
        req.override_on = true;
    } else if (strcmp(mode, "off")) {
        usage_error("override takes 'performance' or 'off', not '%s'", mode);
    }
    call_once(o, &req, &rep);
    if (o->json) {
        print_json(rep.result);
    } else {
        printf("Host-wide override: %s\n",
               jsonget_str(rep.result, "override", "?"));
    }
    proto_reply_free(&rep);
    return 0;
}

static int
cmd_version(const struct opts *o)
{
    struct proto_request req;
    struct proto_reply rep;

    memset(&req, 0, sizeof req);
    req.cmd = PROTO_CMD_VERSION;
    if (!o->json) {
        printf("vpowerctl %s\n", PACKAGE_VERSION);
        fflush(stdout);
    }
    call_once(o, &req, &rep);
    if (o->json) {
        print_json(rep.result);
    } else {
        printf("vpowerd %s (protocol %lld)\n",
               jsonget_str(rep.result, "version", "?"),
               (long long) jsonget_int(rep.result, "protocol", 0));
    }
    proto_reply_free(&rep);
    return 0;
}

/* ---- top -------------------------------------------------------------- */

static volatile sig_atomic_t top_stop;
static struct termios saved_tio;
static bool tio_saved;

static void
top_signal(int signo)
{
    top_stop = 1;
}

static void
restore_tty(void)
{
    if (tio_saved) {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
        tio_saved = false;
    }
}

static int
cmd_top(const struct opts *o)
{
    bool tty_in = isatty(STDIN_FILENO), tty_out = isatty(STDOUT_FILENO);
    struct sigaction sa;
    struct conn c;
    long it = 0;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = top_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (tty_in && tcgetattr(STDIN_FILENO, &saved_tio) == 0) {
        struct termios raw = saved_tio;

        raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tio_saved = true;
        atexit(restore_tty);
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    conn_open(&c, o);
    while (!top_stop) {
        struct proto_request req;
        struct proto_reply st, ls;
        struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
        int wait_ms;

        memset(&req, 0, sizeof req);
        req.cmd = PROTO_CMD_STATUS;
        conn_call(&c, &req, &st);
        check_reply(&st);
        req.cmd = PROTO_CMD_LIST;
        conn_call(&c, &req, &ls);
        check_reply(&ls);
        if (o->json) {
            struct json_object *both = json_object_new_object();

            json_object_object_add(both, "status",
                                   json_object_get(st.result));
            json_object_object_add(both, "list", json_object_get(ls.result));
            print_json(both);
            json_object_put(both);
        } else {
            if (tty_out) {
                fputs("\033[H\033[2J", stdout);
            }
            printf("vpower top - every %.1fs, q quits\n", o->delay_s);
            render_status_head(st.result, stdout);
            fputc('\n', stdout);
            render_cpus(st.result, stdout);
            fputc('\n', stdout);
            render_vms(ls.result, stdout);
            if (!tty_out) {
                fputc('\n', stdout);
            }
        }
        fflush(stdout);
        proto_reply_free(&st);
        proto_reply_free(&ls);
        if (o->iterations > 0 && ++it >= o->iterations) {
            break;
        }
        /* Wait for the delay or a key; the client may sleep, it is not
         * the daemon. */
        wait_ms = (int) (o->delay_s * 1000.0);
        while (!top_stop) {
            int r = poll(&pfd, tty_in ? 1 : 0, wait_ms);
            char ch;

            if (r <= 0) {
                break;
            }
            if (read(STDIN_FILENO, &ch, 1) != 1) {
                pfd.fd = -1;        /* stdin closed: just keep going. */
                continue;
            }
            if (ch == 'q' || ch == 'Q') {
                top_stop = 1;
            }
            break;                  /* Any other key refreshes now. */
        }
    }
    conn_close(&c);
    restore_tty();
    return 0;
}

/* ---- main ------------------------------------------------------------- */

struct verb {
    const char *name;
    int min_args, max_args;
    const char *synopsis;
};

static const struct verb verbs[] = {
    { "status", 0, 0, "status" },
    { "list", 0, 0, "list [--names]" },
    { "get-policy", 1, 1, "get-policy VM" },
    { "set-policy", 2, 2, "set-policy VM POLICY [OPTION]..." },
    { "explain", 1, 1, "explain VM" },
    { "override", 1, 1, "override performance|off" },
    { "top", 0, 0, "top [-d SECONDS] [-n N]" },
    { "version", 0, 0, "version" },
    { "help", 0, 1, "help" },
};

int
main(int argc, char **argv)
{
    enum { O_LAT = 256, O_FREQ, O_NEVER, O_MAY, O_SMT, O_NOSMT, O_NAMES };
    static const struct option longopts[] = {
        { "socket", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "timeout", required_argument, NULL, 't' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { "latency-us", required_argument, NULL, O_LAT },
        { "min-freq-khz", required_argument, NULL, O_FREQ },
        { "never-offline", no_argument, NULL, O_NEVER },
        { "may-offline", no_argument, NULL, O_MAY },
        { "share-smt", no_argument, NULL, O_SMT },
        { "no-share-smt", no_argument, NULL, O_NOSMT },
        { "names", no_argument, NULL, O_NAMES },
        { "delay", required_argument, NULL, 'd' },
        { "iterations", required_argument, NULL, 'n' },
        { NULL, 0, NULL, 0 },
    };
    struct opts o;
    const struct verb *v = NULL;
    const char *verb;
    int c, nargs;

    memset(&o, 0, sizeof o);
    o.policy.share_smt = true;         /* Without --no-share-smt. */
    o.socket = getenv("VPOWER_SOCKET");
    if (!o.socket || !*o.socket) {
        o.socket = PROTO_DEFAULT_SOCKET;
    }
    o.timeout_s = 10;
    o.delay_s = 2;
    o.iterations = -1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":s:jt:hVd:n:", longopts, NULL))
           != -1) {
        switch (c) {
        case 's': o.socket = optarg; break;
        case 'j': o.json = true; break;
        case 't': o.timeout_s = parse_seconds("--timeout", optarg, 0.001,
                                              3600); break;
        case 'h': help(stdout); return 0;
        case 'V': printf("vpowerctl %s\n", PACKAGE_VERSION); return 0;
        case O_LAT:
            o.policy.latency_us = parse_u32_opt("--latency-us", optarg, 1,
                                                PROTO_MAX_LATENCY_US,
                                                "microseconds");
            o.set_opts = true;
            break;
        case O_FREQ:
            o.policy.min_freq_khz = parse_u32_opt("--min-freq-khz", optarg,
                                                  1, PROTO_MAX_FREQ_KHZ,
                                                  "kHz");
            o.set_opts = true;
            break;
        case O_NEVER: o.policy.never_offline = true; o.set_opts = true; break;
        case O_MAY: o.policy.never_offline = false; o.set_opts = true; break;
        case O_SMT: o.policy.share_smt = true; o.set_opts = true; break;
        case O_NOSMT: o.policy.share_smt = false; o.set_opts = true; break;
        case O_NAMES: o.names = true; break;
        case 'd': o.delay_s = parse_seconds("-d", optarg, 0.1, 86400);
                  o.top_opts = true; break;
        case 'n':
            o.iterations = (long) parse_u32_opt("-n", optarg, 1, 1000000000u,
                                                "iterations");
            o.top_opts = true;
            break;
        case ':':
            usage_error("option '%s' needs an argument", argv[optind - 1]);
        default:
            if (optopt) {
                usage_error("unknown option '-%c'", optopt);
            }
            usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) {
        help(stderr);
        return EXIT_USAGE;
    }
    verb = argv[optind++];
    nargs = argc - optind;
    for (size_t i = 0; i < ARRAY_SIZE(verbs); i++) {
        if (!strcmp(verbs[i].name, verb)) {
            v = &verbs[i];
        }
    }
    if (!v) {
        usage_error("unknown command '%s'", verb);
    }
    if (nargs < v->min_args || nargs > v->max_args) {
        usage_error("usage: vpowerctl %s", v->synopsis);
    }
    if (o.set_opts && strcmp(verb, "set-policy")) {
        usage_error("policy options only go with set-policy");
    }
    if (o.top_opts && strcmp(verb, "top")) {
        usage_error("-d and -n only go with top");
    }
    if (o.names && strcmp(verb, "list")) {
        usage_error("--names only goes with list");
    }
    if (!strcmp(verb, "help")) {
        help(stdout);
        return 0;
    }
    if (!strcmp(verb, "status")) {
        return cmd_simple(&o, PROTO_CMD_STATUS, NULL);
    }
    if (!strcmp(verb, "list")) {
        return cmd_simple(&o, PROTO_CMD_LIST, NULL);
    }
    if (!strcmp(verb, "get-policy")) {
        return cmd_simple(&o, PROTO_CMD_GET_POLICY, argv[optind]);
    }
    if (!strcmp(verb, "explain")) {
        return cmd_simple(&o, PROTO_CMD_EXPLAIN, argv[optind]);
    }
    if (!strcmp(verb, "set-policy")) {
        return cmd_set_policy(&o, argv[optind], argv[optind + 1]);
    }
    if (!strcmp(verb, "override")) {
        return cmd_override(&o, argv[optind]);
    }
    if (!strcmp(verb, "top")) {
        return cmd_top(&o);
    }
    return cmd_version(&o);
}
