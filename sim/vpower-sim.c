/* sim/vpower-sim.c -- Command-line front end of the simulator.
 *
 * Parses options, loads the energy model (pol_model_parse on the file's
 * text) and the traces (through the reader table), runs sim_run() and
 * renders the result.  Usage errors exit 2, input errors 1. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/model.h"
#include "sim/report.h"
#include "sim/simrun.h"
#include "sim/trace.h"

static void
usage(FILE *f)
{
    fprintf(f,
"usage: vpower-sim --model FILE --trace DIR [options]\n"
"  --model FILE          energy model (config/models/*.model)\n"
"  --trace DIR           trace directory\n"
"  --trace-format NAME   planetlab | bitbrains | auto (default auto)\n"
"  --vms N               first N VMs in file-name byte order (default all)\n"
"  --hours X             replay only the first X hours (default: 24)\n"
"  --hosts H             identical hosts; VM i goes to host i mod H (1)\n"
"  --seed S              seed of every random choice (default 1)\n"
"  --burst-on S          mean busy phase of the burst model, s (2)\n"
"  --policy NAME         vpower | performance | schedutil | powersave |\n"
"                        dpdk-vmpm | nova-offline (default vpower)\n"
"  --compare             run all of them and the lower bound\n"
"  --json                JSON instead of the text table\n"
"  --plot FILE           also write a gnuplot script (FILE.svg output)\n");
}

static int
read_text(const char *path, char **out)
{
    FILE *f = fopen(path, "rb");
    size_t n = 0, cap = 0;
    char *buf = NULL;

    if (!f) {
        return -errno;
    }
    for (;;) {
        if (cap - n < 4096) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap + 1);
            if (!buf) {
                abort();
            }
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (!got) {
            break;
        }
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    return 0;
}

static int
parse_u64(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;

    errno = 0;
    *out = strtoull(s, &end, 10);
    return (errno || end == s || *end || *s == '-' || *out > max) ? -1 : 0;
}

int
main(int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "model", required_argument, NULL, 'm' },
        { "trace", required_argument, NULL, 't' },
        { "trace-format", required_argument, NULL, 'F' },
        { "vms", required_argument, NULL, 'n' },
        { "hours", required_argument, NULL, 'H' },
        { "hosts", required_argument, NULL, 'h' },
        { "seed", required_argument, NULL, 's' },
        { "burst-on", required_argument, NULL, 'b' },
        { "policy", required_argument, NULL, 'p' },
        { "compare", no_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "plot", required_argument, NULL, 'P' },
        { "help", no_argument, NULL, '?' },
        { NULL, 0, NULL, 0 },
    };
    const char *model_path = NULL, *trace_dir = NULL, *format = "auto";
    const char *plot = NULL;
    unsigned long long vms = 0, hosts = 1, seed = 1;
    double hours = 24, on_mean = 2.0;
    int policy = SIM_P_VPOWER, opt;
    bool compare = false, json = false;
    static struct pol_model model;
    struct trace_set ts;
    struct trace_opts topts;
    struct sim_opts so;
    struct sim_result res;
    struct report_info ri;
    const struct trace_reader *rd;
    char err[512], *text = NULL;
    int rc;

    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        char *end;

        switch (opt) {
        case 'm': model_path = optarg; break;
        case 't': trace_dir = optarg; break;
        case 'F': format = optarg; break;
        case 'P': plot = optarg; break;
        case 'c': compare = true; break;
        case 'j': json = true; break;
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
        default:
            usage(opt == '?' ? stdout : stderr);
            return opt == '?' ? 0 : 2;
        }
    }
    if (!model_path || !trace_dir || optind != argc) {
        usage(stderr);
        return 2;
    }
    rc = read_text(model_path, &text);
    if (rc) {
        fprintf(stderr, "vpower-sim: %s: %s\n", model_path, strerror(-rc));
        return 1;
    }
    rc = pol_model_parse(&model, text, err, sizeof err);
    free(text);
    if (rc) {
        fprintf(stderr, "vpower-sim: %s:%s\n", model_path, err);
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
        fprintf(stderr, "vpower-sim: %s\n", err);
        return 1;
    }
    memset(&so, 0, sizeof so);
    so.m = &model;
    so.ts = &ts;
    so.hosts = (unsigned) hosts;
    so.seed = seed;
    so.on_mean_s = on_mean;
    so.mask = compare ? (1u << SIM_N_POL) - 1 : 1u << policy;
    rc = sim_run(&so, &res, err, sizeof err);
    if (rc) {
        fprintf(stderr, "vpower-sim: %s\n", err);
        sim_result_free(&res);
        trace_set_free(&ts);
        return 1;
    }
    if (!compare && policy != SIM_P_VPOWER) {
        res.rows[SIM_P_VPOWER].ran = false;   /* Only ran for instants. */
    }
    ri.model = model_path;
    ri.trace = trace_dir;
    ri.format = rd->name;
    ri.seed = seed;
    if (json) {
        rc = report_json(stdout, &ri, &res);
    } else {
        report_text(stdout, &ri, &res);
    }
    if (!rc && plot) {
        rc = report_plot(plot, &ri, &res);
        if (rc) {
            fprintf(stderr, "vpower-sim: %s: %s\n", plot, strerror(-rc));
        }
    }
    sim_result_free(&res);
    trace_set_free(&ts);
    return rc ? 1 : 0;
}
