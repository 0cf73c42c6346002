/* tests/integration/ts-probe.c -- Test helper around manager/taskstats.
 *
 * The integration test 040-taskstats.sh needs run and delay numbers of
 * real vCPU threads through the same module vpowerd uses, and a way to
 * ask the real policy what it makes of them.  Modes:
 *
 *   ts-probe [-k auto|taskstats|schedstat] TID...
 *       one line per tid: "<tid> <run_ns> <delay_ns> <source>"
 *   ts-probe -v QEMU_PID
 *       the vCPU threads: "<vcpu> <tid>" per line
 *   ts-probe -d
 *       kernel.task_delayacct state: "1", "0" or "unknown"
 *   ts-probe -r FILE TID
 *       records the raw TASKSTATS reply datagram for TID into FILE
 *       (how tests/fixtures/netlink/ was captured)
 *   ts-probe -p BUSY0 DELAY0 BUSY1 DELAY1 INTERVAL_NS
 *       feeds two vCPUs' busy/delay ns over INTERVAL_NS into
 *       pol_load_update() (four samples, for warm-up) and pol_decide()
 *       for a two-CPU model; prints "active=<n> spread=<0|1>" where
 *       spread means the two vCPUs may not share one single CPU.
 *
 * Exit 0 on success, 2 on usage errors, 1 when a read fails. */

#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/taskstats.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "manager/inputs/taskstats.h"
#include "policy/model.h"
#include "policy/policy.h"

/* Two cores, one frequency domain each (as this test machine); power
 * numbers are illustrative, only the shape matters for spreading. */
static const char model_2cpu[] =
    "name ts-probe-2cpu\n"
    "cpus 2\n"
    "platform 0\n"
    "package 0 0-1 0 0\n"
    "domain 0\n"
    "    opp 2000000 1024 1000 cluster 0\n"
    "    cluster 0 0\n"
    "    idle POLL 0 0 500\n"
    "    idle halt 10 20 100\n"
    "domain 1\n"
    "    opp 2000000 1024 1000 cluster 0\n"
    "    cluster 0 0\n"
    "    idle POLL 0 0 500\n"
    "    idle halt 10 20 100\n";

static int
usage(void)
{
    fprintf(stderr, "usage: ts-probe [-k auto|taskstats|schedstat] TID...\n"
            "       ts-probe -v QEMU_PID | -d | -r FILE TID\n"
            "       ts-probe -p BUSY0 DELAY0 BUSY1 DELAY1 INTERVAL_NS\n");
    return 2;
}

static int
record(const char *file, pid_t tid)
{
    struct nl_sock *s = nl_socket_alloc();
    if (!s || genl_connect(s) < 0) {
        fprintf(stderr, "ts-probe: generic netlink unavailable\n");
        return 1;
    }
    int fam = genl_ctrl_resolve(s, TASKSTATS_GENL_NAME);
    if (fam < 0) {
        fprintf(stderr, "ts-probe: no TASKSTATS family\n");
        return 1;
    }
    struct nl_msg *m = nlmsg_alloc();
    genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, fam, 0, NLM_F_REQUEST,
                TASKSTATS_CMD_GET, TASKSTATS_VERSION);
    nla_put_u32(m, TASKSTATS_CMD_ATTR_PID, (uint32_t) tid);
    nl_send_auto(s, m);
    nlmsg_free(m);
    struct sockaddr_nl from;
    unsigned char *buf = NULL;
    int n = nl_recv(s, &from, &buf, NULL);
    if (n <= 0) {
        fprintf(stderr, "ts-probe: no reply\n");
        return 1;
    }
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(buf, 1, (size_t) n, f) != (size_t) n || fclose(f)) {
        fprintf(stderr, "ts-probe: %s: %s\n", file, strerror(errno));
        return 1;
    }
    /* The family id is dynamic; keep it next to the capture. */
    printf("family=%d bytes=%d\n", fam, n);
    free(buf);
    nl_socket_free(s);
    return 0;
}

static int
policy_probe(char **argv)
{
    uint64_t v[5];
    for (int i = 0; i < 5; i++) {
        char *end;
        v[i] = strtoull(argv[i], &end, 10);
        if (*end || end == argv[i]) {
            return usage();
        }
    }
    static struct pol_model m;
    char err[256];
    if (pol_model_parse(&m, model_2cpu, err, sizeof err) < 0) {
        fprintf(stderr, "ts-probe: model: %s\n", err);
        return 1;
    }
    struct pol_config c;
    pol_config_default(&c);
    struct pol_vm vm = { .id = 1, .first_vcpu = 0, .n_vcpus = 2,
                         .policy.share_smt = true };
    vm.policy.kind = POL_BALANCED;
    struct pol_vcpu vc[2];
    memset(vc, 0, sizeof vc);
    for (int i = 0; i < 2; i++) {
        vc[i].vm = 0;
        vc[i].idx = (uint32_t) i;
        vc[i].cpu = 0;
        for (int k = 0; k < 4; k++) {
            pol_load_update(&vc[i].load, &m, 0, 0, v[2 * i], v[2 * i + 1],
                            v[4]);
        }
    }
    struct pol_input in;
    memset(&in, 0, sizeof in);
    in.vms = &vm;
    in.n_vms = 1;
    in.vcpus = vc;
    in.n_vcpus = 2;
    cpuset_set(&in.managed, 0);
    cpuset_set(&in.managed, 1);
    in.online = in.managed;
    in.now_ns = 100ULL * 1000000000ULL;
    struct pol_state *st = pol_state_create(&m, &c);
    struct pol_plan *p = pol_plan_create(1, 2);
    if (!st || !p || pol_decide(st, &in, p) < 0) {
        fprintf(stderr, "ts-probe: pol_decide failed\n");
        return 1;
    }
    /* Spread: the two vCPUs are not both confined to one single CPU. */
    struct cpuset u;
    cpuset_or(&u, &p->vcpu_allowed[0], &p->vcpu_allowed[1]);
    printf("active=%u spread=%d ready_ppm=%" PRIu32 ",%" PRIu32 "\n",
           cpuset_count(&p->active), cpuset_count(&u) > 1,
           vc[0].load.ready_ppm, vc[1].load.ready_ppm);
    pol_plan_destroy(p);
    pol_state_destroy(st);
    return 0;
}

int
main(int argc, char **argv)
{
    enum ts_kind kind = TS_AUTO;
    int opt;
    while ((opt = getopt(argc, argv, "k:v:dr:p")) != -1) {
        switch (opt) {
        case 'k':
            if (!strcmp(optarg, "auto")) {
                kind = TS_AUTO;
            } else if (!strcmp(optarg, "taskstats")) {
                kind = TS_TASKSTATS;
            } else if (!strcmp(optarg, "schedstat")) {
                kind = TS_SCHEDSTAT;
            } else {
                return usage();
            }
            break;
        case 'v': {
            pid_t tids[256];
            unsigned n;
            int r = vcpu_tids((pid_t) atoi(optarg), tids, 256, &n);
            if (r < 0) {
                fprintf(stderr, "ts-probe: vcpu_tids: %s\n", strerror(-r));
                return 1;
            }
            for (unsigned i = 0; i < n; i++) {
                printf("%u %d\n", i, (int) tids[i]);
            }
            return 0;
        }
        case 'd': {
            int r = ts_delayacct_state(NULL);
            printf("%s\n", r == 1 ? "1" : r == 0 ? "0" : "unknown");
            return 0;
        }
        case 'r':
            if (optind >= argc) {
                return usage();
            }
            return record(optarg, (pid_t) atoi(argv[optind]));
        case 'p':
            if (argc - optind != 5) {
                return usage();
            }
            return policy_probe(argv + optind);
        default:
            return usage();
        }
    }
    if (optind >= argc) {
        return usage();
    }
    char err[256];
    struct ts_source *s = ts_open(kind, NULL, err, sizeof err);
    if (!s) {
        fprintf(stderr, "ts-probe: %s\n", err);
        return 1;
    }
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        uint64_t run, delay;
        int r = ts_read(s, (pid_t) atoi(argv[i]), &run, &delay);
        if (r < 0) {
            fprintf(stderr, "ts-probe: %s: %s\n", argv[i], strerror(-r));
            rc = 1;
            continue;
        }
        printf("%s %" PRIu64 " %" PRIu64 " %s\n", argv[i], run, delay,
               ts_name(s));
    }
    ts_close(s);
    return rc;
}
