/* tests/unit/test-drv-libvirt.c -- drv_hv_libvirt against libvirt's
 * in-process test driver (test:///default), with the event adapters on
 * manager/sched: listing, pin round trips, metadata (whose look-alike
 * elements are not the domain's), a lifecycle event that must arrive
 * through our own loop (no libvirt thread), how many libvirt calls pins
 * cost, and what libvirt's migration events and job answers are mapped
 * to (the test driver cannot migrate: the mapping functions are checked
 * directly). */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "manager/drivers/drv.h"
#include "manager/drivers/drv_libvirt.h"
#include "manager/log.h"
#include "manager/sched.h"

/* Calls the driver makes into libvirt, counted through the linker's
 * --wrap (tests/unit/manager.mk). */
enum {
    N_LOOKUP, N_PIN_VCPU, N_PIN_EMU, N_PIN_IOT, N_IOT_INFO, N_GET_VCPU,
    N_GET_EMU, N_KINDS
};
static unsigned n_calls[N_KINDS];

static unsigned
calls_total(void)
{
    unsigned t = 0;

    for (int k = 0; k < N_KINDS; k++) {
        t += n_calls[k];
    }
    return t;
}

virDomainPtr __real_virDomainLookupByUUIDString(virConnectPtr, const char *);
virDomainPtr __wrap_virDomainLookupByUUIDString(virConnectPtr, const char *);
int __real_virDomainPinVcpuFlags(virDomainPtr, unsigned, unsigned char *,
                                 int, unsigned);
int __wrap_virDomainPinVcpuFlags(virDomainPtr, unsigned, unsigned char *,
                                 int, unsigned);
int __real_virDomainPinEmulator(virDomainPtr, unsigned char *, int,
                                unsigned);
int __wrap_virDomainPinEmulator(virDomainPtr, unsigned char *, int,
                                unsigned);
int __real_virDomainPinIOThread(virDomainPtr, unsigned, unsigned char *,
                                int, unsigned);
int __wrap_virDomainPinIOThread(virDomainPtr, unsigned, unsigned char *,
                                int, unsigned);
int __real_virDomainGetIOThreadInfo(virDomainPtr,
                                    virDomainIOThreadInfoPtr **, unsigned);
int __wrap_virDomainGetIOThreadInfo(virDomainPtr,
                                    virDomainIOThreadInfoPtr **, unsigned);
int __real_virDomainGetVcpuPinInfo(virDomainPtr, int, unsigned char *, int,
                                   unsigned);
int __wrap_virDomainGetVcpuPinInfo(virDomainPtr, int, unsigned char *, int,
                                   unsigned);
int __real_virDomainGetEmulatorPinInfo(virDomainPtr, unsigned char *, int,
                                       unsigned);
int __wrap_virDomainGetEmulatorPinInfo(virDomainPtr, unsigned char *, int,
                                       unsigned);

virDomainPtr
__wrap_virDomainLookupByUUIDString(virConnectPtr c, const char *u)
{
    n_calls[N_LOOKUP]++;
    return __real_virDomainLookupByUUIDString(c, u);
}

int
__wrap_virDomainPinVcpuFlags(virDomainPtr d, unsigned v, unsigned char *m,
                             int l, unsigned f)
{
    n_calls[N_PIN_VCPU]++;
    return __real_virDomainPinVcpuFlags(d, v, m, l, f);
}

int
__wrap_virDomainPinEmulator(virDomainPtr d, unsigned char *m, int l,
                            unsigned f)
{
    n_calls[N_PIN_EMU]++;
    return __real_virDomainPinEmulator(d, m, l, f);
}

int
__wrap_virDomainPinIOThread(virDomainPtr d, unsigned i, unsigned char *m,
                            int l, unsigned f)
{
    n_calls[N_PIN_IOT]++;
    return __real_virDomainPinIOThread(d, i, m, l, f);
}

int
__wrap_virDomainGetIOThreadInfo(virDomainPtr d,
                                virDomainIOThreadInfoPtr **i, unsigned f)
{
    n_calls[N_IOT_INFO]++;
    return __real_virDomainGetIOThreadInfo(d, i, f);
}

int
__wrap_virDomainGetVcpuPinInfo(virDomainPtr d, int n, unsigned char *m,
                               int l, unsigned f)
{
    n_calls[N_GET_VCPU]++;
    return __real_virDomainGetVcpuPinInfo(d, n, m, l, f);
}

int
__wrap_virDomainGetEmulatorPinInfo(virDomainPtr d, unsigned char *m, int l,
                                   unsigned f)
{
    n_calls[N_GET_EMU]++;
    return __real_virDomainGetEmulatorPinInfo(d, m, l, f);
}

struct ctx {
    struct sched *s;
    struct drv_hv *hv;
    int n_started, n_stopped, n_changed, n_migr;
    char last_uuid[DRV_UUID_LEN];
};

static void
ev_cb(void *aux, enum drv_event ev, const char *uuid)
{
    struct ctx *c = aux;

    if (ev == DRV_EV_STARTED) {
        c->n_started++;
    } else if (ev == DRV_EV_STOPPED) {
        c->n_stopped++;
        sched_quit(c->s, 0);
    } else if (ev == DRV_EV_CHANGED) {
        c->n_changed++;
    }
    if (uuid) {
        snprintf(c->last_uuid, sizeof c->last_uuid, "%s", uuid);
    }
}

static void
migr_cb(void *aux, enum drv_migr ev, const char *uuid)
{
    struct ctx *c = aux;

    c->n_migr++;
}

static int
setup(void **state)
{
    struct ctx *c = calloc(1, sizeof *c);
    char err[256];

    c->s = sched_create();
    c->hv = drv_hv_libvirt.open("test:///default", c->s, ev_cb, c, err,
                                sizeof err);
    if (!c->hv) {
        fprintf(stderr, "open: %s\n", err);
        return -1;
    }
    drv_hv_libvirt.set_migr_cb(c->hv, migr_cb, c);
    *state = c;
    return 0;
}

static int
teardown(void **state)
{
    struct ctx *c = *state;

    drv_hv_libvirt.close(c->hv);
    sched_destroy(c->s);
    free(c);
    return 0;
}

static const struct drv_dom *
find_test_dom(struct drv_dom *doms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(doms[i].name, "test")) {
            return &doms[i];
        }
    }
    return NULL;
}

static void
test_list_and_stats(void **state)
{
    struct ctx *c = *state;
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    struct drv_vcpu_stat st[8];
    size_t n = 0;

    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    assert_true(d->n_vcpus >= 1);
    assert_false(d->migrated_in);          /* Booted here. */
    assert_int_equal(strlen(d->uuid), 36);
    assert_false(d->static_pinning);
    assert_int_equal(drv_hv_libvirt.vcpu_stats(c->hv, d->uuid, st, 8, &n),
                     0);
    assert_true(n >= 1);
    assert_int_equal(drv_hv_libvirt.vcpu_stats(c->hv,
                     "00000000-0000-0000-0000-000000000000", st, 8, &n),
                     -ENOENT);
    free(doms);
}

static void
test_pins(void **state)
{
    struct ctx *c = *state;
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    struct cpuset want, got;
    size_t n = 0;

    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    cpuset_zero(&want);
    cpuset_set(&want, 1);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, d->uuid, 0, &want), 0);
    assert_int_equal(drv_hv_libvirt.get_vcpu_pin(c->hv, d->uuid, 0, &got),
                     0);
    assert_true(cpuset_equal(&want, &got));
    cpuset_set(&want, 0);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, d->uuid, 0, &want), 0);
    assert_int_equal(drv_hv_libvirt.get_vcpu_pin(c->hv, d->uuid, 0, &got),
                     0);
    assert_true(cpuset_equal(&want, &got));
    free(doms);
}

static void
test_metadata(void **state)
{
    struct ctx *c = *state;
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    char buf[512];
    size_t n = 0;

    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    assert_int_equal(drv_hv_libvirt.get_metadata(c->hv, d->uuid, buf,
                                                 sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(drv_hv_libvirt.set_metadata(c->hv, d->uuid,
                     "<policy kind=\"performance\" latency-us=\"50\"/>"),
                     0);
    assert_int_equal(drv_hv_libvirt.get_metadata(c->hv, d->uuid, buf,
                                                 sizeof buf), 0);
    assert_non_null(strstr(buf, "kind=\"performance\""));
    assert_int_equal(drv_hv_libvirt.set_metadata(c->hv, d->uuid, NULL), 0);
    assert_int_equal(drv_hv_libvirt.get_metadata(c->hv, d->uuid, buf,
                                                 sizeof buf), 0);
    assert_string_equal(buf, "");
    free(doms);
}

/* vpower's metadata is writable by any libvirt user allowed to set
 * metadata.  Elements inside it that look like <vcpu cpuset=...> or an
 * agent <channel> are not the domain's: they must neither make the
 * domain count as statically pinned nor point vpowerd at a socket. */
static void
test_metadata_lookalikes(void **state)
{
    struct ctx *c = *state;
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    char uuid[DRV_UUID_LEN];
    size_t n = 0;

    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    snprintf(uuid, sizeof uuid, "%s", d->uuid);
    free(doms);
    assert_int_equal(drv_hv_libvirt.set_metadata(c->hv, uuid,
        "<policy kind=\"balanced\">"
        "<vcpu xmlns=\"urn:x\" cpuset=\"0\"/>"
        "<channel xmlns=\"urn:x\" type=\"unix\">"
        "<source path=\"/tmp/not-the-agent\"/>"
        "<target name=\"org.vpower.agent.0\"/></channel></policy>"), 0);
    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    assert_false(d->static_pinning);
    assert_string_equal(d->agent_path, "");
    free(doms);
    assert_int_equal(drv_hv_libvirt.set_metadata(c->hv, uuid, NULL), 0);
}

static void
timeout_cb(void *aux)
{
    struct ctx *c = aux;

    sched_quit(c->s, 1);
}

/* Destroying the domain through a second connection must produce a
 * STOPPED event, dispatched by libvirt through our adapters. */
static void
test_lifecycle_event(void **state)
{
    struct ctx *c = *state;
    virConnectPtr other = virConnectOpen("test:///default");
    virDomainPtr dom;
    int rc;

    assert_non_null(other);
    dom = virDomainLookupByName(other, "test");
    assert_non_null(dom);
    assert_int_equal(virDomainDestroy(dom), 0);
    sched_add_timer(c->s, 5000000000ull, timeout_cb, c);
    rc = sched_run(c->s);
    assert_int_equal(rc, 0);
    assert_int_equal(c->n_stopped, 1);
    /* A plain destroy is no migration. */
    assert_int_equal(c->n_migr, 0);
    c->n_started = 0;
    assert_int_equal(virDomainCreate(dom), 0);
    virDomainFree(dom);
    virConnectClose(other);
}

/* The domain "test"'s UUID into 'uuid' and its vCPU count. */
static unsigned
test_uuid(struct ctx *c, char *uuid)
{
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    unsigned nv;
    size_t n = 0;

    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    snprintf(uuid, DRV_UUID_LEN, "%s", d ? d->uuid : "");
    nv = d ? d->n_vcpus : 0;
    free(doms);
    return nv;
}

/* The floor of libvirt calls: a domain is looked up once, all its vCPU
 * pins are read in one call, a pin already in force costs nothing, a
 * changed one one call (two on the test driver, which refuses
 * AFFECT_LIVE), and after the domain restarts (a lifecycle event) the
 * pins are made again and are what libvirt reports.  (The test driver
 * raises no tunable events, so someone else's pin is not covered.) */
static void
test_pin_calls(void **state)
{
    struct ctx *c = *state;
    char uuid[DRV_UUID_LEN];
    struct cpuset a, b, got;
    virConnectPtr other;
    virDomainPtr dom;
    unsigned nv = test_uuid(c, uuid), per_pin;
    unsigned char map = 0;

    assert_true(nv >= 2);
    cpuset_zero(&a);
    cpuset_set(&a, 1);
    cpuset_zero(&b);
    cpuset_set(&b, 0);
    cpuset_set(&b, 1);
    memset(n_calls, 0, sizeof n_calls);
    for (unsigned v = 0; v < nv; v++) {
        assert_int_equal(drv_hv_libvirt.get_vcpu_pin(c->hv, uuid, v, &got),
                         0);
    }
    assert_int_equal(n_calls[N_GET_VCPU], 1);
    assert_true(n_calls[N_LOOKUP] <= 1);
    assert_int_equal(drv_hv_libvirt.get_vcpu_pin(c->hv, uuid, 4096, &got),
                     -ERANGE);

    memset(n_calls, 0, sizeof n_calls);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 0, &a), 0);
    per_pin = n_calls[N_PIN_VCPU];
    assert_true(per_pin == 1 || per_pin == 2);
    assert_int_equal(calls_total(), per_pin);
    /* In force already: no call, and the reading is what was set. */
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 0, &a), 0);
    assert_int_equal(drv_hv_libvirt.get_vcpu_pin(c->hv, uuid, 0, &got), 0);
    assert_true(cpuset_equal(&got, &a));
    assert_int_equal(calls_total(), per_pin);
    /* A change is one pin; changing vCPU 1 leaves vCPU 0 alone. */
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 1, &a), 0);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 0, &b), 0);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 1, &a), 0);
    assert_int_equal(n_calls[N_PIN_VCPU], 3 * per_pin);
    /* The emulator: one pin (and its IOThreads), then nothing. */
    memset(n_calls, 0, sizeof n_calls);
    assert_int_equal(drv_hv_libvirt.pin_emulator(c->hv, uuid, &b), 0);
    assert_int_equal(n_calls[N_PIN_EMU], 1);
    assert_int_equal(drv_hv_libvirt.pin_emulator(c->hv, uuid, &b), 0);
    assert_int_equal(drv_hv_libvirt.get_emulator_pin(c->hv, uuid, &got),
                     0);
    assert_true(cpuset_equal(&got, &b));
    assert_int_equal(n_calls[N_PIN_EMU], 1);
    assert_int_equal(n_calls[N_GET_EMU], 0);
    assert_int_equal(n_calls[N_LOOKUP], 0);

    /* The domain restarts: the pins are gone in libvirt and known to be
     * gone here, so the same pin is made again. */
    other = virConnectOpen("test:///default");
    assert_non_null(other);
    dom = virDomainLookupByName(other, "test");
    assert_non_null(dom);
    assert_int_equal(virDomainDestroy(dom), 0);
    c->n_stopped = 0;
    sched_add_timer(c->s, 5000000000ull, timeout_cb, c);
    assert_int_equal(sched_run(c->s), 0);
    assert_int_equal(c->n_stopped, 1);
    assert_int_equal(virDomainCreate(dom), 0);
    memset(n_calls, 0, sizeof n_calls);
    assert_int_equal(drv_hv_libvirt.pin_vcpu(c->hv, uuid, 0, &a), 0);
    assert_int_equal(n_calls[N_PIN_VCPU], per_pin);
    assert_int_equal(n_calls[N_LOOKUP], 1);
    assert_int_equal(__real_virDomainGetVcpuPinInfo(dom, 1, &map, 1, 0), 1);
    assert_int_equal(map & 0x3, 0x2);
    virDomainFree(dom);
    virConnectClose(other);
}

/* Every migration signal on both ends, and that other details of the
 * same event types are not taken for migrations. */
static void
test_lifecycle_mapping(void **state)
{
    static const struct {
        int event, detail, ev, migr;
    } cases[] = {
        { VIR_DOMAIN_EVENT_STARTED, VIR_DOMAIN_EVENT_STARTED_MIGRATED,
          DRV_EV_STARTED, DRV_MIGR_IN_BEGIN },
        { VIR_DOMAIN_EVENT_STARTED, VIR_DOMAIN_EVENT_STARTED_BOOTED,
          DRV_EV_STARTED, -1 },
        { VIR_DOMAIN_EVENT_STARTED, VIR_DOMAIN_EVENT_STARTED_RESTORED,
          DRV_EV_STARTED, -1 },
        { VIR_DOMAIN_EVENT_RESUMED, VIR_DOMAIN_EVENT_RESUMED_MIGRATED,
          DRV_EV_STARTED, DRV_MIGR_RESUMED },
        { VIR_DOMAIN_EVENT_RESUMED, VIR_DOMAIN_EVENT_RESUMED_UNPAUSED,
          DRV_EV_STARTED, -1 },
        { VIR_DOMAIN_EVENT_RESUMED, VIR_DOMAIN_EVENT_RESUMED_POSTCOPY,
          DRV_EV_STARTED, -1 },
        { VIR_DOMAIN_EVENT_SUSPENDED, VIR_DOMAIN_EVENT_SUSPENDED_MIGRATED,
          -1, DRV_MIGR_OUT_BEGIN },
        { VIR_DOMAIN_EVENT_SUSPENDED, VIR_DOMAIN_EVENT_SUSPENDED_POSTCOPY,
          -1, DRV_MIGR_OUT_BEGIN },
        { VIR_DOMAIN_EVENT_SUSPENDED, VIR_DOMAIN_EVENT_SUSPENDED_PAUSED,
          -1, -1 },
        { VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_MIGRATED,
          DRV_EV_STOPPED, DRV_MIGR_GONE },
        { VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_DESTROYED,
          DRV_EV_STOPPED, -1 },
        { VIR_DOMAIN_EVENT_STOPPED, VIR_DOMAIN_EVENT_STOPPED_SAVED,
          DRV_EV_STOPPED, -1 },
        { VIR_DOMAIN_EVENT_CRASHED, 0, DRV_EV_STOPPED, -1 },
        { VIR_DOMAIN_EVENT_DEFINED, VIR_DOMAIN_EVENT_DEFINED_UPDATED,
          DRV_EV_CHANGED, -1 },
        { VIR_DOMAIN_EVENT_PMSUSPENDED, 0, -1, -1 },
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct drv_lv_event m = drv_libvirt_lifecycle(cases[i].event,
                                                      cases[i].detail);

        if (m.ev != cases[i].ev || m.migr != cases[i].migr) {
            fail_msg("event %d detail %d: got ev %d migr %d, want %d %d",
                     cases[i].event, cases[i].detail, m.ev, m.migr,
                     cases[i].ev, cases[i].migr);
        }
    }
}

static void
test_job_mapping(void **state)
{
    struct ctx *c = *state;
    struct drv_dom *doms = NULL;
    const struct drv_dom *d;
    enum drv_job job = DRV_JOB_OTHER;
    size_t n = 0;

    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_UNBOUNDED,
                     VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT),
                     DRV_JOB_MIGR_OUT);
    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_UNBOUNDED,
                     VIR_DOMAIN_JOB_OPERATION_MIGRATION_IN),
                     DRV_JOB_MIGR_IN);
    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_UNBOUNDED,
                     VIR_DOMAIN_JOB_OPERATION_SAVE), DRV_JOB_OTHER);
    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_BOUNDED, -1),
                     DRV_JOB_OTHER);
    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_NONE,
                     VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT), DRV_JOB_NONE);
    assert_int_equal(drv_libvirt_job(VIR_ERR_OK, VIR_DOMAIN_JOB_COMPLETED,
                     VIR_DOMAIN_JOB_OPERATION_MIGRATION_OUT), DRV_JOB_NONE);
    /* The destination's refusal (seen with libvirt 9 and QEMU 7.2 in
     * tests/integration/061-migration.sh) is the incoming job; other
     * errors are no answer. */
    assert_int_equal(drv_libvirt_job(VIR_ERR_OPERATION_UNSUPPORTED, 0, -1),
                     DRV_JOB_MIGR_IN);
    assert_int_equal(drv_libvirt_job(VIR_ERR_NO_SUPPORT, 0, -1), -1);
    assert_int_equal(drv_libvirt_job(VIR_ERR_NO_DOMAIN, 0, -1), -1);

    assert_true(drv_libvirt_migrated_in(VIR_DOMAIN_RUNNING,
                                        VIR_DOMAIN_RUNNING_MIGRATED));
    assert_false(drv_libvirt_migrated_in(VIR_DOMAIN_RUNNING,
                                         VIR_DOMAIN_RUNNING_BOOTED));
    assert_false(drv_libvirt_migrated_in(VIR_DOMAIN_PAUSED,
                                         VIR_DOMAIN_PAUSED_MIGRATION));

    /* The test driver has no job query: the caller learns it cannot
     * ask, and an unknown domain is gone. */
    assert_int_equal(drv_hv_libvirt.list(c->hv, &doms, &n), 0);
    d = find_test_dom(doms, n);
    assert_non_null(d);
    assert_int_equal(drv_hv_libvirt.migr_job(c->hv, d->uuid, &job),
                     -ENOTSUP);
    assert_int_equal(job, DRV_JOB_NONE);
    assert_int_equal(drv_hv_libvirt.migr_job(c->hv,
                     "00000000-0000-0000-0000-000000000000", &job),
                     -ENOENT);
    free(doms);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_and_stats),
        cmocka_unit_test(test_pins),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_metadata_lookalikes),
        cmocka_unit_test(test_lifecycle_event),
        cmocka_unit_test(test_pin_calls),
        cmocka_unit_test(test_lifecycle_mapping),
        cmocka_unit_test(test_job_mapping),
    };

    log_init("test-drv-libvirt", false, LOG_LVL_WARN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
