/* manager/daemon.c -- vpowerd's cycle: measure, decide, apply, restore.
 *
 * Each period the daemon samples every managed CPU's idle residency and
 * frequency through the host driver and every vCPU's cumulative run and
 * run-queue-delay time through the hypervisor driver, folds them into the
 * per-vCPU load history (pol_load_update), asks the pure policy for a
 * plan (pol_decide) and executes the difference to what is in force
 * (pol_plan_diff) through the drivers.  What is in force is kept per VM
 * (vpd_vcpu.applied, vpd_vm.emu_applied) and per host (d->applied's host
 * fields), so VMs may come and go between cycles without index confusion:
 * the "applied" plan is rebuilt in the current VM order before each diff.
 *
 * Before anything is changed for the first time its original value is
 * saved in memory and in the journal; vpd_stop() puts every original back
 * and removes the journal, and vpd_start() replays a journal a crashed
 * run left behind before touching anything else.  A failed action is
 * logged rate-limited, counted, and the rest of the plan continues; a
 * domain that disappeared in the middle is dropped quietly. */

#include <config.h>

#include "manager/daemon.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/attrib.h"
#include "manager/domxml.h"
#include "manager/freqsrc.h"
#include "manager/guestchan.h"
#include "manager/haltstats.h"
#include "manager/hostmodel.h"
#include "manager/journal.h"
#include "manager/log.h"
#include "manager/record.h"
#include "manager/sched.h"
#include "manager/sysfs.h"
#include "manager/taskstats.h"
#include "manager/thermal.h"
#include "manager/util.h"

#define LOG_MODULE "vpowerd"

#define OFFLINE_MAX_TRIES 3
#define HINT_DEFAULT_MS 1000
#define HINT_LATENCY_MS 60000
#define REAL_CPU_ROOT "/sys/devices/system/cpu"

/* Where a vCPU's cumulative run/ready counters came from (vpd_vcpu.src).
 * The two sources count from different origins, so a vCPU whose source
 * changes is re-primed instead of producing a bogus delta. */
enum vpd_src { SRC_NONE = 0, SRC_HV, SRC_TS };

/* Originals of one CPU, saved before vpowerd first changes them. */
struct cpu_orig {
    bool freq_saved;
    uint32_t min_khz, max_khz;
    bool idle_saved;
    unsigned n_idle;
    bool disabled[DRV_MAX_IDLE];
    bool online_saved;
    bool online;
    uint64_t last_idle_us;          /* Residency sum at the last sample. */
    bool idle_valid;
};

struct vpd_priv {
    struct pol_vm *pvms;
    struct pol_vcpu *pvcpus;
    struct vpd_vm **vm_of;          /* Input VM index -> VM. */
    struct vpd_vcpu **vcpu_of;      /* Input vCPU index -> vCPU. */
    size_t cap_vms, cap_vcpus;
    struct pol_action *acts;
    size_t cap_acts;
    struct pol_plan *baseline;
    uint32_t busy_ppm[POL_MAX_CPUS];
    uint32_t base_ppm[POL_MAX_CPUS];
    struct cpu_orig orig[POL_MAX_CPUS];
    unsigned offline_tries[POL_MAX_CPUS];
    struct cpuset managed;          /* conf.managed & present. */
    struct cpuset online;
    struct jnl *jnl;
    uint64_t last_sample_ns;
    bool in_cycle, kick_pending;
    bool hv_up;
    bool have_plan;
    bool stopping;
    /* Inputs (manager/taskstats.h, freqsrc.h, thermal.h). */
    struct ts_source *ts;           /* NULL: counters from the driver. */
    bool local_qemu;                /* vCPU threads are on this host. */
    struct freqsrc *fs;             /* NULL: the host driver's cur_khz. */
    struct thermal *th;             /* NULL: no thermal events. */
    uint32_t ran_khz[POL_MAX_CPUS]; /* Frequency that ran, 0 = nominal. */
    uint32_t in_busy[POL_MAX_CPUS]; /* pol_input.cpu_busy_ppm: busy_ppm of
                                     * managed online CPUs as recorded
                                     * (C lines), UINT32_MAX elsewhere. */
    uint32_t in_khz[POL_MAX_CPUS];  /* pol_input.cpu_ran_khz. */
    uint64_t poll_ns[POL_MAX_CPUS]; /* Halt polling of the vCPUs that
                                     * ran there, this sample. */
    char ready_src[40];
    struct rec *rec;                /* Replay record, NULL if off. */
};

static void cycle(struct vpd *d, bool sample);
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

static const char *
set_str(const struct cpuset *s, char *buf, size_t len)
{
    cpuset_format(s, buf, len);
    if (!buf[0]) {
        snprintf(buf, len, "-");
    }
    return buf;
}

/* ---- Per-VM policy from libvirt metadata ---------------------------- */

static void
policy_to_xml(const struct pol_vm_policy *p, char *buf, size_t len)
{
    snprintf(buf, len,
             "<policy kind=\"%s\" latency-us=\"%" PRIu32 "\" "
             "min-freq-khz=\"%" PRIu32 "\" never-offline=\"%s\" "
             "share-smt=\"%s\"/>",
             pol_kind_name(p->kind), p->latency_us, p->min_freq_khz,
             p->never_offline ? "yes" : "no", p->share_smt ? "yes" : "no");
}

static void
default_policy(const struct vpd *d, struct pol_vm_policy *p)
{
    memset(p, 0, sizeof *p);
    p->kind = d->conf.default_policy;
    p->share_smt = true;
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

/* Saves 'cpu''s frequency range, idle disables and online state the
 * first time vpowerd is about to change one of them. */
static int
save_cpu_freq(struct vpd *d, unsigned cpu)
{
    struct vpd_priv *pv = d->priv;
    struct cpu_orig *o = &pv->orig[cpu];
    struct drv_freq f;
    int r;

    if (o->freq_saved) {
        return 0;
    }
    r = d->host_ops->get_freq(d->host, cpu, &f);
    if (r < 0) {
        return r;
    }
    /* The sysfs driver journals the files themselves (sysfs.h). */
    o->min_khz = f.min_khz;
    o->max_khz = f.max_khz;
    o->freq_saved = true;
    return 0;
}

static int
save_cpu_idle(struct vpd *d, unsigned cpu)
{
    struct vpd_priv *pv = d->priv;
    struct cpu_orig *o = &pv->orig[cpu];
    struct drv_idle id;
    int r;

    if (o->idle_saved) {
        return 0;
    }
    r = d->host_ops->get_idle(d->host, cpu, &id);
    if (r < 0) {
        return r;
    }
    o->n_idle = id.n_states;
    memcpy(o->disabled, id.disabled, sizeof o->disabled);
    o->idle_saved = true;
    return 0;
}

static int
save_cpu_online(struct vpd *d, unsigned cpu, bool online)
{
    struct vpd_priv *pv = d->priv;
    struct cpu_orig *o = &pv->orig[cpu];
    int r;

    if (o->online_saved) {
        return 0;
    }
    if (pv->jnl) {
        r = jnl_record_online(pv->jnl, cpu, online);
        if (r < 0) {
            jnl_fail(d, r, "an online state");
            return r;
        }
    }
    o->online = online;
    o->online_saved = true;
    return 0;
}

/* ---- VMs ------------------------------------------------------------ */

static struct vpd_vm *
find_uuid(struct vpd *d, const char *uuid)
{
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        if (!strcmp(vm->dom.uuid, uuid)) {
            return vm;
        }
    }
    return NULL;
}

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

static struct cpuset
host_all(const struct vpd *d)
{
    struct cpuset s;

    cpuset_zero(&s);
    for (unsigned c = 0; c < d->n_cpus; c++) {
        cpuset_set(&s, c);
    }
    return s;
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

/* Samples 'vm''s vCPUs: the driver gives the CPU each ran on, halt-poll
 * time and (fallback) run and ready time; where the vCPU's thread is
 * known, run and ready time come from it instead (taskstats or
 * schedstat: nanosecond run time and delay from one kernel snapshot,
 * where libvirt's vcpu.N.time has tick resolution).  src[i] says which.
 * Returns the driver's result. */
static int
read_vcpus(struct vpd *d, struct vpd_vm *vm, struct drv_vcpu_stat *st,
           uint8_t *src, size_t max, size_t *n)
{
    struct vpd_priv *pv = d->priv;
    bool stale = false;
    int r;

    /* Drivers fill what they know; fields appended to drv_vcpu_stat later
     * (has_halt...) must read as "not available" from older drivers. */
    memset(st, 0, max * sizeof *st);
    r = d->hv_ops->vcpu_stats(d->hv, vm->dom.uuid, st, max, n);
    if (r < 0) {
        return r;
    }
    for (size_t i = 0; i < *n && i < max; i++) {
        uint64_t run, delay;
        pid_t tid = i < vm->n_vcpus ? vm->vcpus[i].tid : 0;
        int t;

        src[i] = SRC_HV;
        if (!pv->ts || !tid) {
            continue;
        }
        t = ts_read(pv->ts, tid, &run, &delay);
        if (t == 0) {
            st[i].time_ns = run;
            st[i].delay_ns = delay;
            st[i].has_delay = true;
            src[i] = SRC_TS;
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
    return 0;
}

/* Reads the current pins of vCPUs [from, to) as their originals and takes
 * a first stats sample so the next cycle has a delta. */
static void
init_vcpus(struct vpd *d, struct vpd_vm *vm, unsigned from, unsigned to)
{
    struct drv_vcpu_stat st[to ? to : 1];
    uint8_t src[to ? to : 1];
    size_t n = 0;

    for (unsigned i = from; i < to; i++) {
        struct vpd_vcpu *vc = &vm->vcpus[i];

        memset(vc, 0, sizeof *vc);
        vc->idx = i;
        vc->cpu = -1;
        if (d->hv_ops->get_vcpu_pin(d->hv, vm->dom.uuid, i,
                                    &vc->original) < 0) {
            vc->original = host_all(d);
        }
        vc->applied = vc->original;
    }
    find_tids(d, vm);
    if (read_vcpus(d, vm, st, src, to, &n) == 0) {
        for (unsigned i = from; i < to && i < n; i++) {
            vm->vcpus[i].last_time_ns = st[i].time_ns;
            vm->vcpus[i].last_delay_ns = st[i].delay_ns;
            vm->vcpus[i].last_halt_ns = st[i].halt_poll_ns;
            vm->vcpus[i].src = src[i];
            vm->vcpus[i].cpu = st[i].cpu;
        }
    }
}

static void
vm_read_policy(struct vpd *d, struct vpd_vm *vm)
{
    char md[DOMXML_POLICY_MAX_BYTES + 1], err[256];

    default_policy(d, &vm->policy);
    vm->policy_from_metadata = false;
    if (d->hv_ops->get_metadata(d->hv, vm->dom.uuid, md, sizeof md) < 0
        || !md[0]) {
        return;
    }
    if (domxml_policy_parse(md, &vm->policy, err, sizeof err) < 0) {
        LOG_WARN("%s: ignoring vpower metadata: %s", vm->dom.name, err);
        default_policy(d, &vm->policy);
        return;
    }
    vm->policy_from_metadata = true;
}

static struct vpd_vm *
vm_add(struct vpd *d, const struct drv_dom *dom)
{
    struct vpd_vm *vm = XNEW(struct vpd_vm);
    char buf[256];

    vm->dom = *dom;
    vm->unmanaged = dom->static_pinning && !d->conf.manage_static_pinned;
    vm->n_vcpus = dom->n_vcpus;
    vm->vcpus = XNEWARRAY(struct vpd_vcpu, vm->n_vcpus ? vm->n_vcpus : 1);
    init_vcpus(d, vm, 0, vm->n_vcpus);
    if (d->hv_ops->get_emulator_pin(d->hv, vm->dom.uuid,
                                    &vm->emu_original) < 0) {
        vm->emu_original = host_all(d);
    }
    vm->emu_applied = vm->emu_original;
    vm_read_policy(d, vm);
    save_vm_originals(d, vm);
    vm->next = d->vms;
    d->vms = vm;
    d->n_vms++;
    LOG_INFO("domain %s (%s): %u vCPUs, %s%s, policy %s", vm->dom.name,
             vm->dom.uuid, vm->n_vcpus,
             vm->unmanaged ? "statically pinned to " : "managed",
             vm->unmanaged ? set_str(&dom->static_cpus, buf, sizeof buf)
                           : "",
             pol_kind_name(vm->policy.kind));
    gch_attach(d, vm);
    return vm;
}

static void
vm_free(struct vpd_vm *vm)
{
    if (vm) {
        free(vm->vcpus);
        free(vm);
    }
}

static void
vm_remove(struct vpd *d, struct vpd_vm *gone)
{
    for (struct vpd_vm **p = &d->vms; *p; p = &(*p)->next) {
        if (*p == gone) {
            *p = gone->next;
            d->n_vms--;
            if (d->priv->jnl && !d->priv->stopping) {
                jnl_forget_domain(d->priv->jnl, gone->dom.uuid);
            }
            LOG_INFO("domain %s gone", gone->dom.name);
            gch_detach(d, gone);
            vm_free(gone);
            return;
        }
    }
}

/* Applies a changed vCPU count: new vCPUs start from their current pins. */
static void
vm_update(struct vpd *d, struct vpd_vm *vm, const struct drv_dom *dom)
{
    unsigned old = vm->n_vcpus;
    bool chan_changed = strcmp(vm->dom.agent_path, dom->agent_path) != 0;

    vm->dom = *dom;
    if (chan_changed) {
        gch_detach(d, vm);
        gch_attach(d, vm);
    }
    if (dom->n_vcpus == old) {
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            if (!vm->vcpus[i].tid) {
                find_tids(d, vm);   /* Threads may have appeared. */
                break;
            }
        }
        return;
    }
    LOG_INFO("domain %s: %u -> %u vCPUs", dom->name, old, dom->n_vcpus);
    vm->vcpus = xrealloc(vm->vcpus, (dom->n_vcpus ? dom->n_vcpus : 1)
                                    * sizeof *vm->vcpus);
    vm->n_vcpus = dom->n_vcpus;
    if (dom->n_vcpus > old) {
        init_vcpus(d, vm, old, dom->n_vcpus);
        save_vm_originals(d, vm);
    }
}

/* Lists the running domains and adds, updates or drops VMs to match. */
static void
resync(struct vpd *d)
{
    struct drv_dom *doms = NULL;
    size_t n = 0;
    struct vpd_vm *vm, *next;
    const char *only = getenv("VPOWER_ONLY_DOMAINS");

    if (d->hv_ops->list(d->hv, &doms, &n) < 0) {
        vpd_count_error(d, VPD_E_LIBVIRT);
        free(doms);
        return;
    }
    if (only && *only) {
        /* Test hook: integration tests share the host's libvirtd with
         * other tests' guests, which must not be touched. */
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
            if (!strncmp(doms[i].name, only, strlen(only))) {
                doms[k++] = doms[i];
            }
        }
        n = k;
    }
    for (vm = d->vms; vm; vm = next) {
        bool found = false;

        next = vm->next;
        for (size_t i = 0; i < n && !found; i++) {
            found = !strcmp(doms[i].uuid, vm->dom.uuid);
        }
        if (!found) {
            vm_remove(d, vm);
        }
    }
    for (size_t i = 0; i < n; i++) {
        vm = find_uuid(d, doms[i].uuid);
        if (vm) {
            vm_update(d, vm, &doms[i]);
        } else {
            vm_add(d, &doms[i]);
        }
    }
    free(doms);
}

static void
hv_event(void *aux, enum drv_event ev, const char *uuid)
{
    struct vpd *d = aux;
    struct vpd_vm *vm;

    switch (ev) {
    case DRV_EV_STARTED:
    case DRV_EV_CHANGED:
        d->priv->hv_up = true;
        if (!uuid || !find_uuid(d, uuid) || ev == DRV_EV_CHANGED) {
            resync(d);
            vpd_kick(d);
        }
        break;
    case DRV_EV_STOPPED:
        vm = uuid ? find_uuid(d, uuid) : NULL;
        if (vm) {
            vm_remove(d, vm);
            vpd_kick(d);
        }
        break;
    case DRV_EV_DISCONNECTED:
        /* Pins of running domains stay; we resync after reconnecting. */
        d->priv->hv_up = false;
        vpd_count_error(d, VPD_E_LIBVIRT);
        break;
    }
}

/* ---- Sampling ------------------------------------------------------- */

static void
sample_host(struct vpd *d, uint64_t interval_ns)
{
    struct vpd_priv *pv = d->priv;
    uint64_t interval_us = interval_ns / 1000;

    CPUSET_FOREACH (c, &pv->managed) {
        struct vpd_cpu *vc = &d->cpus[c];
        struct cpu_orig *o = &pv->orig[c];
        struct drv_freq f;
        uint64_t idle_us = 0;

        pv->busy_ppm[c] = UINT32_MAX;       /* Unknown until measured. */
        if (!vc->online) {
            pv->busy_ppm[c] = 0;
            continue;
        }
        vc->freq_khz = d->host_ops->get_freq(d->host, (unsigned) c, &f) == 0
                       ? f.cur_khz : 0;
        pv->ran_khz[c] = vc->freq_khz;
        if (pv->fs) {
            uint32_t khz = 0;

            /* APERF/MPERF average over the interval where readable; 0 is
             * the policy's "nominal". */
            freqsrc_read(pv->fs, (unsigned) c, &khz);
            pv->ran_khz[c] = khz;
        }
        if (d->host_ops->get_idle(d->host, (unsigned) c, &vc->idle) < 0) {
            o->idle_valid = false;
            continue;
        }
        for (unsigned s = 0; s < vc->idle.n_states; s++) {
            idle_us += vc->idle.time_us[s];
        }
        /* A residency that did not move at all (fixture trees) says
         * nothing: fall back to the vCPU-based estimate. */
        if (o->idle_valid && interval_us && idle_us > o->last_idle_us) {
            uint64_t di = idle_us - o->last_idle_us;
            uint64_t busy = di >= interval_us ? 0 : interval_us - di;

            vc->nonidle_us += busy;
            pv->busy_ppm[c] = (uint32_t) (busy * 1000000u / interval_us);
        }
        o->last_idle_us = idle_us;
        o->idle_valid = true;
    }
}

static void
sample_vms(struct vpd *d, uint64_t interval_ns)
{
    struct vpd_priv *pv = d->priv;
    struct vpd_vm *vm, *next;
    unsigned n_ts = 0, n_hv = 0;

    for (vm = d->vms; vm; vm = next) {
        struct drv_vcpu_stat st[vm->n_vcpus ? vm->n_vcpus : 1];
        uint8_t src[vm->n_vcpus ? vm->n_vcpus : 1];
        size_t n = 0;
        int r;

        next = vm->next;
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            vm->vcpus[i].sampled = false;
        }
        r = read_vcpus(d, vm, st, src, vm->n_vcpus, &n);
        if (r == -ENOENT) {
            vm_remove(d, vm);
            continue;
        }
        if (r < 0) {
            vpd_count_error(d, VPD_E_LIBVIRT);
            continue;
        }
        for (unsigned i = 0; i < vm->n_vcpus && i < n; i++) {
            struct vpd_vcpu *vc = &vm->vcpus[i];
            uint64_t busy, ready, poll;
            uint32_t khz = 0;

            vc->cpu = st[i].cpu;
            if (src[i] != vc->src) {
                /* Counters from another origin: re-prime. */
                vc->src = src[i];
                vc->last_time_ns = st[i].time_ns;
                vc->last_delay_ns = st[i].delay_ns;
                vc->last_halt_ns = st[i].halt_poll_ns;
                continue;
            }
            n_ts += src[i] == SRC_TS;
            n_hv += src[i] == SRC_HV;
            busy = st[i].time_ns >= vc->last_time_ns
                   ? st[i].time_ns - vc->last_time_ns : 0;
            ready = st[i].has_delay && st[i].delay_ns >= vc->last_delay_ns
                    ? st[i].delay_ns - vc->last_delay_ns : 0;
            if (st[i].has_halt && st[i].halt_poll_ns >= vc->last_halt_ns) {
                /* Halt polling is the host spinning for wake-up latency,
                 * not guest work. */
                poll = st[i].halt_poll_ns - vc->last_halt_ns;
                busy = halt_adjusted_busy_ns(busy, poll, 0);
                if (st[i].cpu >= 0 && st[i].cpu < (int) d->n_cpus) {
                    pv->poll_ns[st[i].cpu] += poll;
                }
            }
            if (st[i].cpu >= 0 && st[i].cpu < (int) d->n_cpus) {
                khz = pv->ran_khz[st[i].cpu];
            }
            pol_load_update(&vc->load, &d->model, st[i].cpu, khz, busy,
                            ready, interval_ns);
            vc->busy_ns = busy;
            vc->ready_ns = ready;
            vc->sampled = true;
            vc->busy_total_ns += busy;
            vc->ready_total_ns += ready;
            vc->last_time_ns = st[i].time_ns;
            vc->last_delay_ns = st[i].delay_ns;
            vc->last_halt_ns = st[i].halt_poll_ns;
        }
    }
    /* The same correction on the CPUs' busy share (cpuidle residency
     * counts polling as busy): the policy sizes pool cores' points from
     * it, and polling is not load. */
    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        if (pv->poll_ns[c] && pv->busy_ppm[c] != UINT32_MAX
            && interval_ns) {
            uint64_t sub = pv->poll_ns[c] * 1000000u / interval_ns;

            pv->busy_ppm[c] = pv->busy_ppm[c] > sub
                              ? (uint32_t) (pv->busy_ppm[c] - sub) : 0;
        }
        pv->poll_ns[c] = 0;
    }
    /* What status calls ready_source: the one in use, both if VMs differ
     * (e.g. a domain whose QEMU pid file is missing). */
    if (n_ts && n_hv) {
        snprintf(pv->ready_src, sizeof pv->ready_src, "%s+%s",
                 ts_name(pv->ts), d->hv_ops->name);
        d->ready_source = pv->ready_src;
    } else if (n_ts) {
        d->ready_source = ts_name(pv->ts);
    } else if (n_hv) {
        d->ready_source = d->hv_ops->name;
    }
}

/* ---- Building the input --------------------------------------------- */

static void
ensure_capacity(struct vpd *d, size_t n_vms, size_t n_vcpus)
{
    struct vpd_priv *pv = d->priv;
    size_t cv = pv->cap_vms, cc = pv->cap_vcpus;
    struct pol_plan *np, *na, *nb;

    if (n_vms <= cv && n_vcpus <= cc && d->plan) {
        return;
    }
    while (cv < n_vms || cv < 8) {
        cv = cv ? 2 * cv : 8;
    }
    while (cc < n_vcpus || cc < 16) {
        cc = cc ? 2 * cc : 16;
    }
    pv->pvms = xrealloc(pv->pvms, cv * sizeof *pv->pvms);
    pv->vm_of = xrealloc(pv->vm_of, cv * sizeof *pv->vm_of);
    pv->pvcpus = xrealloc(pv->pvcpus, cc * sizeof *pv->pvcpus);
    pv->vcpu_of = xrealloc(pv->vcpu_of, cc * sizeof *pv->vcpu_of);
    np = pol_plan_create(cv, cc);
    na = pol_plan_create(cv, cc);
    nb = pol_plan_create(cv, cc);
    if (d->applied) {
        /* Host-level state in force carries over; VM parts are rebuilt
         * from the VMs each cycle. */
        na->active = d->applied->active;
        na->offline = d->applied->offline;
        memcpy(na->dom_freq_khz, d->applied->dom_freq_khz,
               sizeof na->dom_freq_khz);
        memcpy(na->idle_limit, d->applied->idle_limit,
               sizeof na->idle_limit);
    } else {
        memset(na->idle_limit, -1, sizeof na->idle_limit);
    }
    pol_plan_destroy(d->plan);
    pol_plan_destroy(d->applied);
    pol_plan_destroy(pv->baseline);
    d->plan = np;
    d->applied = na;
    pv->baseline = nb;
    pv->cap_vms = cv;
    pv->cap_vcpus = cc;
}

static void
build_input(struct vpd *d, struct pol_input *in)
{
    struct vpd_priv *pv = d->priv;
    size_t nv = 0, nc = 0, total = 0;

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        total += vm->n_vcpus;
    }
    ensure_capacity(d, d->n_vms, total);
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        struct pol_vm *p = &pv->pvms[nv];

        memset(p, 0, sizeof *p);
        p->id = (uint32_t) vm->dom.id;
        p->policy = vm->policy;
        p->hints = vm->hints;
        p->unmanaged = vm->unmanaged;
        cpuset_and(&p->fixed, &vm->dom.static_cpus, &pv->managed);
        if (vm->unmanaged && cpuset_empty(&p->fixed)) {
            p->fixed = vm->dom.static_cpus;
        }
        p->first_vcpu = (uint32_t) nc;
        p->n_vcpus = vm->n_vcpus;
        pv->vm_of[nv] = vm;
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            struct pol_vcpu *pc = &pv->pvcpus[nc];

            pc->vm = (uint32_t) nv;
            pc->idx = vm->vcpus[i].idx;
            pc->load = vm->vcpus[i].load;
            pc->cpu = vm->vcpus[i].cpu;
            pv->vcpu_of[nc] = &vm->vcpus[i];
            nc++;
        }
        nv++;
    }
    memset(in, 0, sizeof *in);
    in->vms = pv->pvms;
    in->n_vms = nv;
    in->vcpus = pv->pvcpus;
    in->n_vcpus = nc;
    in->managed = pv->managed;
    /* CPUs we parked offline stay ours to wake (pol_input.online). */
    cpuset_and(&in->online, &d->applied->offline, &pv->managed);
    cpuset_or(&in->online, &in->online, &pv->online);
    in->now_ns = clk_now_ns();
    in->override_performance = d->override_performance;
    if (pv->th) {
        thermal_domain_caps(pv->th, &d->model, in->thermal_cap_khz);
    }
    /* Per-CPU busy and frequency, exactly as the recorder's C lines
     * write them, so a replay gives the policy the same input. */
    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        bool known = d->cpus[c].managed && d->cpus[c].online;

        pv->in_busy[c] = !known ? UINT32_MAX
                         : pv->busy_ppm[c] != UINT32_MAX ? pv->busy_ppm[c]
                         : 0;
        pv->in_khz[c] = known ? pv->ran_khz[c] : 0;
    }
    in->cpu_busy_ppm = pv->in_busy;
    in->cpu_ran_khz = pv->in_khz;
    memcpy(d->thermal_cap_khz, in->thermal_cap_khz,
           sizeof d->thermal_cap_khz);
}

/* Rewrites d->applied's VM part from what each VM has in force now. */
static void
build_applied(struct vpd *d, const struct pol_input *in)
{
    struct vpd_priv *pv = d->priv;
    struct pol_plan *a = d->applied;

    a->n_vms = in->n_vms;
    a->n_vcpus = in->n_vcpus;
    for (size_t i = 0; i < in->n_vms; i++) {
        a->vm_emulator[i] = pv->vm_of[i]->emu_applied;
        a->vm_reason[i] = (uint8_t) pv->vm_of[i]->reason;
    }
    for (size_t i = 0; i < in->n_vcpus; i++) {
        a->vcpu_allowed[i] = pv->vcpu_of[i]->applied;
        a->vcpu_vm[i] = in->vcpus[i].vm;
    }
}

/* ---- Applying ------------------------------------------------------- */

static int
apply_freq(struct vpd *d, unsigned dom, uint32_t khz)
{
    struct vpd_priv *pv = d->priv;
    int ret = 0;

    if (dom >= d->model.n_domains) {
        return -EINVAL;
    }
    CPUSET_FOREACH (c, &d->model.domains[dom].cpus) {
        struct drv_freq f;
        int r;

        if (!cpuset_has(&pv->managed, (unsigned) c) || !d->cpus[c].online) {
            continue;
        }
        r = save_cpu_freq(d, (unsigned) c);
        if (r == 0) {
            r = d->host_ops->get_freq(d->host, (unsigned) c, &f);
        }
        if (r == 0) {
            /* The target is a ceiling; the kernel governor chooses below
             * it (a floor would defeat the governor's own idling). */
            uint32_t lo = f.hw_min_khz ? f.hw_min_khz : f.min_khz;
            uint32_t hi = khz;

            if (f.hw_max_khz && hi > f.hw_max_khz) {
                hi = f.hw_max_khz;
            }
            if (hi < lo) {
                hi = lo;
            }
            r = d->host_ops->set_freq_range(d->host, (unsigned) c, lo, hi);
        }
        if (r == -ENOTSUP) {
            r = 0;                  /* No cpufreq on this CPU. */
        }
        if (r < 0 && !ret) {
            ret = r;
        }
    }
    return ret;
}

static int
apply_idle(struct vpd *d, unsigned cpu, int limit)
{
    struct drv_idle id;
    int r, ret = 0;

    r = save_cpu_idle(d, cpu);
    if (r == 0) {
        r = d->host_ops->get_idle(d->host, cpu, &id);
    }
    if (r < 0) {
        return r == -ENOTSUP || r == -ENOENT ? 0 : r;
    }
    for (unsigned s = 0; s < id.n_states; s++) {
        /* Deeper than the limit: disabled; with no limit, as found. */
        bool want = limit >= 0 ? (int) s > limit
                               : d->priv->orig[cpu].disabled[s];

        if (id.disabled[s] != want) {
            r = d->host_ops->set_idle_disable(d->host, cpu, s, want);
            if (r < 0 && !ret) {
                ret = r;
            }
        }
    }
    return ret;
}

static int
apply_online(struct vpd *d, unsigned cpu, bool online)
{
    int r;

    if (!online && cpu == 0) {
        return -EPERM;              /* Never CPU0. */
    }
    r = save_cpu_online(d, cpu, d->cpus[cpu].online);
    if (r == 0) {
        r = d->host_ops->set_online(d->host, cpu, online);
    }
    if (r == 0) {
        d->cpus[cpu].online = online;
        if (online) {
            cpuset_set(&d->priv->online, cpu);
        } else {
            cpuset_clr(&d->priv->online, cpu);
        }
    }
    return r;
}

static void
action_failed(struct vpd *d, const struct pol_action *a, int r,
              enum vpd_err_kind kind, const char *what)
{
    LOG_WARN_RL("%s failed: %s (continuing with the rest of the plan)",
                what, strerror(-r));
    vpd_count_error(d, kind);
    (void) a;
}

static void
execute(struct vpd *d, const struct pol_action *acts, size_t n)
{
    struct vpd_priv *pv = d->priv;
    struct pol_plan *a = d->applied;

    for (size_t i = 0; i < n; i++) {
        const struct pol_action *x = &acts[i];
        struct vpd_vm *vm;
        char what[160];
        int r = 0;

        switch (x->type) {
        case POL_A_ONLINE:
            if (!cpuset_has(&pv->managed, x->cpu)) {
                break;
            }
            r = apply_online(d, x->cpu, true);
            if (r < 0) {
                snprintf(what, sizeof what, "onlining cpu%u", x->cpu);
                action_failed(d, x, r, VPD_E_SYSFS, what);
            } else {
                cpuset_clr(&a->offline, x->cpu);
                pv->offline_tries[x->cpu] = 0;
                d->n_actions[x->type]++;
            }
            break;
        case POL_A_PIN_VCPU: {
            struct vpd_vcpu *vc;

            if (x->vcpu >= a->n_vcpus || x->vm >= a->n_vms) {
                break;
            }
            vm = pv->vm_of[x->vm];
            vc = pv->vcpu_of[x->vcpu];
            if (vm->unmanaged || cpuset_empty(&x->set)
                || !cpuset_subset(&x->set, &pv->managed)) {
                break;
            }
            r = d->hv_ops->pin_vcpu(d->hv, vm->dom.uuid, vc->idx, &x->set);
            if (r == 0) {
                vc->applied = x->set;
                d->n_actions[x->type]++;
            } else if (r != -ENOENT) {
                snprintf(what, sizeof what, "pinning %s vCPU %u",
                         vm->dom.name, vc->idx);
                action_failed(d, x, r, VPD_E_LIBVIRT, what);
            }
            break;
        }
        case POL_A_PIN_EMULATOR:
            if (x->vm >= a->n_vms) {
                break;
            }
            vm = pv->vm_of[x->vm];
            if (vm->unmanaged || cpuset_empty(&x->set)
                || !cpuset_subset(&x->set, &pv->managed)) {
                break;
            }
            r = d->hv_ops->pin_emulator(d->hv, vm->dom.uuid, &x->set);
            if (r == 0) {
                vm->emu_applied = x->set;
                d->n_actions[x->type]++;
            } else if (r != -ENOENT) {
                snprintf(what, sizeof what, "pinning %s emulator",
                         vm->dom.name);
                action_failed(d, x, r, VPD_E_LIBVIRT, what);
            }
            break;
        case POL_A_SET_FREQ:
            r = apply_freq(d, x->domain, x->khz);
            if (r < 0) {
                snprintf(what, sizeof what, "setting domain %u to %u kHz",
                         x->domain, x->khz);
                action_failed(d, x, r, VPD_E_SYSFS, what);
            } else {
                a->dom_freq_khz[x->domain] = x->khz;
                d->n_actions[x->type]++;
                if (x->domain < POL_MAX_DOMAINS) {
                    d->dom_freq_changes[x->domain]++;
                }
            }
            break;
        case POL_A_IDLE_LIMIT:
            if (!cpuset_has(&pv->managed, x->cpu) || !d->cpus[x->cpu].online) {
                break;
            }
            r = apply_idle(d, x->cpu, x->state);
            if (r < 0) {
                snprintf(what, sizeof what, "idle limit %d on cpu%u",
                         x->state, x->cpu);
                action_failed(d, x, r, VPD_E_SYSFS, what);
            } else {
                a->idle_limit[x->cpu] = (int8_t) x->state;
                d->n_actions[x->type]++;
            }
            break;
        case POL_A_OFFLINE:
            if (x->cpu == 0 || !cpuset_has(&pv->managed, x->cpu)) {
                break;
            }
            r = apply_online(d, x->cpu, false);
            if (r == 0) {
                cpuset_set(&a->offline, x->cpu);
                d->n_actions[x->type]++;
            } else {
                /* EBUSY is retried on later cycles, a few times. */
                pv->offline_tries[x->cpu]++;
                snprintf(what, sizeof what, "offlining cpu%u (try %u)",
                         x->cpu, pv->offline_tries[x->cpu]);
                action_failed(d, x, r, VPD_E_SYSFS, what);
            }
            break;
        }
    }
}

/* In dry-run mode, pretend the plan is in force so the log shows what
 * each decision would change. */
static void
pretend(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    const struct pol_plan *p = d->plan;

    for (size_t i = 0; i < p->n_vms; i++) {
        pv->vm_of[i]->emu_applied = p->vm_emulator[i];
    }
    for (size_t i = 0; i < p->n_vcpus; i++) {
        pv->vcpu_of[i]->applied = p->vcpu_allowed[i];
    }
    d->applied->active = p->active;
    d->applied->offline = p->offline;
    memcpy(d->applied->dom_freq_khz, p->dom_freq_khz,
           sizeof p->dom_freq_khz);
    memcpy(d->applied->idle_limit, p->idle_limit, sizeof p->idle_limit);
}

/* One concise line: active CPUs, frequencies, each VM's allowed set. */
static void
log_decision(struct vpd *d, int n_acts)
{
    struct vpd_priv *pv = d->priv;
    const struct pol_plan *p = d->plan;
    char line[1024], set[128];
    size_t len;

    len = (size_t) snprintf(line, sizeof line, "%sdecision: active %s",
                            d->dry_run ? "dry-run " : "",
                            set_str(&p->active, set, sizeof set));
    if (!cpuset_empty(&p->offline) && len < sizeof line) {
        len += (size_t) snprintf(line + len, sizeof line - len,
                                 " offline %s",
                                 set_str(&p->offline, set, sizeof set));
    }
    for (unsigned dm = 0; dm < d->model.n_domains && len < sizeof line;
         dm++) {
        if (p->dom_freq_khz[dm]) {
            len += (size_t) snprintf(line + len, sizeof line - len,
                                     " f%u=%" PRIu32 "MHz", dm,
                                     p->dom_freq_khz[dm] / 1000);
        }
    }
    for (size_t i = 0; i < p->n_vms && len < sizeof line; i++) {
        struct cpuset u;

        cpuset_zero(&u);
        for (size_t k = 0; k < p->n_vcpus; k++) {
            if (p->vcpu_vm[k] == i) {
                cpuset_or(&u, &u, &p->vcpu_allowed[k]);
            }
        }
        len += (size_t) snprintf(line + len, sizeof line - len, " %s=%s",
                                 pv->vm_of[i]->dom.name,
                                 set_str(&u, set, sizeof set));
    }
    if (len < sizeof line) {
        snprintf(line + len, sizeof line - len, " (%d actions, %" PRIu32
                 " mW)", n_acts, p->est_power_mw);
    }
    if (d->dry_run || n_acts > 0) {
        LOG_INFO("%s", line);
    } else {
        LOG_DEBUG("%s", line);
    }
    if (log_enabled(LOG_LVL_DEBUG)) {
        for (size_t i = 0; i < p->n_vcpus; i++) {
            const struct vpd_vcpu *vc = pv->vcpu_of[i];

            LOG_DEBUG("  %s/%u: avg %u peak %u cap, ready %u ppm, cpu %d, "
                      "reason %s", pv->vm_of[p->vcpu_vm[i]]->dom.name,
                      vc->idx, vc->load.avg_cap, vc->load.peak_cap,
                      vc->load.ready_ppm, vc->cpu,
                      pol_reason_text(p->vm_reason[p->vcpu_vm[i]]));
        }
    }
}

/* Per-CPU busy for the energy estimate: measured residency where the host
 * gives one, else the vCPU loads on that CPU. */
static void
busy_estimate(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    uint32_t from_vcpus[POL_MAX_CPUS];

    memset(from_vcpus, 0, sizeof(uint32_t) * d->n_cpus);
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            int c = vm->vcpus[i].cpu;

            if (c >= 0 && (unsigned) c < d->n_cpus) {
                uint64_t ppm = (uint64_t) vm->vcpus[i].load.avg_cap
                               * 1000000u / POL_CAPACITY_SCALE;

                from_vcpus[c] = (uint32_t) (from_vcpus[c] + ppm > 1000000u
                                            ? 1000000u : from_vcpus[c] + ppm);
            }
        }
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        if (pv->busy_ppm[c] == UINT32_MAX
            || !cpuset_has(&pv->managed, c)) {
            pv->busy_ppm[c] = from_vcpus[c];
        }
    }
}

/* The same load with every managed core awake at nominal frequency and
 * shallow idle: what the host would draw without vpower. */
static uint32_t
baseline_power(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    struct pol_plan *b = pv->baseline;
    uint64_t total = 0;
    unsigned n = cpuset_count(&pv->managed);

    pol_plan_copy(b, d->plan);
    b->active = pv->managed;
    cpuset_zero(&b->offline);
    for (unsigned dm = 0; dm < d->model.n_domains; dm++) {
        const struct pol_domain *pd = &d->model.domains[dm];

        b->dom_freq_khz[dm] = pd->opps[pd->nominal_opp].freq_khz;
    }
    memset(b->idle_limit, 0, sizeof b->idle_limit);
    /* Spread: the same total busy evenly over all managed cores. */
    CPUSET_FOREACH (c, &pv->managed) {
        total += pv->busy_ppm[c];
    }
    CPUSET_FOREACH (c, &pv->managed) {
        uint64_t v = n ? total / n : 0;

        pv->base_ppm[c] = (uint32_t) (v > 1000000u ? 1000000u : v);
    }
    return pol_energy_power_mw(&d->model, b, pv->base_ppm);
}

/* Splits the interval's host energy 'joules' among the VMs by what their
 * vCPUs ran and the active cores they hold (manager/attrib.h); the part
 * no VM holds goes to the "_host" pseudo-VM. */
static void
attribute_energy(struct vpd *d, double joules, uint64_t interval_ns)
{
    struct attrib_vcpu *av;
    double *vmj;
    struct attrib_input ai;
    struct attrib_result ar;
    size_t k = 0, vi = 0, total = 0;
    struct vpd_vm *vm;

    for (vm = d->vms; vm; vm = vm->next) {
        total += vm->n_vcpus;
    }
    av = XNEWARRAY(struct attrib_vcpu, total ? total : 1);
    vmj = XNEWARRAY(double, d->n_vms ? d->n_vms : 1);
    for (vm = d->vms; vm; vm = vm->next, vi++) {
        for (unsigned j = 0; j < vm->n_vcpus; j++) {
            const struct vpd_vcpu *vc = &vm->vcpus[j];
            const struct cpuset *allowed = vm->unmanaged
                                           ? &vm->dom.static_cpus
                                           : &vc->applied;

            av[k].vm = vi;
            av[k].cpu = vc->cpu;
            av[k].busy_ns = vc->sampled ? vc->busy_ns : 0;
            av[k].allowed = cpuset_empty(allowed) ? NULL : allowed;
            k++;
        }
    }
    memset(&ai, 0, sizeof ai);
    ai.model = &d->model;
    ai.dom_freq_khz = d->applied ? d->applied->dom_freq_khz : NULL;
    ai.active = d->applied ? &d->applied->active : NULL;
    ai.interval_ns = interval_ns;
    ai.n_vms = d->n_vms;
    ai.vcpus = av;
    ai.n_vcpus = k;
    ai.host_joules = joules;
    if (attrib_split(&ai, vmj, &ar) == 0) {
        vi = 0;
        for (vm = d->vms; vm; vm = vm->next, vi++) {
            vm->energy_j += vmj[vi];
        }
        d->unattributed_energy_j += ar.host_joules;
    }
    free(av);
    free(vmj);
}

static void
cycle(struct vpd *d, bool sample)
{
    struct vpd_priv *pv = d->priv;
    struct pol_input in;
    uint64_t now = clk_now_ns(), interval;
    int n, r;

    if (pv->in_cycle) {
        pv->kick_pending = true;
        return;
    }
    pv->in_cycle = true;
    do {
        bool sampled = sample && pv->hv_up;

        pv->kick_pending = false;
        interval = now - pv->last_sample_ns;
        if (sampled) {
            sample_host(d, interval);
            sample_vms(d, interval);
            pv->last_sample_ns = now;
        }
        if (sample) {
            /* Before deciding: the policy sizes pool cores' frequencies
             * from it, and the energy estimate below uses it too. */
            busy_estimate(d);
        }
        build_input(d, &in);
        r = pol_decide(d->pol, &in, d->plan);
        if (r < 0) {
            LOG_ERR_RL("policy refused the snapshot: %s", strerror(-r));
            break;
        }
        /* CPUs that refused to go offline a few times stay online. */
        for (unsigned c = 0; c < d->n_cpus; c++) {
            if (pv->offline_tries[c] >= OFFLINE_MAX_TRIES) {
                cpuset_clr(&d->plan->offline, c);
            }
        }
        build_applied(d, &in);
        while ((n = pol_plan_diff(d->applied, d->plan, pv->acts,
                                  pv->cap_acts)) == -ENOSPC) {
            pv->cap_acts = pv->cap_acts ? 2 * pv->cap_acts : 64;
            pv->acts = xrealloc(pv->acts, pv->cap_acts * sizeof *pv->acts);
        }
        if (n < 0) {
            n = 0;
        }
        log_decision(d, n);
        if (d->dry_run) {
            pretend(d);
        } else if (pv->hv_up || n) {
            execute(d, pv->acts, (size_t) n);
            d->applied->active = d->plan->active;
        }
        for (size_t i = 0; i < in.n_vms; i++) {
            pv->vm_of[i]->reason = (enum pol_reason) d->plan->vm_reason[i];
        }
        d->n_decisions++;
        pv->have_plan = true;
        if (sample) {
            double dt = (double) interval / 1e9;
            uint32_t base;

            d->est_power_mw = pol_energy_power_mw(&d->model, d->plan,
                                                  pv->busy_ppm);
            base = baseline_power(d);
            if (d->last_cycle_ns && interval) {
                double e = d->est_power_mw / 1000.0 * dt;
                double b = base / 1000.0 * dt;

                d->host_energy_j += e;
                d->baseline_energy_j += b;
                /* Exported as a counter: never decreases. */
                d->saved_energy_j += b > e ? b - e : 0.0;
                attribute_energy(d, e, interval);
            }
            d->last_cycle_ns = now;
        }
        if (pv->rec) {
            r = rec_cycle(pv->rec, d, &in, pv->vm_of, sampled, interval,
                          pv->ran_khz, pv->busy_ppm);
            if (r < 0) {
                LOG_WARN_RL("record %s: %s", d->conf.record_path,
                            strerror(-r));
                vpd_count_error(d, VPD_E_JOURNAL);
            }
        }
        sample = false;
        now = clk_now_ns();
    } while (pv->kick_pending);
    pv->in_cycle = false;
}

static uint64_t
clamp_interval(const struct vpd *d, uint64_t ns)
{
    uint64_t lo = (uint64_t) d->conf.period_ms * 1000000u;
    uint64_t hi = (uint64_t) d->conf.max_period_ms * 1000000u;

    if (hi < lo) {
        hi = lo;
    }
    return ns < lo ? lo : ns > hi ? hi : ns;
}

static void
cycle_timer_cb(void *aux)
{
    struct vpd *d = aux;

    d->cycle_timer = 0;
    cycle(d, true);
    arm_cycle(d, clamp_interval(d, d->priv->have_plan
                                   ? d->plan->next_interval_ns : 0));
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
    if (!d->priv) {
        return;
    }
    /* Decide on the loads as tracked; sampling stays on the period (a
     * few-ms interval would only add noise to the load history). */
    cycle(d, false);
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
    policy_to_xml(p, xml, sizeof xml);
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

void
vpd_hint(struct vpd *d, struct vpd_vm *vm, enum vpd_hint_kind k,
         uint32_t arg, const char *text)
{
    uint64_t now = clk_now_ns();
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
    vpd_kick(d);
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
                        d->host_ops == &drv_host_sysfs ? d->conf.sysfs_root
                                                       : NULL,
                        &d->model, why, sizeof why);
    if (r < 0) {
        snprintf(err, errlen, "energy model from %s: %s",
                 d->conf.sysfs_root, why);
    }
    return r;
}

/* Replays the journal a crashed run left behind: pins through the
 * hypervisor driver, sysfs values and online states through the
 * journal's own writer.  Returns 0 (also when there was none) or -errno
 * with 'err' filled. */
static int
replay_pin(void *aux, const struct jnl_entry *e)
{
    struct vpd *d = aux;
    int r;

    if (e->kind == JNL_VCPU_PIN) {
        r = d->hv_ops->pin_vcpu(d->hv, e->uuid, e->vcpu, &e->cpus);
    } else {
        r = d->hv_ops->pin_emulator(d->hv, e->uuid, &e->cpus);
    }
    /* A domain that is gone took its pins with it. */
    return r == -ENOENT ? 0 : r;
}

static int
replay_journal(struct vpd *d, char *err, size_t errlen)
{
    struct jnl *j = NULL;
    char why[256];
    unsigned failed = 0;
    int r, r2;

    r = jnl_load(d->conf.journal_path, &j, why, sizeof why);
    if (r == -ENOENT) {
        return 0;
    }
    if (r == -EPERM || r == -ENOTDIR) {
        snprintf(err, errlen, "%s", why);     /* Untrusted: not replayed. */
        return r;
    }
    if (r < 0) {
        snprintf(err, errlen, "leftover journal unusable, restore by hand: "
                 "%s", why);
        return r;
    }
    LOG_WARN("journal %s left by a crashed run: restoring %zu originals",
             d->conf.journal_path, jnl_count(j));
    r = jnl_foreach(j, JNL_VCPU_PIN, replay_pin, d);
    r2 = jnl_foreach(j, JNL_EMULATOR_PIN, replay_pin, d);
    r = r ? r : r2;
    if (d->host_ops == &drv_host_sysfs) {
        r2 = jnl_restore_sysfs(j, d->conf.sysfs_root, &failed);
        r = r ? r : r2;
    }
    if (r < 0) {
        snprintf(err, errlen, "could not restore the leftover journal %s "
                 "(%u sysfs values failed): %s", d->conf.journal_path,
                 failed, strerror(-r));
        jnl_close(j);
        return r;
    }
    jnl_remove(j);
    jnl_close(j);
    return 0;
}

static void
on_thermal(void *aux, unsigned cpu, uint32_t capacity)
{
    struct vpd *d = aux;

    LOG_RL(LOG_LVL_INFO, "thermal: cpu%u capacity %" PRIu32 "/1024", cpu,
           capacity);
    d->thermal_events++;
    vpd_kick(d);                    /* Caps are read in build_input(). */
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
    bool sysfs = d->host_ops == &drv_host_sysfs;
    bool real_root = sysfs && !strcmp(d->conf.sysfs_root, REAL_CPU_ROOT);
    char e[256], ready[160], therm[300];
    int da;

    pv->local_qemu = d->hv_ops == &drv_hv_libvirt
                     && (!uri[0] || !strcmp(uri, "qemu:///system"));
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

int
vpd_start(struct vpd *d, char *err, size_t errlen)
{
    struct vpd_priv *pv = XNEW(struct vpd_priv);
    struct pol_input in;
    char buf[256];
    int r;

    d->priv = pv;
    d->start_ns = clk_now_ns();
    d->override_performance = d->conf.override_performance;
    d->dry_run = d->dry_run || d->conf.dry_run;
    d->energy_source = "model";
    d->ready_source = d->hv_ops->name;
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
    pv->hv_up = true;

    /* 1. A crashed run's journal first, before anything else. */
    if (!d->dry_run) {
        r = replay_journal(d, err, errlen);
        if (r < 0) {
            return r;
        }
        r = jnl_create(d->conf.journal_path, &pv->jnl);
        if (r < 0) {
            snprintf(err, errlen, "journal %s: %s", d->conf.journal_path,
                     strerror(-r));
            return r;
        }
        if (d->host_ops == &drv_host_sysfs) {
            sysfs_set_journal(d->host, pv->jnl);
        }
    }

    /* 2. Managed CPUs, online before topology and capabilities are read
     * (an offline CPU hides its cpufreq and cpuidle directories). */
    cpuset_zero(&pv->managed);
    cpuset_zero(&pv->online);
    for (unsigned c = 0; c < d->n_cpus; c++) {
        bool online = false;

        d->cpus[c].present = true;
        if (d->conf.managed_set && !cpuset_has(&d->conf.managed, c)) {
            continue;
        }
        d->cpus[c].managed = true;
        cpuset_set(&pv->managed, c);
        if (d->host_ops->is_online(d->host, c, &online) < 0) {
            online = true;          /* No hotplug file: CPU0 and friends. */
        }
        d->cpus[c].online = online;
        if (!online && !d->dry_run) {
            r = apply_online(d, c, true);
            if (r < 0) {
                LOG_WARN("cannot online cpu%u: %s; leaving it unmanaged", c,
                         strerror(-r));
                d->cpus[c].managed = false;
                cpuset_clr(&pv->managed, c);
                continue;
            }
        }
        cpuset_set(&pv->online, c);
        d->cpus[c].online = true;
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        if (!d->cpus[c].managed) {
            bool online = true;

            d->host_ops->is_online(d->host, c, &online);
            d->cpus[c].online = online;
        }
    }
    if (cpuset_empty(&pv->managed)) {
        snprintf(err, errlen, "no managed CPU is present (managed_cpus)");
        return -EINVAL;
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
    build_input(d, &in);
    sample_host(d, 0);
    pv->last_sample_ns = clk_now_ns();
    LOG_INFO("managing cpus %s, %zu domains, model %s, period %u..%u ms%s",
             set_str(&pv->managed, buf, sizeof buf), d->n_vms, d->model.name,
             d->conf.period_ms, d->conf.max_period_ms,
             d->dry_run ? ", dry run" : "");
    arm_cycle(d, (uint64_t) d->conf.period_ms * 1000000u);
    return 0;
}

/* Puts every original back.  Returns 0 or the first error. */
static int
restore_all(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    int ret = 0, r;

    for (struct vpd_vm *vm = d->vms; vm && pv->hv_up; vm = vm->next) {
        if (vm->unmanaged) {
            continue;
        }
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            struct vpd_vcpu *vc = &vm->vcpus[i];

            if (cpuset_equal(&vc->applied, &vc->original)) {
                continue;
            }
            r = d->hv_ops->pin_vcpu(d->hv, vm->dom.uuid, vc->idx,
                                    &vc->original);
            if (r < 0 && r != -ENOENT) {
                LOG_ERR("restoring %s vCPU %u pin: %s", vm->dom.name,
                        vc->idx, strerror(-r));
                ret = ret ? ret : r;
            }
        }
        if (!cpuset_equal(&vm->emu_applied, &vm->emu_original)) {
            r = d->hv_ops->pin_emulator(d->hv, vm->dom.uuid,
                                        &vm->emu_original);
            if (r < 0 && r != -ENOENT) {
                LOG_ERR("restoring %s emulator pin: %s", vm->dom.name,
                        strerror(-r));
                ret = ret ? ret : r;
            }
        }
    }
    for (unsigned c = 0; c < d->n_cpus; c++) {
        struct cpu_orig *o = &pv->orig[c];

        /* Online first: an offline CPU has no cpufreq/cpuidle files. */
        if (o->online_saved && !d->cpus[c].online) {
            r = d->host_ops->set_online(d->host, c, true);
            if (r < 0) {
                LOG_ERR("onlining cpu%u: %s", c, strerror(-r));
                ret = ret ? ret : r;
                continue;
            }
            d->cpus[c].online = true;
        }
        if (o->idle_saved) {
            for (unsigned s = 0; s < o->n_idle; s++) {
                r = d->host_ops->set_idle_disable(d->host, c, s,
                                                  o->disabled[s]);
                if (r < 0) {
                    LOG_ERR("restoring cpu%u idle state %u: %s", c, s,
                            strerror(-r));
                    ret = ret ? ret : r;
                }
            }
        }
        if (o->freq_saved) {
            r = d->host_ops->set_freq_range(d->host, c, o->min_khz,
                                            o->max_khz);
            if (r < 0) {
                LOG_ERR("restoring cpu%u frequency range: %s", c,
                        strerror(-r));
                ret = ret ? ret : r;
            }
        }
        if (o->online_saved && !o->online && c != 0) {
            r = d->host_ops->set_online(d->host, c, false);
            if (r < 0) {
                LOG_ERR("offlining cpu%u as found: %s", c, strerror(-r));
                ret = ret ? ret : r;
            }
        }
    }
    return ret;
}

int
vpd_stop(struct vpd *d)
{
    struct vpd_priv *pv = d->priv;
    int r = 0;

    if (d->cycle_timer) {
        sched_del_timer(d->sched, d->cycle_timer);
        d->cycle_timer = 0;
    }
    if (pv && !d->dry_run && d->host) {
        r = restore_all(d);
        if (pv->jnl && d->host_ops == &drv_host_sysfs) {
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
            sysfs_set_journal(d->host, NULL);
        }
        if (pv->jnl) {
            if (r == 0 && pv->hv_up) {
                jnl_remove(pv->jnl);
            } else {
                /* Keep it: the next start replays what is missing. */
                LOG_WARN("keeping journal %s for the next start",
                         d->conf.journal_path);
            }
            jnl_close(pv->jnl);
        }
    }
    while (d->vms) {
        struct vpd_vm *vm = d->vms;

        d->vms = vm->next;
        gch_detach(d, vm);          /* While d->sched still exists. */
        vm_free(vm);
    }
    d->n_vms = 0;
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
    pol_plan_destroy(d->plan);
    pol_plan_destroy(d->applied);
    d->pol = NULL;
    d->plan = d->applied = NULL;
    if (pv) {
        pol_plan_destroy(pv->baseline);
        free(pv->pvms);
        free(pv->pvcpus);
        free(pv->vm_of);
        free(pv->vcpu_of);
        free(pv->acts);
        free(pv);
        d->priv = NULL;
    }
    return r;
}
