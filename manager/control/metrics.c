/* manager/control/metrics.c -- JSON status/list -> Prometheus text
 * (metrics.h).
 *
 * One static table entry per metric family gives its name, type and help
 * text; the renderer writes a family's HELP and TYPE lines before its
 * first sample, and the code below emits each family's samples together
 * (one loop over VMs per family), which is what the text format requires.
 * Names follow the Prometheus conventions node_exporter follows: base
 * units in the name, _total on counters, "1 for the current" gauges for
 * enumerations.  Domain names and anything else from the daemon are
 * untrusted label values and always go through the escaper. */

#include <config.h>

#include "manager/control/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "manager/control/jsonget.h"
#include "manager/util.h"

struct fam {
    const char *name, *type, *help;
};

#define G "gauge"
#define C "counter"

/* Exporter and daemon. */
static const struct fam F_UP = { "vpower_up", G,
    "1 if vpowerd answered this scrape's queries on its control socket, "
    "else 0." };
static const struct fam F_SCRAPE_DUR = { "vpower_scrape_duration_seconds",
    G, "Time this scrape spent querying vpowerd and rendering." };
static const struct fam F_EXP_INFO = { "vpower_exporter_build_info", G,
    "Version of vpower-exporter; always 1." };
static const struct fam F_EXP_SCRAPES = { "vpower_exporter_scrapes_total",
    C, "Scrapes of /metrics served since the exporter started." };
static const struct fam F_EXP_ERRS = {
    "vpower_exporter_scrape_errors_total", C,
    "Scrapes in which vpowerd could not be queried." };
static const struct fam F_BUILD = { "vpower_build_info", G,
    "Version of the vpowerd answering; always 1." };
static const struct fam F_UPTIME = { "vpower_uptime_seconds", G,
    "Time since vpowerd started." };
static const struct fam F_DAEMON_CPU = { "vpower_daemon_cpu_seconds_total",
    C, "CPU time (user + system) vpowerd itself has used since it "
    "started: what the power manager costs." };
static const struct fam F_HV = { "vpower_hypervisor_connected", G,
    "1 if vpowerd is connected to its hypervisor driver." };
static const struct fam F_DRY = { "vpower_dry_run", G,
    "1 if vpowerd decides but does not actuate (dry run)." };
static const struct fam F_OVERRIDE = { "vpower_override", G,
    "Host-wide override mode; 1 for the current mode." };
static const struct fam F_PERIOD = { "vpower_period_seconds", G,
    "Current decision period (adaptive)." };
static const struct fam F_DECISIONS = { "vpower_decisions_total", C,
    "Policy decisions vpowerd has made." };
static const struct fam F_POWER = { "vpower_power_watts", G,
    "Host power; source is meter (measured, last period) or model "
    "(estimated; over the same period when there is a meter)." };
static const struct fam F_ENERGY = { "vpower_energy_joules_total", C,
    "Host energy since vpowerd started (with a meter: over the periods "
    "compared); source as for vpower_power_watts." };
static const struct fam F_MODEL_ERROR = { "vpower_model_error_ratio", G,
    "(model - meter) / meter of the last period, for the model vpowerd "
    "decides with; absent without a whole-host meter." };
static const struct fam F_MODEL_ORIG_ERROR = {
    "vpower_model_original_error_ratio", G,
    "The same for the model as loaded, before any online correction." };
static const struct fam F_MODEL_SCALE = { "vpower_model_scale", G,
    "Factor the meter fits to the model's busy or idle (static) power; "
    "applied while vpower_model_correcting is 1." };
static const struct fam F_MODEL_CORRECTING = { "vpower_model_correcting", G,
    "1 while vpowerd decides with the model rescaled to the meter." };
static const struct fam F_MODEL_WARNINGS = {
    "vpower_model_error_warnings_total", C,
    "Times the model stayed off the meter beyond model_error_pct for "
    "model_error_periods periods." };
static const struct fam F_BASELINE = {
    "vpower_baseline_energy_joules_total", C,
    "Model energy the same load would have used under the performance "
    "baseline (all cores awake at maximum frequency)." };
static const struct fam F_SAVED = { "vpower_energy_saved_joules_total", C,
    "Energy saved against the performance baseline." };
static const struct fam F_ACTIVE = { "vpower_active_cpus", G,
    "Host CPUs kept awake for guests." };
static const struct fam F_PARKED = { "vpower_parked_cpus", G,
    "Managed host CPUs parked (no vCPU may run there; deep idle)." };
static const struct fam F_OFFLINE = { "vpower_offline_cpus", G,
    "Host CPUs taken offline by vpowerd." };
static const struct fam F_ACTIONS = { "vpower_actions_total", C,
    "Actuations vpowerd has applied, by kind." };
static const struct fam F_ERRORS = { "vpower_errors_total", C,
    "Run-time errors vpowerd has counted, by kind." };
static const struct fam F_FOREIGN = { "vpower_foreign_knobs_total", C,
    "Host knobs (frequency limit, governor, idle state, online) another "
    "writer changed behind vpowerd's back; vpowerd leaves them alone." };
static const struct fam F_HK_STATE = { "vpower_housekeeping_state", G,
    "Where host work (cgroups, interrupts, workqueues) may run; 1 for the "
    "current state: off, pending, confined (the active set), released "
    "(override), error." };
static const struct fam F_HK_CPUS = { "vpower_housekeeping_cpus", G,
    "CPUs host work may use now (with housekeeping on)." };
static const struct fam F_HK_PRESSURE = {
    "vpower_housekeeping_cpu_pressure_ratio", G,
    "Host work's CPU pressure (cgroup v2 some avg10, v1 run-queue wait), "
    "as a fraction of time." };
static const struct fam F_VMS = { "vpower_vms", G,
    "Running domains vpowerd sees." };
static const struct fam F_HINT_APPLY = { "vpower_hint_apply_seconds",
    "histogram",
    "Time from reading a guest hint to the return of the last action of "
    "the plan it caused." };

/* Host CPUs and frequency domains. */
static const struct fam F_CPU_STATE = { "vpower_cpu_state", G,
    "State of a host CPU; 1 for the current state." };
static const struct fam F_CPU_FREQ = { "vpower_cpu_frequency_hertz", G,
    "Current frequency of a host CPU (absent without cpufreq)." };
static const struct fam F_CPU_IDLE = { "vpower_cpu_idle_seconds_total", C,
    "Residency of a host CPU in each cpuidle state." };
static const struct fam F_CPU_IDLE_DIS = {
    "vpower_cpu_idle_state_disabled", G,
    "1 if the cpuidle state is disabled on that CPU (idle limit)." };
static const struct fam F_CPU_NONIDLE = {
    "vpower_cpu_nonidle_seconds_total", C,
    "Time a host CPU spent outside idle states since vpowerd started." };
static const struct fam F_CPU_IRQS = { "vpower_cpu_interrupts_total", C,
    "Interrupts a host CPU took since boot (/proc/interrupts; present "
    "with housekeeping on)." };
static const struct fam F_FD_FREQ = { "vpower_freq_domain_frequency_hertz",
    G, "Current frequency of a frequency domain." };
static const struct fam F_FD_CHANGES = { "vpower_freq_domain_changes_total",
    C, "Frequency changes vpowerd made in a frequency domain." };

/* VMs. */
static const struct fam F_VM_INFO = { "vpower_vm_info", G,
    "Policy and placement of a domain; always 1." };
static const struct fam F_VM_MANAGED = { "vpower_vm_managed", G,
    "1 if vpowerd places the domain's vCPUs, 0 if pinned by the admin." };
static const struct fam F_VM_VCPUS = { "vpower_vm_vcpus", G,
    "Online vCPUs of a domain." };
static const struct fam F_VM_BUSY = { "vpower_vm_vcpu_busy_seconds_total",
    C, "Time the domain's vCPUs ran, summed over its vCPUs." };
static const struct fam F_VM_READY = { "vpower_vm_ready_seconds_total", C,
    "Time the domain's vCPUs waited runnable for a host CPU "
    "(steal as the guest sees it), summed over its vCPUs." };
static const struct fam F_VM_ENERGY = { "vpower_vm_energy_joules_total", C,
    "Host energy attributed to the domain; domain=\"_host\" carries what "
    "no domain is charged for, so the series sum to the host total." };
static const struct fam F_VM_ENERGY_PART = {
    "vpower_vm_energy_part_joules_total", C,
    "The domain's attributed energy in two parts: part=\"busy\", its own "
    "work at the operating points it ran at; part=\"static\", its share "
    "of keeping awake the cores it may use (idle, uncore, platform)." };
static const struct fam F_VM_LOAD = { "vpower_vm_load_ratio", G,
    "Recent load of the domain's vCPUs (vpowerctl's load_pct / 100)." };
static const struct fam F_VM_READY_R = { "vpower_vm_ready_ratio", G,
    "Recent ready time of the domain's vCPUs as a fraction of time." };
static const struct fam F_VM_HINTS = { "vpower_vm_hints_total", C,
    "Guest hints received from the domain's agent, by kind." };
static const struct fam F_VM_LAT = { "vpower_vm_latency_bound_seconds", G,
    "Wake-up latency bound of the domain's policy (0 = none)." };
static const struct fam F_VM_MINF = { "vpower_vm_min_frequency_hertz", G,
    "Frequency floor of the domain's policy (0 = none)." };

/* vCPUs. */
static const struct fam F_VCPU_BUSY = { "vpower_vcpu_busy_seconds_total",
    C, "Time a vCPU ran." };
static const struct fam F_VCPU_READY = { "vpower_vcpu_ready_seconds_total",
    C, "Time a vCPU waited runnable for a host CPU." };
static const struct fam F_VCPU_ALLOWED = { "vpower_vcpu_allowed_cpus", G,
    "Number of host CPUs the vCPU may run on (its pinning)." };
static const struct fam F_VCPU_CPU = { "vpower_vcpu_cpu", G,
    "Host CPU the vCPU last ran on (-1 unknown)." };
static const struct fam F_VCPU_LOAD = { "vpower_vcpu_load_ratio", G,
    "Recent load of the vCPU (vpowerctl's load_pct / 100)." };

/* ---- Output buffer -------------------------------------------------- */

struct rctx {
    char *p;
    size_t len, cap;
    const struct fam *cur;
};

static void
put(struct rctx *r, const char *s, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        while (r->len + n + 1 > r->cap) {
            r->cap = r->cap ? r->cap * 2 : 4096;
        }
        r->p = xrealloc(r->p, r->cap);
    }
    memcpy(r->p + r->len, s, n);
    r->len += n;
    r->p[r->len] = '\0';
}

static void
puts_(struct rctx *r, const char *s)
{
    put(r, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at 's' (max 'n' bytes), 0 if none. */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
    size_t len;
    uint32_t cp;

    if (s[0] < 0x80) {
        return 1;
    } else if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        cp = s[0] & 0x1f;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        cp = s[0] & 0x0f;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n) {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and beyond U+10FFFF are invalid. */
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800)
        || (len == 4 && cp < 0x10000) || cp > 0x10ffff
        || (cp >= 0xd800 && cp <= 0xdfff)) {
        return 0;
    }
    return len;
}

size_t
metrics_escape_label(const char *in, size_t inlen, char *out, size_t outlen)
{
    const unsigned char *s = (const unsigned char *) in;
    size_t need = 0, i = 0;

#define EMIT(STR, N) \
    do { \
        for (size_t k_ = 0; k_ < (N); k_++) { \
            if (need + 1 < outlen) { \
                out[need] = (STR)[k_]; \
            } \
            need++; \
        } \
    } while (0)

    while (i < inlen) {
        size_t n = utf8_len(s + i, inlen - i);

        if (!n) {
            EMIT("\xef\xbf\xbd", 3);
            i++;
        } else if (s[i] == '\\') {
            EMIT("\\\\", 2);
            i++;
        } else if (s[i] == '"') {
            EMIT("\\\"", 2);
            i++;
        } else if (s[i] == '\n') {
            EMIT("\\n", 2);
            i++;
        } else {
            EMIT(in + i, n);
            i += n;
        }
    }
#undef EMIT
    if (outlen) {
        out[need < outlen ? need : outlen - 1] = '\0';
    }
    return need;
}

static void
put_label_value(struct rctx *r, const char *v)
{
    size_t n = strlen(v);
    size_t need = metrics_escape_label(v, n, NULL, 0);
    char *tmp = xmalloc(need + 1);

    metrics_escape_label(v, n, tmp, need + 1);
    put(r, tmp, need);
    free(tmp);
}

static void
put_value(struct rctx *r, double v)
{
    char buf[64];

    if (isnan(v)) {
        snprintf(buf, sizeof buf, "NaN");
    } else if (isinf(v)) {
        snprintf(buf, sizeof buf, v > 0 ? "+Inf" : "-Inf");
    } else {
        snprintf(buf, sizeof buf, "%.15g", v);
        if (strtod(buf, NULL) != v) {
            snprintf(buf, sizeof buf, "%.17g", v);
        }
    }
    puts_(r, buf);
}

/* One sample of 'f'.  'labels' is NULL or a NULL-terminated list of
 * name, value pairs (values are escaped here). */
/* HELP and TYPE of 'f' before its first sample. */
static void
header(struct rctx *r, const struct fam *f)
{
    if (r->cur != f) {
        puts_(r, "# HELP ");
        puts_(r, f->name);
        puts_(r, " ");
        puts_(r, f->help);
        puts_(r, "\n# TYPE ");
        puts_(r, f->name);
        puts_(r, " ");
        puts_(r, f->type);
        puts_(r, "\n");
        r->cur = f;
    }
}

static void
sample(struct rctx *r, const struct fam *f, const char *const *labels,
       double v)
{
    header(r, f);
    puts_(r, f->name);
    if (labels && labels[0]) {
        puts_(r, "{");
        for (size_t i = 0; labels[i]; i += 2) {
            if (i) {
                puts_(r, ",");
            }
            puts_(r, labels[i]);
            puts_(r, "=\"");
            put_label_value(r, labels[i + 1] ? labels[i + 1] : "");
            puts_(r, "\"");
        }
        puts_(r, "}");
    }
    puts_(r, " ");
    put_value(r, v);
    puts_(r, "\n");
}

/* A number (or boolean) field of 'o' as sample of 'f', times 'scale'. */
static void
num_sample(struct rctx *r, const struct fam *f, struct json_object *o,
           const char *key, const char *const *labels, double scale)
{
    double v;

    if (jsonget_num(o, key, &v)) {
        /* Divide by exact powers of ten rather than multiply by inexact
         * fractions: 50 us is 5e-05 s, not 4.9999999999999996e-05. */
        sample(r, f, labels, scale >= 1 ? v * scale
                                        : v / round(1 / scale));
    }
}

/* Each number in the object o[key] as a sample labelled label=<member>. */
static void
map_family(struct rctx *r, const struct fam *f, struct json_object *o,
           const char *key, const char *label, const char *const *extra)
{
    struct json_object *m = jsonget_field(o, key);
    const char *labels[16];
    size_t n = 0;

    if (!m || !json_object_is_type(m, json_type_object)) {
        return;
    }
    for (; extra && extra[n] && n < 12; n += 2) {
        labels[n] = extra[n];
        labels[n + 1] = extra[n + 1];
    }
    labels[n] = label;
    labels[n + 2] = NULL;
    json_object_object_foreach(m, k, v) {
        if (json_object_is_type(v, json_type_int)
            || json_object_is_type(v, json_type_double)) {
            labels[n + 1] = k;
            sample(r, f, labels, json_object_get_double(v));
        }
    }
}

/* The histogram o[key] (manager/control/histo.h's histo_to_json(): "le",
 * "cumulative", "count", "sum") as family 'f'.  Skipped whole unless
 * it is consistent: bounds ascending, counts not decreasing and at
 * most "count", so a scrape never shows a histogram Prometheus would
 * reject. */
static void
histogram_family(struct rctx *r, const struct fam *f, struct json_object *o,
                 const char *key)
{
    struct json_object *h = jsonget_field(o, key);
    struct json_object *le = jsonget_arr(h, "le");
    struct json_object *cum = jsonget_arr(h, "cumulative");
    double count, sum, prev_le = -INFINITY, prev_c = 0;
    size_t n;

    if (!le || !cum || !jsonget_num(h, "count", &count)
        || !jsonget_num(h, "sum", &sum)
        || (n = json_object_array_length(le)) != json_object_array_length(cum)
        || n > 64) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        struct json_object *b = json_object_array_get_idx(le, i);
        struct json_object *c = json_object_array_get_idx(cum, i);
        double bv = json_object_get_double(b), cv = json_object_get_double(c);

        if (!json_object_is_type(b, json_type_double)
            && !json_object_is_type(b, json_type_int)) {
            return;
        }
        if (!isfinite(bv) || bv <= prev_le || !isfinite(cv) || cv < prev_c
            || cv > count) {
            return;
        }
        prev_le = bv;
        prev_c = cv;
    }
    header(r, f);
    for (size_t i = 0; i <= n; i++) {
        puts_(r, f->name);
        puts_(r, "_bucket{le=\"");
        if (i < n) {
            put_value(r, json_object_get_double(
                             json_object_array_get_idx(le, i)));
        } else {
            puts_(r, "+Inf");
        }
        puts_(r, "\"} ");
        put_value(r, i < n ? json_object_get_double(
                                 json_object_array_get_idx(cum, i))
                           : count);
        puts_(r, "\n");
    }
    puts_(r, f->name);
    puts_(r, "_sum ");
    put_value(r, sum);
    puts_(r, "\n");
    puts_(r, f->name);
    puts_(r, "_count ");
    put_value(r, count);
    puts_(r, "\n");
}

/* ---- Status ----------------------------------------------------------- */

/* Writes the "cpu" member of 'c' into 'id'; false if it has none. */
static bool
cpu_label(struct json_object *c, char *id, size_t len)
{
    double v;

    if (!jsonget_num(c, "cpu", &v)) {
        return false;
    }
    snprintf(id, len, "%.0f", v);
    return true;
}

/* The per-CPU number families after vpower_cpu_state, in output order:
 * field 'key' of each CPU, or of each of its idle states if 'per_idle'. */
static const struct cpu_fam {
    const struct fam *f;
    const char *key;
    bool per_idle;
} cpu_fams[] = {
    { &F_CPU_FREQ, "frequency_hertz", false },
    { &F_CPU_IDLE, "seconds", true },
    { &F_CPU_IDLE_DIS, "disabled", true },
    { &F_CPU_NONIDLE, "nonidle_seconds", false },
    { &F_CPU_IRQS, "interrupts_total", false },
};

/* vpower_cpu_state of CPU 'c' (labelled 'id'): 1 for its state, 0 for
 * the other known ones; an unknown state is shown as it came. */
static void
cpu_state(struct rctx *r, struct json_object *c, const char *id)
{
    static const char *const states[] = {
        "active", "parked", "offline", "unmanaged"
    };
    const char *cur = jsonget_str(c, "state", "");
    bool known = false;

    for (size_t k = 0; k < ARRAY_SIZE(states); k++) {
        const char *l[] = { "cpu", id, "state", states[k], NULL };

        known |= !strcmp(cur, states[k]);
        sample(r, &F_CPU_STATE, l, !strcmp(cur, states[k]));
    }
    if (!known && *cur) {
        const char *l[] = { "cpu", id, "state", cur, NULL };

        sample(r, &F_CPU_STATE, l, 1);
    }
}

/* Family 'cf' for CPU 'c' (labelled 'id'). */
static void
cpu_family(struct rctx *r, const struct cpu_fam *cf, struct json_object *c,
           const char *id)
{
    struct json_object *idle = jsonget_arr(c, "idle");

    if (!cf->per_idle) {
        const char *l[] = { "cpu", id, NULL };

        num_sample(r, cf->f, c, cf->key, l, 1);
        return;
    }
    for (size_t k = 0; k < jsonget_len(idle); k++) {
        struct json_object *st = json_object_array_get_idx(idle, k);
        const char *l[] = { "cpu", id, "state",
                            jsonget_str(st, "state", "?"), NULL };

        num_sample(r, cf->f, st, cf->key, l, 1);
    }
}

static void
render_cpus(struct rctx *r, struct json_object *s)
{
    struct json_object *cpus = jsonget_arr(s, "cpus");
    struct json_object *fds = jsonget_arr(s, "freq_domains");
    size_t n = jsonget_len(cpus), nfd = jsonget_len(fds);
    char id[32];

    /* Family by family, so each family's samples stay together. */
    for (size_t f = 0; f <= ARRAY_SIZE(cpu_fams); f++) {
        for (size_t i = 0; i < n; i++) {
            struct json_object *c = json_object_array_get_idx(cpus, i);

            if (!c || !cpu_label(c, id, sizeof id)) {
                continue;
            }
            if (f == 0) {
                cpu_state(r, c, id);
            } else {
                cpu_family(r, &cpu_fams[f - 1], c, id);
            }
        }
    }

    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < nfd; i++) {
            struct json_object *d = json_object_array_get_idx(fds, i);
            const char *l[] = { "freq_domain", id, "cpus",
                                jsonget_str(d, "cpus", ""), NULL };
            double v;

            if (!jsonget_num(d, "domain", &v)) {
                continue;
            }
            snprintf(id, sizeof id, "%.0f", v);
            if (pass == 0) {
                num_sample(r, &F_FD_FREQ, d, "frequency_hertz", l, 1);
            } else {
                num_sample(r, &F_FD_CHANGES, d, "changes_total", l, 1);
            }
        }
    }
}

/* vpower_housekeeping_*: the state (1 for the current one, like
 * vpower_override), the number of CPUs host work may use, its pressure. */
static void
render_housekeeping(struct rctx *r, struct json_object *s)
{
    static const char *const states[] = {
        "off", "pending", "confined", "released", "error"
    };
    struct json_object *h = jsonget_field(s, "housekeeping");
    const char *cur = jsonget_str(h, "state", NULL);
    double p;

    if (!cur) {
        return;
    }
    for (size_t k = 0; k < ARRAY_SIZE(states); k++) {
        const char *l[] = { "state", states[k], NULL };

        sample(r, &F_HK_STATE, l, !strcmp(cur, states[k]));
    }
    num_sample(r, &F_HK_CPUS, h, "cpu_count", NULL, 1);
    if (jsonget_num(h, "cpu_pressure_percent", &p)) {
        sample(r, &F_HK_PRESSURE, NULL, p / 100.0);
    }
}

/* Host power and energy: the meter's and the model's side by side over
 * the same periods when the status has a model check, else the one
 * source the status names ('lsrc'); then the model's error and fit. */
static void
render_power(struct rctx *r, struct json_object *s, const char *const *lsrc)
{
    struct json_object *mc = jsonget_field(s, "model_check");
    const char *meter[] = { "source", "meter", NULL };
    const char *model[] = { "source", "model", NULL };
    const char *busy[] = { "term", "busy", NULL };
    const char *idle[] = { "term", "idle", NULL };

    if (!mc || !json_object_is_type(mc, json_type_object)) {
        num_sample(r, &F_POWER, s, "power_watts", lsrc, 1);
        num_sample(r, &F_ENERGY, s, "energy_joules", lsrc, 1);
        return;
    }
    num_sample(r, &F_POWER, mc, "meter_watts", meter, 1);
    num_sample(r, &F_POWER, mc, "model_watts", model, 1);
    num_sample(r, &F_ENERGY, mc, "meter_joules", meter, 1);
    num_sample(r, &F_ENERGY, mc, "model_joules", model, 1);
    num_sample(r, &F_MODEL_ERROR, mc, "error_ratio", NULL, 1);
    num_sample(r, &F_MODEL_ORIG_ERROR, mc, "original_error_ratio", NULL, 1);
    num_sample(r, &F_MODEL_SCALE, mc, "busy_scale", busy, 1);
    num_sample(r, &F_MODEL_SCALE, mc, "idle_scale", idle, 1);
    num_sample(r, &F_MODEL_CORRECTING, mc, "correcting", NULL, 1);
    num_sample(r, &F_MODEL_WARNINGS, mc, "warnings_total", NULL, 1);
}

static void
render_status(struct rctx *r, struct json_object *s)
{
    static const char *const modes[] = { "off", "performance" };
    const char *src = jsonget_str(s, "energy_source", "model");
    const char *lsrc[] = { "source", src, NULL };
    const char *ov = jsonget_str(s, "override", NULL);
    const char *ver = jsonget_str(s, "version", NULL);

    if (ver) {
        const char *l[] = { "version", ver, NULL };

        sample(r, &F_BUILD, l, 1);
    }
    num_sample(r, &F_UPTIME, s, "uptime_seconds", NULL, 1);
    num_sample(r, &F_DAEMON_CPU, s, "cpu_seconds", NULL, 1);
    {
        const char *l[] = { "driver", jsonget_str(s, "driver", ""), NULL };

        num_sample(r, &F_HV, s, "connected", l, 1);
    }
    num_sample(r, &F_DRY, s, "dry_run", NULL, 1);
    if (ov) {
        bool known = false;

        for (size_t k = 0; k < ARRAY_SIZE(modes); k++) {
            const char *l[] = { "mode", modes[k], NULL };

            known |= !strcmp(ov, modes[k]);
            sample(r, &F_OVERRIDE, l, !strcmp(ov, modes[k]));
        }
        if (!known) {
            const char *l[] = { "mode", ov, NULL };

            sample(r, &F_OVERRIDE, l, 1);
        }
    }
    num_sample(r, &F_PERIOD, s, "period_seconds", NULL, 1);
    num_sample(r, &F_DECISIONS, s, "decisions_total", NULL, 1);
    render_power(r, s, lsrc);
    num_sample(r, &F_BASELINE, s, "baseline_energy_joules", NULL, 1);
    num_sample(r, &F_SAVED, s, "saved_joules", NULL, 1);
    num_sample(r, &F_ACTIVE, s, "active_cpus", NULL, 1);
    num_sample(r, &F_PARKED, s, "parked_cpus", NULL, 1);
    num_sample(r, &F_OFFLINE, s, "offline_cpus", NULL, 1);
    map_family(r, &F_ACTIONS, s, "actions_total", "kind", NULL);
    map_family(r, &F_ERRORS, s, "errors_total", "kind", NULL);
    num_sample(r, &F_FOREIGN, s, "foreign_knobs_total", NULL, 1);
    histogram_family(r, &F_HINT_APPLY, s, "hint_apply_seconds");
    render_housekeeping(r, s);
    render_cpus(r, s);
}

/* ---- VMs and vCPUs ------------------------------------------------------ */

/* A VM entry must name itself: entries without a string name and uuid
 * are skipped (they would all render as the same empty-labelled series). */
static bool
vm_ok(struct json_object *vm)
{
    return jsonget_str(vm, "name", NULL) && jsonget_str(vm, "uuid", NULL);
}

#define FOR_VM(VM, VMS) \
    for (size_t i_ = 0; i_ < json_object_array_length(VMS); i_++) \
        for (struct json_object *VM = json_object_array_get_idx(VMS, i_); \
             VM && vm_ok(VM); VM = NULL)

static void
vm_labels(struct json_object *vm, const char **l)
{
    l[0] = "domain";
    l[1] = jsonget_str(vm, "name", "");
    l[2] = "uuid";
    l[3] = jsonget_str(vm, "uuid", "");
    l[4] = "policy";
    l[5] = jsonget_str(vm, "policy", "");
    l[6] = NULL;
}

/* Number field 'key' of every VM as a sample of 'f', times 'scale'. */
static void
vm_family(struct rctx *r, struct json_object *vms, const struct fam *f,
          const char *key, double scale)
{
    FOR_VM(vm, vms) {
        const char *l[8];

        vm_labels(vm, l);
        num_sample(r, f, vm, key, l, scale);
    }
}

/* Number field 'key' of every vCPU of every VM. */
static void
vcpu_family(struct rctx *r, struct json_object *vms, const struct fam *f,
            const char *key, double scale)
{
    FOR_VM(vm, vms) {
        struct json_object *vcpus = jsonget_arr(vm, "vcpus");

        for (size_t k = 0; vcpus && k < json_object_array_length(vcpus);
             k++) {
            struct json_object *vc = json_object_array_get_idx(vcpus, k);
            char idx[32];
            const char *l[] = { "domain", jsonget_str(vm, "name", ""),
                                "uuid", jsonget_str(vm, "uuid", ""),
                                "vcpu", idx, NULL };
            double v;

            if (!jsonget_num(vc, "vcpu", &v)) {
                continue;
            }
            snprintf(idx, sizeof idx, "%.0f", v);
            num_sample(r, f, vc, key, l, scale);
        }
    }
}

static void
render_vms(struct rctx *r, struct json_object *list, struct json_object *s)
{
    struct json_object *vms = jsonget_arr(list, "vms");
    double host_j;

    if (vms) {
        size_t n = 0;

        FOR_VM(vm, vms) {
            n++;
        }
        sample(r, &F_VMS, NULL, (double) n);
        FOR_VM(vm, vms) {
            const char *l[] = {
                "domain", jsonget_str(vm, "name", ""),
                "uuid", jsonget_str(vm, "uuid", ""),
                "policy", jsonget_str(vm, "policy", ""),
                "policy_source", jsonget_str(vm, "policy_source", ""),
                "reason", jsonget_str(vm, "reason", ""), NULL
            };

            sample(r, &F_VM_INFO, l, 1);
        }
        vm_family(r, vms, &F_VM_MANAGED, "managed", 1);
        FOR_VM(vm, vms) {
            struct json_object *vcpus = jsonget_arr(vm, "vcpus");
            const char *l[8];

            vm_labels(vm, l);
            if (vcpus) {
                sample(r, &F_VM_VCPUS, l,
                       (double) json_object_array_length(vcpus));
            }
        }
        vm_family(r, vms, &F_VM_BUSY, "busy_seconds", 1);
        vm_family(r, vms, &F_VM_READY, "ready_seconds", 1);
        vm_family(r, vms, &F_VM_ENERGY, "energy_joules", 1);
    }
    /* The pseudo-VM keeps sum(vm energy) == host energy (attrib.h). */
    if (jsonget_num(s, "unattributed_energy_joules", &host_j)) {
        const char *l[] = { "domain", METRICS_HOST_PSEUDO_VM, "uuid", "",
                            "policy", "", NULL };

        sample(r, &F_VM_ENERGY, l, host_j);
    }
    if (!vms) {
        return;
    }
    FOR_VM(vm, vms) {
        const char *l[10];

        vm_labels(vm, l);
        l[6] = "part";
        l[7] = "busy";
        l[8] = NULL;
        num_sample(r, &F_VM_ENERGY_PART, vm, "energy_busy_joules", l, 1);
        l[7] = "static";
        num_sample(r, &F_VM_ENERGY_PART, vm, "energy_static_joules", l, 1);
    }
    vm_family(r, vms, &F_VM_LOAD, "load_pct", 0.01);
    vm_family(r, vms, &F_VM_READY_R, "ready_pct", 0.01);
    FOR_VM(vm, vms) {
        const char *l[8];

        vm_labels(vm, l);
        map_family(r, &F_VM_HINTS, vm, "hints_total", "kind", l);
    }
    vm_family(r, vms, &F_VM_LAT, "latency_us", 1e-6);
    vm_family(r, vms, &F_VM_MINF, "min_freq_khz", 1e3);
    vcpu_family(r, vms, &F_VCPU_BUSY, "busy_seconds", 1);
    vcpu_family(r, vms, &F_VCPU_READY, "ready_seconds", 1);
    vcpu_family(r, vms, &F_VCPU_ALLOWED, "allowed_count", 1);
    vcpu_family(r, vms, &F_VCPU_CPU, "cpu", 1);
    vcpu_family(r, vms, &F_VCPU_LOAD, "load_pct", 0.01);
}

char *
metrics_render(struct json_object *status, struct json_object *list,
               const struct metrics_self *self, size_t *len)
{
    struct rctx r = { NULL, 0, 0, NULL };
    const char *lver[] = { "version", self->version ? self->version : "",
                           NULL };

    sample(&r, &F_UP, NULL, self->up ? 1 : 0);
    sample(&r, &F_SCRAPE_DUR, NULL, self->scrape_duration_seconds);
    sample(&r, &F_EXP_INFO, lver, 1);
    sample(&r, &F_EXP_SCRAPES, NULL, (double) self->scrapes_total);
    sample(&r, &F_EXP_ERRS, NULL, (double) self->scrape_errors_total);
    if (status) {
        render_status(&r, status);
    }
    if (list || status) {
        render_vms(&r, list, status);
    }
    if (!r.p) {
        puts_(&r, "");
    }
    if (len) {
        *len = r.len;
    }
    return r.p;
}
