/* manager/daemon.c -- vpowerd's lifecycle: start, inputs, hooks, stop.
 *
 * The decision cycle itself is manager/cycle.c and the VM registry
 * manager/vmreg.c; this file wires them to the real world: the drivers
 * vpowerd was started with, the monotonic clock, the per-thread vCPU
 * counters (taskstats), APERF/MPERF frequency, thermal events, the
 * guest channels, the journal and the replay record, and it arms the
 * cycle's timer.
 *
 * Before anything is changed for the first time its original value is
 * saved in memory and in the journal; vpd_stop() puts every original back
 * and removes the journal, and vpd_start() replays a journal a crashed
 * run left behind before touching anything else. */

#include <config.h>

#include "manager/daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/cycle.h"
#include "manager/inputs/freqsrc.h"
#include "manager/drivers/meter.h"
#include "manager/modelcheck.h"
#include "manager/drivers/sysfs.h"
#include "manager/guestchan.h"
#include "manager/hkopen.h"
#include "manager/hkset.h"
#include "manager/inputs/hostmodel.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "manager/migration.h"
#include "manager/inputs/qemuconf.h"
#include "manager/record.h"
#include "manager/restore.h"
#include "manager/sched.h"
#include "manager/inputs/taskstats.h"
#include "manager/inputs/thermal.h"
#include "manager/util.h"
#include "manager/vmpolicy.h"
#include "manager/vmreg.h"

#define LOG_MODULE "vpowerd"

#define HINT_DEFAULT_MS 1000
#define HINT_LATENCY_MS 60000

/* What the daemon adds to the cycle: its inputs and outputs. */
struct vpd_priv {
    struct jnl *jnl;
    bool stopping;
    /* Inputs (manager/inputs/taskstats.h, freqsrc.h, thermal.h). */
    struct ts_source *ts;           /* NULL: counters from the driver. */
    bool local_qemu;                /* vCPU threads are on this host. */
    struct freqsrc *fs;             /* NULL: the host driver's cur_khz. */
    struct thermal *th;             /* NULL: no thermal events. */
    struct rec *rec;                /* Replay record, NULL if off. */
    struct migr *migr;              /* Live migrations per domain
                                     * (manager/migration.h). */
};

static void arm_cycle(struct vpd *d, uint64_t delay_ns);

/* ---- Small helpers -------------------------------------------------- */

const char *
vpd_hint_name(enum vpd_hint_kind k)
{
    static const char *const names[VPD_N_HINTS] = {
        "latency-begin", "latency-end", "batch", "boost", "idle", "util",
    };

    return (unsigned) k < VPD_N_HINTS ? names[k] : "?";
}

void
vpd_count_error(struct vpd *d, enum vpd_err_kind k)
{
    if ((unsigned) k < VPD_N_ERRS) {
        d->n_errors[k]++;
    }
}

/* ---- Journal -------------------------------------------------------- */

static void
jnl_fail(struct vpd *d, int r, const char *what)
{
    LOG_ERR_RL("journal: cannot record %s: %s", what, strerror(-r));
    vpd_count_error(d, VPD_E_JOURNAL);
}

static void
save_vm_originals(struct vpd *d, struct vpd_vm *vm)
{
    struct vpd_priv *pv = d->priv;
    int r;

    if (!pv->jnl || vm->unmanaged || d->dry_run) {
        return;
    }
    for (unsigned i = 0; i < vm->n_vcpus; i++) {
        r = jnl_record_vcpu_pin(pv->jnl, vm->dom.uuid, vm->vcpus[i].idx,
                                &vm->vcpus[i].original);
        if (r < 0) {
            jnl_fail(d, r, "a vCPU pin");
        }
    }
    r = jnl_record_emulator_pin(pv->jnl, vm->dom.uuid, &vm->emu_original);
    if (r < 0) {
        jnl_fail(d, r, "an emulator pin");
    }
}

/* ---- VMs ------------------------------------------------------------ */

struct vpd_vm *
vpd_find_vm(struct vpd *d, const char *key)
{
    char *end;
    long id;

    if (!key || !*key) {
        return NULL;
    }
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        if (!strcmp(vm->dom.name, key) || !strcasecmp(vm->dom.uuid, key)) {
            return vm;
        }
    }
    id = strtol(key, &end, 10);
    if (!*end && id >= 0) {
        for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
            if (vm->dom.id == id) {
                return vm;
            }
        }
    }
    return NULL;
}

/* Finds the host thread of each vCPU of 'vm' (QEMU names them "CPU N/
 * KVM|TCG") when its QEMU runs on this host; vCPUs without one keep
 * using the hypervisor driver's counters. */
static void
find_tids(struct vpd *d, struct vpd_vm *vm)
{
    struct vpd_priv *pv = d->priv;
    pid_t qpid, tids[vm->n_vcpus ? vm->n_vcpus : 1];
    unsigned n = 0;
    int r;

    for (unsigned i = 0; i < vm->n_vcpus; i++) {
        vm->vcpus[i].tid = 0;
    }
    if (!pv->ts || !pv->local_qemu || !vm->n_vcpus) {
        return;
    }
    memset(tids, 0, sizeof tids);
    r = qemu_pid_of(NULL, vm->dom.name, &qpid);
    if (r == 0) {
        r = vcpu_tids(qpid, tids, vm->n_vcpus, &n);
    }
    if (r < 0) {
        LOG_DEBUG("%s: no vCPU threads (%s): using %s's counters",
                  vm->dom.name, strerror(-r), d->hv_ops->name);
        return;
    }
    for (unsigned i = 0; i < vm->n_vcpus && i < n; i++) {
        vm->vcpus[i].tid = tids[i];
    }
}

/* ---- Cycle hooks (manager/cycle.h) --------------------------------- */

static void
hook_find_threads(void *aux, struct vpd_vm *vm)
{
    find_tids(aux, vm);
}

/* Run and ready time from the vCPU's thread (taskstats or schedstat:
 * nanosecond run time and delay from one kernel snapshot, where
 * libvirt's vcpu.N.time has tick resolution) where it is known. */
static void
hook_vcpu_counters(void *aux, struct vpd_vm *vm, struct drv_vcpu_stat *st,
                   uint8_t *src, size_t n)
{
    struct vpd *d = aux;
    struct vpd_priv *pv = d->priv;
    bool stale = false;

    for (size_t i = 0; i < n && pv->ts; i++) {
        pid_t tid = i < vm->n_vcpus ? vm->vcpus[i].tid : 0;
        uint64_t run, delay;
        int t;

        if (!tid) {
            continue;
        }
        t = ts_read(pv->ts, tid, &run, &delay);
        if (t == 0) {
            st[i].time_ns = run;
            st[i].delay_ns = delay;
            st[i].has_delay = true;
            src[i] = CYCLE_SRC_FINE;
        } else if (t == -ESRCH) {
            stale = true;           /* Thread gone: QEMU restarted it. */
        } else {
            LOG_WARN_RL("%s vCPU %zu: %s: %s; using %s's counters",
                        vm->dom.name, i, ts_name(pv->ts), strerror(-t),
                        d->hv_ops->name);
            vpd_count_error(d, VPD_E_LIBVIRT);
        }
    }
    if (stale) {
        find_tids(d, vm);
    }
}

static bool
hook_ran_khz(void *aux, unsigned cpu, uint32_t *khz)
{
    struct vpd *d = aux;

    if (!d->priv->fs) {
        return false;
    }
    *khz = 0;
    freqsrc_read(d->priv->fs, cpu, khz);
    return true;
}

static void
hook_thermal_caps(void *aux, const struct pol_model *m,
                  uint32_t caps[POL_MAX_DOMAINS])
{
    struct vpd *d = aux;

    if (d->priv->th) {
        thermal_domain_caps(d->priv->th, m, caps);
    }
}

static int
hook_save_online(void *aux, unsigned cpu, bool was_online)
{
    struct vpd *d = aux;
    int r;

    if (!d->priv->jnl) {
        return 0;
    }
    r = jnl_record_online(d->priv->jnl, cpu, was_online);
    if (r < 0) {
        jnl_fail(d, r, "an online state");
    }
    return r;
}

/* What the guest channels hand to the daemon. */
static const struct gch_ops gch_ops = {
    .hint = vpd_hint,
    .now_ns = vpd_now_ns,
    .count_error = vpd_count_error,
};

static void
hook_vm_added(void *aux, struct vpd_vm *vm)
{
    struct vpd *d = aux;

    save_vm_originals(d, vm);
    gch_attach(d, vm, &gch_ops);
}

static void
hook_vm_changed(void *aux, struct vpd_vm *vm, const struct drv_dom *old,
                unsigned old_n_vcpus)
{
    struct vpd *d = aux;

    if (strcmp(vm->dom.agent_path, old->agent_path)) {
        gch_detach(d, vm);
        gch_attach(d, vm, &gch_ops);
    }
    if (vm->n_vcpus > old_n_vcpus) {
        save_vm_originals(d, vm);
    }
}

static void
hook_vm_gone(void *aux, struct vpd_vm *vm)
{
    struct vpd *d = aux;

    if (d->priv->jnl && !d->priv->stopping) {
        jnl_forget_domain(d->priv->jnl, vm->dom.uuid);
    }
    if (d->priv->migr && !d->priv->stopping) {
        migr_done(d->priv->migr, vm->dom.uuid);
    }
    gch_detach(d, vm);
}

static void
hook_decided(void *aux, const struct pol_input *in,
             struct vpd_vm *const *vm_of, bool sampled, uint64_t interval_ns,
             const uint32_t *ran_khz, const uint32_t *busy_ppm)
{
    struct vpd *d = aux;
    int r;

    if (!d->priv->rec) {
        return;
    }
    r = rec_cycle(d->priv->rec, d, in, vm_of, sampled, interval_ns, ran_khz,
                  busy_ppm);
    if (r < 0) {
        LOG_WARN_RL("record %s: %s", d->conf.record_path, strerror(-r));
        vpd_count_error(d, VPD_E_JOURNAL);
    }
}

static uint64_t
real_clock(void *aux)
{
    (void) aux;
    return clk_now_ns();
}

/* Creates the cycle with the real clock and the daemon's hooks. */
static void
start_cycle(struct vpd *d)
{
    static const struct cycle_clock clock = { real_clock, NULL };
    struct cycle_hooks h = {
        .aux = d,
        .vcpu_counters = hook_vcpu_counters,
        .find_threads = hook_find_threads,
        .ran_khz = hook_ran_khz,
        .thermal_caps = hook_thermal_caps,
        .save_online = hook_save_online,
        .vm_added = hook_vm_added,
        .vm_changed = hook_vm_changed,
        .vm_gone = hook_vm_gone,
        .decided = hook_decided,
    };

    cycle_create(d, &clock, &h);
}

static void
resync(struct vpd *d)
{
    if (vmreg_resync(d) < 0) {
        vpd_count_error(d, VPD_E_LIBVIRT);
    }
}

static void
hv_event(void *aux, enum drv_event ev, const char *uuid)
{
    struct vpd *d = aux;
    struct vpd_vm *vm;

    if (!d->cyc) {
        return;
    }
    switch (ev) {
    case DRV_EV_STARTED:
    case DRV_EV_CHANGED:
        d->cyc->hv_up = true;
        if (!uuid || !vmreg_find_uuid(d, uuid) || ev == DRV_EV_CHANGED) {
            resync(d);
            vpd_kick(d);
        }
        break;
    case DRV_EV_STOPPED:
        vm = uuid ? vmreg_find_uuid(d, uuid) : NULL;
        if (vm) {
            vmreg_remove(d, vm);
            vpd_kick(d);
        }
        break;
    case DRV_EV_DISCONNECTED:
        /* Pins of running domains stay; we resync after reconnecting. */
        d->cyc->hv_up = false;
        vpd_count_error(d, VPD_E_LIBVIRT);
        break;
    }
}

/* ---- Power meters (manager/drivers/meter.h) ------------------------- */

/* Finds the power meters below the configured roots and logs what each
 * covers, and which would measure the whole host. */
static void
find_meters(struct vpd *d)
{
    struct meter_roots roots = {
        .powercap = d->conf.powercap_root,
        .hwmon = d->conf.hwmon_root,
        .ipmi_dev = NULL,
    };

    d->meters = XNEW(struct meter_list);
    meter_discover(&roots, d->meters);
    meter_log_list(d->meters);
}

/* Checks the model against the whole-host meter, if there is one
 * (manager/modelcheck.h); the meter's energy is then what the VMs are
 * charged. */
static void
open_model_check(struct vpd *d)
{
    struct meter_choice c;
    struct mchk_conf mc = {
        .bound_pct = d->conf.model_error_pct,
        .periods = d->conf.model_error_periods,
        .correct = d->conf.model_correction,
    };
    char err[METER_ERR_LEN];
    struct meter *m;

    if (!d->meters || meter_choose_host(d->meters, &c) < 0) {
        if (d->conf.model_correction) {
            LOG_WARN("model_correction: no whole-host meter, so the model "
                     "is neither checked nor corrected");
        }
        return;
    }
    m = meter_host_open(d->meters, &c, err, sizeof err);
    if (!m) {
        LOG_WARN("whole-host meter: %s; the model is not checked", err);
        return;
    }
    d->mchk = mchk_create(&d->model, m, c.scope == METER_SCOPE_PLATFORM,
                          &mc);
    LOG_INFO("checking the model against meter %s each period (off by "
             "more than %" PRIu32 " %% for %" PRIu32 " periods warns%s)",
             m->info.name, mc.bound_pct, mc.periods,
             mc.correct ? " and corrects it" : "");
}

/* ---- Live migration (manager/migration.h) -------------------------- */

static void
hv_migr(void *aux, enum drv_migr ev, const char *uuid)
{
    struct vpd *d = aux;

    struct vpd_vm *vm;

    if (!d->cyc || !d->priv->migr || !uuid) {
        return;
    }
    migr_event(d->priv->migr, ev, uuid);
    if (ev != DRV_MIGR_GONE) {
        return;
    }
    /* A resync may have dropped it already (vm_gone forgot its journal
     * entries); either way nothing is restored to it. */
    vm = vmreg_find_uuid(d, uuid);
    LOG_INFO("domain %s migrated away: originals forgotten, not restored",
             vm ? vm->dom.name : uuid);
    if (vm) {
        vmreg_remove(d, vm);        /* vm_gone forgets, migr_done. */
    } else {
        migr_done(d->priv->migr, uuid);
    }
    vpd_kick(d);
}

/* Acts on each VM's migration verdict before anything touches its pins:
 * frozen VMs keep theirs, gone ones are dropped with their journal
 * entries forgotten (never restored), arrived ones are taken afresh. */
static void
migr_refresh(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    struct vpd_vm *vm, *next;

    for (vm = d->vms; vm && pv->migr; vm = next) {
        enum drv_job job = DRV_JOB_NONE;
        bool known = false;
        bool was_frozen = vm->migr_frozen;
        enum migr_verdict v;

        next = vm->next;
        if (d->hv_ops->migr_job) {
            known = d->hv_ops->migr_job(d->hv, vm->dom.uuid, &job) == 0;
        }
        v = migr_verdict(pv->migr, vm->dom.uuid, job, known);
        vm->migr_frozen = v == MIGR_FROZEN;
        if (vm->migr_frozen != was_frozen) {
            LOG_INFO("domain %s: %s", vm->dom.name, vm->migr_frozen
                     ? "migration runs: pins frozen"
                     : "no migration runs: managed again");
        }
        if (v == MIGR_GONE) {
            LOG_INFO("domain %s migrated away: originals forgotten, "
                     "not restored", vm->dom.name);
            vmreg_remove(d, vm);    /* vm_gone forgets, migr_done. */
        } else if (v == MIGR_ARRIVED) {
            vmreg_arrived(d, vm);
            if (pv->jnl) {
                jnl_forget_domain(pv->jnl, vm->dom.uuid);
            }
            save_vm_originals(d, vm);
            migr_taken(pv->migr, vm->dom.uuid);
        }
    }
}

static void
cycle_timer_cb(void *aux)
{
    struct vpd *d = aux;

    d->cycle_timer = 0;
    migr_refresh(d);
    cycle_run(d, true);
    arm_cycle(d, cycle_next_delay_ns(d));
}

static void
arm_cycle(struct vpd *d, uint64_t delay_ns)
{
    if (d->cycle_timer) {
        sched_del_timer(d->sched, d->cycle_timer);
    }
    d->cycle_timer = sched_add_timer(d->sched, delay_ns, cycle_timer_cb, d);
}

/* ---- Calls from the control socket and guest channels --------------- */

void
vpd_kick(struct vpd *d)
{
    if (!d->cyc) {
        return;
    }
    /* Decide on the loads as tracked; sampling stays on the period (a
     * few-ms interval would only add noise to the load history). */
    migr_refresh(d);
    cycle_run(d, false);
}

void
vpd_set_override(struct vpd *d, bool on)
{
    if (d->override_performance != on) {
        LOG_INFO("host-wide performance override %s", on ? "on" : "off");
    }
    d->override_performance = on;
    vpd_kick(d);
}

int
vpd_set_policy(struct vpd *d, struct vpd_vm *vm,
               const struct pol_vm_policy *p, char *err, size_t errlen)
{
    char xml[512];
    uint32_t fmax = 0;
    int r;

    if (!vm || !p) {
        snprintf(err, errlen, "no such domain");
        return -ENOENT;
    }
    if ((unsigned) p->kind >= POL_N_KINDS) {
        snprintf(err, errlen, "unknown policy kind %d", (int) p->kind);
        return -EINVAL;
    }
    if (p->latency_us > 10000000u) {
        snprintf(err, errlen, "latency bound %" PRIu32 " us is above 10 s",
                 p->latency_us);
        return -EINVAL;
    }
    for (unsigned dm = 0; dm < d->model.n_domains; dm++) {
        const struct pol_domain *pd = &d->model.domains[dm];

        if (pd->n_opps && pd->opps[pd->n_opps - 1].freq_khz > fmax) {
            fmax = pd->opps[pd->n_opps - 1].freq_khz;
        }
    }
    if (p->min_freq_khz && fmax && p->min_freq_khz > fmax) {
        snprintf(err, errlen, "minimum frequency %" PRIu32 " kHz is above "
                 "the host's highest (%" PRIu32 " kHz)", p->min_freq_khz,
                 fmax);
        return -ERANGE;
    }
    vmpol_to_xml(p, xml, sizeof xml);
    r = d->hv_ops->set_metadata(d->hv, vm->dom.uuid, xml);
    if (r < 0) {
        snprintf(err, errlen, "cannot store the policy in %s's metadata: %s",
                 vm->dom.name, strerror(-r));
        vpd_count_error(d, VPD_E_LIBVIRT);
        return r;
    }
    vm->policy = *p;
    vm->policy_from_metadata = true;
    LOG_INFO("domain %s: policy %s", vm->dom.name, xml);
    vpd_kick(d);
    return 0;
}

uint64_t
vpd_now_ns(struct vpd *d)
{
    return d->cyc ? cycle_now_ns(d) : clk_now_ns();
}

void
vpd_hint(struct vpd *d, struct vpd_vm *vm, enum vpd_hint_kind k,
         uint32_t arg, const char *text, uint64_t read_ns)
{
    uint64_t now = vpd_now_ns(d);
    uint64_t dur = (uint64_t) (arg ? arg : HINT_DEFAULT_MS) * 1000000u;

    if (!vm || (unsigned) k >= VPD_N_HINTS) {
        return;
    }
    vm->hints_total[k]++;
    snprintf(vm->last_hint, sizeof vm->last_hint, "%s",
             text ? text : vpd_hint_name(k));
    switch (k) {
    case VPD_HINT_LATENCY_BEGIN:
        /* 'arg' is the latency bound in us; the hint lasts until END or
         * at most a minute (a guest that dies mid-way does not pin the
         * host in a shallow state forever). */
        vm->hints.latency_us = arg;
        vm->hints.latency_until_ns = now + (uint64_t) HINT_LATENCY_MS
                                           * 1000000u;
        break;
    case VPD_HINT_LATENCY_END:
        vm->hints.latency_until_ns = 0;
        vm->hints.latency_us = 0;
        break;
    case VPD_HINT_BATCH:                /* 'arg': duration in ms. */
        vm->hints.batch_until_ns = now + dur;
        break;
    case VPD_HINT_BOOST:
        vm->hints.boost_until_ns = now + dur;
        break;
    case VPD_HINT_IDLE:
        vm->hints.idle_until_ns = now + dur;
        break;
    case VPD_HINT_UTIL:                 /* Informational only. */
    case VPD_N_HINTS:
        return;
    }
    if (!d->cyc) {
        return;
    }
    /* Unlike other kicks, a hint asks only the VMs its plan pins whether
     * they migrate, not every VM on the host: the hint waits for each
     * question.  Verdicts on the others stay as the period left them. */
    cycle_hint(d, vm, read_ns);
    if (d->priv->migr) {
        cycle_check_jobs(d);
    }
    cycle_run(d, false);
}

/* ---- Start and stop ------------------------------------------------- */

static int
load_model(struct vpd *d, char *err, size_t errlen)
{
    char why[256];
    int r;

    if (d->conf.model_file[0]) {
        struct stat st;
        char *text;
        size_t len;

        /* 16 MiB: far above any host's model.  A FIFO or device is
         * refused without waiting; the owner and mode as for the
         * configuration, since the model decides what is written. */
        r = util_read_regular(d->conf.model_file, (size_t) 16 << 20, &text,
                              &len, &st);
        if (r < 0) {
            snprintf(err, errlen, "%s: %s", d->conf.model_file,
                     r == -EFBIG ? "larger than 16 MiB"
                                 : util_read_strerror(r));
            return r;
        }
        r = util_check_trusted(d->conf.model_file, &st, "energy model",
                               "choose what vpowerd does as root", err,
                               errlen);
        if (r < 0) {
            free(text);
            return r;
        }
        r = pol_model_parse(&d->model, text, why, sizeof why);
        free(text);
        if (r < 0) {
            snprintf(err, errlen, "%s:%s", d->conf.model_file, why);
            return r;
        }
        return 0;
    }
    r = hostmodel_build(d->host_ops, d->host,
                        d->host_ops->caps & DRV_HOST_SYSFS_TREE
                        ? d->conf.sysfs_root : NULL,
                        &d->model, why, sizeof why);
    if (r < 0) {
        snprintf(err, errlen, "energy model from %s: %s",
                 d->conf.sysfs_root, why);
    }
    return r;
}

static void
on_thermal(void *aux, unsigned cpu, uint32_t capacity)
{
    struct vpd *d = aux;

    LOG_RL(LOG_LVL_INFO, "thermal: cpu%u capacity %" PRIu32 "/1024", cpu,
           capacity);
    d->thermal_events++;
    vpd_kick(d);                    /* Caps are read at each decision. */
}

/* Opens the measurement inputs and says in the log which are used.
 * Order for vCPU run and ready time: the vCPU thread's own counters
 * (taskstats netlink, else /proc schedstat) when QEMU runs on this host
 * and its threads are found; else the hypervisor driver's (libvirt's
 * vcpu.N.time/delay, which is schedstat read by libvirtd with run time
 * at tick resolution; the dummy driver's model).  Nothing here is fatal:
 * each input degrades to the next. */
static void
open_inputs(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    const char *uri = d->conf.connect_uri;
    bool sysfs = d->host_ops->caps & DRV_HOST_SYSFS_TREE;
    bool real_root = sysfs && !strcmp(d->conf.sysfs_root, SYSFS_DEFAULT_ROOT);
    char e[256], ready[160], therm[300];
    int da;

    pv->local_qemu = d->hv_ops->caps & DRV_HV_LOCAL_QEMU
                     && drv_hv_uri_local(uri);
    snprintf(ready, sizeof ready, "%s's vcpu.N counters", d->hv_ops->name);
    if (pv->local_qemu) {
        pv->ts = ts_open(TS_AUTO, NULL, e, sizeof e);
        if (!pv->ts) {
            snprintf(ready, sizeof ready, "libvirt's vcpu.N.time/delay "
                     "(no per-thread source: %.100s)", e);
        } else if (ts_fallback_reason(pv->ts)[0]) {
            snprintf(ready, sizeof ready, "%s (%.80s), libvirt where a "
                     "vCPU thread is unknown", ts_name(pv->ts),
                     ts_fallback_reason(pv->ts));
        } else {
            snprintf(ready, sizeof ready, "%s, libvirt where a vCPU thread "
                     "is unknown", ts_name(pv->ts));
        }
    }
    d->ready_source = pv->ts ? ts_name(pv->ts) : d->hv_ops->name;
    d->cyc->hooks.fine_name = pv->ts ? ts_name(pv->ts) : NULL;
    if (sysfs) {
        /* MSRs belong to the real CPUs: not with a fixture tree. */
        pv->fs = freqsrc_open(d->conf.sysfs_root,
                              real_root ? NULL : "/nonexistent/msr",
                              d->n_cpus, 0);
        d->freq_source = freqsrc_name(pv->fs);
        pv->th = thermal_open(d->sched, NULL, d->conf.sysfs_root, d->n_cpus,
                              on_thermal, d, e, sizeof e);
        if (pv->th) {
            d->thermal_source = "netlink";
            snprintf(therm, sizeof therm, "netlink events");
        } else {
            snprintf(therm, sizeof therm, "none (%.250s)", e);
        }
    } else {
        snprintf(therm, sizeof therm, "none (%s host driver)",
                 d->host_ops->name);
    }
    LOG_INFO("inputs: ready time from %s; frequency from %s; thermal %s; "
             "halt-poll correction where libvirt reports KVM halt stats; "
             "energy from the model", ready, d->freq_source, therm);
    da = ts_delayacct_state(NULL);
    if (pv->ts && da == 0) {
        LOG_INFO("kernel.task_delayacct=0: ready time is still measured "
                 "(sched_info); if it reads 0, " TS_DELAYACCT_HINT);
    }
}

/* With QEMU on this host, libvirt's core scheduling (qemu.conf
 * sched_core) decides whether different VMs may share a core's SMT
 * threads at all: the policy's capacity model follows it.  A file that
 * cannot be read leaves libvirt's default (off), said once. */
static void
read_sched_core(struct vpd *d)
{
    enum qemuconf_sched v = QEMUCONF_SCHED_NONE;
    char why[256];

    d->sched_core = false;
    if (!(d->hv_ops->caps & DRV_HV_LOCAL_QEMU)) {
        return;
    }
    if (qemuconf_sched_core(QEMUCONF_PATH, &v, why, sizeof why) < 0) {
        LOG_WARN("%s; taking libvirt's default sched_core \"none\"", why);
        return;
    }
    d->sched_core = qemuconf_sched_apart(v);
    LOG_INFO("libvirt core scheduling: sched_core \"%s\"%s",
             qemuconf_sched_name(v),
             d->sched_core ? ": different VMs never share a core" : "");
}

/* Step 2 of vpd_start(): the managed CPUs, brought online before
 * topology and capabilities are read (an offline CPU hides its cpufreq
 * and cpuidle directories); a CPU that will not come online is left
 * unmanaged.  -EINVAL if no managed CPU is present. */
static int
take_cpus(struct vpd *d, char *err, size_t errlen)
{
    struct cycle *cy = d->cyc;
    int r;

    cpuset_zero(&cy->managed);
    cpuset_zero(&cy->online);
    for (unsigned c = 0; c < d->n_cpus; c++) {
        bool online = false;

        d->cpus[c].present = true;
        if (d->conf.managed_set && !cpuset_has(&d->conf.managed, c)) {
            continue;
        }
        d->cpus[c].managed = true;
        cpuset_set(&cy->managed, c);
        if (d->host_ops->is_online(d->host, c, &online) < 0) {
            online = true;          /* No hotplug file: CPU0 and friends. */
        }
        d->cpus[c].online = online;
        if (!online && !d->dry_run) {
            r = cycle_set_online(d, c, true);
            if (r < 0) {
                LOG_WARN("cannot online cpu%u: %s; leaving it unmanaged", c,
                         strerror(-r));
                d->cpus[c].managed = false;
                cpuset_clr(&cy->managed, c);
                continue;
            }
        }
        cpuset_set(&cy->online, c);
        d->cpus[c].online = true;
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        if (!d->cpus[c].managed) {
            bool online = true;

            d->host_ops->is_online(d->host, c, &online);
            d->cpus[c].online = online;
        }
    }
    if (cpuset_empty(&cy->managed)) {
        snprintf(err, errlen, "no managed CPU is present (managed_cpus)");
        return -EINVAL;
    }
    return 0;
}

int
vpd_start(struct vpd *d, char *err, size_t errlen)
{
    struct vpd_priv *pv = XNEW(struct vpd_priv);
    struct cycle *cy;
    char buf[256];
    int r;

    d->priv = pv;
    start_cycle(d);
    cy = d->cyc;
    d->start_ns = clk_now_ns();
    d->override_performance = d->conf.override_performance;
    d->dry_run = d->dry_run || d->conf.dry_run;
    d->energy_source = "model";
    d->only_domains = getenv("VPOWER_ONLY_DOMAINS");
    d->freq_source = "host-driver";
    d->thermal_source = "none";

    d->host = d->host_ops->open(d->conf.sysfs_root, err, errlen);
    if (!d->host) {
        return -ENODEV;
    }
    r = d->host_ops->n_cpus(d->host, &d->n_cpus);
    if (r < 0 || !d->n_cpus) {
        snprintf(err, errlen, "%s: cannot count CPUs", d->conf.sysfs_root);
        return r < 0 ? r : -ENODEV;
    }
    if (d->n_cpus > POL_MAX_CPUS) {
        d->n_cpus = POL_MAX_CPUS;
    }
    r = conf_check_cpus(&d->conf, d->n_cpus, err, errlen);
    if (r < 0) {
        return r;
    }
    d->hv = d->hv_ops->open(d->conf.connect_uri, d->sched, hv_event, d,
                            err, errlen);
    if (!d->hv) {
        return -ECONNREFUSED;
    }
    find_meters(d);
    pv->migr = migr_create();
    if (d->hv_ops->set_migr_cb) {
        d->hv_ops->set_migr_cb(d->hv, hv_migr, d);
    }
    read_sched_core(d);
    r = hkopen_start(d, err, errlen);
    if (r < 0) {
        return r;
    }

    /* 1. A crashed run's journal first, before anything else. */
    if (!d->dry_run) {
        r = restore_journal(d, err, errlen);
        if (r < 0) {
            return r;
        }
        r = jnl_create(d->conf.journal_path, &pv->jnl);
        if (r < 0) {
            snprintf(err, errlen, "journal %s: %s", d->conf.journal_path,
                     strerror(-r));
            return r;
        }
        if (d->host_ops->set_journal) {
            d->host_ops->set_journal(d->host, pv->jnl);
        }
        if (d->hks) {
            d->hks->ops->set_journal(d->hks->h, pv->jnl);
        }
    }

    /* 2. Managed CPUs. */
    r = take_cpus(d, err, errlen);
    if (r < 0) {
        return r;
    }

    /* 3. Energy model and policy. */
    r = load_model(d, err, errlen);
    if (r < 0) {
        return r;
    }
    conf_to_policy(&d->conf, &d->pcfg);
    d->pol = pol_state_create(&d->model, &d->pcfg);
    if (!d->pol) {
        snprintf(err, errlen, "policy refused the configuration/model");
        return -EINVAL;
    }
    open_inputs(d);
    open_model_check(d);
    if (d->conf.record_path[0]) {
        char src[300];

        if (d->conf.model_file[0]) {
            snprintf(src, sizeof src, "%s", d->conf.model_file);
        } else {
            snprintf(src, sizeof src, "%s:%s", d->host_ops->name,
                     d->conf.sysfs_root);
        }
        pv->rec = rec_open(d->conf.record_path, d->conf.record_max_bytes,
                           &d->model, src, &d->pcfg, err, errlen);
        if (!pv->rec) {
            return -EIO;
        }
        d->record_path = d->conf.record_path;
        LOG_INFO("recording each decision to %s (rotated past %" PRIu32
                 " bytes; format docs/record-format.md)",
                 d->conf.record_path, d->conf.record_max_bytes);
    }

    /* 4. Domains, and a first sample so the first period has deltas. */
    resync(d);
    cycle_prime(d);
    LOG_INFO("managing cpus %s, %zu domains, model %s, period %u..%u ms%s",
             cpuset_label(&cy->managed, buf, sizeof buf), d->n_vms,
             d->model.name, d->conf.period_ms, d->conf.max_period_ms,
             d->dry_run ? ", dry run" : "");
    arm_cycle(d, (uint64_t) d->conf.period_ms * 1000000u);
    return 0;
}

int
vpd_stop(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    int r = 0, rh;

    if (d->cycle_timer) {
        sched_del_timer(d->sched, d->cycle_timer);
        d->cycle_timer = 0;
    }
    if (pv && d->cyc && !d->dry_run && d->host) {
        migr_refresh(d);            /* No restore onto a migrating VM. */
        r = restore_all(d);
        rh = hkset_restore(d);
        r = r ? r : rh;
        if (d->hks) {
            d->hks->ops->set_journal(d->hks->h, NULL);
        }
        if (pv->jnl && d->host_ops->caps & DRV_HOST_SYSFS_TREE) {
            /* Anything the sysfs driver journalled that the in-memory
             * originals above did not cover. */
            unsigned failed = 0;
            int r2 = jnl_restore_sysfs(pv->jnl, d->conf.sysfs_root,
                                       &failed);

            if (r2 < 0) {
                LOG_ERR("%u journalled sysfs values not restored: %s",
                        failed, strerror(-r2));
                r = r ? r : r2;
            }
            if (d->host_ops->set_journal) {
                d->host_ops->set_journal(d->host, NULL);
            }
        }
        if (pv->jnl) {
            if (r == 0 && d->cyc->hv_up) {
                jnl_remove(pv->jnl);
            } else {
                /* Keep it: the next start replays what is missing. */
                LOG_WARN("keeping journal %s for the next start",
                         d->conf.journal_path);
            }
            jnl_close(pv->jnl);
            pv->jnl = NULL;
        }
    }
    if (pv) {
        pv->stopping = true;
    }
    if (d->cyc) {
        vmreg_clear(d);             /* While d->sched still exists. */
    }
    if (d->hv) {
        d->hv_ops->close(d->hv);
        d->hv = NULL;
    }
    if (d->host) {
        d->host_ops->close(d->host);
        d->host = NULL;
    }
    if (pv) {
        thermal_close(pv->th);      /* Leaves the loop before it goes. */
        rec_close(pv->rec);
        pv->rec = NULL;
        d->record_path = NULL;
        ts_close(pv->ts);
        freqsrc_close(pv->fs);
        pv->th = NULL;
        pv->ts = NULL;
        pv->fs = NULL;
    }
    pol_state_destroy(d->pol);
    d->pol = NULL;
    hkset_destroy(d->hks);
    d->hks = NULL;
    cycle_destroy(d);
    mchk_destroy(d->mchk);
    d->mchk = NULL;
    if (d->meters) {
        meter_list_clear(d->meters);
        free(d->meters);
        d->meters = NULL;
    }
    if (pv) {
        migr_destroy(pv->migr);
        free(pv);
        d->priv = NULL;
    }
    return r;
}
