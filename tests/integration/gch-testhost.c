/* tests/integration/gch-testhost.c -- the guest channel without vpowerd.
 *
 * A test tool: runs the real manager/guestchan.c (connect, backoff,
 * decode, rate limit, acks) on the real sched loop against the channel
 * sockets of running domains, with the daemon replaced by stub gch_ops
 * whose hint() prints the hint and returns at once.  Integration tests use
 * it to exercise a real guest's agent over real virtio-serial before (or
 * without) vpowerd, and to read exact per-VM counters.
 *
 *   gch-testhost [--rate N] [--duration S] NAME=SOCKET:NVCPUS...
 *
 * Prints "HINT NAME KIND ARG TEXT" per hint that reached "policy" and,
 * on SIGTERM/SIGINT or after --duration, one line per VM:
 * "STATS NAME msgs=N hints=N rejected=N connects=N hello=0|1". */

#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/guestchan.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

static const char *const kind_names[] = {
    "latency-begin", "latency-end", "batch", "boost", "idle", "util"
};

static void
stub_hint(struct vpd *d, struct vpd_vm *vm, enum vpd_hint_kind kind,
          uint32_t arg, const char *text, uint64_t read_ns)
{
    (void) read_ns;
    (void) d;
    vm->hints_total[kind]++;
    printf("HINT %s %s %" PRIu32 " %s\n", vm->dom.name, kind_names[kind],
           arg, text);
    fflush(stdout);
}

static void
stub_count_error(struct vpd *d, enum vpd_err_kind kind)
{
    d->n_errors[kind]++;
}

/* The daemon's entry points, as the channel sees them. */
static const struct gch_ops stub_ops = {
    .hint = stub_hint,
    .count_error = stub_count_error,
};

static void
on_quit(int signo, void *aux)
{
    (void) signo;
    sched_quit(aux, 0);
}

static void
on_timeout(void *aux)
{
    sched_quit(aux, 0);
}

int
main(int argc, char **argv)
{
    struct vpd d;
    struct vpd_vm *vm;
    unsigned long duration = 0;
    int i;

    memset(&d, 0, sizeof d);
    log_init("gch-testhost", false, getenv("GCH_DEBUG") ? LOG_LVL_DEBUG
                                                       : LOG_LVL_INFO);
    d.sched = sched_create();
    d.conf.hint_rate = 20;
    for (i = 1; i < argc; i++) {
        char *eq, *colon;

        if (!strcmp(argv[i], "--rate") && i + 1 < argc) {
            d.conf.hint_rate = (uint32_t) strtoul(argv[++i], NULL, 10);
            continue;
        }
        if (!strcmp(argv[i], "--duration") && i + 1 < argc) {
            duration = strtoul(argv[++i], NULL, 10);
            continue;
        }
        eq = strchr(argv[i], '=');
        colon = strrchr(argv[i], ':');
        if (!eq || !colon || colon < eq) {
            fprintf(stderr, "gch-testhost: '%s' is not NAME=SOCKET:NVCPUS\n",
                    argv[i]);
            return 2;
        }
        vm = XNEW(struct vpd_vm);
        *eq = *colon = '\0';
        snprintf(vm->dom.name, sizeof vm->dom.name, "%s", argv[i]);
        snprintf(vm->dom.agent_path, sizeof vm->dom.agent_path, "%s",
                 eq + 1);
        vm->n_vcpus = (unsigned) strtoul(colon + 1, NULL, 10);
        vm->next = d.vms;
        d.vms = vm;
        d.n_vms++;
    }
    if (!d.vms) {
        fprintf(stderr, "usage: gch-testhost [--rate N] [--duration S] "
                "NAME=SOCKET:NVCPUS...\n");
        return 2;
    }
    sched_add_signal(d.sched, SIGTERM, on_quit, d.sched);
    sched_add_signal(d.sched, SIGINT, on_quit, d.sched);
    if (duration) {
        sched_add_timer(d.sched, duration * 1000000000ull, on_timeout,
                        d.sched);
    }
    for (vm = d.vms; vm; vm = vm->next) {
        gch_attach(&d, vm, &stub_ops);
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    sched_run(d.sched);
    for (vm = d.vms; vm; vm = vm->next) {
        struct gch_info info;
        uint64_t hints = 0;
        unsigned k;

        for (k = 0; k < VPD_N_HINTS; k++) {
            hints += vm->hints_total[k];
        }
        gch_info(vm, &info);
        printf("STATS %s msgs=%" PRIu64 " hints=%" PRIu64 " rejected=%"
               PRIu64 " connects=%" PRIu64 " hello=%d acks_dropped=%"
               PRIu64 "\n", vm->dom.name, info.n_msgs, hints,
               vm->hints_rejected, info.n_connects, info.hello,
               info.n_acks_dropped);
        gch_detach(&d, vm);
    }
    while (d.vms) {
        vm = d.vms;
        d.vms = vm->next;
        free(vm);
    }
    sched_destroy(d.sched);
    return 0;
}
