/* tests/unit/test-cycle.c -- vpowerd's decision cycle (manager/cycle.h)
 * on dummy drivers and a virtual clock, through a scripted day: VMs
 * appear, one spikes, all go idle, one vanishes, and a host driver call
 * fails.  Checks the actions the cycle takes and what it keeps.  And
 * the timing of guest hints (cycle_hint): a pin costs virtual time, so
 * the read-to-applied sample of a hint that changed the plan is known
 * exactly. */

#include <config.h>

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "manager/conf.h"
#include "manager/cycle.h"
#include "manager/daemon.h"
#include "manager/drivers/drv_dummy_host.h"
#include "manager/hkset.h"
#include "manager/inputs/hostmodel.h"
#include "manager/drivers/meter.h"
#include "manager/log.h"
#include "manager/modelcheck.h"
#include "manager/vmreg.h"
#include "policy/correct.h"

/* ---- A scripted hypervisor on the virtual clock ---------------------- */

#define N_VMS 2
#define MAX_VCPUS 2

struct script_vm {
    const char *name;
    unsigned n_vcpus;
    bool running;
    unsigned busy_pct;            /* Each vCPU's share of wall time. */
    uint64_t time_ns[MAX_VCPUS];  /* Cumulative CPU time. */
    struct cpuset pin[MAX_VCPUS];
    bool migrating;               /* migr_job() answers DRV_JOB_MIGR_OUT. */
    unsigned n_job_asks;          /* migr_job() calls about it. */
    bool kernel_pins;             /* pin_may_wait() answers false. */
};

struct drv_hv {
    struct script_vm vm[N_VMS];
    uint64_t now_ns, last_ns;
    unsigned n_pins;
    uint64_t pin_cost_ns;         /* Virtual time each pin takes. */
};

static struct drv_hv hv;

static uint64_t
vclock(void *aux)
{
    return ((struct drv_hv *) aux)->now_ns;
}

/* Advances the virtual clock by 's' seconds of scripted load. */
static void
advance(unsigned s)
{
    uint64_t dt = (uint64_t) s * 1000000000u;

    for (unsigned i = 0; i < N_VMS; i++) {
        for (unsigned k = 0; k < hv.vm[i].n_vcpus && hv.vm[i].running; k++) {
            hv.vm[i].time_ns[k] += dt / 100 * hv.vm[i].busy_pct;
        }
    }
    hv.now_ns += dt;
}

static int
find(const char *uuid)
{
    for (int i = 0; i < N_VMS; i++) {
        if (hv.vm[i].running && !strcmp(hv.vm[i].name, uuid)) {
            return i;
        }
    }
    return -ENOENT;
}

static int
s_list(struct drv_hv *h, struct drv_dom **doms, size_t *n)
{
    struct drv_dom *d = calloc(N_VMS, sizeof *d);

    *n = 0;
    for (unsigned i = 0; i < N_VMS; i++) {
        if (h->vm[i].running) {
            snprintf(d[*n].uuid, sizeof d[*n].uuid, "%s", h->vm[i].name);
            snprintf(d[*n].name, sizeof d[*n].name, "%s", h->vm[i].name);
            d[*n].id = (int) i;
            d[*n].n_vcpus = h->vm[i].n_vcpus;
            (*n)++;
        }
    }
    *doms = d;
    return 0;
}

static int
s_vcpu_stats(struct drv_hv *h, const char *uuid, struct drv_vcpu_stat *out,
             size_t max, size_t *n)
{
    int i = find(uuid);

    if (i < 0) {
        return i;
    }
    *n = h->vm[i].n_vcpus < max ? h->vm[i].n_vcpus : max;
    for (size_t k = 0; k < *n; k++) {
        out[k].time_ns = h->vm[i].time_ns[k];
        out[k].has_delay = true;
        out[k].cpu = -1;
        CPUSET_FOREACH (c, &h->vm[i].pin[k]) {
            out[k].cpu = (int) c;
            break;
        }
    }
    return 0;
}

static int
s_pin_vcpu(struct drv_hv *h, const char *uuid, unsigned vcpu,
           const struct cpuset *set)
{
    int i = find(uuid);

    if (i < 0) {
        return i;
    }
    h->vm[i].pin[vcpu] = *set;
    h->n_pins++;
    h->now_ns += h->pin_cost_ns;
    return 0;
}

static int
s_pin_emulator(struct drv_hv *h, const char *uuid, const struct cpuset *set)
{
    (void) h;
    (void) set;
    return find(uuid) < 0 ? -ENOENT : 0;
}

static int
s_get_vcpu_pin(struct drv_hv *h, const char *uuid, unsigned vcpu,
               struct cpuset *set)
{
    int i = find(uuid);

    if (i < 0) {
        return i;
    }
    *set = h->vm[i].pin[vcpu];
    return 0;
}

static int
s_get_emulator_pin(struct drv_hv *h, const char *uuid, struct cpuset *set)
{
    (void) h;
    (void) uuid;
    (void) set;
    return -ENOTSUP;
}

static int
s_get_metadata(struct drv_hv *h, const char *uuid, char *buf, size_t len)
{
    (void) h;
    (void) uuid;
    (void) len;
    buf[0] = '\0';
    return 0;
}

static int
s_set_metadata(struct drv_hv *h, const char *uuid, const char *xml)
{
    (void) h;
    (void) uuid;
    (void) xml;
    return -ENOTSUP;
}

static int
s_migr_job(struct drv_hv *h, const char *uuid, enum drv_job *job)
{
    int i = find(uuid);

    *job = DRV_JOB_NONE;
    if (i < 0) {
        return i;
    }
    h->vm[i].n_job_asks++;
    *job = h->vm[i].migrating ? DRV_JOB_MIGR_OUT : DRV_JOB_NONE;
    return 0;
}

static bool
s_pin_may_wait(struct drv_hv *h, const char *uuid)
{
    int i = find(uuid);

    return i < 0 || !h->vm[i].kernel_pins;
}

static const struct drv_hv_ops script_hv = {
    .name = "script",
    .list = s_list,
    .vcpu_stats = s_vcpu_stats,
    .pin_vcpu = s_pin_vcpu,
    .pin_emulator = s_pin_emulator,
    .get_vcpu_pin = s_get_vcpu_pin,
    .get_emulator_pin = s_get_emulator_pin,
    .get_metadata = s_get_metadata,
    .set_metadata = s_set_metadata,
    .migr_job = s_migr_job,
    .pin_may_wait = s_pin_may_wait,
};

/* ---- The day --------------------------------------------------------- */

static struct vpd d;
static uint64_t idle_us = 500000;  /* Each CPU's idle time per cycle. */

/* Runs cycles for 's' seconds as vpowerd's timer would; returns the
 * largest number of active CPUs planned meanwhile. */
static unsigned
run_for(unsigned s)
{
    uint64_t end = hv.now_ns + (uint64_t) s * 1000000000u;
    unsigned most = 0;

    while (hv.now_ns < end) {
        unsigned k;

        advance((unsigned) (cycle_next_delay_ns(&d) / 1000000000u));
        /* Idle residency of the dummy host follows the scripted load. */
        for (unsigned c = 0; c < d.n_cpus; c++) {
            dummy_host_advance_idle(d.host, c, 2, idle_us);
        }
        cycle_run(&d, true);
        k = cpuset_count(&d.plan->active);
        most = k > most ? k : most;
    }
    return most;
}

static void
setup_day(void)
{
    static const struct cycle_clock clock = { vclock, &hv };
    char err[256];

    memset(&hv, 0, sizeof hv);
    memset(&d, 0, sizeof d);
    hv.vm[0] = (struct script_vm) { .name = "web", .n_vcpus = 2 };
    hv.vm[1] = (struct script_vm) { .name = "batch", .n_vcpus = 1 };
    conf_defaults(&d.conf);
    conf_to_policy(&d.conf, &d.pcfg);
    d.hv_ops = &script_hv;
    d.hv = &hv;
    d.host_ops = &drv_host_dummy;
    d.host = drv_host_dummy.open("cpus=8", err, sizeof err);
    assert_non_null(d.host);
    assert_int_equal(drv_host_dummy.n_cpus(d.host, &d.n_cpus), 0);
    assert_int_equal(hostmodel_build(d.host_ops, d.host, NULL, &d.model,
                                     err, sizeof err), 0);
    d.pol = pol_state_create(&d.model, &d.pcfg);
    assert_non_null(d.pol);
    cycle_create(&d, &clock, NULL);
    for (unsigned c = 0; c < d.n_cpus; c++) {
        d.cpus[c].present = d.cpus[c].managed = d.cpus[c].online = true;
        cpuset_set(&d.cyc->managed, c);
        cpuset_set(&d.cyc->online, c);
        for (unsigned i = 0; i < N_VMS; i++) {
            for (unsigned k = 0; k < MAX_VCPUS; k++) {
                cpuset_set(&hv.vm[i].pin[k], c);
            }
        }
    }
    assert_int_equal(vmreg_resync(&d), 0);
    cycle_prime(&d);
}

static void
test_day(void **state)
{
    clock_t t0 = clock();
    uint64_t pins, freqs;
    unsigned quiet, spike;

    (void) state;
    setup_day();

    /* No VMs yet: decisions, nothing to pin. */
    run_for(20);
    assert_true(d.n_decisions > 0);
    assert_int_equal(d.n_vms, 0);
    assert_int_equal(hv.n_pins, 0);

    /* Two VMs appear, lightly loaded: they get pinned, and after the
     * packing dwell they share few cores. */
    hv.vm[0].running = hv.vm[1].running = true;
    hv.vm[0].busy_pct = hv.vm[1].busy_pct = 5;
    assert_int_equal(vmreg_resync(&d), 0);
    assert_int_equal(d.n_vms, 2);
    run_for(120);
    assert_true(hv.n_pins > 0);
    assert_true(d.n_actions[POL_A_PIN_VCPU] == hv.n_pins);
    quiet = cpuset_count(&d.plan->active);
    assert_true(quiet < d.n_cpus);

    /* web spikes: more cores at once, frequency raised. */
    freqs = d.n_actions[POL_A_SET_FREQ];
    hv.vm[0].busy_pct = 100;
    spike = run_for(30);
    assert_true(spike > quiet);
    assert_true(d.n_actions[POL_A_SET_FREQ] > freqs);
    assert_true(d.host_energy_j > 0);

    /* All idle again: packed back down after the dwell. */
    hv.vm[0].busy_pct = 1;
    hv.vm[1].busy_pct = 1;
    run_for(180);
    assert_true(cpuset_count(&d.plan->active) < spike);

    /* A frequency write fails once: counted, the cycle goes on. */
    dummy_host_inject(d.host, DUMMY_OP_SET_FREQ, -1, -EIO, 1);
    hv.vm[0].busy_pct = 100;
    run_for(30);
    assert_true(d.n_errors[VPD_E_SYSFS] >= 1);
    hv.vm[0].busy_pct = 1;

    /* batch vanishes between cycles: dropped at the next sample. */
    hv.vm[1].running = false;
    pins = d.n_actions[POL_A_PIN_VCPU];
    run_for(10);
    assert_int_equal(d.n_vms, 1);
    assert_string_equal(d.vms->dom.name, "web");
    assert_true(d.n_actions[POL_A_PIN_VCPU] >= pins);
    assert_true(d.vms->energy_j > 0);

    vmreg_clear(&d);
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
    /* The whole day in virtual time, well under a second of CPU. */
    assert_true((double) (clock() - t0) / CLOCKS_PER_SEC < 1.0);
}

/* ---- Housekeeping: a recording driver table ------------------------- */

struct drv_hk {
    unsigned n_confine;
    struct cpuset last;
    bool repeated;                /* Called twice with the same set. */
    uint32_t pressure_cpct;
    /* What ran on the freed CPUs, since "boot": each reading adds 24
     * interrupts of IRQ 36 and, to threads (only when asked for them),
     * 5 runs of tid 57, which last ran on the set, and 100 of tid 58,
     * which did not. */
    unsigned n_wakers, n_wakers_threads;
    struct cpuset wakers_set;
    uint64_t irq36, t57, t58;
};

static int
fk_confine(struct drv_hk *h, const struct cpuset *set,
           struct drv_hk_report *rep)
{
    h->repeated |= h->n_confine && cpuset_equal(set, &h->last);
    h->last = *set;
    h->n_confine++;
    memset(rep, 0, sizeof *rep);
    return 0;
}

static int
fk_pressure(struct drv_hk *h, uint32_t *cpct)
{
    *cpct = h->pressure_cpct;
    return 0;
}

static int
fk_wakers(struct drv_hk *h, const struct cpuset *cpus, bool threads,
          struct drv_waker **out)
{
    struct drv_waker *w = calloc(3, sizeof *w);

    h->n_wakers++;
    h->wakers_set = *cpus;
    h->irq36 += 24;
    w[0] = (struct drv_waker) { .label = "36", .name = "virtio1-req.0",
                                .count = h->irq36 };
    if (!threads) {
        *out = w;
        return 1;
    }
    h->n_wakers_threads++;
    h->t57 += 5;
    h->t58 += 100;
    /* Unsorted, as a directory walk gives them. */
    w[1] = (struct drv_waker) { .thread = true, .tid = 58, .name = "busy",
                                .count = h->t58 };
    w[2] = (struct drv_waker) { .thread = true, .on_set = true, .tid = 57,
                                .name = "kworker/1:1", .count = h->t57 };
    *out = w;
    return 3;
}

static const char *
fk_str(const struct drv_hk *h)
{
    (void) h;
    return "";
}

static void
fk_close(struct drv_hk *h)
{
    (void) h;
}

static const struct drv_hk_ops fake_hk = {
    .name = "fake",
    .confine = fk_confine,
    .pressure = fk_pressure,
    .wakers = fk_wakers,
    .mode = fk_str,
    .error = fk_str,
    .close = fk_close,
};

/* The policy's per-CPU busy from idle residency: counters that never
 * moved on any CPU (a fixture tree) say nothing (the vCPUs' loads stand
 * in); once one CPU's has moved they are live, and a CPU whose
 * residency stands still never idled: fully busy, even if it has not
 * idled since the daemon started. */
static void
test_never_idle(void **state)
{
    (void) state;
    setup_day();
    hv.vm[0].running = hv.vm[1].running = true;
    hv.vm[0].busy_pct = hv.vm[1].busy_pct = 50;
    assert_int_equal(vmreg_resync(&d), 0);
    for (unsigned i = 0; i < 3; i++) {
        advance(1);
        cycle_run(&d, true);
    }
    /* Not measured: the vCPUs' loads stand in, and the vCPUs report
     * CPU 0 as the one they ran on. */
    for (unsigned c = 1; c < d.n_cpus; c++) {
        assert_int_equal(d.cyc->in_busy[c], 0);
    }
    /* CPU 0 idles 40 % of a second; the others still never do. */
    for (unsigned i = 0; i < 3; i++) {
        advance(1);
        dummy_host_advance_idle(d.host, 0, 2, 400000);
        cycle_run(&d, true);
    }
    assert_int_equal(d.cyc->in_busy[0], 600000);
    for (unsigned c = 1; c < d.n_cpus; c++) {
        assert_int_equal(d.cyc->in_busy[c], 1000000);
    }
    vmreg_clear(&d);
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
}

/* Host work follows the active set (plus CPU0), the driver is called
 * only when that set changes, the override releases it to every CPU,
 * and host CPU pressure at the threshold spreads the VMs. */
static void
test_housekeeping(void **state)
{
    struct drv_hk fk;
    struct cpuset want, self;
    unsigned quiet, self_calls;

    (void) state;
    memset(&fk, 0, sizeof fk);
    setup_day();
    d.hks = hkset_create(&fake_hk, &fk, 10);
    hv.vm[0].running = hv.vm[1].running = true;
    hv.vm[0].busy_pct = hv.vm[1].busy_pct = 5;
    assert_int_equal(vmreg_resync(&d), 0);
    run_for(120);
    quiet = cpuset_count(&d.plan->active);
    assert_true(quiet < d.n_cpus);
    want = d.applied->active;
    cpuset_set(&want, 0);
    assert_true(fk.n_confine >= 1);
    assert_true(cpuset_equal(&fk.last, &want));
    assert_false(fk.repeated);
    /* vpowerd itself stays off the freed CPUs too, asked only when the
     * set changes. */
    self_calls = dummy_host_self(d.host, &self);
    assert_true(self_calls >= 1 && self_calls <= fk.n_confine);
    assert_true(cpuset_equal(&self, &want));

    /* The override: every CPU at once, without waiting for a period. */
    d.override_performance = true;
    cycle_run(&d, false);
    assert_int_equal(cpuset_count(&fk.last), d.n_cpus);
    assert_true(d.hks->released);
    assert_int_equal(dummy_host_self(d.host, &self), self_calls + 1);
    assert_int_equal(cpuset_count(&self), d.n_cpus);
    d.override_performance = false;
    run_for(60);
    assert_true(cpuset_count(&fk.last) < d.n_cpus);

    /* Host work waits 50 % of the time, threshold 10 %: spread. */
    fk.pressure_cpct = 5000;
    run_for(5);
    assert_true(d.hks->spreading);
    assert_true(cpuset_count(&d.plan->active) > quiet);
    assert_true(cpuset_count(&fk.last) > quiet);
    fk.pressure_cpct = 500;
    run_for(5);
    assert_false(d.hks->spreading);
    assert_false(fk.repeated);

    /* What ran on the freed CPUs: read each period on the CPUs host
     * work was moved off; interrupts always, threads only after someone
     * asked, and then only those that last ran there.  The spread came
     * soon after a shrink, so packing again waits twice the dwell. */
    run_for(120);
    {
        struct cpuset freed;
        char text[1024];
        unsigned before = fk.n_wakers;

        cpuset_zero(&freed);
        for (unsigned c = 0; c < d.n_cpus; c++) {
            if (!cpuset_has(&fk.last, c)) {
                cpuset_set(&freed, c);
            }
        }
        assert_false(cpuset_empty(&freed));
        assert_true(cpuset_equal(&fk.wakers_set, &freed));
        assert_true(d.hks->woke.valid);
        assert_true(cpuset_equal(&d.hks->woke.cpus, &freed));
        assert_false(d.hks->woke.threads);
        assert_int_equal(fk.n_wakers_threads, 0);
        assert_int_equal(d.hks->woke.irqs, 24);
        assert_int_equal(d.hks->woke.n_top, 1);
        hkset_woke_text(d.hks, text, sizeof text);
        assert_non_null(strstr(text, "IRQ 36 (virtio1-req.0) x24"));
        assert_non_null(strstr(text, "ask again"));

        hkset_watch_threads(d.hks, hv.now_ns + 3600000000000ull);
        run_for(30);
        assert_true(fk.n_wakers > before);
        assert_true(fk.n_wakers_threads >= 2);
        assert_true(d.hks->woke.threads);
        assert_int_equal(d.hks->woke.thread_runs, 5);
        assert_int_equal(d.hks->woke.n_top, 2);
        assert_int_equal(d.hks->woke.top[0].tid, 0);        /* 24 > 5 */
        assert_int_equal(d.hks->woke.top[1].tid, 57);
        hkset_woke_text(d.hks, text, sizeof text);
        assert_non_null(strstr(text, "thread kworker/1:1 (tid 57) x5"));
        assert_null(strstr(text, "busy"));
        assert_null(strstr(text, "ask again"));

        /* The override frees nothing: nothing read, nothing claimed. */
        d.override_performance = true;
        run_for(30);
        assert_false(d.hks->woke.valid);
        hkset_woke_text(d.hks, text, sizeof text);
        assert_non_null(strstr(text, "No CPU was freed"));
        d.override_performance = false;
    }

    hkset_destroy(d.hks);
    d.hks = NULL;
    vmreg_clear(&d);
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
}

/* Sum of all actions applied so far. */
static uint64_t
n_actions(void)
{
    uint64_t n = 0;

    for (unsigned k = 0; k <= POL_A_OFFLINE; k++) {
        n += d.n_actions[k];
    }
    return n;
}

/* A hint for 'vm' read at the current virtual time, handled after
 * 'queue_ns' more, as vpowerd's vpd_hint() does: set the VM's hints,
 * tie the next decision to the read time, decide. */
static void
hint(struct vpd_vm *vm, bool latency, uint64_t queue_ns)
{
    uint64_t read_ns = hv.now_ns;

    hv.now_ns += queue_ns;
    vm->hints.latency_us = latency ? 200 : 0;
    vm->hints.latency_until_ns = latency ? hv.now_ns + 60000000000ull : 0;
    cycle_hint(&d, vm, read_ns);
    cycle_run(&d, false);
}

static void
test_hint_apply(void **state)
{
    const uint64_t pin_ns = 300000, queue_ns = 40000;
    const struct histo *h;
    struct vpd_vm *web;
    uint64_t acts, pins, t;

    (void) state;
    setup_day();
    h = &d.cyc->hint_apply;
    hv.vm[0].running = hv.vm[1].running = true;
    hv.vm[0].busy_pct = hv.vm[1].busy_pct = 5;
    assert_int_equal(vmreg_resync(&d), 0);
    run_for(120);                     /* Packed by now. */
    web = !strcmp(d.vms->dom.name, "web") ? d.vms : d.vms->next;
    assert_string_equal(web->dom.name, "web");
    /* Periodic decisions are no hints. */
    assert_int_equal(h->count, 0);

    /* latency-begin spreads web: one sample, from the read to the return
     * of the last pin, every pin counted. */
    hv.pin_cost_ns = pin_ns;
    acts = n_actions();
    pins = hv.n_pins;
    hint(web, true, queue_ns);
    assert_true(n_actions() > acts);
    assert_true(hv.n_pins > pins);
    assert_int_equal(h->count, 1);
    assert_int_equal(h->max_ns, queue_ns + (hv.n_pins - pins) * pin_ns);
    assert_int_equal(histo_recent_ns(h, 0.5), h->max_ns);
    /* The VM's own histogram has the same sample; the other VM none. */
    assert_non_null(web->hint_apply);
    assert_int_equal(web->hint_apply->count, 1);
    assert_int_equal(web->hint_apply->max_ns, h->max_ns);
    assert_null(web->next ? web->next->hint_apply : d.vms->hint_apply);

    /* The same hint again changes nothing: no sample. */
    acts = n_actions();
    hint(web, true, queue_ns);
    assert_int_equal(n_actions(), acts);
    assert_int_equal(h->count, 1);

    /* A periodic cycle after a hint that changed nothing: still none
     * (the pending mark was used up by the hint's decision). */
    advance(1);
    cycle_run(&d, true);
    assert_int_equal(h->count, 1);

    /* In a dry run nothing is in effect: no sample either. */
    d.dry_run = true;
    hint(web, false, queue_ns);
    assert_int_equal(h->count, 1);
    d.dry_run = false;
    hint(web, true, queue_ns);        /* The pretended plan is undone. */
    assert_int_equal(h->count, 2);

    /* latency-end changes the plan too; with pins free of cost its
     * sample is the queueing alone. */
    hv.pin_cost_ns = 0;
    t = h->count;
    acts = n_actions();
    hint(web, false, queue_ns);
    assert_true(n_actions() > acts);
    assert_int_equal(h->count, t + 1);
    assert_int_equal(h->recent_ns[t % HISTO_RECENT], queue_ns);
    assert_int_equal(web->hint_apply->count, h->count);
    assert_true(h->sum_ns >= h->max_ns + 2 * queue_ns);

    vmreg_clear(&d);
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
}

/* A hint's decision (cycle_check_jobs) asks each VM it pins, once,
 * whether it migrates, and leaves a migrating VM's pins alone; periodic
 * decisions and plain kicks ask nobody (the period's refresh does). */
static void
test_hint_jobs(void **state)
{
    struct cpuset before[MAX_VCPUS];
    unsigned asks;

    (void) state;
    setup_day();
    hv.vm[0].running = hv.vm[1].running = true;
    hv.vm[0].busy_pct = hv.vm[1].busy_pct = 5;
    assert_int_equal(vmreg_resync(&d), 0);
    run_for(120);                     /* Packed by now. */
    struct vpd_vm *web = !strcmp(d.vms->dom.name, "web") ? d.vms
                                                          : d.vms->next;
    assert_int_equal(hv.vm[0].n_job_asks + hv.vm[1].n_job_asks, 0);

    /* web starts migrating after the period's refresh: its latency-begin
     * asks it once (for its two vCPU pins) and moves none of them. */
    hv.vm[0].migrating = true;
    memcpy(before, hv.vm[0].pin, sizeof before);
    cycle_check_jobs(&d);
    hint(web, true, 0);
    assert_int_equal(hv.vm[0].n_job_asks, 1);
    assert_true(hv.vm[1].n_job_asks <= 1);
    assert_memory_equal(hv.vm[0].pin, before, sizeof before);

    /* The flag was for that decision only: a periodic cycle asks none
     * (vpowerd's refresh before it froze web, as done here by hand). */
    asks = hv.vm[0].n_job_asks + hv.vm[1].n_job_asks;
    web->migr_frozen = true;
    advance(1);
    cycle_run(&d, true);
    assert_int_equal(hv.vm[0].n_job_asks + hv.vm[1].n_job_asks, asks);
    assert_memory_equal(hv.vm[0].pin, before, sizeof before);

    /* Its migration over, the next hint's decision spreads it. */
    hv.vm[0].migrating = false;
    web->migr_frozen = false;
    cycle_check_jobs(&d);
    hint(web, true, 0);
    assert_int_equal(hv.vm[0].n_job_asks, 2);
    assert_false(cpuset_equal(&hv.vm[0].pin[0], &hv.vm[0].pin[1]));

    /* A driver whose pins of web do not wait behind the hypervisor's jobs
     * (pin_may_wait false) is not asked: the hint's pins are made, and
     * the driver tells the hypervisor once the job is over. */
    hv.vm[0].kernel_pins = true;
    memcpy(before, hv.vm[0].pin, sizeof before);
    cycle_check_jobs(&d);
    hint(web, false, 0);
    assert_int_equal(hv.vm[0].n_job_asks, 2);
    assert_memory_not_equal(hv.vm[0].pin, before, sizeof before);

    vmreg_clear(&d);
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
}

/* ---- The model against a meter -------------------------------------- */

/* The "true" host the meter measures: the model with its static power
 * doubled.  The oracle meter charges, at each read, the true model's
 * power for the plan in force and the busy shares the cycle has just
 * measured: exactly what the model check compares with. */
static struct pol_model truth;
static uint64_t oracle_uj, oracle_ns;
static int oracle_fail;           /* Negative errno every read returns. */

static int
oracle_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
              size_t errlen)
{
    (void) m;
    if (oracle_fail) {
        snprintf(err, errlen, "oracle: %s", strerror(-oracle_fail));
        return oracle_fail;
    }
    if (oracle_ns && d.applied) {
        oracle_uj += (uint64_t) pol_energy_power_mw(&truth, d.applied,
                                                    d.cyc->busy_ppm)
                     * ((now_ns - oracle_ns) / 1000u) / 1000u;
    }
    oracle_ns = now_ns;
    *raw = oracle_uj;
    return 0;
}

static void
oracle_close(struct meter *m)
{
    free(m);
}

static const struct meter_ops oracle_ops = {
    .name = "oracle", .sample = oracle_sample, .close = oracle_close,
};

/* Sets up the day with both VMs running and the oracle meter checked
 * with 'conf'; the load alternates so the fit can tell busy from idle. */
static void
setup_meter(const struct mchk_conf *conf)
{
    struct meter *m = calloc(1, sizeof *m);

    setup_day();
    pol_correct_apply(&d.model, 1.0, 2.0, true, &truth);
    oracle_uj = UINT64_C(1) << 40;
    oracle_ns = 0;
    m->ops = m->info.ops = &oracle_ops;
    m->info.counter = true;
    m->info.scope = METER_SCOPE_PLATFORM;
    snprintf(m->info.name, sizeof m->info.name, "oracle");
    d.mchk = mchk_create(&d.model, m, true, conf);
    hv.vm[0].running = hv.vm[1].running = true;
    assert_int_equal(vmreg_resync(&d), 0);
}

static void
run_meter(unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        hv.vm[0].busy_pct = i % 2 ? 90 : 5;
        hv.vm[1].busy_pct = i % 3 ? 10 : 100;
        /* The CPUs' busy shares swing too, so busy and static energy
         * do not move together and the fit can tell them apart. */
        idle_us = i % 2 ? 100000 : 900000;
        run_for(20);
    }
    idle_us = 500000;
}

static void
teardown_meter(void)
{
    vmreg_clear(&d);
    mchk_destroy(d.mchk);
    d.mchk = NULL;
    cycle_destroy(&d);
    pol_state_destroy(d.pol);
    drv_host_dummy.close(d.host);
}

/* Per-VM joules are split from the meter's energy: VMs plus _host sum to
 * what the meter measured over the same periods within 0.1 %. */
static void
test_meter_attribution(void **state)
{
    struct mchk_conf conf = { .bound_pct = 10, .periods = 5 };
    const struct mchk_stats *st;
    double vm0 = 0, vm1 = 0, m0, m1;
    struct vpd_vm *vm;

    (void) state;
    setup_meter(&conf);
    run_meter(2);
    st = mchk_stats(d.mchk);
    assert_true(st->periods > 0);
    for (vm = d.vms; vm; vm = vm->next) {
        vm0 += vm->energy_j;
    }
    vm0 += d.unattributed_energy_j;
    m0 = st->meter_j;
    run_meter(10);
    for (vm = d.vms; vm; vm = vm->next) {
        vm1 += vm->energy_j;
    }
    vm1 += d.unattributed_energy_j;
    m1 = st->meter_j;
    assert_true(m1 - m0 > 0);
    assert_true(fabs((vm1 - vm0) - (m1 - m0)) <= 0.001 * (m1 - m0));
    /* Each VM's busy part is within its share. */
    for (vm = d.vms; vm; vm = vm->next) {
        assert_true(vm->energy_busy_j >= 0);
        assert_true(vm->energy_busy_j <= vm->energy_j + 1e-9);
    }
    /* The model, not told of the doubled idle power, is well below. */
    assert_true(st->model_j < 0.9 * st->meter_j);
    teardown_meter();
}

/* A meter that cannot be read: counted, nothing compared, and the VMs
 * are charged the estimate, which they still sum to. */
static void
test_meter_unreadable(void **state)
{
    struct mchk_conf conf = { .bound_pct = 10, .periods = 5,
                              .correct = true };
    const struct mchk_stats *st;
    double sum = 0;

    (void) state;
    oracle_fail = -EACCES;
    setup_meter(&conf);
    run_meter(3);
    oracle_fail = 0;
    st = mchk_stats(d.mchk);
    assert_int_equal(st->periods, 0);
    assert_true(st->read_errors > 0);
    assert_false(st->correcting);
    assert_true(d.host_energy_j > 0);
    for (struct vpd_vm *vm = d.vms; vm; vm = vm->next) {
        sum += vm->energy_j;
    }
    sum += d.unattributed_energy_j;
    assert_true(fabs(sum - d.host_energy_j) <= 0.001 * d.host_energy_j);
    teardown_meter();
}

/* Off beyond the bound for the configured periods: one warning; without
 * model_correction the model stays as loaded and the error stays. */
static void
test_meter_warns(void **state)
{
    struct mchk_conf conf = { .bound_pct = 10, .periods = 5 };
    struct pol_model *orig = malloc(sizeof *orig);
    const struct mchk_stats *st;

    (void) state;
    setup_meter(&conf);
    *orig = d.model;
    run_meter(12);
    st = mchk_stats(d.mchk);
    assert_int_equal(st->warnings, 1);
    assert_false(st->correcting);
    assert_int_equal(st->corrections, 0);
    assert_true(st->error < -0.1);
    assert_memory_equal(&d.model, orig, sizeof *orig);
    /* The fit is kept all the same: it knows the idle power doubled. */
    assert_true(fabs(st->idle_scale - 2.0) < 0.1);
    assert_true(fabs(st->busy_scale - 1.0) < 0.1);
    teardown_meter();

    /* A bound above the error, or more periods than ran: no warning. */
    conf.bound_pct = 90;
    setup_meter(&conf);
    run_meter(12);
    assert_int_equal(mchk_stats(d.mchk)->warnings, 0);
    teardown_meter();
    conf.bound_pct = 10;
    conf.periods = 100000;
    setup_meter(&conf);
    run_meter(12);
    assert_int_equal(mchk_stats(d.mchk)->warnings, 0);
    assert_true(mchk_stats(d.mchk)->over > 10);
    teardown_meter();
    free(orig);
}

/* With model_correction the cycle decides with the rescaled model: its
 * idle power is doubled, and the error shrinks to almost nothing. */
static void
test_meter_corrects(void **state)
{
    struct mchk_conf conf = { .bound_pct = 10, .periods = 5,
                              .correct = true };
    struct pol_model *orig = malloc(sizeof *orig);
    const struct mchk_stats *st;
    double before;

    (void) state;
    setup_meter(&conf);
    *orig = d.model;
    run_meter(12);
    st = mchk_stats(d.mchk);
    before = st->base_error;
    assert_int_equal(st->warnings, 1);
    assert_true(st->correcting);
    assert_true(st->corrections > 0);
    assert_true(fabs(st->error) < 0.02);
    assert_true(fabs(st->error) < 0.1 * fabs(before));
    assert_true(d.model.domains[0].idle[0].power_mw
                > 19 * orig->domains[0].idle[0].power_mw / 10);
    assert_true(d.model.domains[0].opps[0].busy_mw
                < 11 * orig->domains[0].opps[0].busy_mw / 10);
    teardown_meter();
    free(orig);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_day),
        cmocka_unit_test(test_never_idle),
        cmocka_unit_test(test_housekeeping),

        cmocka_unit_test(test_hint_apply),
        cmocka_unit_test(test_hint_jobs),
        cmocka_unit_test(test_meter_attribution),
        cmocka_unit_test(test_meter_unreadable),
        cmocka_unit_test(test_meter_warns),
        cmocka_unit_test(test_meter_corrects),
    };

    log_set_level(LOG_LVL_WARN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
