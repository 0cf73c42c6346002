/* sim/bench.c -- `make bench`: decision latency and simulator speed.
 *
 * Prints, in one run: (1) pol_decide() wall time on a synthetic 256-CPU
 * host (the xeon-r640-2s operating points and idle states on 128 SMT2
 * cores, 2 packages) with 1024 single-vCPU VMs of seeded random load,
 * mean and p99 over many calls, against the 1 ms target; (2) the wall
 * time of one whole PlanetLab day (all VMs of 20110303) on 4 server
 * hosts with vpower alone (vpowerd's cycle on the simulated drivers,
 * against 10 s) and with `--compare` (against 30 s), each with the
 * shares of its CPU time spent inside pol_decide(), in the rest of the
 * cycle and in the simulator.  These are measurements that print;
 * nothing here fails a build. */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "sim/rng.h"
#include "sim/simrun.h"
#include "sim/trace.h"

#define N_VCPUS 1024
#define N_CALLS 2000

static double
now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the whole process (all threads). */
static double
cpu_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;

    return x < y ? -1 : x > y;
}

/* Builds the synthetic 256-CPU model from the server model's domain. */
static int
synth_model(const char *srcdir, struct pol_model *m)
{
    char path[4096], err[256], *xeon, *dom, *text;
    size_t len;
    int rc;

    snprintf(path, sizeof path, "%s/config/models/xeon-r640-2s.model",
             srcdir);
    if (trace_read_path(path, 0, &xeon, &len, err, sizeof err)) {
        fprintf(stderr, "bench: %s\n", err);
        return -ENOENT;
    }
    dom = strstr(xeon, "\ndomain ");
    if (!dom) {
        free(xeon);
        return -EINVAL;
    }
    dom = strchr(dom + 1, '\n');      /* Keep its opp/idle lines. */
    text = malloc(strlen(dom) + 1024);
    if (!text) {
        abort();
    }
    sprintf(text,
            "name synth-256\ncpus 256\nsmt 0-127 128-255\n"
            "smt-capacity 125\nplatform 40000\n"
            "package 0 0-63,128-191 10000 5000\n"
            "package 1 64-127,192-255 10000 5000\n"
            "domain 0-255 per-core%s", dom);
    rc = pol_model_parse(m, text, err, sizeof err);
    if (rc) {
        fprintf(stderr, "bench: synthetic model:%s\n", err);
    }
    free(text);
    free(xeon);
    return rc;
}

static void
bench_decide(const char *srcdir)
{
    static struct pol_model m;
    static struct pol_vm vms[N_VCPUS];
    static struct pol_vcpu vcpus[N_VCPUS];
    static double t[N_CALLS];
    struct pol_config cfg;
    struct pol_state *st;
    struct pol_plan *plan;
    struct pol_input in;
    struct rng r;
    double sum = 0;

    if (synth_model(srcdir, &m)) {
        return;
    }
    pol_config_default(&cfg);
    st = pol_state_create(&m, &cfg);
    plan = pol_plan_create(N_VCPUS, N_VCPUS);
    rng_init(&r, 42, 0, 0);
    for (unsigned i = 0; i < N_VCPUS; i++) {
        vms[i].id = i;
        vms[i].first_vcpu = i;
        vms[i].n_vcpus = 1;
        vms[i].policy.share_smt = true;
        vcpus[i].vm = i;
        vcpus[i].cpu = (int32_t) (i % m.n_cpus);
    }
    memset(&in, 0, sizeof in);
    in.vms = vms;
    in.n_vms = N_VCPUS;
    in.vcpus = vcpus;
    in.n_vcpus = N_VCPUS;
    for (unsigned c = 0; c < m.n_cpus; c++) {
        cpuset_set(&in.managed, c);
    }
    in.online = in.managed;
    for (unsigned k = 0; k < N_CALLS; k++) {
        double t0;
        int rc;

        /* Fresh seeded load each call: 12 % mean, bursty. */
        for (unsigned i = 0; i < N_VCPUS; i++) {
            double u = rng_exp(&r, 0.12);
            uint64_t busy = (uint64_t) ((u > 1 ? 1 : u) * 5e9);
            pol_load_update(&vcpus[i].load, &m, vcpus[i].cpu, 0, busy, 0,
                            5000000000ULL);
        }
        in.now_ns = (k + 1) * 5000000000ULL;
        t0 = now_s();
        rc = pol_decide(st, &in, plan);
        t[k] = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench: pol_decide: %s\n", strerror(-rc));
            break;
        }
        sum += t[k];
    }
    qsort(t, N_CALLS, sizeof *t, cmp_double);
    printf("pol_decide, 256 CPUs, %d vCPUs, %d calls: mean %.3f ms, "
           "p99 %.3f ms, max %.3f ms (target < 1 ms: mean/target %.2f, "
           "p99/target %.2f)\n", N_VCPUS, N_CALLS, sum / N_CALLS * 1e3,
           t[N_CALLS * 99 / 100 - 1] * 1e3, t[N_CALLS - 1] * 1e3,
           sum / N_CALLS * 1e3 / 1.0,
           t[N_CALLS * 99 / 100 - 1] * 1e3 / 1.0);
    pol_plan_destroy(plan);
    pol_state_destroy(st);
}

/* The day's line: wall time against the target, then where the CPU
 * time of the simulation went: inside pol_decide(), in the rest of
 * vpowerd's cycle (sampling through the simulated drivers, input, plan
 * diff, actions, energy attribution) and in the simulator itself (the
 * execution model's steps, plan commits, bursts, the baselines). */
static void
print_day(const struct trace_set *ts, const struct sim_result *res,
          unsigned hosts, bool compare, double wall_s, double load_s,
          double cpu_s, double load)
{
    double target = compare ? 30.0 : 10.0;
    double own = res->cycle_s - res->decide_s, sim = cpu_s - res->cycle_s;
    double pct = cpu_s > 0 ? 100.0 / cpu_s : 0;

    printf("simulator, PlanetLab 20110303, %zu VMs, %.0f h, %u x "
           "xeon-r640-2s, %s: %.2f s wall (load %.2f s; target < %.0f s: "
           "%s, ratio %.2f; load average %.2f at the end on %ld online "
           "CPUs); "
           "%.2f s of CPU time: pol_decide %.2f s (%.0f %%; %llu calls, "
           "%.3f ms mean), the cycle's own code %.2f s (%.0f %%), the "
           "simulator %.2f s (%.0f %%)\n",
           ts->n_vms, res->hours, hosts,
           compare ? "--compare (6 policies + lower bound)"
                   : "vpower alone", wall_s, load_s, target,
           wall_s <= target ? "met" : "NOT met", wall_s / target, load,
           sysconf(_SC_NPROCESSORS_ONLN), cpu_s, res->decide_s,
           res->decide_s * pct, (unsigned long long) res->n_decisions,
           res->n_decisions ? res->decide_s / res->n_decisions * 1e3 : 0,
           own, own * pct, sim, sim * pct);
}

static void
bench_day(const char *srcdir, const char *trace, unsigned hosts,
          bool compare)
{
    static struct pol_model m;
    char path[4096], err[512], *text = NULL;
    size_t len;
    struct trace_set ts;
    struct trace_opts to = { .max_vms = 0, .max_intervals = 0, .seed = 1 };
    struct sim_opts so;
    struct sim_result res;
    double t0 = now_s(), t1, t2, c1, cpu_s, load = -1;
    int rc;

    snprintf(path, sizeof path, "%s/config/models/xeon-r640-2s.model",
             srcdir);
    if (trace_read_path(path, 0, &text, &len, err, sizeof err)
        || pol_model_parse(&m, text, err, sizeof err)) {
        fprintf(stderr, "bench: %s: cannot load\n", path);
        free(text);
        return;
    }
    free(text);
    rc = trace_planetlab.load(trace, &to, &ts, err, sizeof err);
    if (rc) {
        fprintf(stderr, "bench: %s\n", err);
        return;
    }
    t1 = now_s();
    c1 = cpu_now_s();
    memset(&so, 0, sizeof so);
    so.m = &m;
    so.ts = &ts;
    so.hosts = hosts;
    so.seed = 1;
    so.on_mean_s = 2.0;
    so.mask = compare ? SIM_MASK_POLICIES : 1u << SIM_P_VPOWER;
    so.profile = true;
    rc = sim_run(&so, &res, err, sizeof err);
    t2 = now_s();
    cpu_s = cpu_now_s() - c1;
    getloadavg(&load, 1);         /* Mostly the run's last minute. */
    if (rc) {
        fprintf(stderr, "bench: %s\n", err);
    } else {
        print_day(&ts, &res, hosts, compare, t2 - t0, t1 - t0, cpu_s,
                  load);
    }
    sim_result_free(&res);
    trace_set_free(&ts);
}

int
main(int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "srcdir", required_argument, NULL, 's' },
        { "trace", required_argument, NULL, 't' },
        { "hosts", required_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *srcdir = ".";
    const char *trace =
        "/work/shared/data/traces/planetlab-cloudsim/20110303";
    unsigned hosts = 4;
    int opt;

    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 's': srcdir = optarg; break;
        case 't': trace = optarg; break;
        case 'h': hosts = (unsigned) atoi(optarg); break;
        default:
            fprintf(stderr, "usage: bench [--srcdir DIR] [--trace DIR] "
                    "[--hosts H]\n");
            return 2;
        }
    }
    if (!hosts) {
        hosts = 4;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);   /* Progress as it comes. */
    bench_decide(srcdir);
    bench_day(srcdir, trace, hosts, false);
    bench_day(srcdir, trace, hosts, true);
    return 0;
}
