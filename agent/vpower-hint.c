/* agent/vpower-hint.c -- Command-line front end of libvpowerhint.
 *
 * Scripts in a guest mark their phases with it ("vpower-hint
 * latency-begin --latency-us 200" ... "vpower-hint latency-end").  It
 * talks to vpower-agent, or with --direct to the virtio-serial port
 * itself, and by default waits for the host's acknowledgement so the
 * exit status says whether the hint is in force.  `bench` sends many
 * hints and prints the end-to-end latency distribution (write in the
 * guest -> plan applied on the host -> ack read in the guest). */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/vpowerhint.h"

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_NOAGENT = 3 };

static void
usage(FILE *f)
{
    fputs("Usage: vpower-hint [OPTION]... COMMAND [ARG]...\n"
          "Tell the host's vpowerd what this guest is about to do.\n\n"
          "Commands:\n"
          "  latency-begin [--latency-us N]  latency-critical work starts\n"
          "  latency-end                     it ended\n"
          "  batch [--ms N]                  throughput work (may be packed)\n"
          "  boost --ms N                    full speed for N ms\n"
          "  idle --ms N                     expect to be idle for N ms\n"
          "  bench [--count N] [--interval-ms MS]\n"
          "                                  N alternating latency-begin/end "
          "hints,\n"
          "                                  one per MS (default 1000, 60); "
          "prints\n"
          "                                  the counts and the ack latency\n"
          "                                  p50/p99/max\n\n"
          "Options:\n"
          "  -s, --socket PATH   agent socket (default "
          "/run/vpower-agent.sock)\n"
          "  -d, --direct        write to the virtio-serial port (no agent)\n"
          "  -p, --port PATH     port for --direct (default: find it)\n"
          "  -t, --timeout-ms N  wait N ms for the host's ack "
          "(default 2000)\n"
          "  -n, --no-wait       do not wait for the ack\n"
          "  -h, --help          this text\n\n"
          "Exit status: 0 applied, 1 refused or not acknowledged, 2 usage,\n"
          "3 no agent or channel in this guest.\n", f);
}

static int
parse_u32(const char *what, const char *s, unsigned long max, uint32_t *out)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || end == s || s[0] == '-' || v > max) {
        fprintf(stderr, "vpower-hint: %s: '%s' is not a number in 0..%lu\n",
                what, s, max);
        return -1;
    }
    *out = (uint32_t) v;
    return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

    return x < y ? -1 : x > y;
}

/* The 'pct'-th percentile of the 'n' (> 0) sorted values 'v': the
 * smallest value at least pct% of them do not exceed (nearest rank). */
static uint64_t
rank(const uint64_t *v, uint32_t n, unsigned pct)
{
    uint64_t k = ((uint64_t) n * pct + 99) / 100;

    return v[k ? k - 1 : 0];
}

/* Paced below the host's default hint_rate (20/s): a bench that trips
 * the rate limit measures the limiter, not the latency. */
static int
bench(struct vph *h, uint32_t count, uint32_t interval_ms)
{
    struct timespec pause = { interval_ms / 1000,
                              (long) (interval_ms % 1000) * 1000000L };
    uint64_t *rtt = calloc(count ? count : 1, sizeof *rtt);
    uint32_t i, n = 0, fail = 0;
    uint64_t sum = 0;
    int r;

    if (!rtt) {
        fprintf(stderr, "vpower-hint: out of memory\n");
        return EXIT_REFUSED;
    }
    for (i = 0; i < count; i++) {
        if (i > 0 && interval_ms > 0) {
            nanosleep(&pause, NULL);
        }
        r = i % 2 == 0 ? vph_latency_begin(h, 200) : vph_latency_end(h);
        if (r == 0) {
            rtt[n++] = vph_last_rtt_ns(h);
        } else {
            fail++;
            if (fail <= 3) {
                fprintf(stderr, "vpower-hint: bench hint %u: %s\n", i,
                        vph_strerror(r));
            }
        }
    }
    if (count % 2 == 1) {
        (void) vph_latency_end(h);
    }
    if (n == 0) {
        fprintf(stderr, "vpower-hint: bench: no hint was acknowledged\n");
        free(rtt);
        return EXIT_REFUSED;
    }
    qsort(rtt, n, sizeof *rtt, cmp_u64);
    for (i = 0; i < n; i++) {
        sum += rtt[i];
    }
    printf("VPOWER-HINT-LATENCY sent=%u n=%u failed=%u p50_us=%llu "
           "p99_us=%llu max_us=%llu min_us=%llu mean_us=%llu\n", count, n,
           fail, (unsigned long long) rank(rtt, n, 50) / 1000,
           (unsigned long long) rank(rtt, n, 99) / 1000,
           (unsigned long long) rtt[n - 1] / 1000,
           (unsigned long long) rtt[0] / 1000,
           (unsigned long long) (sum / n) / 1000);
    if (n < 1000) {
        fprintf(stderr, "vpower-hint: bench: p99 of %u hints is close to "
                "their maximum; use --count 1000 or more\n", n);
    }
    free(rtt);
    return fail ? EXIT_REFUSED : EXIT_OK;
}

int
main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "socket", required_argument, NULL, 's' },
        { "direct", no_argument, NULL, 'd' },
        { "port", required_argument, NULL, 'p' },
        { "timeout-ms", required_argument, NULL, 't' },
        { "no-wait", no_argument, NULL, 'n' },
        { "latency-us", required_argument, NULL, 'L' },
        { "ms", required_argument, NULL, 'M' },
        { "count", required_argument, NULL, 'C' },
        { "interval-ms", required_argument, NULL, 'I' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *sock = NULL, *port = NULL, *cmd;
    uint32_t timeout = 2000, latency_us = 0, ms = 0, count = 1000;
    uint32_t interval_ms = 60;
    int direct = 0, no_wait = 0, have_ms = 0, have_lat = 0, have_count = 0;
    struct vph *h;
    int c, r;

    /* Options may come before or after the command (GNU permutation). */
    while ((c = getopt_long(argc, argv, "s:dp:t:nh", opts, NULL)) != -1) {
        switch (c) {
        case 's': sock = optarg; break;
        case 'd': direct = 1; break;
        case 'p': port = optarg; direct = 1; break;
        case 't':
            if (parse_u32("--timeout-ms", optarg, 600000, &timeout) < 0) {
                return EXIT_USAGE;
            }
            break;
        case 'n': no_wait = 1; break;
        case 'L':
            if (parse_u32("--latency-us", optarg, 1000000, &latency_us) < 0) {
                return EXIT_USAGE;
            }
            have_lat = 1;
            break;
        case 'M':
            if (parse_u32("--ms", optarg, 3600000, &ms) < 0) {
                return EXIT_USAGE;
            }
            have_ms = 1;
            break;
        case 'C':
            if (parse_u32("--count", optarg, 1000000, &count) < 0) {
                return EXIT_USAGE;
            }
            have_count = 1;
            break;
        case 'I':
            if (parse_u32("--interval-ms", optarg, 60000, &interval_ms) < 0) {
                return EXIT_USAGE;
            }
            have_count = 1;
            break;
        case 'h': usage(stdout); return EXIT_OK;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "vpower-hint: %s\n", optind == argc
                ? "missing COMMAND (try --help)" : "too many arguments");
        return EXIT_USAGE;
    }
    cmd = argv[optind];
    if (strcmp(cmd, "latency-begin") && strcmp(cmd, "latency-end")
        && strcmp(cmd, "batch") && strcmp(cmd, "boost")
        && strcmp(cmd, "idle") && strcmp(cmd, "bench")) {
        fprintf(stderr, "vpower-hint: unknown command '%s' (try --help)\n",
                cmd);
        return EXIT_USAGE;
    }
    if (have_lat && strcmp(cmd, "latency-begin")) {
        fprintf(stderr, "vpower-hint: --latency-us applies to "
                "latency-begin only\n");
        return EXIT_USAGE;
    }
    if (have_count && strcmp(cmd, "bench")) {
        fprintf(stderr, "vpower-hint: --count and --interval-ms apply to "
                "bench only\n");
        return EXIT_USAGE;
    }
    if (have_ms && strcmp(cmd, "batch") && strcmp(cmd, "boost")
        && strcmp(cmd, "idle")) {
        fprintf(stderr, "vpower-hint: --ms applies to batch, boost and "
                "idle only\n");
        return EXIT_USAGE;
    }
    if (!have_ms && (!strcmp(cmd, "boost") || !strcmp(cmd, "idle"))) {
        fprintf(stderr, "vpower-hint: %s needs --ms N\n", cmd);
        return EXIT_USAGE;
    }
    if ((!strcmp(cmd, "boost") && (ms < 1 || ms > 60000))
        || (!strcmp(cmd, "idle") && ms < 1)) {
        fprintf(stderr, "vpower-hint: %s --ms must be in 1..%u\n", cmd,
                !strcmp(cmd, "boost") ? 60000u : 3600000u);
        return EXIT_USAGE;
    }

    h = direct ? vph_open_port(port, &r) : vph_open(sock, &r);
    if (!h) {
        if (direct) {
            fprintf(stderr, "vpower-hint: cannot use the virtio-serial port "
                    "%s: %s\n", port ? port : "org.vpower.agent.0",
                    vph_strerror(r));
        } else {
            fprintf(stderr, "vpower-hint: cannot reach vpower-agent at %s: "
                    "%s (start vpower-agent, or use --direct)\n",
                    sock ? sock : "/run/vpower-agent.sock",
                    r == -ENOENT ? "no such socket" : vph_strerror(r));
        }
        return EXIT_NOAGENT;
    }
    vph_set_timeout(h, no_wait ? 0 : (int) timeout);

    if (!strcmp(cmd, "bench")) {
        if (no_wait) {
            fprintf(stderr, "vpower-hint: bench needs acks; drop --no-wait\n");
            vph_close(h);
            return EXIT_USAGE;
        }
        r = bench(h, count, interval_ms);
        vph_close(h);
        return r;
    }
    if (!strcmp(cmd, "latency-begin")) {
        r = vph_latency_begin(h, latency_us);
    } else if (!strcmp(cmd, "latency-end")) {
        r = vph_latency_end(h);
    } else if (!strcmp(cmd, "batch")) {
        r = vph_batch(h, ms);
    } else if (!strcmp(cmd, "boost")) {
        r = vph_boost(h, ms);
    } else {
        r = vph_idle(h, ms);
    }
    if (r < 0) {
        fprintf(stderr, "vpower-hint: %s: %s\n", cmd, vph_strerror(r));
        vph_close(h);
        return r == -ENOENT ? EXIT_NOAGENT : EXIT_REFUSED;
    }
    if (!no_wait) {
        printf("%s: applied in %llu us\n", cmd,
               (unsigned long long) vph_last_rtt_ns(h) / 1000);
    }
    vph_close(h);
    return EXIT_OK;
}
