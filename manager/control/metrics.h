/* manager/control/metrics.h -- Renders vpowerd's status and list replies as
 * Prometheus text exposition format 0.0.4.
 *
 * vpower-exporter fetches the control socket's "status" and "list"
 * results (the same JSON objects `vpowerctl --json` prints; schema in
 * docs/control-protocol.md) and hands them here.  Rendering is pure --
 * JSON in, text out, no I/O -- so unit tests feed crafted objects and
 * check the structure (HELP/TYPE once per family, escaped label values,
 * counters ending in _total).  Every metric is listed in docs/metrics.md.
 * Fields missing from the JSON are skipped, never rendered as 0, so a
 * daemon older or newer than the exporter gives fewer series rather than
 * wrong ones. */

#ifndef VPOWER_METRICS_H
#define VPOWER_METRICS_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Label value of the pseudo-VM that carries energy no VM is charged for
 * (idle host, cores no VM may use); see manager/attrib.h. */
#define METRICS_HOST_PSEUDO_VM "_host"

/* The exporter's own numbers for this scrape. */
struct metrics_self {
    const char *version;               /* Exporter's version. */
    bool up;                           /* vpowerd answered both requests. */
    double scrape_duration_seconds;    /* Query to vpowerd (and render). */
    uint64_t scrapes_total;            /* Including this one. */
    uint64_t scrape_errors_total;      /* Scrapes where up was false. */
};

/* Renders the exposition text.  'status' and 'list' are the "result"
 * objects of the two replies; either may be NULL (daemon down, or that
 * request failed): then only what is available is rendered, and always
 * vpower_up and the exporter's self-metrics.  Returns a malloc'ed
 * NUL-terminated string (caller frees) and its length in '*len' (may be
 * NULL).  Never fails (aborts on out-of-memory, as xmalloc does). */
char *metrics_render(struct json_object *status, struct json_object *list,
                     const struct metrics_self *self, size_t *len);

/* Appends 'in' to 'out' (room for 'outlen' bytes, always NUL-terminated)
 * escaped as a label value: backslash, double quote and newline are
 * escaped, invalid UTF-8 bytes become U+FFFD.  Returns the length it
 * needed (like snprintf).  Exposed for unit tests. */
size_t metrics_escape_label(const char *in, size_t inlen, char *out,
                            size_t outlen);

#endif /* manager/control/metrics.h */
