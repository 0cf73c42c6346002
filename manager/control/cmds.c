/* manager/control/cmds.c -- Control verbs: daemon state to JSON, and back.
 *
 * The read verbs (version, status, list, get-policy, explain) turn
 * 'struct vpd' into the result objects of docs/control-protocol.md; the
 * write verbs (set-policy, override) call vpd_set_policy() and
 * vpd_set_override(), which validate, record and decide -- nothing here
 * actuates.  Requests arrive validated and authorised by
 * manager/control/ctl.c,
 * so the only errors left are about the daemon's state ("no running
 * domain named 'x'") or refusals from daemon.c.  Units are in the field
 * names and are base units (seconds, hertz, joules, watts), as the
 * exporter and Prometheus expect. */

#include <config.h>

#include "manager/control/cmds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "manager/control/histo.h"
#include "manager/cycle.h"
#include "manager/daemon.h"
#include "manager/drivers/meter.h"
#include "manager/hkset.h"
#include "manager/modelcheck.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "ctl"

static const char *const reason_names[POL_N_REASONS] = {
    [POL_R_PACKED] = "packed",
    [POL_R_PERFORMANCE] = "performance",
    [POL_R_LATENCY_HINT] = "latency-hint",
    [POL_R_OVERRIDE] = "override",
    [POL_R_READY_SPREAD] = "ready-spread",
    [POL_R_UNMANAGED] = "unmanaged",
    [POL_R_WARMUP] = "warmup",
    [POL_R_SMT_ISOLATED] = "smt-isolated",
};

static const char *const action_names[POL_A_OFFLINE + 1] = {
    [POL_A_ONLINE] = "online",
    [POL_A_PIN_VCPU] = "pin_vcpu",
    [POL_A_PIN_EMULATOR] = "pin_emulator",
    [POL_A_SET_FREQ] = "set_freq",
    [POL_A_IDLE_LIMIT] = "idle_limit",
    [POL_A_OFFLINE] = "offline",
};

static const char *const error_names[VPD_N_ERRS] = {
    [VPD_E_LIBVIRT] = "libvirt",
    [VPD_E_SYSFS] = "sysfs",
    [VPD_E_GUEST] = "guest",
    [VPD_E_CONFIG] = "config",
    [VPD_E_JOURNAL] = "journal",
};

/* Protocol keys of the hint counters (vpd_hint_name() is for humans). */
static const char *const hint_keys[VPD_N_HINTS] = {
    [VPD_HINT_LATENCY_BEGIN] = "latency_begin",
    [VPD_HINT_LATENCY_END] = "latency_end",
    [VPD_HINT_BATCH] = "batch",
    [VPD_HINT_BOOST] = "boost",
    [VPD_HINT_IDLE] = "idle",
    [VPD_HINT_UTIL] = "util",
};

const char *
cmds_reason_name(enum pol_reason r)
{
    return (unsigned) r < POL_N_REASONS ? reason_names[r] : "unknown";
}

/* ---- JSON helpers ---------------------------------------------------- */

/* Doubles as short decimals: json-c's default %.17g turns 0.1 into
 * 0.10000000000000001, which helps nobody reading --json. */
static struct json_object *
jdbl(double v)
{
    char buf[64];
    size_t n;

    if (v != v) {
        v = 0;
    }
    snprintf(buf, sizeof buf, "%.6f", v);
    n = strlen(buf);
    while (n > 2 && buf[n - 1] == '0' && buf[n - 2] != '.') {
        buf[--n] = '\0';
    }
    return json_object_new_double_s(v, buf);
}

static void
add(struct json_object *o, const char *key, struct json_object *v)
{
    json_object_object_add(o, key, v);
}

static void
add_str(struct json_object *o, const char *key, const char *s)
{
    add(o, key, json_object_new_string(s ? s : ""));
}

static void
add_int(struct json_object *o, const char *key, int64_t v)
{
    add(o, key, json_object_new_int64(v));
}

static void
add_u64(struct json_object *o, const char *key, uint64_t v)
{
    add(o, key, json_object_new_uint64(v));
}

static void
add_bool(struct json_object *o, const char *key, bool v)
{
    add(o, key, json_object_new_boolean(v));
}

static void
add_dbl(struct json_object *o, const char *key, double v)
{
    add(o, key, jdbl(v));
}

/* ---- status ---------------------------------------------------------- */

static const char *
cpu_state(const struct vpd *d, unsigned c)
{
    const struct vpd_cpu *p = &d->cpus[c];

    if (!p->managed) {
        return "unmanaged";
    }
    if (!p->online) {
        return "offline";
    }
    /* Before the first decision every managed CPU is awake. */
    if (!d->applied || !d->n_decisions
        || cpuset_has(&d->applied->active, c)) {
        return "active";
    }
    return "parked";
}

unsigned
cmds_active_cpus(const struct vpd *d)
{
    unsigned n = 0;

    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        n += d->cpus[c].present && !strcmp(cpu_state(d, c), "active");
    }
    return n;
}

static double
period_seconds(const struct vpd *d)
{
    uint64_t lo = (uint64_t) d->conf.period_ms * 1000000u;
    uint64_t hi = (uint64_t) d->conf.max_period_ms * 1000000u;
    uint64_t ns = lo;

    if (d->plan && d->n_decisions && d->plan->next_interval_ns) {
        ns = d->plan->next_interval_ns;
        if (hi < lo) {
            hi = lo;
        }
        ns = ns < lo ? lo : ns > hi ? hi : ns;
    }
    return (double) ns / 1e9;
}

/* Thermal state: where events come from, how many capacity changes were
 * reported, and the cap per frequency domain in force (0 = none). */
static struct json_object *
thermal_result(const struct vpd *d)
{
    struct json_object *t = json_object_new_object();
    struct json_object *caps = json_object_new_array();
    unsigned n_capped = 0;

    add_str(t, "source", d->thermal_source ? d->thermal_source : "none");
    add_u64(t, "events_total", d->thermal_events);
    for (unsigned dm = 0; dm < d->model.n_domains && dm < POL_MAX_DOMAINS;
         dm++) {
        json_object_array_add(caps, json_object_new_int64(
            (int64_t) d->thermal_cap_khz[dm] * 1000));
        n_capped += d->thermal_cap_khz[dm] != 0;
    }
    add_str(t, "state", n_capped ? "capped" : "normal");
    add(t, "cap_hertz", caps);
    return t;
}

/* Knobs another writer took over (drv.h, struct drv_foreign): the
 * total the host driver counts and the first FOREIGN_MAX of them. */
#define FOREIGN_MAX 64

static void
add_foreign(struct json_object *r, struct vpd *d)
{
    struct drv_foreign list[FOREIGN_MAX];
    struct json_object *a = json_object_new_array();
    size_t n = 0;

    if (d->host && d->host_ops && d->host_ops->foreign) {
        n = d->host_ops->foreign(d->host, list, FOREIGN_MAX);
    }
    for (size_t i = 0; i < n && i < FOREIGN_MAX; i++) {
        struct json_object *o = json_object_new_object();

        add_int(o, "cpu", list[i].cpu);
        add_str(o, "knob", list[i].knob);
        add_str(o, "expected", list[i].expected);
        add_str(o, "found", list[i].found);
        add_bool(o, "written", list[i].written);
        add_int(o, "since_seconds", list[i].since_s);
        add_int(o, "found_seconds", list[i].when_s);
        json_object_array_add(a, o);
    }
    add_u64(r, "foreign_knobs_total", n);
    add(r, "foreign_knobs", a);
}

/* The power meters found at start: what each is and covers, and
 * whether it is part of the whole-host meter (meter_choose_host). */
static void
add_meters(struct json_object *r, const struct vpd *d)
{
    struct json_object *a = json_object_new_array();
    struct meter_choice c = { .n = 0 };
    const struct meter_list *l = d->meters;

    if (l && meter_choose_host(l, &c) < 0) {
        c.n = 0;
    }
    for (size_t i = 0; l && i < l->n; i++) {
        const struct meter_info *m = &l->meters[i];
        struct json_object *o = json_object_new_object();
        char line[METER_NAME_LEN + METER_PATH_LEN + 80];
        bool host = false;

        for (size_t k = 0; k < c.n; k++) {
            host |= c.idx[k] == i;
        }
        meter_describe(m, line, sizeof line);
        add_str(o, "name", m->name);
        add_str(o, "kind", meter_kind_name(m->kind));
        add_str(o, "scope", meter_scope_name(m->scope));
        add_str(o, "path", m->path);
        add_bool(o, "host", host);
        add_str(o, "description", line);
        json_object_array_add(a, o);
    }
    add(r, "meters", a);
    add_str(r, "host_meter_scope", c.n ? meter_scope_name(c.scope) : "");
}

/* What ran on the freed CPUs in the last period (hkset.h). */
static struct json_object *
woke_result(const struct hkset *s)
{
    const struct hkset_woke *w = &s->woke;
    struct json_object *o = json_object_new_object();
    struct json_object *a = json_object_new_array();
    char list[1024];

    cpuset_format(&w->cpus, list, sizeof list);
    add_str(o, "cpus", list);
    add_dbl(o, "seconds", (double) w->period_ns / 1e9);
    add_u64(o, "interrupts", w->irqs);
    add_bool(o, "threads_read", w->threads);
    if (w->threads) {
        add_u64(o, "thread_runs", w->thread_runs);
    }
    for (size_t i = 0; i < w->n_top; i++) {
        struct json_object *e = json_object_new_object();

        add_str(e, "kind", w->top[i].thread ? "thread" : "interrupt");
        if (w->top[i].thread) {
            add_u64(e, "tid", w->top[i].tid);
        } else {
            add_str(e, "irq", w->top[i].label);
        }
        add_str(e, "name", w->top[i].name);
        add_u64(e, "count", w->top[i].count);
        json_object_array_add(a, e);
    }
    json_object_object_add(o, "top", a);
    return o;
}

/* Housekeeping (manager/hkset.h): whether host work follows the active
 * set, where it runs, and what the last change moved. */
static struct json_object *
housekeeping_result(struct vpd *d)
{
    struct json_object *o = json_object_new_object();
    const struct hkset *s = d->hks;
    const struct drv_hk_report *rep;
    uint64_t ns = 0;
    char list[1024];
    const char *state;

    add_bool(o, "enabled", s != NULL);
    if (!s) {
        add_str(o, "state", "off");
        return o;
    }
    rep = &s->rep;
    state = !s->applied ? "pending" : s->last_err < 0 ? "error"
            : s->released ? "released" : "confined";
    cpuset_format(&s->set, list, sizeof list);
    add_str(o, "state", state);
    add_str(o, "mode", hkset_mode(s));
    add_str(o, "cpus", s->applied ? list : "");
    if (s->applied) {
        add_int(o, "cpu_count", cpuset_count(&s->set));
    }
    add_u64(o, "changes_total", s->n_changes);
    add_int(o, "cgroups_moved", rep->n_cgroups);
    add_int(o, "groups_absent", rep->n_absent);
    add_int(o, "irqs_moved", rep->n_irqs);
    add_int(o, "irqs_refused", rep->n_irqs_refused);
    {
        /* Which ones, so an operator (and a test) can tell the wakeups
         * of a freed CPU that no program can move. */
        struct json_object *a = json_object_new_array();

        for (unsigned k = 0; k < rep->n_irqs_refused
                        && k < DRV_HK_REFUSED_MAX; k++) {
            json_object_array_add(a, json_object_new_int64(rep->refused[k]));
        }
        add(o, "irqs_refused_list", a);
    }
    add_bool(o, "workqueues_moved", rep->wq_moved);
    add_int(o, "irqbalance_pid", rep->irqbalance_pid);
    add_str(o, "error", s->error);
    if (s->pressure_known) {
        add_dbl(o, "cpu_pressure_percent", s->pressure_cpct / 100.0);
    }
    add_bool(o, "spreading", s->spreading);
    add_u64(o, "spread_decisions_total", s->n_spread);
    if (s->ops->cpu_time(s->h, &ns) == 0) {
        add_dbl(o, "cpu_seconds", (double) ns / 1e9);
    }
    if (s->woke.valid) {
        json_object_object_add(o, "freed_last_period", woke_result(s));
    }
    return o;
}

/* Interrupts per CPU since boot (/proc/interrupts, through the
 * housekeeping driver) as "interrupts_total" of each entry of 'cpus'. */
static void
add_cpu_interrupts(struct json_object *cpus, struct vpd *d)
{
    uint64_t counts[POL_MAX_CPUS];
    int n;

    if (!d->hks) {
        return;
    }
    memset(counts, 0, sizeof counts);
    n = d->hks->ops->irq_counts(d->hks->h, counts, POL_MAX_CPUS);
    for (size_t i = 0; n > 0 && i < json_object_array_length(cpus); i++) {
        struct json_object *c = json_object_array_get_idx(cpus, i);
        struct json_object *v;
        int64_t cpu;

        if (!json_object_object_get_ex(c, "cpu", &v)) {
            continue;
        }
        cpu = json_object_get_int64(v);
        if (cpu >= 0 && cpu < n && cpu < POL_MAX_CPUS) {
            add_u64(c, "interrupts_total", counts[cpu]);
        }
    }
}

/* The model against the whole-host meter (manager/modelcheck.h), when
 * there is one: both over the same periods, the error and the
 * correction. */
static void
add_model_check(struct json_object *r, const struct vpd *d)
{
    const struct mchk_stats *st;
    struct json_object *o;

    if (!d->mchk) {
        return;
    }
    st = mchk_stats(d->mchk);
    o = json_object_new_object();
    add_str(o, "meter", st->meter);
    add_bool(o, "platform", st->platform);
    add_u64(o, "periods_total", st->periods);
    add_u64(o, "read_errors_total", st->read_errors);
    add_dbl(o, "meter_joules", st->meter_j);
    add_dbl(o, "model_joules", st->model_j);
    add_dbl(o, "meter_watts", st->meter_w);
    add_dbl(o, "model_watts", st->model_w);
    add_dbl(o, "error_ratio", st->error);
    add_dbl(o, "original_error_ratio", st->base_error);
    add_int(o, "over_periods", st->over);
    add_u64(o, "warnings_total", st->warnings);
    add_bool(o, "correction", d->conf.model_correction);
    add_bool(o, "correcting", st->correcting);
    add_u64(o, "corrections_total", st->corrections);
    add_dbl(o, "busy_scale", st->busy_scale);
    add_dbl(o, "idle_scale", st->idle_scale);
    add(r, "model_check", o);
}

static struct json_object *
status_result(struct vpd *d)
{
    struct json_object *r = json_object_new_object();
    struct json_object *acts = json_object_new_object();
    struct json_object *errs = json_object_new_object();
    struct json_object *cpus = json_object_new_array();
    struct json_object *doms = json_object_new_array();
    unsigned n_active = 0, n_parked = 0, n_offline = 0;
    uint64_t now = clk_now_ns();
    bool measured = d->mchk && mchk_stats(d->mchk)->periods > 0;

    add_str(r, "version", PACKAGE_VERSION);
    add_dbl(r, "uptime_seconds",
            d->start_ns && now > d->start_ns
            ? (double) (now - d->start_ns) / 1e9 : 0.0);
    add_dbl(r, "cpu_seconds", (double) clk_process_cpu_ns() / 1e9);
    add_str(r, "driver", d->hv_ops ? d->hv_ops->name : "none");
    add_bool(r, "connected", d->hv != NULL);
    add_bool(r, "dry_run", d->dry_run);
    add_str(r, "override", d->override_performance ? "performance" : "off");
    add_dbl(r, "period_seconds", period_seconds(d));
    add_u64(r, "decisions_total", d->n_decisions);
    /* Measured once the meter has given a period (a meter that cannot
     * be read leaves the estimate in place). */
    add_dbl(r, "power_watts", measured ? mchk_stats(d->mchk)->meter_w
                                       : d->est_power_mw / 1000.0);
    add_dbl(r, "model_power_watts", d->est_power_mw / 1000.0);
    add_str(r, "energy_source", measured ? "meter"
                                : d->energy_source ? d->energy_source
                                                   : "model");
    add_dbl(r, "energy_joules", d->host_energy_j);
    add_dbl(r, "baseline_energy_joules", d->baseline_energy_j);
    /* Accumulated per interval as max(0, baseline - actual) by the
     * daemon: a counter, so it never goes down. */
    add_dbl(r, "saved_joules", d->saved_energy_j);
    add_dbl(r, "unattributed_energy_joules", d->unattributed_energy_j);
    add_str(r, "ready_source", d->ready_source ? d->ready_source
                               : d->hv_ops ? d->hv_ops->name : "none");
    add_str(r, "frequency_source", d->freq_source ? d->freq_source
                                                  : "host-driver");
    add(r, "thermal", thermal_result(d));
    add_foreign(r, d);
    add_meters(r, d);
    add_model_check(r, d);
    add_str(r, "record", d->record_path ? d->record_path : "");
    if (d->cyc) {
        add(r, "hint_apply_seconds", histo_to_json(&d->cyc->hint_apply));
    }

    for (unsigned c = 0; c < d->n_cpus && c < POL_MAX_CPUS; c++) {
        const struct vpd_cpu *p = &d->cpus[c];
        struct json_object *o, *idle;
        const char *st;

        if (!p->present) {
            continue;
        }
        st = cpu_state(d, c);
        n_active += !strcmp(st, "active");
        n_parked += !strcmp(st, "parked");
        n_offline += !strcmp(st, "offline");
        o = json_object_new_object();
        add_int(o, "cpu", c);
        add_str(o, "state", st);
        add_bool(o, "managed", p->managed);
        add_u64(o, "frequency_hertz", (uint64_t) p->freq_khz * 1000u);
        add_dbl(o, "nonidle_seconds", (double) p->nonidle_us / 1e6);
        idle = json_object_new_array();
        for (unsigned i = 0; i < p->idle.n_states && i < DRV_MAX_IDLE; i++) {
            struct json_object *s = json_object_new_object();
            char name[sizeof p->idle.name[i]];

            snprintf(name, sizeof name, "%s", p->idle.name[i]);
            add_str(s, "state", name);
            add_dbl(s, "seconds", (double) p->idle.time_us[i] / 1e6);
            add_bool(s, "disabled", p->idle.disabled[i]);
            json_object_array_add(idle, s);
        }
        add(o, "idle", idle);
        json_object_array_add(cpus, o);
    }
    add_int(r, "active_cpus", n_active);
    add_int(r, "parked_cpus", n_parked);
    add_int(r, "offline_cpus", n_offline);
    for (unsigned i = 0; i <= POL_A_OFFLINE; i++) {
        add_u64(acts, action_names[i], d->n_actions[i]);
    }
    add(r, "actions_total", acts);
    for (unsigned i = 0; i < VPD_N_ERRS; i++) {
        add_u64(errs, error_names[i], d->n_errors[i]);
    }
    add(r, "errors_total", errs);
    add_cpu_interrupts(cpus, d);
    add(r, "cpus", cpus);
    add(r, "housekeeping", housekeeping_result(d));

    for (unsigned dm = 0; dm < d->model.n_domains && dm < POL_MAX_DOMAINS;
         dm++) {
        const struct cpuset *set = &d->model.domains[dm].cpus;
        struct json_object *o = json_object_new_object();
        uint32_t khz = 0;
        char list[1024];

        cpuset_format(set, list, sizeof list);
        CPUSET_FOREACH (c, set) {
            if ((unsigned) c < d->n_cpus && d->cpus[c].online
                && d->cpus[c].freq_khz) {
                khz = d->cpus[c].freq_khz;
                break;
            }
        }
        add_int(o, "domain", dm);
        add_str(o, "cpus", list);
        add_u64(o, "frequency_hertz", (uint64_t) khz * 1000u);
        add_u64(o, "changes_total", d->dom_freq_changes[dm]);
        json_object_array_add(doms, o);
    }
    add(r, "freq_domains", doms);
    return r;
}

/* ---- list, get-policy ------------------------------------------------ */

static void
add_policy(struct json_object *o, const struct vpd_vm *vm)
{
    const struct pol_vm_policy *p = &vm->policy;

    add_str(o, "policy", pol_kind_name(p->kind));
    add_u64(o, "latency_us", p->latency_us);
    add_u64(o, "min_freq_khz", p->min_freq_khz);
    add_bool(o, "never_offline", p->never_offline);
    add_bool(o, "share_smt", p->share_smt);
}

static struct json_object *
vm_result(const struct vpd_vm *vm)
{
    struct json_object *o = json_object_new_object();
    struct json_object *hints = json_object_new_object();
    struct json_object *vcpus = json_object_new_array();
    double busy = 0, ready = 0, load = 0, ready_pct = 0;

    add_str(o, "name", vm->dom.name);
    add_str(o, "uuid", vm->dom.uuid);
    add_int(o, "id", vm->dom.id);
    add_policy(o, vm);
    add_str(o, "policy_source",
            vm->policy_from_metadata ? "metadata" : "default");
    add_bool(o, "managed", !vm->unmanaged);
    add_str(o, "reason", cmds_reason_name(vm->reason));
    for (unsigned i = 0; i < vm->n_vcpus; i++) {
        const struct vpd_vcpu *v = &vm->vcpus[i];
        struct json_object *j = json_object_new_object();
        double vload = v->load.last_cap * 100.0 / POL_CAPACITY_SCALE;
        char allowed[1024];

        cpuset_format(&v->applied, allowed, sizeof allowed);
        busy += (double) v->busy_total_ns / 1e9;
        ready += (double) v->ready_total_ns / 1e9;
        load += vload;
        ready_pct += v->load.last_ready_ppm / 10000.0;
        add_int(j, "vcpu", v->idx);
        add_int(j, "cpu", v->cpu);
        add_str(j, "allowed", allowed);
        add_int(j, "allowed_count", cpuset_count(&v->applied));
        add_dbl(j, "busy_seconds", (double) v->busy_total_ns / 1e9);
        add_dbl(j, "ready_seconds", (double) v->ready_total_ns / 1e9);
        add_dbl(j, "load_pct", vload);
        json_object_array_add(vcpus, j);
    }
    add_dbl(o, "busy_seconds", busy);
    add_dbl(o, "ready_seconds", ready);
    add_dbl(o, "energy_joules", vm->energy_j);
    add_dbl(o, "energy_busy_joules", vm->energy_busy_j);
    add_dbl(o, "energy_static_joules", vm->energy_j - vm->energy_busy_j);
    add_dbl(o, "load_pct", load);
    add_dbl(o, "ready_pct", ready_pct);
    for (unsigned i = 0; i < VPD_N_HINTS; i++) {
        add_u64(hints, hint_keys[i], vm->hints_total[i]);
    }
    add_u64(hints, "rejected", vm->hints_rejected);
    add(o, "hints_total", hints);
    add_str(o, "last_hint", vm->last_hint);
    if (vm->hint_apply) {
        add(o, "hint_apply_seconds", histo_to_json(vm->hint_apply));
    }
    add(o, "vcpus", vcpus);
    return o;
}

static struct json_object *
list_result(struct vpd *d)
{
    struct json_object *r = json_object_new_object();
    struct json_object *vms = json_object_new_array();

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        json_object_array_add(vms, vm_result(vm));
    }
    add(r, "vms", vms);
    return r;
}

static struct json_object *
policy_result(const struct vpd_vm *vm)
{
    struct json_object *o = json_object_new_object();

    add_str(o, "name", vm->dom.name);
    add_str(o, "uuid", vm->dom.uuid);
    add_policy(o, vm);
    add_str(o, "source", vm->policy_from_metadata ? "metadata" : "default");
    return o;
}

/* ---- explain --------------------------------------------------------- */

/* How long an explain keeps threads read on the freed CPUs. */
#define EXPLAIN_WATCH_NS (600ull * 1000000000u)

/* Rebuilds the policy input in the order the last decision saw it (the
 * VM list order), so pol_explain() reads the plan's per-VM entries.  If
 * the VM list changed since that decision the plan cannot be matched
 * and only the recorded reason is explained. */
static void
explain_text(struct vpd *d, const struct vpd_vm *target, char *buf,
             size_t len)
{
    struct pol_vm *pvms;
    struct pol_vcpu *pvcpus;
    struct pol_input in;
    size_t nv = 0, nc = 0, total = 0, idx = 0;

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        total += vm->n_vcpus;
    }
    if (!d->pol || !d->plan || !d->n_decisions
        || d->plan->n_vms != d->n_vms || d->plan->n_vcpus != total) {
        snprintf(buf, len, "%s: %s.  (The VM list changed since the last "
                 "decision; details follow at the next one.)",
                 target->dom.name, pol_reason_text(target->reason));
        return;
    }
    pvms = XNEWARRAY(struct pol_vm, d->n_vms ? d->n_vms : 1);
    pvcpus = XNEWARRAY(struct pol_vcpu, total ? total : 1);
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        struct pol_vm *p = &pvms[nv];

        if (vm == target) {
            idx = nv;
        }
        p->id = (uint32_t) vm->dom.id;
        p->policy = vm->policy;
        p->hints = vm->hints;
        p->unmanaged = vm->unmanaged;
        p->fixed = vm->dom.static_cpus;
        p->first_vcpu = (uint32_t) nc;
        p->n_vcpus = vm->n_vcpus;
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            pvcpus[nc].vm = (uint32_t) nv;
            pvcpus[nc].idx = vm->vcpus[i].idx;
            pvcpus[nc].load = vm->vcpus[i].load;
            pvcpus[nc].cpu = vm->vcpus[i].cpu;
            nc++;
        }
        nv++;
    }
    memset(&in, 0, sizeof in);
    in.vms = pvms;
    in.n_vms = nv;
    in.vcpus = pvcpus;
    in.n_vcpus = nc;
    in.override_performance = d->override_performance;
    in.now_ns = clk_now_ns();
    pol_explain(d->pol, &in, d->plan, idx, buf, len);
    free(pvms);
    free(pvcpus);
}

/* ---- Dispatch -------------------------------------------------------- */

static char *
unknown_vm(int64_t id, const char *key)
{
    char msg[PROTO_VM_LEN + 128];

    snprintf(msg, sizeof msg, "no running domain named '%s' (try: "
             "vpowerctl list)", key);
    return proto_reply_error(id, PROTO_E_UNKNOWN_VM, msg);
}

char *
cmds_dispatch(const struct proto_request *req, const struct ctl_peer *peer,
              void *aux)
{
    struct vpd *d = aux;
    struct json_object *r;
    struct vpd_vm *vm = NULL;
    char err[512];
    int ret;

    switch (req->cmd) {
    case PROTO_CMD_GET_POLICY:
    case PROTO_CMD_SET_POLICY:
    case PROTO_CMD_EXPLAIN:
        vm = vpd_find_vm(d, req->vm);
        if (!vm) {
            return unknown_vm(req->id, req->vm);
        }
        break;
    default:
        break;
    }

    switch (req->cmd) {
    case PROTO_CMD_VERSION:
        r = json_object_new_object();
        add_str(r, "version", PACKAGE_VERSION);
        add_int(r, "protocol", PROTO_VERSION);
        return proto_reply_ok(req->id, r);
    case PROTO_CMD_STATUS:
        return proto_reply_ok(req->id, status_result(d));
    case PROTO_CMD_LIST:
        return proto_reply_ok(req->id, list_result(d));
    case PROTO_CMD_GET_POLICY:
        return proto_reply_ok(req->id, policy_result(vm));
    case PROTO_CMD_SET_POLICY:
        err[0] = '\0';
        ret = vpd_set_policy(d, vm, &req->policy, err, sizeof err);
        if (ret < 0) {
            return proto_reply_error(req->id,
                                     ret == -EINVAL || ret == -ERANGE
                                     ? PROTO_E_BAD_ARGUMENT
                                     : PROTO_E_INTERNAL,
                                     *err ? err : strerror(-ret));
        }
        LOG_INFO("uid %u set the policy of %s to %s",
                 (unsigned) peer->uid, vm->dom.name,
                 pol_kind_name(req->policy.kind));
        return proto_reply_ok(req->id, policy_result(vm));
    case PROTO_CMD_EXPLAIN: {
        char text[4096];

        explain_text(d, vm, text, sizeof text);
        if (d->hks) {
            size_t o = strlen(text);

            /* The host's part, closing the paragraph (vpowerctl shows
             * no control characters): what kept the freed cores awake.
             * Threads are read for a while from now, so asking again
             * shows them. */
            snprintf(text + o, sizeof text - o, "  ");
            o += strlen(text + o);
            hkset_woke_text(d->hks, text + o, sizeof text - o);
            hkset_watch_threads(d->hks, cycle_now_ns(d) + EXPLAIN_WATCH_NS);
        }
        r = json_object_new_object();
        add_str(r, "name", vm->dom.name);
        add_str(r, "reason", cmds_reason_name(vm->reason));
        add_str(r, "text", text);
        return proto_reply_ok(req->id, r);
    }
    case PROTO_CMD_OVERRIDE:
        LOG_INFO("uid %u set the host-wide override %s",
                 (unsigned) peer->uid, req->override_on ? "on" : "off");
        vpd_set_override(d, req->override_on);
        r = json_object_new_object();
        add_str(r, "override",
                d->override_performance ? "performance" : "off");
        return proto_reply_ok(req->id, r);
    case PROTO_N_COMMANDS:
    default:
        break;
    }
    return proto_reply_error(req->id, PROTO_E_INTERNAL,
                             "command not implemented");
}

int
cmds_start(struct vpd *d, char *err, size_t errlen)
{
    const char *path = d->conf.socket_path[0] ? d->conf.socket_path
                                              : PROTO_DEFAULT_SOCKET;

    d->ctl = ctl_server_create(d->sched, path, d->conf.admin_group,
                               cmds_dispatch, d, err, errlen);
    return d->ctl ? 0 : -EINVAL;
}

void
cmds_stop(struct vpd *d)
{
    if (d) {
        ctl_server_destroy(d->ctl);
        d->ctl = NULL;
    }
}
