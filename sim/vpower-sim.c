/* sim/vpower-sim.c -- Command-line front end of the simulator.
 *
 * Parses options, loads the energy model (pol_model_parse on the file's
 * text) and the traces (through the reader table), runs sim_run() and
 * renders the result.  Usage errors exit 2, input errors 1. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/conf.h"
#include "policy/model.h"
#include "policy/policy.h"
#include "sim/equal.h"
#include "sim/mix.h"
#include "sim/replay.h"
#include "sim/report.h"
#include "sim/simrun.h"
#include "sim/trace.h"
#include "policy/num.h"

static void
usage(FILE *f)
{
    fprintf(f,
"usage: vpower-sim --model FILE --trace DIR [options]\n"
"  --model FILE          energy model (config/models/*.model)\n"
"  --true-model FILE     the hosts really follow this model (same machine,\n"
"                        other powers): energy is charged with it and a\n"
"                        meter reads it; policies still decide with --model\n"
"  --model-correction    vpower corrects --model online against that meter\n"
"  --trace DIR           trace directory\n"
"  --trace-format NAME   planetlab | bitbrains | record | auto (auto)\n"
"                        record: FILE is a vpowerd --record file, replayed\n"
"                        with its own model and config (--model unused)\n"
"  --verify-plans        record: exit 1 unless every plan is identical\n"
"  --vms N               first N VMs in file-name byte order (default all)\n"
"  --hours X             replay only the first X hours (default: 24)\n"
"  --threads N           simulate hosts on N threads (default: online\n"
"                        CPUs; the results do not depend on it)\n"
"  --hosts H             identical hosts; VM i goes to host i mod H (1)\n"
"  --seed S              seed of every random choice (default 1)\n"
"  --burst-on S          mean busy phase of the burst model, s (2)\n"
"  --policy NAME         vpower | performance | schedutil | powersave |\n"
"                        dpdk-vmpm | nova-offline | hwp-balperf |\n"
"                        hwp-balpower | tuned-vhost | sched-noturbo\n"
"                        (default vpower)\n"
"  --compare             run all of them and the lower bound; implies\n"
"                        --signals\n"
"  --signals             also run vpower with each input signal off\n"
"                        (halt stats; thermal cap signal with --thermal-cap)\n"
"                        and print the signal effects table\n"
"  --halt-poll-ns N      KVM halt-poll window of the hosts, ns (200000;\n"
"                        0 = polling disabled); vpower sees halt stats,\n"
"                        the baselines plain CPU time (docs/simulator.md)\n"
"  --json                JSON instead of the text table\n"
"  --plot FILE           also write a gnuplot script (FILE.svg output)\n"
"  --repeat K            repeat the trace's VMs K times (seeded time\n"
"                        offsets and vCPU spreads; see docs/simulator.md)\n"
"  --policy-mix SPEC     per-VM policies, e.g. performance=10%%,powersave=30%%\n"
"                        (seeded exact counts; the rest balanced)\n"
"  --policy-file FILE    lines 'VM POLICY [LATENCY_US]' (VM = trace file)\n"
"  --no-share-smt        every VM may not share SMT siblings with another\n"
"                        (vpower gives each whole cores; the baselines\n"
"                        ignore it); also runs without and prints both\n"
"  --sched-core          the hosts run libvirt core scheduling: vpower\n"
"                        counts no SMT gain between VMs\n"
"  --turbo WHEN          vpower runs with vpowerd.conf's 'turbo WHEN': no,\n"
"                        saturated (the default) or yes\n"
"  --per-vm              per-VM ready p99 and unmet demand table\n"
"  --thermal-cap KHZ@H[-H2]  cap package --thermal-pkg's domains at KHZ\n"
"                        from hour 0 (or H) for H hours (or to hour H2);\n"
"                        also runs without it and prints both\n"
"  --thermal-pkg N       package the cap applies to (default 0)\n"
"  --migration-cost MIG[,PIN]  run time a vCPU loses to each move to\n"
"                        another core and to each change of its allowed\n"
"                        set, us (500,20; 0,0 = free); every policy\n");
}

/* Prints "vpower-sim: MESSAGE" on stderr.  Messages quote input (trace
 * lines, file names, model and policy-file tokens), so control
 * characters and bytes that are not UTF-8 are escaped (trace_esc()). */
static void __attribute__((format(printf, 1, 2)))
print_err(const char *fmt, ...)
{
    char msg[1024], out[4 * sizeof msg + 8];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "vpower-sim: %s\n",
            trace_esc(out, sizeof out, msg, strlen(msg), SIZE_MAX));
}

/* 0 if no host gets more vCPUs than one vpower decision handles (VM i
 * goes to host i mod 'hosts'); else says which host, how many and the
 * limit, and returns -1. */
static int
check_host_vcpus(const struct trace_set *ts, unsigned hosts)
{
    struct pol_config cfg;
    size_t *n = calloc(hosts, sizeof *n);

    if (!n) {
        abort();
    }
    pol_config_default(&cfg);
    for (size_t i = 0; i < ts->n_vms; i++) {
        n[i % hosts] += ts->vms[i].n_vcpus;
    }
    for (unsigned h = 0; h < hosts; h++) {
        if (n[h] > cfg.max_vcpus) {
            print_err("host %u of %u gets %zu vCPUs; one host holds at "
                      "most %zu (the policy's max_vcpus): use more "
                      "--hosts, or fewer VMs (--vms, --repeat)", h, hosts,
                      n[h], cfg.max_vcpus);
            free(n);
            return -1;
        }
    }
    free(n);
    return 0;
}

static int
parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
    uint64_t v;

    if (num_parse_u64(s, max, &v)) {
        return -1;
    }
    *out = v;
    return 0;
}

/* "MIG" or "MIG,PIN": microseconds, each in [0, 1e6]; PIN is kept when
 * absent. */
static int
parse_costs(const char *s, double *mig, double *pin)
{
    char *end;
    double a, b = *pin;

    a = strtod(s, &end);
    if (end == s || !(a >= 0 && a <= 1e6)) {
        return -1;
    }
    if (*end == ',') {
        const char *q = end + 1;

        b = strtod(q, &end);
        if (end == q || !(b >= 0 && b <= 1e6)) {
            return -1;
        }
    }
    if (*end) {
        return -1;
    }
    *mig = a;
    *pin = b;
    return 0;
}

/* "KHZ@HOURS" (from 0) or "KHZ@FROM-TO" (hours of sim time). */
static int
parse_cap(const char *s, unsigned long long *khz, double *from, double *to)
{
    char buf[128], *at, *dash, *end;

    if (strlen(s) >= sizeof buf) {
        return -1;
    }
    strcpy(buf, s);
    at = strchr(buf, '@');
    if (!at) {
        return -1;
    }
    *at = '\0';
    if (parse_u64(buf, 100000000, khz) || !*khz) {
        return -1;
    }
    dash = strchr(at + 1, '-');
    if (dash) {
        *dash = '\0';
    }
    *from = strtod(at + 1, &end);
    if (end == at + 1 || *end || !(*from >= 0 && *from <= 24 * 366)) {
        return -1;
    }
    if (!dash) {
        *to = *from;
        *from = 0;
        return *to > 0 ? 0 : -1;
    }
    *to = strtod(dash + 1, &end);
    if (end == dash + 1 || *end || !(*to > *from && *to <= 24 * 366)) {
        return -1;
    }
    return 0;
}

/* With a thermal cap: each policy's energy, unmet demand and ready p99
 * with the signal off (first run) and on. */
static void
print_signal(FILE *f, const char *what, const struct sim_result *off,
             const struct sim_result *on)
{
    fprintf(f, "signal %s off -> on:\n%-13s %12s %12s %8s %9s %9s %9s "
            "%9s\n", what, "policy", "energy_J", "energy_J", "ratio",
            "unmet%", "unmet%", "ready99%", "ready99%");
    for (int p = 0; p < SIM_N_POL; p++) {
        const struct sim_row *a = &off->rows[p], *b = &on->rows[p];

        if (!a->ran || !b->ran) {
            continue;
        }
        fprintf(f, "%-13s %12.0f %12.0f %8.4f %9.3f %9.3f %9.3f %9.3f\n",
                sim_pol_name(p), a->energy_j, b->energy_j,
                a->energy_j > 0 ? b->energy_j / a->energy_j : 0,
                a->unmet_pct, b->unmet_pct, a->ready_p99_pct,
                b->ready_p99_pct);
    }
}

/* The summary of a replayed recording as JSON; json-c quotes the
 * strings, trace_esc() keeps them valid UTF-8 (the model source comes
 * escaped from the reader). */
static void
print_record_json(const char *path, const struct record_stats *st)
{
    json_object *o = json_object_new_object();
    char esc[4 * 4096 + 8], span[64];

    json_object_object_add(o, "recording", json_object_new_string(
        trace_esc(esc, sizeof esc, path, strlen(path), SIZE_MAX)));
    json_object_object_add(o, "model_source",
                           json_object_new_string(st->model_src));
    json_object_object_add(o, "decisions",
                           json_object_new_uint64(st->blocks));
    json_object_object_add(o, "identical", json_object_new_uint64(st->same));
    json_object_object_add(o, "different",
                           json_object_new_uint64(st->differ));
    json_object_object_add(o, "max_vms", json_object_new_uint64(st->max_vms));
    json_object_object_add(o, "max_vcpus",
                           json_object_new_uint64(st->max_vcpus));
    snprintf(span, sizeof span, "%.3f", st->span_ns / 1e9);
    json_object_object_add(o, "span_seconds",
                           json_object_new_double_s(st->span_ns / 1e9, span));
    json_object_object_add(o, "first_difference_line",
                           json_object_new_uint64(st->first_line));
    printf("%s\n", json_object_to_json_string_ext(o,
           JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

/* Replays a vpowerd recording and reports how many plans matched. */
static int
run_record(const char *path, bool compare, bool json, bool verify)
{
    struct record_stats st;
    char err[512];
    int rc;

    if (compare) {
        fprintf(stderr, "vpower-sim: --compare on a recording is not "
                "implemented yet (see docs/simulator.md)\n");
        return 2;
    }
    rc = record_replay(path, 0, &st, err, sizeof err);
    if (rc) {
        print_err("%s", err);
        return 1;
    }
    if (json) {
        print_record_json(path, &st);
    } else {
        printf("recording %s (model %s): %llu decisions over %.1f s, up "
               "to %zu VMs / %zu vCPUs\n", path, st.model_src,
               (unsigned long long) st.blocks, st.span_ns / 1e9,
               st.max_vms, st.max_vcpus);
        printf("plans: %llu identical, %llu different\n",
               (unsigned long long) st.same,
               (unsigned long long) st.differ);
        if (st.differ) {
            printf("first difference: block at line %zu (now %llu ns): "
                   "%s\n", st.first_line,
                   (unsigned long long) st.first_now_ns, st.first_what);
        }
        if (st.truncated) {
            printf("note: last block had no E line (dropped)\n");
        }
        if (st.l_ignored) {
            printf("note: %zu load-history (L) lines ignored: a rotated "
                   "file's first plans may differ\n", st.l_ignored);
        }
    }
    return verify && st.differ ? 1 : 0;
}

/* Loads the host's true model for --true-model into 't' and checks that
 * it describes the same machine as the policies' model 'm' (CPUs,
 * domains, packages, operating points and idle states): only powers may
 * differ.  Returns 0, or 1 after printing what is wrong. */
static int
load_true_model(const char *path, const struct pol_model *m,
                struct pol_model *t)
{
    char err[512], *text = NULL;
    size_t len;
    int rc = trace_read_path(path, 0, &text, &len, err, sizeof err);

    if (rc) {
        print_err("%s", err);
        return 1;
    }
    rc = pol_model_parse(t, text, err, sizeof err);
    free(text);
    if (rc) {
        print_err("%s:%s", path, err);
        return 1;
    }
    if (t->n_cpus != m->n_cpus || t->n_domains != m->n_domains
        || t->n_pkgs != m->n_pkgs) {
        print_err("--true-model %s: %u CPUs, %u domains, %u packages; "
                  "--model has %u, %u, %u (only powers may differ)", path,
                  t->n_cpus, t->n_domains, t->n_pkgs, m->n_cpus,
                  m->n_domains, m->n_pkgs);
        return 1;
    }
    for (unsigned d = 0; d < m->n_domains; d++) {
        const struct pol_domain *a = &m->domains[d], *b = &t->domains[d];
        bool same = a->n_opps == b->n_opps && a->n_idle == b->n_idle
                    && cpuset_equal(&a->cpus, &b->cpus);

        for (unsigned i = 0; same && i < a->n_opps; i++) {
            same = a->opps[i].freq_khz == b->opps[i].freq_khz
                   && a->opps[i].capacity == b->opps[i].capacity;
        }
        if (!same) {
            print_err("--true-model %s: domain %u differs from --model's "
                      "in its CPUs, operating points or idle states (only "
                      "powers may differ)", path, d);
            return 1;
        }
    }
    return 0;
}

/* vpower's model against the simulated meter (--true-model). */
static void
print_check(FILE *f, const char *true_path, const struct sim_model_check *c)
{
    if (!true_path || !c->ran) {
        return;
    }
    fprintf(f, "\nvpower's model against the meter (true model %s):\n"
            "  meter %.0f J, model %.0f J over the same periods: error "
            "%+.2f %%\n"
            "  model as given, last period: error %+.2f %%\n"
            "  fit: busy x%.3f, idle x%.3f; %u host(s) warned, %u "
            "correcting\n", true_path, c->meter_j, c->model_j,
            c->meter_j > 0 ? 100.0 * (c->model_j - c->meter_j) / c->meter_j
                           : 0.0,
            c->orig_error_pct, c->busy_scale, c->idle_scale, c->warned,
            c->correcting);
}

int
main(int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "model", required_argument, NULL, 'm' },
        { "true-model", required_argument, NULL, 'U' },
        { "model-correction", no_argument, NULL, 'A' },
        { "trace", required_argument, NULL, 't' },
        { "trace-format", required_argument, NULL, 'F' },
        { "vms", required_argument, NULL, 'n' },
        { "hours", required_argument, NULL, 'H' },
        { "threads", required_argument, NULL, 'N' },
        { "hosts", required_argument, NULL, 'h' },
        { "seed", required_argument, NULL, 's' },
        { "burst-on", required_argument, NULL, 'b' },
        { "policy", required_argument, NULL, 'p' },
        { "compare", no_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "plot", required_argument, NULL, 'P' },
        { "repeat", required_argument, NULL, 'R' },
        { "policy-mix", required_argument, NULL, 'x' },
        { "policy-file", required_argument, NULL, 'f' },
        { "per-vm", no_argument, NULL, 'V' },
        { "verify-plans", no_argument, NULL, 'Y' },
        { "thermal-cap", required_argument, NULL, 'T' },
        { "thermal-pkg", required_argument, NULL, 'K' },
        { "halt-poll-ns", required_argument, NULL, 'L' },
        { "signals", no_argument, NULL, 'S' },
        { "no-share-smt", no_argument, NULL, 'I' },
        { "sched-core", no_argument, NULL, 'C' },
        { "turbo", required_argument, NULL, 'O' },
        { "migration-cost", required_argument, NULL, 'M' },
        { "help", no_argument, NULL, 1 },
        { NULL, 0, NULL, 0 },
    };
    const char *model_path = NULL, *trace_dir = NULL, *format = "auto";
    const char *plot = NULL, *mix_text = NULL, *mix_file = NULL;
    unsigned long long repeat = 1;
    bool per_vm = false, verify = false;
    struct pol_vm_policy *vm_pol = NULL;
    struct trace_shape shape;
    double balanced_j = 0, balanced_unmet = 0;
    unsigned long long cap_khz = 0, cap_pkg = 0;
    double cap_from_h = 0, cap_to_h = 0;
    struct sim_result nocap;
    bool have_nocap = false;
    unsigned long long vms = 0, hosts = 1, seed = 1, threads = 0;
    double hours = 24, on_mean = 2.0;
    int policy = SIM_P_VPOWER, opt;
    bool compare = false, json = false, signals = false;
    bool no_share = false, sched_core = false;
    const char *turbo = NULL;
    unsigned long long halt_ns = 200000;
    double mig_us = SIM_MIGRATION_COST_US, pin_us = SIM_PIN_COST_US;
    static struct pol_model model, true_model;
    const char *true_path = NULL;
    bool correction = false;
    struct trace_set ts;
    struct trace_opts topts;
    struct sim_opts so;
    struct sim_result res, served;
    struct report_info ri = { 0 };
    const struct trace_reader *rd;
    char err[512], *text = NULL;
    size_t len;
    int rc;

    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char *end;

        switch (opt) {
        case 'm': model_path = optarg; break;
        case 'U': true_path = optarg; break;
        case 'A': correction = true; break;
        case 't': trace_dir = optarg; break;
        case 'F': format = optarg; break;
        case 'P': plot = optarg; break;
        case 'c': compare = true; break;
        case 'S': signals = true; break;
        case 'I': no_share = true; break;
        case 'C': sched_core = true; break;
        case 'O': {
            bool use, sat;

            if (conf_turbo_of(optarg, &use, &sat)) {
                fprintf(stderr, "vpower-sim: bad --turbo '%s' (no, "
                        "saturated or yes)\n", optarg);
                return 2;
            }
            turbo = optarg;
            break;
        }
        case 'L':
            if (parse_u64(optarg, 1000000000, &halt_ns)) {
                fprintf(stderr, "vpower-sim: bad --halt-poll-ns '%s' "
                        "(0..1000000000)\n", optarg);
                return 2;
            }
            break;
        case 'M':
            if (parse_costs(optarg, &mig_us, &pin_us)) {
                fprintf(stderr, "vpower-sim: bad --migration-cost '%s' "
                        "(MIGRATION_US[,PIN_US], each 0..1000000)\n",
                        optarg);
                return 2;
            }
            break;
        case 'j': json = true; break;
        case 'V': per_vm = true; break;
        case 'Y': verify = true; break;
        case 'x': mix_text = optarg; break;
        case 'T':
            if (parse_cap(optarg, &cap_khz, &cap_from_h, &cap_to_h)) {
                fprintf(stderr, "vpower-sim: bad --thermal-cap '%s' (KHZ@"
                        "HOURS or KHZ@FROM-TO, hours)\n", optarg);
                return 2;
            }
            break;
        case 'K':
            if (parse_u64(optarg, POL_MAX_PKGS - 1, &cap_pkg)) {
                fprintf(stderr, "vpower-sim: bad --thermal-pkg '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'f': mix_file = optarg; break;
        case 'R':
            if (parse_u64(optarg, 1000, &repeat) || !repeat) {
                fprintf(stderr, "vpower-sim: bad --repeat '%s' "
                        "(1..1000)\n", optarg);
                return 2;
            }
            break;
        case 'n':
            if (parse_u64(optarg, 1000000, &vms) || !vms) {
                fprintf(stderr, "vpower-sim: bad --vms '%s'\n", optarg);
                return 2;
            }
            break;
        case 'h':
            if (parse_u64(optarg, 4096, &hosts) || !hosts) {
                fprintf(stderr, "vpower-sim: bad --hosts '%s'\n", optarg);
                return 2;
            }
            break;
        case 's':
            if (parse_u64(optarg, UINT64_MAX, &seed)) {
                fprintf(stderr, "vpower-sim: bad --seed '%s'\n", optarg);
                return 2;
            }
            break;
        case 'N':
            if (parse_u64(optarg, SIM_MAX_THREADS, &threads) || !threads) {
                fprintf(stderr, "vpower-sim: bad --threads '%s' (1-%d)\n",
                        optarg, SIM_MAX_THREADS);
                return 2;
            }
            break;
        case 'H':
            hours = strtod(optarg, &end);
            if (*end || !(hours > 0 && hours <= 24 * 366)) {
                fprintf(stderr, "vpower-sim: bad --hours '%s'\n", optarg);
                return 2;
            }
            break;
        case 'b':
            on_mean = strtod(optarg, &end);
            if (*end || !(on_mean >= 0.01 && on_mean <= 300)) {
                fprintf(stderr, "vpower-sim: bad --burst-on '%s'\n", optarg);
                return 2;
            }
            break;
        case 'p':
            policy = sim_pol_parse(optarg);
            if (policy < 0 || policy == SIM_P_LOWER) {
                fprintf(stderr, "vpower-sim: unknown policy '%s'\n", optarg);
                return 2;
            }
            break;
        case 1:
            usage(stdout);
            return 0;
        default:                /* '?': unknown option, missing argument. */
            usage(stderr);
            return 2;
        }
    }
    if (trace_dir && optind == argc
        && (!strcmp(format, "record")
            || (!strcmp(format, "auto") && record_probe(trace_dir)))) {
        return run_record(trace_dir, compare, json, verify);
    }
    if (verify) {
        fprintf(stderr, "vpower-sim: --verify-plans needs a recording "
                "(--trace-format record)\n");
        return 2;
    }
    if (!model_path || !trace_dir || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (mix_text && mix_file) {
        fprintf(stderr, "vpower-sim: --policy-mix and --policy-file "
                "exclude each other\n");
        return 2;
    }
    rc = trace_read_path(model_path, 0, &text, &len, err, sizeof err);
    if (rc) {
        print_err("%s", err);
        return 1;
    }
    rc = pol_model_parse(&model, text, err, sizeof err);
    free(text);
    if (rc) {
        print_err("%s:%s", model_path, err);
        return 1;
    }
    if (correction && !true_path) {
        fprintf(stderr, "vpower-sim: --model-correction needs a meter: "
                "give --true-model\n");
        return 2;
    }
    if (true_path && load_true_model(true_path, &model, &true_model)) {
        return 1;
    }
    rd = trace_reader_find(format, trace_dir);
    if (!rd) {
        fprintf(stderr, "vpower-sim: unknown trace format '%s'\n", format);
        return 2;
    }
    memset(&topts, 0, sizeof topts);
    topts.max_vms = vms;
    topts.max_intervals = (size_t) (hours * 12 + 0.5);
    topts.seed = seed;
    rc = rd->load(trace_dir, &topts, &ts, err, sizeof err);
    if (rc) {
        print_err("%s", err);
        return 1;
    }
    if (ts.n_clamped || ts.n_absent) {
        fprintf(stderr, "vpower-sim: note: %zu rows above the provisioned "
                "capacity clamped to it, %zu rows with 0 cores treated as "
                "absent (whole files)\n", ts.n_clamped, ts.n_absent);
    }
    if (trace_set_repeat(&ts, (unsigned) repeat, seed)) {
        fprintf(stderr, "vpower-sim: --repeat %llu: %zu x %llu VMs, more "
                "than %zu\n", repeat, ts.n_vms, repeat, TRACE_MAX_VMS);
        trace_set_free(&ts);
        return 2;
    }
    if (check_host_vcpus(&ts, (unsigned) hosts)) {
        trace_set_free(&ts);
        return 1;
    }
    trace_set_shape(&ts, &shape);
    if (mix_text || mix_file || no_share) {
        struct mix_spec spec;

        vm_pol = calloc(ts.n_vms ? ts.n_vms : 1, sizeof *vm_pol);
        if (!vm_pol) {
            abort();
        }
        rc = 0;
        mix_default(ts.n_vms, vm_pol);
        if (mix_text) {
            rc = mix_parse(mix_text, &spec, err, sizeof err);
            if (!rc) {
                mix_assign(&spec, ts.n_vms, seed, vm_pol);
            }
        } else if (mix_file) {
            rc = mix_load_file(mix_file, &ts, vm_pol, err, sizeof err);
        }
        for (size_t i = 0; no_share && i < ts.n_vms; i++) {
            vm_pol[i].share_smt = false;
        }
        if (rc) {
            print_err("%s", err);
            free(vm_pol);
            trace_set_free(&ts);
            return mix_text ? 2 : 1;
        }
    }
    memset(&so, 0, sizeof so);
    so.m = &model;
    so.true_m = true_path ? &true_model : NULL;
    so.model_correction = correction;
    so.ts = &ts;
    so.hosts = (unsigned) hosts;
    so.seed = seed;
    so.threads = (unsigned) threads;
    so.on_mean_s = on_mean;
    so.halt_poll_ns = (uint32_t) halt_ns;
    so.sched_core = sched_core;
    so.turbo = turbo;
    so.migration_cost_us = mig_us;
    so.pin_cost_us = pin_us;
    ri.migration_cost_us = mig_us;
    ri.pin_cost_us = pin_us;
    signals |= compare;
    if (vm_pol) {
        /* The mix's cost: vpower alone with every VM balanced. */
        so.mask = 1u << SIM_P_VPOWER;
        rc = sim_run(&so, &res, err, sizeof err);
        balanced_j = res.rows[SIM_P_VPOWER].energy_j;
        balanced_unmet = res.rows[SIM_P_VPOWER].unmet_pct;
        sim_result_free(&res);
        if (rc) {
            print_err("%s", err);
            free(vm_pol);
            trace_set_free(&ts);
            return 1;
        }
        so.vm_policy = vm_pol;
    }
    so.mask = compare ? SIM_MASK_POLICIES : 1u << policy;
    if (signals && halt_ns) {
        so.mask |= 1u << SIM_P_VPOWER_NOHALT;
    }
    if (cap_khz) {
        if (cap_pkg >= model.n_pkgs) {
            fprintf(stderr, "vpower-sim: --thermal-pkg %llu: the model "
                    "has %u package(s)\n", cap_pkg, model.n_pkgs);
            free(vm_pol);
            trace_set_free(&ts);
            return 2;
        }
        rc = sim_run(&so, &nocap, err, sizeof err);   /* No NOCAP row. */
        if (rc) {
            print_err("%s", err);
            sim_result_free(&nocap);
            free(vm_pol);
            trace_set_free(&ts);
            return 1;
        }
        have_nocap = true;
        so.thermal_cap_khz = (uint32_t) cap_khz;
        so.thermal_cap_pkg = (unsigned) cap_pkg;
        so.thermal_from_s = (uint64_t) (cap_from_h * 3600 + 0.5);
        so.thermal_to_s = (uint64_t) (cap_to_h * 3600 + 0.5);
        if (signals) {
            so.mask |= 1u << SIM_P_VPOWER_NOCAP;
        }
    }
    rc = sim_run(&so, &res, err, sizeof err);
    if (rc) {
        print_err("%s", err);
        sim_result_free(&res);
        trace_set_free(&ts);
        return 1;
    }
    if (!signals && policy != SIM_P_VPOWER) {
        res.rows[SIM_P_VPOWER].ran = false;   /* Only ran for instants. */
    }
    memset(&served, 0, sizeof served);
    if (compare && equal_run(&so, &res, &served, &ri.served_headroom_pct,
                             err, sizeof err)) {
        print_err("%s", err);
        sim_result_free(&served);
        sim_result_free(&res);
        trace_set_free(&ts);
        free(vm_pol);
        return 1;
    }
    ri.served = &served;
    ri.model = model_path;
    ri.trace = trace_dir;
    ri.format = rd->name;
    ri.seed = seed;
    ri.shape = &shape;
    ri.ts = &ts;
    ri.vm_policy = vm_pol;
    ri.per_vm = per_vm;
    ri.repeat = (unsigned) repeat;
    ri.balanced_energy_j = balanced_j;
    ri.balanced_unmet_pct = balanced_unmet;
    ri.halt_poll_ns = (uint32_t) halt_ns;
    ri.turbo = turbo;
    if (json) {
        rc = report_json(stdout, &ri, &res);
    } else {
        report_text(stdout, &ri, &res);
        if (have_nocap) {
            char what[128];

            snprintf(what, sizeof what, "thermal cap %llu kHz on package "
                     "%llu, hours %g-%g", cap_khz, cap_pkg, cap_from_h,
                     cap_to_h);
            print_signal(stdout, what, &nocap, &res);
        }
        if (signals) {
            report_signals(stdout, &ri, &res, have_nocap ? &nocap : NULL);
        }
        print_check(stdout, true_path, &res.check);
    }
    if (have_nocap) {
        sim_result_free(&nocap);
    }
    if (!rc && plot) {
        rc = report_plot(plot, &ri, &res);
        if (rc) {
            fprintf(stderr, "vpower-sim: %s: %s\n", plot, strerror(-rc));
        }
    }
    sim_result_free(&served);
    sim_result_free(&res);
    trace_set_free(&ts);
    free(vm_pol);
    return rc ? 1 : 0;
}
