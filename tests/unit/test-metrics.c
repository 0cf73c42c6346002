/* tests/unit/test-metrics.c -- Prometheus rendering
 * (manager/control/metrics.c).
 *
 * A structure checker parses the rendered text the way a strict scraper
 * does: HELP then TYPE once per family, a family's samples together and
 * named after it, counters ending in _total and gauges not, label names
 * valid, label values using only the three allowed escapes, no duplicate
 * series, every value a number, the whole text valid UTF-8.  It runs on a
 * realistic status/list pair, on hostile domain names and strings (quotes,
 * backslashes, newlines, bytes that are not UTF-8), on a down daemon and
 * on malformed JSON shapes (which must render fewer series, never crash
 * or emit garbage). */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "manager/control/metrics.h"

static const char status_json[] =
    "{\"version\":\"0.1.0\",\"uptime_seconds\":12.5,\"cpu_seconds\":0.75,"
    "\"driver\":\"libvirt\","
    "\"connected\":true,\"dry_run\":false,\"override\":\"off\","
    "\"period_seconds\":1.0,\"decisions_total\":42,\"power_watts\":12.5,"
    "\"energy_source\":\"model\",\"energy_joules\":150.25,"
    "\"baseline_energy_joules\":200.5,\"saved_joules\":50.25,"
    "\"unattributed_energy_joules\":7.5,"
    "\"ready_source\":\"libvirt\",\"active_cpus\":1,\"parked_cpus\":1,"
    "\"offline_cpus\":0,"
    "\"actions_total\":{\"online\":0,\"pin_vcpu\":3,\"pin_emulator\":3,"
    "\"set_freq\":1,\"idle_limit\":0,\"offline\":0},"
    "\"errors_total\":{\"libvirt\":0,\"sysfs\":2,\"guest\":0,\"config\":0,"
    "\"journal\":0},"
    "\"cpus\":[{\"cpu\":0,\"state\":\"active\",\"managed\":true,"
    "\"frequency_hertz\":2400000000,\"nonidle_seconds\":1.2,"
    "\"interrupts_total\":70044,"
    "\"idle\":[{\"state\":\"POLL\",\"seconds\":0.1,\"disabled\":false},"
    "{\"state\":\"haltpoll\",\"seconds\":9.5,\"disabled\":true}]},"
    "{\"cpu\":1,\"state\":\"parked\",\"managed\":true,"
    "\"nonidle_seconds\":0.2,"
    "\"idle\":[{\"state\":\"POLL\",\"seconds\":0.0,\"disabled\":false}]}],"
    "\"freq_domains\":[{\"domain\":0,\"cpus\":\"0-1\","
    "\"frequency_hertz\":2400000000,\"changes_total\":5}],"
    "\"housekeeping\":{\"enabled\":true,\"state\":\"confined\","
    "\"cpus\":\"0\",\"cpu_count\":1,\"cpu_pressure_percent\":2.5}}";

static const char list_json[] =
    "{\"vms\":[{\"name\":\"g1\",\"uuid\":\"11111111-2222-3333-4444-"
    "555555555555\",\"id\":3,\"policy\":\"balanced\",\"latency_us\":50,"
    "\"min_freq_khz\":800000,\"never_offline\":false,\"share_smt\":false,"
    "\"policy_source\":\"metadata\",\"managed\":true,\"reason\":\"packed\","
    "\"busy_seconds\":3.5,\"ready_seconds\":0.25,\"energy_joules\":100.5,"
    "\"load_pct\":3.2,\"ready_pct\":0.1,"
    "\"hints_total\":{\"latency_begin\":1,\"latency_end\":1,\"batch\":0,"
    "\"boost\":0,\"idle\":4,\"util\":0,\"rejected\":2},\"last_hint\":\"\","
    "\"vcpus\":[{\"vcpu\":0,\"cpu\":1,\"allowed\":\"0\",\"allowed_count\":1,"
    "\"busy_seconds\":2.0,\"ready_seconds\":0.125,\"load_pct\":2.0},"
    "{\"vcpu\":1,\"cpu\":-1,\"allowed\":\"0-1\",\"allowed_count\":2,"
    "\"busy_seconds\":1.5,\"ready_seconds\":0.125,\"load_pct\":1.2}]},"
    "{\"name\":\"evil\\\"dom\\\\ain\\nx\",\"uuid\":\"u2\",\"id\":4,"
    "\"policy\":\"performance\",\"managed\":false,\"reason\":\"unmanaged\","
    "\"busy_seconds\":1,\"ready_seconds\":0,\"energy_joules\":42.25,"
    "\"hints_total\":{},\"vcpus\":[{\"vcpu\":0,\"busy_seconds\":1,"
    "\"allowed_count\":1}]}]}";

/* ---- Structure checker ------------------------------------------------ */

#define MAX_FAMS 256
#define MAX_SERIES 4096

struct checker {
    char fams[MAX_FAMS][96];
    char types[MAX_FAMS][16];
    int n_fams;
    int cur;                     /* Index of the open family, -1 none. */
    bool type_pending;           /* HELP seen, TYPE must come next. */
    char *series[MAX_SERIES];
    int n_series;
};

static int
fam_index(struct checker *k, const char *name, size_t len)
{
    for (int i = 0; i < k->n_fams; i++) {
        if (strlen(k->fams[i]) == len && !strncmp(k->fams[i], name, len)) {
            return i;
        }
    }
    return -1;
}

static bool
is_name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'
           || c == ':' || (!first && c >= '0' && c <= '9');
}

static size_t
name_len(const char *s)
{
    size_t n = 0;

    while (is_name_char(s[n], n == 0)) {
        n++;
    }
    return n;
}

/* Fails the test with the offending line. */
#define BAD(LINE, WHY) \
    do { \
        print_error("bad exposition line (%s): %s\n", WHY, LINE); \
        fail(); \
    } while (0)

static void
check_sample(struct checker *k, const char *line)
{
    size_t n = name_len(line);
    const char *p = line + n;
    char labels[32][64];
    int nl = 0;
    char *end;

    if (!n) {
        BAD(line, "no metric name");
    }
    if (k->cur < 0 || k->type_pending || strlen(k->fams[k->cur]) != n
        || strncmp(k->fams[k->cur], line, n)) {
        BAD(line, "sample outside its family's HELP/TYPE block");
    }
    if (*p == '{') {
        p++;
        while (*p != '}') {
            size_t ln = name_len(p);

            if (!ln || ln >= 64 || p[ln] != '=' || p[ln + 1] != '"') {
                BAD(line, "bad label name");
            }
            for (int i = 0; i < nl; i++) {
                if (strlen(labels[i]) == ln && !strncmp(labels[i], p, ln)) {
                    BAD(line, "duplicate label");
                }
            }
            memcpy(labels[nl], p, ln);
            labels[nl++][ln] = '\0';
            p += ln + 2;
            while (*p != '"') {
                if (!*p) {
                    BAD(line, "unterminated label value");
                }
                if (*p == '\\') {
                    p++;
                    if (*p != '\\' && *p != '"' && *p != 'n') {
                        BAD(line, "bad escape in label value");
                    }
                }
                p++;
            }
            p++;
            if (*p == ',') {
                p++;
            } else if (*p != '}') {
                BAD(line, "expected , or }");
            }
        }
        p++;
    }
    /* Duplicate series: the text before the value must be unique. */
    for (int i = 0; i < k->n_series; i++) {
        if (strlen(k->series[i]) == (size_t) (p - line)
            && !strncmp(k->series[i], line, (size_t) (p - line))) {
            BAD(line, "duplicate series");
        }
    }
    assert_true(k->n_series < MAX_SERIES);
    k->series[k->n_series] = strndup(line, (size_t) (p - line));
    k->n_series++;
    if (*p != ' ') {
        BAD(line, "expected one space before the value");
    }
    p++;
    if (strcmp(p, "NaN") && strcmp(p, "+Inf") && strcmp(p, "-Inf")) {
        strtod(p, &end);
        if (end == p || *end) {
            BAD(line, "value is not a number");
        }
    }
}

/* True if 's' is valid UTF-8: no stray or missing continuation bytes,
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static bool
is_utf8(const char *str)
{
    const unsigned char *s = (const unsigned char *) str;

    while (*s) {
        unsigned cp, n;

        if (s[0] < 0x80) {
            s++;
            continue;
        } else if (s[0] >= 0xc2 && s[0] <= 0xdf) {
            n = 1;
            cp = s[0] & 0x1f;
        } else if ((s[0] & 0xf0) == 0xe0) {
            n = 2;
            cp = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
            n = 3;
            cp = s[0] & 0x07;
        } else {
            return false;
        }
        for (unsigned i = 1; i <= n; i++) {
            if ((s[i] & 0xc0) != 0x80) {
                return false;
            }
            cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (cp >= 0xd800 && cp <= 0xdfff)
            || (n == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
            return false;
        }
        s += n + 1;
    }
    return true;
}

/* Checks the whole text; returns the number of samples. */
static int
check_exposition(const char *text)
{
    struct checker *k = calloc(1, sizeof *k);
    char *copy = strdup(text), *save = NULL;
    int n;

    assert_non_null(k);
    k->cur = -1;
    assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
    if (!is_utf8(text)) {
        print_error("exposition is not valid UTF-8:\n%s", text);
        fail();
    }
    for (char *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "# HELP ", 7)) {
            const char *nm = line + 7;
            size_t len = name_len(nm);

            if (!len || nm[len] != ' ' || !nm[len + 1]) {
                BAD(line, "HELP without name or text");
            }
            if (k->type_pending) {
                BAD(line, "HELP not followed by TYPE");
            }
            if (fam_index(k, nm, len) >= 0) {
                BAD(line, "second HELP for a family (samples split)");
            }
            assert_true(k->n_fams < MAX_FAMS && len < 96);
            memcpy(k->fams[k->n_fams], nm, len);
            k->cur = k->n_fams++;
            k->type_pending = true;
        } else if (!strncmp(line, "# TYPE ", 7)) {
            const char *nm = line + 7;
            size_t len = name_len(nm);
            const char *type = nm + len + 1;
            bool total;

            if (!k->type_pending || k->cur < 0
                || strlen(k->fams[k->cur]) != len
                || strncmp(k->fams[k->cur], nm, len)) {
                BAD(line, "TYPE not right after its HELP");
            }
            k->type_pending = false;
            total = len > 6 && !strncmp(nm + len - 6, "_total", 6);
            if (!strcmp(type, "counter")) {
                if (!total) {
                    BAD(line, "counter without _total");
                }
            } else if (!strcmp(type, "gauge")) {
                if (total) {
                    BAD(line, "gauge ending in _total");
                }
            } else {
                BAD(line, "unexpected type");
            }
            snprintf(k->types[k->cur], sizeof k->types[k->cur], "%s", type);
        } else if (line[0] == '#') {
            BAD(line, "unexpected comment");
        } else {
            check_sample(k, line);
        }
    }
    n = k->n_series;
    for (int i = 0; i < k->n_series; i++) {
        free(k->series[i]);
    }
    free(k);
    free(copy);
    return n;
}

static bool
has_line(const char *text, const char *line)
{
    size_t n = strlen(line);

    for (const char *p = text; (p = strstr(p, line)); p++) {
        if ((p == text || p[-1] == '\n') && p[n] == '\n') {
            return true;
        }
    }
    return false;
}

static char *
render(const char *status, const char *list, bool up, size_t *len)
{
    struct json_object *s = status ? json_tokener_parse(status) : NULL;
    struct json_object *l = list ? json_tokener_parse(list) : NULL;
    struct metrics_self self = { "9.9.9", up, 0.0125, 7, 2 };
    char *text;

    if (status) {
        assert_non_null(s);
    }
    if (list) {
        assert_non_null(l);
    }
    text = metrics_render(s, l, &self, len);
    json_object_put(s);
    json_object_put(l);
    assert_non_null(text);
    return text;
}

/* ---- Tests ------------------------------------------------------------- */

static void
test_full_render(void **unused)
{
    size_t len;
    char *t = render(status_json, list_json, true, &len);
    static const char *const want[] = {
        "vpower_up 1",
        "vpower_scrape_duration_seconds 0.0125",
        "vpower_exporter_build_info{version=\"9.9.9\"} 1",
        "vpower_exporter_scrapes_total 7",
        "vpower_exporter_scrape_errors_total 2",
        "vpower_build_info{version=\"0.1.0\"} 1",
        "vpower_hypervisor_connected{driver=\"libvirt\"} 1",
        "vpower_dry_run 0",
        "vpower_override{mode=\"off\"} 1",
        "vpower_override{mode=\"performance\"} 0",
        "vpower_decisions_total 42",
        "vpower_daemon_cpu_seconds_total 0.75",
        "vpower_power_watts{source=\"model\"} 12.5",
        "vpower_energy_joules_total{source=\"model\"} 150.25",
        "vpower_baseline_energy_joules_total 200.5",
        "vpower_energy_saved_joules_total 50.25",
        "vpower_active_cpus 1",
        "vpower_actions_total{kind=\"pin_vcpu\"} 3",
        "vpower_errors_total{kind=\"sysfs\"} 2",
        "vpower_cpu_state{cpu=\"0\",state=\"active\"} 1",
        "vpower_cpu_state{cpu=\"0\",state=\"parked\"} 0",
        "vpower_cpu_state{cpu=\"1\",state=\"parked\"} 1",
        "vpower_cpu_frequency_hertz{cpu=\"0\"} 2400000000",
        "vpower_cpu_idle_seconds_total{cpu=\"0\",state=\"haltpoll\"} 9.5",
        "vpower_cpu_idle_state_disabled{cpu=\"0\",state=\"haltpoll\"} 1",
        "vpower_cpu_nonidle_seconds_total{cpu=\"1\"} 0.2",
        "vpower_cpu_interrupts_total{cpu=\"0\"} 70044",
        "vpower_housekeeping_state{state=\"confined\"} 1",
        "vpower_housekeeping_state{state=\"released\"} 0",
        "vpower_housekeeping_state{state=\"off\"} 0",
        "vpower_housekeeping_cpus 1",
        "vpower_housekeeping_cpu_pressure_ratio 0.025",
        "vpower_freq_domain_changes_total{freq_domain=\"0\",cpus=\"0-1\"} 5",
        "vpower_vms 2",
        "vpower_vm_energy_joules_total{domain=\"g1\",uuid=\"11111111-2222-"
        "3333-4444-555555555555\",policy=\"balanced\"} 100.5",
        "vpower_vm_energy_joules_total{domain=\"_host\",uuid=\"\","
        "policy=\"\"} 7.5",
        "vpower_vm_vcpu_busy_seconds_total{domain=\"g1\",uuid=\"11111111-"
        "2222-3333-4444-555555555555\",policy=\"balanced\"} 3.5",
        "vpower_vm_hints_total{domain=\"g1\",uuid=\"11111111-2222-3333-4444-"
        "555555555555\",policy=\"balanced\",kind=\"idle\"} 4",
        "vpower_vm_latency_bound_seconds{domain=\"g1\",uuid=\"11111111-2222-"
        "3333-4444-555555555555\",policy=\"balanced\"} 5e-05",
        "vpower_vm_min_frequency_hertz{domain=\"g1\",uuid=\"11111111-2222-"
        "3333-4444-555555555555\",policy=\"balanced\"} 800000000",
        "vpower_vcpu_allowed_cpus{domain=\"g1\",uuid=\"11111111-2222-3333-"
        "4444-555555555555\",vcpu=\"1\"} 2",
        "vpower_vcpu_cpu{domain=\"g1\",uuid=\"11111111-2222-3333-4444-"
        "555555555555\",vcpu=\"1\"} -1",
        /* Untrusted names: quote, backslash and newline escaped. */
        "vpower_vm_energy_joules_total{domain=\"evil\\\"dom\\\\ain\\nx\","
        "uuid=\"u2\",policy=\"performance\"} 42.25",
        "vpower_vm_managed{domain=\"evil\\\"dom\\\\ain\\nx\",uuid=\"u2\","
        "policy=\"performance\"} 0",
    };

    assert_int_equal(len, strlen(t));
    assert_true(check_exposition(t) > 60);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!has_line(t, want[i])) {
            print_error("missing line: %s\n--- output ---\n%s", want[i], t);
            fail();
        }
    }
    free(t);
}

/* With a model check, power and energy come as source="meter" and
 * source="model" over the same periods, with the error and the fit; the
 * plain source-labelled samples are not repeated. */
static void
test_model_check(void **unused)
{
    char *t = render("{\"power_watts\":40.5,\"energy_source\":\"meter\","
                     "\"energy_joules\":900,\"model_check\":{"
                     "\"meter\":\"psys\",\"meter_watts\":40.5,"
                     "\"model_watts\":30.25,\"meter_joules\":800,"
                     "\"model_joules\":600,\"error_ratio\":-0.25,"
                     "\"original_error_ratio\":-0.5,\"busy_scale\":1.5,"
                     "\"idle_scale\":2,\"correcting\":true,"
                     "\"warnings_total\":1}}", NULL, true, NULL);
    static const char *const want[] = {
        "vpower_power_watts{source=\"meter\"} 40.5",
        "vpower_power_watts{source=\"model\"} 30.25",
        "vpower_energy_joules_total{source=\"meter\"} 800",
        "vpower_energy_joules_total{source=\"model\"} 600",
        "vpower_model_error_ratio -0.25",
        "vpower_model_original_error_ratio -0.5",
        "vpower_model_scale{term=\"busy\"} 1.5",
        "vpower_model_scale{term=\"idle\"} 2",
        "vpower_model_correcting 1",
        "vpower_model_error_warnings_total 1",
    };

    (void) unused;
    assert_true(check_exposition(t) > 5);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!has_line(t, want[i])) {
            print_error("missing line: %s\n--- output ---\n%s", want[i], t);
            fail();
        }
    }
    assert_false(has_line(t, "vpower_energy_joules_total{source=\"meter\"} "
                          "900"));
    free(t);
}

/* Each VM's energy in its two parts (manager/attrib.h). */
static void
test_energy_parts(void **unused)
{
    char *t = render("{}", "{\"vms\":[{\"name\":\"a\",\"uuid\":\"u\","
                     "\"policy\":\"balanced\",\"energy_joules\":10,"
                     "\"energy_busy_joules\":6.5,"
                     "\"energy_static_joules\":3.5}]}", true, NULL);

    (void) unused;
    assert_true(check_exposition(t) > 3);
    assert_true(has_line(t, "vpower_vm_energy_part_joules_total{domain=\"a\","
                         "uuid=\"u\",policy=\"balanced\",part=\"busy\"} "
                         "6.5"));
    assert_true(has_line(t, "vpower_vm_energy_part_joules_total{domain=\"a\","
                         "uuid=\"u\",policy=\"balanced\",part=\"static\"} "
                         "3.5"));
    free(t);
}

static void
test_daemon_down(void **unused)
{
    char *t = render(NULL, NULL, false, NULL);

    check_exposition(t);
    assert_true(has_line(t, "vpower_up 0"));
    assert_true(has_line(t, "vpower_exporter_scrapes_total 7"));
    assert_null(strstr(t, "vpower_vm_"));
    assert_null(strstr(t, "vpower_decisions_total"));
    free(t);
}

/* Wrong types and missing fields give fewer series, never garbage. */
static void
test_malformed_shapes(void **unused)
{
    static const char *const statuses[] = {
        "{}",
        "[]",
        "42",
        "{\"cpus\":\"x\",\"freq_domains\":{},\"actions_total\":[1,2],"
        "\"decisions_total\":\"many\",\"override\":7,\"version\":1}",
        "{\"cpus\":[1,null,\"x\",{},{\"cpu\":\"0\"},{\"cpu\":3,"
        "\"idle\":[7,{\"seconds\":\"x\"}],\"state\":\"weird\\\"\"}],"
        "\"freq_domains\":[{},{\"domain\":1}],\"override\":\"sideways\","
        "\"errors_total\":{\"a\":\"b\",\"c\":1}}",
    };
    static const char *const lists[] = {
        "{}",
        "{\"vms\":{}}",
        "{\"vms\":[1,null,\"x\",{},{\"vcpus\":7},{\"vcpus\":[1,{}]},"
        "{\"name\":5,\"hints_total\":[1]}]}",
    };

    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
            char *t = render(statuses[i], lists[k], true, NULL);

            check_exposition(t);
            assert_true(has_line(t, "vpower_up 1"));
            assert_null(strstr(t, "vpower_decisions_total"));
            free(t);
        }
    }
    {
        char *t = render(statuses[4], NULL, true, NULL);

        assert_true(has_line(t, "vpower_cpu_state{cpu=\"3\","
                             "state=\"weird\\\"\"} 1"));
        assert_true(has_line(t, "vpower_override{mode=\"sideways\"} 1"));
        assert_true(has_line(t, "vpower_errors_total{kind=\"c\"} 1"));
        assert_null(strstr(t, "kind=\"a\""));
        free(t);
    }
}

static void
test_escape_label(void **unused)
{
    char out[64];
    size_t n;

    n = metrics_escape_label("a\"b\\c\nd", 7, out, sizeof out);
    assert_string_equal(out, "a\\\"b\\\\c\\nd");
    assert_int_equal(n, strlen(out));
    /* Invalid UTF-8 (lone continuation, overlong, truncated) -> U+FFFD;
     * valid multibyte passes through. */
    n = metrics_escape_label("\x80x\xc0\xafy\xe2\x82", 7, out, sizeof out);
    assert_string_equal(out, "\xef\xbf\xbdx\xef\xbf\xbd\xef\xbf\xbdy"
                        "\xef\xbf\xbd\xef\xbf\xbd");
    n = metrics_escape_label("caf\xc3\xa9 \xe2\x82\xac", 9, out, sizeof out);
    assert_string_equal(out, "caf\xc3\xa9 \xe2\x82\xac");
    /* Truncation is safe and reports the needed length. */
    n = metrics_escape_label("\"\"\"\"", 4, out, 4);
    assert_int_equal(n, 8);
    assert_int_equal(strlen(out), 3);
}

static struct json_object *
raw_string(const char *s)
{
    return json_object_new_string_len(s, (int) strlen(s));
}

/* Every string from the daemon that becomes a label value -- domain name,
 * UUID, policy, reason, driver, version, override mode, CPU and idle
 * state names, the keys of counter maps -- with a quote, a backslash, a
 * newline and bytes that are not UTF-8 (stray continuation, overlong,
 * truncated sequence, encoded surrogate, 0xff): the exposition still
 * parses and is UTF-8, each bad byte shown as U+FFFD. */
static void
test_hostile_bytes(void **unused)
{
    static const char evil[] =
        "q\"b\\n\nx\xff\x80o\xc0\xafs\xed\xa0\x80t\xe2\x82";
    static const char evil_out[] =
        "q\\\"b\\\\n\\nx\xef\xbf\xbd\xef\xbf\xbdo\xef\xbf\xbd\xef\xbf\xbds"
        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdt\xef\xbf\xbd\xef\xbf\xbd";
    struct json_object *s = json_object_new_object();
    struct json_object *l = json_object_new_object();
    struct json_object *vms = json_object_new_array();
    struct json_object *vm = json_object_new_object();
    struct json_object *cpus = json_object_new_array();
    struct json_object *cpu = json_object_new_object();
    struct json_object *idle = json_object_new_array();
    struct json_object *ist = json_object_new_object();
    struct json_object *errs = json_object_new_object();
    struct json_object *hints = json_object_new_object();
    struct metrics_self self = { evil, true, 0, 1, 0 };
    char want[512];
    char *t;

    json_object_object_add(s, "version", raw_string(evil));
    json_object_object_add(s, "driver", raw_string(evil));
    json_object_object_add(s, "connected", json_object_new_boolean(1));
    json_object_object_add(s, "override", raw_string(evil));
    json_object_object_add(s, "energy_source", raw_string(evil));
    json_object_object_add(s, "power_watts", json_object_new_double(3));
    json_object_object_add(errs, evil, json_object_new_int(2));
    json_object_object_add(s, "errors_total", errs);
    json_object_object_add(ist, "state", raw_string(evil));
    json_object_object_add(ist, "seconds", json_object_new_double(1));
    json_object_array_add(idle, ist);
    json_object_object_add(cpu, "cpu", json_object_new_int(0));
    json_object_object_add(cpu, "state", raw_string(evil));
    json_object_object_add(cpu, "idle", idle);
    json_object_array_add(cpus, cpu);
    json_object_object_add(s, "cpus", cpus);
    json_object_object_add(vm, "name", raw_string(evil));
    json_object_object_add(vm, "uuid", raw_string(evil));
    json_object_object_add(vm, "policy", raw_string(evil));
    json_object_object_add(vm, "policy_source", raw_string(evil));
    json_object_object_add(vm, "reason", raw_string(evil));
    json_object_object_add(vm, "energy_joules", json_object_new_double(5));
    json_object_object_add(hints, evil, json_object_new_int(1));
    json_object_object_add(vm, "hints_total", hints);
    json_object_array_add(vms, vm);
    json_object_object_add(l, "vms", vms);

    t = metrics_render(s, l, &self, NULL);
    assert_true(check_exposition(t) > 10);
    snprintf(want, sizeof want, "vpower_vm_energy_joules_total{domain=\"%s\","
             "uuid=\"%s\",policy=\"%s\"} 5", evil_out, evil_out, evil_out);
    if (!has_line(t, want)) {
        print_error("missing line: %s\n--- output ---\n%s", want, t);
        fail();
    }
    snprintf(want, sizeof want, "vpower_errors_total{kind=\"%s\"} 2",
             evil_out);
    assert_true(has_line(t, want));
    snprintf(want, sizeof want, "vpower_override{mode=\"%s\"} 1", evil_out);
    assert_true(has_line(t, want));
    free(t);
    json_object_put(s);
    json_object_put(l);
}

/* Many VMs: grouping holds across families and output is linear. */
static void
test_many_vms(void **unused)
{
    struct json_object *list = json_object_new_object();
    struct json_object *vms = json_object_new_array();
    struct metrics_self self = { "1", true, 0, 1, 0 };
    char *t;
    int n;

    for (int i = 0; i < 300; i++) {
        struct json_object *vm = json_object_new_object();
        struct json_object *vcpus = json_object_new_array();
        char name[32];

        snprintf(name, sizeof name, "vm-%d", i);
        json_object_object_add(vm, "name", json_object_new_string(name));
        json_object_object_add(vm, "uuid", json_object_new_string(name));
        json_object_object_add(vm, "policy",
                               json_object_new_string("balanced"));
        json_object_object_add(vm, "energy_joules",
                               json_object_new_double(i * 0.5));
        for (int k = 0; k < 4; k++) {
            struct json_object *vc = json_object_new_object();

            json_object_object_add(vc, "vcpu", json_object_new_int(k));
            json_object_object_add(vc, "busy_seconds",
                                   json_object_new_double(k));
            json_object_array_add(vcpus, vc);
        }
        json_object_object_add(vm, "vcpus", vcpus);
        json_object_array_add(vms, vm);
    }
    json_object_object_add(list, "vms", vms);
    t = metrics_render(NULL, list, &self, NULL);
    n = check_exposition(t);
    /* 5 self + vms + 300 * (info, vcpus, energy) + 1200 vCPU busy. */
    assert_int_equal(n, 5 + 1 + 300 * 3 + 1200);
    free(t);
    json_object_put(list);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_render),
        cmocka_unit_test(test_model_check),
        cmocka_unit_test(test_energy_parts),
        cmocka_unit_test(test_daemon_down),
        cmocka_unit_test(test_malformed_shapes),
        cmocka_unit_test(test_escape_label),
        cmocka_unit_test(test_hostile_bytes),
        cmocka_unit_test(test_many_vms),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
