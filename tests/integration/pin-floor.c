/* tests/integration/pin-floor.c -- the cost of one live vCPU pin through
 * vpowerd's own libvirt driver, with no vpowerd running (031): the floor
 * under the host side of a guest's hint, which waits for every pin its
 * plan changes.
 *
 *     pin-floor URI UUID N
 *
 * Moves vCPU 0 of domain UUID back and forth between CPU 0 and CPU 1,
 * N times (every call changes the pin, so the driver skips none), timing
 * each drv_hv_libvirt.pin_vcpu() call into the histogram vpowerd times
 * hints with (manager/control/histo.h), then puts the pin it found back.
 * Prints "n=N p50_us= p99_us= max_us=" (exact, nearest rank; N at most
 * HISTO_RECENT so every call counts).  Exit 0; 1 if a pin or the
 * restore failed; 2 on bad usage; 99 if the driver cannot open. */

#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/control/histo.h"
#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "policy/cpuset.h"

static void
ev_cb(void *aux, enum drv_event ev, const char *uuid)
{
    (void) aux;
    (void) ev;
    (void) uuid;
}

int
main(int argc, char **argv)
{
    static struct histo h;
    const struct drv_hv_ops *ops = &drv_hv_libvirt;
    struct cpuset orig, one[2];
    struct sched *s;
    struct drv_hv *hv;
    char err[256], *end;
    long n;
    int rc = 0, r;

    if (argc != 4 || (n = strtol(argv[3], &end, 10)) < 1 || *end
        || n > HISTO_RECENT) {
        fprintf(stderr, "usage: pin-floor URI UUID N (1..%d)\n",
                HISTO_RECENT);
        return 2;
    }
    log_init("pin-floor", false, LOG_LVL_WARN);
    s = sched_create();
    hv = ops->open(argv[1], s, ev_cb, NULL, err, sizeof err);
    if (!hv) {
        fprintf(stderr, "pin-floor: %s\n", err);
        return 99;
    }
    r = ops->get_vcpu_pin(hv, argv[2], 0, &orig);
    if (r < 0) {
        fprintf(stderr, "pin-floor: reading vCPU 0's pin: %s\n", strerror(-r));
        ops->close(hv);
        return 1;
    }
    for (int i = 0; i < 2; i++) {
        cpuset_zero(&one[i]);
        cpuset_set(&one[i], (unsigned) i);
    }
    for (long i = 0; i < n; i++) {
        uint64_t t0 = clk_now_ns();

        r = ops->pin_vcpu(hv, argv[2], 0, &one[i & 1]);
        histo_add(&h, clk_now_ns() - t0);
        if (r < 0) {
            fprintf(stderr, "pin-floor: pin %ld: %s\n", i, strerror(-r));
            rc = 1;
            break;
        }
    }
    r = ops->pin_vcpu(hv, argv[2], 0, &orig);
    if (r < 0) {
        fprintf(stderr, "pin-floor: restoring vCPU 0's pin: %s\n",
                strerror(-r));
        rc = 1;
    }
    if (!rc) {
        printf("n=%ld p50_us=%llu p99_us=%llu max_us=%llu\n", n,
               (unsigned long long) (histo_recent_ns(&h, 0.5) / 1000),
               (unsigned long long) (histo_recent_ns(&h, 0.99) / 1000),
               (unsigned long long) (h.max_ns / 1000));
    }
    ops->close(hv);
    sched_destroy(s);
    return rc;
}
