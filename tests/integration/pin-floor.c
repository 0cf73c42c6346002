/* tests/integration/pin-floor.c -- the cost of one live vCPU pin, through
 * vpowerd's own libvirt driver and through libvirt alone, with no vpowerd
 * running (031, 034): the floor under the host side of a guest's hint,
 * which waits for every pin its plan changes.
 *
 *     pin-floor URI UUID N
 *
 * Moves vCPU 0 of domain UUID back and forth between CPU 0 and CPU 1,
 N times through virDomainPinVcpuFlags() alone, then N times through
 * drv_hv_libvirt.pin_vcpu() (every call changes the pin, so the driver
 * skips none; for a local QEMU the driver puts it in force through the
 * cpuset groups and libvirt records it when the driver closes, see
 * manager/drivers/cgpin.h), timing each call into the histogram
 * vpowerd times hints with (manager/control/histo.h), and puts the pin it
 * found back.  Prints "n=N p50_us= p99_us= max_us= libvirt_p50_us=
 * libvirt_p99_us= libvirt_max_us=" (exact, nearest rank; N at most
 * HISTO_RECENT so every call counts).  Exit 0; 1 if a pin or the
 * restore failed; 2 on bad usage; 99 if libvirt cannot be reached. */

#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

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

/* N pins of vCPU 0 through libvirt alone, alternating CPU 0 and CPU 1,
 * into 'h'.  Returns 0 or -1. */
static int
libvirt_pins(const char *uri, const char *uuid, long n, struct histo *h)
{
    unsigned char map[2] = { 1, 2 };
    virConnectPtr conn = virConnectOpen(uri);
    virDomainPtr dom = conn ? virDomainLookupByUUIDString(conn, uuid) : NULL;
    int rc = dom ? 0 : -1;

    for (long i = 0; i < n && rc == 0; i++) {
        uint64_t t0 = clk_now_ns();

        rc = virDomainPinVcpuFlags(dom, 0, &map[i & 1], 1,
                                   VIR_DOMAIN_AFFECT_LIVE) < 0 ? -1 : 0;
        histo_add(h, clk_now_ns() - t0);
    }
    if (rc < 0) {
        virErrorPtr e = virGetLastError();

        fprintf(stderr, "pin-floor: libvirt alone: %s\n",
                e && e->message ? e->message : "failed");
    }
    if (dom) {
        virDomainFree(dom);
    }
    if (conn) {
        virConnectClose(conn);
    }
    return rc;
}

int
main(int argc, char **argv)
{
    static struct histo h, lv;
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
    /* libvirt alone first: the driver, which does not run the loop here,
     * would not hear of these pins, and its pins and the restore come
     * after them. */
    if (libvirt_pins(argv[1], argv[2], n, &lv) < 0) {
        rc = 1;
    }
    for (long i = 0; i < n && !rc; i++) {
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
        printf("n=%ld p50_us=%llu p99_us=%llu max_us=%llu libvirt_p50_us=%llu "
               "libvirt_p99_us=%llu libvirt_max_us=%llu\n", n,
               (unsigned long long) (histo_recent_ns(&h, 0.5) / 1000),
               (unsigned long long) (histo_recent_ns(&h, 0.99) / 1000),
               (unsigned long long) (h.max_ns / 1000),
               (unsigned long long) (histo_recent_ns(&lv, 0.5) / 1000),
               (unsigned long long) (histo_recent_ns(&lv, 0.99) / 1000),
               (unsigned long long) (lv.max_ns / 1000));
    }
    ops->close(hv);
    sched_destroy(s);
    return rc;
}
