/* tests/integration/pin-floor.c -- the cost of one live vCPU pin through
 * vpowerd's own libvirt driver, with no vpowerd running (031): the floor
 * under the host side of a guest's hint, which waits for every pin its
 * plan changes.
 *
 *     pin-floor URI UUID N
 *
 * Moves vCPU 0 of domain UUID back and forth between CPU 0 and CPU 1,
 * N times (every call changes the pin, so the driver skips none), timing
 * each drv_hv_libvirt.pin_vcpu() call, then puts the pin it found back.
 * Prints "n=N p50_us= p99_us= max_us=" (the p99 is the value below which
 * 99 % of the calls fall).  Exit 0; 1 if a pin or the restore failed; 2
 * on bad usage; 99 if the driver cannot open. */

#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "policy/cpuset.h"

static uint64_t
now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

    return x < y ? -1 : x > y;
}

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
    const struct drv_hv_ops *ops = &drv_hv_libvirt;
    struct cpuset orig, one[2];
    struct sched *s;
    struct drv_hv *hv;
    uint64_t *us;
    char err[256], *end;
    long n;
    int rc = 0, r;

    if (argc != 4 || (n = strtol(argv[3], &end, 10)) < 1 || *end
        || n > 100000) {
        fprintf(stderr, "usage: pin-floor URI UUID N (1..100000)\n");
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
    us = calloc((size_t) n, sizeof *us);
    for (long i = 0; us && i < n; i++) {
        uint64_t t0 = now_us();

        r = ops->pin_vcpu(hv, argv[2], 0, &one[i & 1]);
        us[i] = now_us() - t0;
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
    if (!rc && us) {
        qsort(us, (size_t) n, sizeof *us, cmp_u64);
        printf("n=%ld p50_us=%llu p99_us=%llu max_us=%llu\n", n,
               (unsigned long long) us[n / 2],
               (unsigned long long) us[(n * 99 + 99) / 100 - 1],
               (unsigned long long) us[n - 1]);
    }
    free(us);
    ops->close(hv);
    sched_destroy(s);
    return us ? rc : 1;
}
