/* sim/simhost.c -- Driver tables backed by the execution model (see
 * simhost.h). */

#include <config.h>

#include "sim/simhost.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/meter.h"
#include "manager/vmpolicy.h"
#include "sim/halt.h"
#include "sim/xalloc.h"

/* A vCPU's counter increments over the model's current period, as
 * hv_vcpu_stats() worked them out, for simhost_commit() to add without
 * working them out again.  They hold while 'at_s' is the model's
 * period_s: a step lengthens the period, and the commit marks them unread
 * (-1) as it starts a new one. */
struct period_read {
    double at_s;
    uint64_t time_ns, delay_ns, poll_ns;
};

struct simhost {
    struct exec_host *h;
    const struct pol_model *m;
    size_t n_vms;
    uint32_t *first, *nvc;        /* Per VM: first local vCPU, count. */
    char (*uuids)[DRV_UUID_LEN];  /* Per VM: its name, vm_uuid(). */
    size_t last_vm;               /* The VM vm_index() found last. */
    const char *const *names;
    const struct pol_vm_policy *policy;
    bool halt_stats;
    struct pol_plan *pending;     /* What the drivers were told. */
    uint32_t req_khz[POL_MAX_DOMAINS];  /* Ceilings asked for, 0 none. */
    bool disabled[POL_MAX_CPUS][DRV_MAX_IDLE];
    /* Cumulative counters up to the start of the current period. */
    uint64_t *time_ns, *delay_ns, *poll_ns;
    struct period_read *read;     /* Per vCPU. */
    uint64_t idle_us[POL_MAX_CPUS];
    /* The vCPUs and VMs pinned since the last commit, each listed once
     * (the flags say which are listed): the only sets the commit must
     * compare with the model's (exec_apply_changes()). */
    uint32_t *pin_vcpus, *pin_vms;
    size_t n_pin_vcpus, n_pin_vms;
    bool *vcpu_listed, *vm_listed;
    struct cpuset in_use;         /* Union of the pending allowed and
                                   * emulator sets. */
};

/* Domains are named by a UUID whose last 12 hex digits are the host-local
 * VM index. */
static void
vm_uuid(size_t i, char *buf)
{
    snprintf(buf, DRV_UUID_LEN, "00000000-0000-4000-8000-%012llx",
             (unsigned long long) i & 0xffffffffffffULL);
}

static int
vm_parse(const struct simhost *s, const char *uuid, size_t *i)
{
    uint64_t x = 0;
    size_t n = 0;

    for (const char *p = uuid + 24; *p && n < 13; p++, n++) {
        int v = *p >= '0' && *p <= '9' ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;

        if (v < 0) {
            return -ENOENT;
        }
        x = x << 4 | (uint64_t) v;
    }
    /* The first 24 characters exist: the loop above read past them. */
    if (n != 12 || memcmp(uuid, "00000000-0000-4000-8000-", 24)
        || x >= s->n_vms) {
        return -ENOENT;
    }
    *i = (size_t) x;
    return 0;
}

/* The host-local index of the VM named 'uuid', by parsing it. */
static int
vm_find(struct simhost *s, const char *uuid, size_t *i)
{
    int r = vm_parse(s, uuid, i);

    if (r == 0) {
        s->last_vm = *i;
    }
    return r;
}

/* The host-local index of the VM named 'uuid'.  The cycle asks for its
 * VMs in trace order, so the VM after the last one found is tried first
 * by its name (a name is vm_uuid(i) exactly when vm_parse() reads i),
 * which is cheaper than parsing.  Inline: the cycle asks once per VM. */
static inline int
vm_index(struct simhost *s, const char *uuid, size_t *i)
{
    size_t g = s->last_vm + 1 < s->n_vms ? s->last_vm + 1 : 0;

    if (g < s->n_vms && !strcmp(uuid, s->uuids[g])) {
        *i = s->last_vm = g;
        return 0;
    }
    return vm_find(s, uuid, i);
}

struct simhost *
simhost_create(struct exec_host *h, size_t n_vms, const uint32_t *n_vcpus,
               const char *const *names, const struct pol_vm_policy *policy,
               bool halt_stats)
{
    struct simhost *s = sim_xcalloc(1, sizeof *s);
    size_t nv = 0;

    s->h = h;
    s->m = h->m;
    s->n_vms = n_vms;
    s->names = names;
    s->policy = policy;
    s->halt_stats = halt_stats;
    s->first = sim_xcalloc(n_vms ? n_vms : 1, sizeof *s->first);
    s->nvc = sim_xcalloc(n_vms ? n_vms : 1, sizeof *s->nvc);
    s->uuids = sim_xcalloc(n_vms ? n_vms : 1, sizeof *s->uuids);
    s->pending = pol_plan_create(n_vms, h->n_vcpus);
    for (size_t i = 0; i < n_vms; i++) {
        s->first[i] = (uint32_t) nv;
        s->nvc[i] = n_vcpus[i];
        vm_uuid(i, s->uuids[i]);
        for (uint32_t k = 0; k < n_vcpus[i]; k++) {
            s->pending->vcpu_vm[nv++] = (uint32_t) i;
        }
    }
    s->pending->n_vms = n_vms;
    s->pending->n_vcpus = h->n_vcpus;
    for (unsigned c = 0; c < s->m->n_cpus; c++) {
        cpuset_set(&s->pending->active, c);
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        s->pending->vcpu_allowed[v] = s->pending->active;
    }
    for (size_t i = 0; i < n_vms; i++) {
        s->pending->vm_emulator[i] = s->pending->active;
    }
    memcpy(s->pending->dom_freq_khz, h->plan->dom_freq_khz,
           sizeof s->pending->dom_freq_khz);
    s->time_ns = sim_xcalloc(nv ? nv : 1, sizeof *s->time_ns);
    s->delay_ns = sim_xcalloc(nv ? nv : 1, sizeof *s->delay_ns);
    s->poll_ns = sim_xcalloc(nv ? nv : 1, sizeof *s->poll_ns);
    s->read = sim_xcalloc(nv ? nv : 1, sizeof *s->read);
    for (size_t v = 0; v < nv; v++) {
        s->read[v].at_s = -1;
    }
    s->pin_vcpus = sim_xcalloc(nv ? nv : 1, sizeof *s->pin_vcpus);
    s->vcpu_listed = sim_xcalloc(nv ? nv : 1, sizeof *s->vcpu_listed);
    s->pin_vms = sim_xcalloc(n_vms ? n_vms : 1, sizeof *s->pin_vms);
    s->vm_listed = sim_xcalloc(n_vms ? n_vms : 1, sizeof *s->vm_listed);
    s->in_use = s->pending->active;
    return s;
}

void
simhost_destroy(struct simhost *s)
{
    if (!s) {
        return;
    }
    pol_plan_destroy(s->pending);
    free(s->first);
    free(s->nvc);
    free(s->uuids);
    free(s->time_ns);
    free(s->delay_ns);
    free(s->poll_ns);
    free(s->read);
    free(s->pin_vcpus);
    free(s->vcpu_listed);
    free(s->pin_vms);
    free(s->vm_listed);
    free(s);
}

struct drv_hv *
simhost_hv(struct simhost *s)
{
    return (struct drv_hv *) s;
}

struct drv_host *
simhost_host(struct simhost *s)
{
    return (struct drv_host *) s;
}

/* llround(x) for 0 <= x < 2^53 without the library call: truncation
 * is the floor there, and x - floor(x) is exact.  Signed conversions:
 * exact in that range, and one instruction each where unsigned ones
 * are not. */
static uint64_t
round_half_up(double x)
{
    int64_t i = (int64_t) x;

    return (uint64_t) (x - (double) i >= 0.5 ? i + 1 : i);
}

/* 'x' rounded as (uint64_t) llround(x). */
static uint64_t
round_u64(double x)
{
    return x >= 0 && x < 9007199254740992.0 ? round_half_up(x)
                                            : (uint64_t) llround(x);
}

/* Seconds 's' as whole nanoseconds. */
static uint64_t
ns_of(double s)
{
    return round_u64(s * 1e9);
}

/* Works vCPU 'v''s counter increments over the model's current period,
 * 'poll_s' of it halt-poll time, out into s->read[v]. */
static void
read_period(struct simhost *s, size_t v, double poll_s)
{
    const struct exec_host *h = s->h;
    struct period_read *pr = &s->read[v];

    pr->at_s = h->period_s;
    pr->time_ns = ns_of(h->busy_s[v] + poll_s);
    pr->delay_ns = ns_of(h->ready_s[v]);
    pr->poll_ns = ns_of(poll_s);
}

double
simhost_commit(struct simhost *s, const uint32_t *cap_khz)
{
    struct exec_host *h = s->h;
    const struct pol_model *m = s->m;
    struct pol_plan *p = s->pending;
    const uint32_t *cpu_cap = h->cpu_cap;   /* At the frequency it ran. */
    double fed = 0;

    for (size_t v = 0; v < h->n_vcpus && h->period_s > 0; v++) {
        double poll = halt_period_poll_s(h, v);
        double busy = h->busy_s[v] + (s->halt_stats ? 0 : poll);
        int cpu = h->applied ? h->vcpu_cpu[v] : -1;
        uint32_t cap = cpu >= 0 && (unsigned) cpu < m->n_cpus
                       && cpu < POL_MAX_CPUS ? cpu_cap[cpu] : 0;
        struct period_read *pr = &s->read[v];

        fed += busy * (cap ? cap : POL_CAPACITY_SCALE) / POL_CAPACITY_SCALE;
        if (pr->at_s != h->period_s) {
            read_period(s, v, poll);
        }
        s->time_ns[v] += pr->time_ns;
        s->delay_ns[v] += pr->delay_ns;
        s->poll_ns[v] += pr->poll_ns;
        pr->at_s = -1;
    }
    for (unsigned c = 0; c < m->n_cpus && h->period_s > 0; c++) {
        double idle = h->period_s - h->cpu_busy_period[c];

        s->idle_us[c] += round_u64((idle > 0 ? idle : 0) * 1e6);
    }
    /* A host has no "active" flag: the cores in use are those some
     * vCPU or emulator may run on (the rest are parked).  Their union
     * changes only with a pin. */
    if (s->n_pin_vcpus || s->n_pin_vms) {
        cpuset_zero(&s->in_use);
        for (size_t v = 0; v < h->n_vcpus; v++) {
            cpuset_or(&s->in_use, &s->in_use, &p->vcpu_allowed[v]);
        }
        for (size_t i = 0; i < s->n_vms; i++) {
            cpuset_or(&s->in_use, &s->in_use, &p->vm_emulator[i]);
        }
    }
    cpuset_andnot(&p->active, &s->in_use, &p->offline);
    for (unsigned d = 0; d < m->n_domains; d++) {
        uint32_t f = s->req_khz[d];

        if (f && cap_khz && cap_khz[d] && f > cap_khz[d]) {
            f = cap_khz[d];
        }
        p->dom_freq_khz[d] = f;
    }
    exec_apply_changes(h, p, s->pin_vcpus, s->n_pin_vcpus, s->pin_vms,
                       s->n_pin_vms);
    for (size_t k = 0; k < s->n_pin_vcpus; k++) {
        s->vcpu_listed[s->pin_vcpus[k]] = false;
    }
    for (size_t k = 0; k < s->n_pin_vms; k++) {
        s->vm_listed[s->pin_vms[k]] = false;
    }
    s->n_pin_vcpus = s->n_pin_vms = 0;
    return fed;
}

/* ---- Hypervisor ----------------------------------------------------- */

static int
hv_list(struct drv_hv *hv, struct drv_dom **doms, size_t *n)
{
    struct simhost *s = (struct simhost *) hv;
    struct drv_dom *d = sim_xcalloc(s->n_vms ? s->n_vms : 1, sizeof *d);

    /* Last first: the registry prepends, so the policy sees the VMs in
     * trace order. */
    for (size_t k = 0; k < s->n_vms; k++) {
        size_t i = s->n_vms - 1 - k;

        vm_uuid(i, d[k].uuid);
        snprintf(d[k].name, sizeof d[k].name, "%s",
                 s->names ? s->names[i] : d[k].uuid);
        d[k].id = (int) i;
        d[k].n_vcpus = s->nvc[i];
        d[k].persistent = true;
    }
    *doms = d;
    *n = s->n_vms;
    return 0;
}

static int
hv_vcpu_stats(struct drv_hv *hv, const char *uuid,
              struct drv_vcpu_stat *out, size_t max, size_t *n)
{
    struct simhost *s = (struct simhost *) hv;
    const struct exec_host *h = s->h;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r < 0) {
        return r;
    }
    *n = s->nvc[i] < max ? s->nvc[i] : max;
    for (size_t k = 0; k < *n; k++) {
        size_t v = s->first[i] + k;
        const struct period_read *pr = &s->read[v];

        read_period(s, v, h->period_s > 0 ? halt_period_poll_s(h, v) : 0);
        out[k].time_ns = s->time_ns[v] + pr->time_ns;
        out[k].delay_ns = s->delay_ns[v] + pr->delay_ns;
        out[k].has_delay = true;
        out[k].cpu = h->applied ? h->vcpu_cpu[v] : -1;
        out[k].halt_poll_ns = s->poll_ns[v] + pr->poll_ns;
        out[k].has_halt = s->halt_stats;
    }
    return 0;
}

static int
hv_pin_vcpu(struct drv_hv *hv, const char *uuid, unsigned vcpu,
            const struct cpuset *set)
{
    struct simhost *s = (struct simhost *) hv;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r == 0 && vcpu >= s->nvc[i]) {
        r = -EINVAL;
    }
    if (r == 0) {
        uint32_t v = s->first[i] + vcpu;

        s->pending->vcpu_allowed[v] = *set;
        if (!s->vcpu_listed[v]) {
            s->vcpu_listed[v] = true;
            s->pin_vcpus[s->n_pin_vcpus++] = v;
        }
    }
    return r;
}

static int
hv_pin_emulator(struct drv_hv *hv, const char *uuid, const struct cpuset *set)
{
    struct simhost *s = (struct simhost *) hv;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r == 0) {
        s->pending->vm_emulator[i] = *set;
        if (!s->vm_listed[i]) {
            s->vm_listed[i] = true;
            s->pin_vms[s->n_pin_vms++] = (uint32_t) i;
        }
    }
    return r;
}

static int
hv_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                struct cpuset *set)
{
    struct simhost *s = (struct simhost *) hv;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r == 0 && vcpu >= s->nvc[i]) {
        r = -EINVAL;
    }
    if (r == 0) {
        *set = s->pending->vcpu_allowed[s->first[i] + vcpu];
    }
    return r;
}

static int
hv_get_emulator_pin(struct drv_hv *hv, const char *uuid, struct cpuset *set)
{
    struct simhost *s = (struct simhost *) hv;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r == 0) {
        *set = s->pending->vm_emulator[i];
    }
    return r;
}

static int
hv_get_metadata(struct drv_hv *hv, const char *uuid, char *buf, size_t len)
{
    struct simhost *s = (struct simhost *) hv;
    size_t i;
    int r = vm_index(s, uuid, &i);

    if (r < 0) {
        return r;
    }
    buf[0] = '\0';
    if (s->policy) {
        vmpol_to_xml(&s->policy[i], buf, len);
    }
    return 0;
}

static int
hv_set_metadata(struct drv_hv *hv, const char *uuid, const char *xml)
{
    (void) hv;
    (void) uuid;
    (void) xml;
    return -ENOTSUP;
}

/* Opened by simhost_create(), not by name. */
static struct drv_hv *
hv_open(const char *uri, struct sched *sched, drv_event_cb *cb, void *aux,
        char *err, size_t errlen)
{
    (void) uri;
    (void) sched;
    (void) cb;
    (void) aux;
    snprintf(err, errlen, "the simulator's driver is made by "
             "simhost_create()");
    return NULL;
}

static void
hv_close(struct drv_hv *hv)
{
    (void) hv;
}

const struct drv_hv_ops simhost_hv_ops = {
    .name = "sim",
    .open = hv_open,
    .close = hv_close,
    .list = hv_list,
    .vcpu_stats = hv_vcpu_stats,
    .pin_vcpu = hv_pin_vcpu,
    .pin_emulator = hv_pin_emulator,
    .get_vcpu_pin = hv_get_vcpu_pin,
    .get_emulator_pin = hv_get_emulator_pin,
    .get_metadata = hv_get_metadata,
    .set_metadata = hv_set_metadata,
};

/* ---- Host ----------------------------------------------------------- */

static int
host_n_cpus(struct drv_host *dh, unsigned *n)
{
    *n = ((struct simhost *) dh)->m->n_cpus;
    return 0;
}

static int
host_is_online(struct drv_host *dh, unsigned cpu, bool *online)
{
    struct simhost *s = (struct simhost *) dh;

    if (cpu >= s->m->n_cpus) {
        return -ENOENT;
    }
    *online = !cpuset_has(&s->pending->offline, cpu);
    return 0;
}

static int
host_set_online(struct drv_host *dh, unsigned cpu, bool online)
{
    struct simhost *s = (struct simhost *) dh;

    if (cpu >= s->m->n_cpus) {
        return -ENOENT;
    }
    if (online) {
        cpuset_clr(&s->pending->offline, cpu);
    } else {
        cpuset_set(&s->pending->offline, cpu);
    }
    return 0;
}

static int
host_get_freq(struct drv_host *dh, unsigned cpu, struct drv_freq *f)
{
    struct simhost *s = (struct simhost *) dh;
    const struct pol_domain *d;
    unsigned di;

    if (cpu >= s->m->n_cpus) {
        return -ENOENT;
    }
    di = s->m->cpu_domain[cpu];
    d = &s->m->domains[di];
    memset(f, 0, sizeof *f);
    f->cur_khz = s->h->plan->dom_freq_khz[di];
    f->hw_min_khz = d->opps[0].freq_khz;
    f->hw_max_khz = d->opps[d->n_opps - 1].freq_khz;
    f->min_khz = f->hw_min_khz;
    f->max_khz = s->req_khz[di] ? s->req_khz[di] : f->hw_max_khz;
    memcpy(f->governor, "sim", 4);
    return 0;
}

/* The domain runs at its ceiling: the execution model has no governor
 * below it. */
static int
host_set_freq_range(struct drv_host *dh, unsigned cpu, uint32_t min_khz,
                    uint32_t max_khz)
{
    struct simhost *s = (struct simhost *) dh;

    if (cpu >= s->m->n_cpus || min_khz > max_khz) {
        return -EINVAL;
    }
    s->req_khz[s->m->cpu_domain[cpu]] = max_khz;
    return 0;
}

static int
host_set_governor(struct drv_host *dh, unsigned cpu, const char *gov)
{
    (void) dh;
    (void) cpu;
    (void) gov;
    return 0;
}

static int
host_get_idle(struct drv_host *dh, unsigned cpu, struct drv_idle *id)
{
    struct simhost *s = (struct simhost *) dh;
    const struct exec_host *h = s->h;
    const struct pol_domain *d;
    double idle;

    if (cpu >= s->m->n_cpus) {
        return -ENOENT;
    }
    d = &s->m->domains[s->m->cpu_domain[cpu]];
    memset(id, 0, sizeof *id);
    id->n_states = d->n_idle < DRV_MAX_IDLE ? d->n_idle : DRV_MAX_IDLE;
    if (!id->n_states) {
        return -ENOTSUP;
    }
    for (unsigned st = 0; st < id->n_states; st++) {
        id->name[st][0] = 'C';
        id->name[st][1] = (char) ('0' + st % 10);
        id->disabled[st] = s->disabled[cpu][st];
    }
    /* All residency in one state: the cycle reads only the sum. */
    idle = h->period_s - h->cpu_busy_period[cpu];
    id->time_us[0] = s->idle_us[cpu]
                     + round_u64((idle > 0 ? idle : 0) * 1e6);
    return 0;
}

static int
host_set_idle_disable(struct drv_host *dh, unsigned cpu, unsigned state,
                      bool disable)
{
    struct simhost *s = (struct simhost *) dh;
    int lim = -1;

    if (cpu >= s->m->n_cpus || state >= DRV_MAX_IDLE) {
        return -EINVAL;
    }
    s->disabled[cpu][state] = disable;
    /* The plan's limit: the state below the shallowest disabled one. */
    for (unsigned st = 1; st < DRV_MAX_IDLE; st++) {
        if (s->disabled[cpu][st]) {
            lim = (int) st - 1;
            break;
        }
    }
    s->pending->idle_limit[cpu] = (int8_t) lim;
    return 0;
}

static struct drv_host *
host_open(const char *root, char *err, size_t errlen)
{
    (void) root;
    snprintf(err, errlen, "the simulator's driver is made by "
             "simhost_create()");
    return NULL;
}

static void
host_close(struct drv_host *dh)
{
    (void) dh;
}

const struct drv_host_ops simhost_host_ops = {
    .name = "sim",
    .open = host_open,
    .close = host_close,
    .n_cpus = host_n_cpus,
    .is_online = host_is_online,
    .set_online = host_set_online,
    .get_freq = host_get_freq,
    .set_freq_range = host_set_freq_range,
    .set_governor = host_set_governor,
    .get_idle = host_get_idle,
    .set_idle_disable = host_set_idle_disable,
};

/* ---- The host's power meter ------------------------------------------ */

/* A platform energy counter that reads what the execution model charged
 * (exec_host.energy_j, with the host's true model), in microjoules. */
struct sim_meter {
    struct meter up;
    const struct exec_host *h;
};

static int
meter_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
             size_t errlen)
{
    const struct sim_meter *sm = (const struct sim_meter *) m;

    (void) now_ns;
    (void) err;
    (void) errlen;
    *raw = (uint64_t) llround(sm->h->energy_j * 1e6);
    return 0;
}

static void
meter_close_sim(struct meter *m)
{
    free(m);
}

static const struct meter_ops sim_meter_ops = {
    .name = "sim",
    .sample = meter_sample,
    .close = meter_close_sim,
};

struct meter *
simhost_meter_create(const struct exec_host *h)
{
    struct sim_meter *sm = sim_xcalloc(1, sizeof *sm);

    sm->up.ops = sm->up.info.ops = &sim_meter_ops;
    sm->up.info.kind = METER_KIND_DUMMY;
    sm->up.info.scope = METER_SCOPE_PLATFORM;
    sm->up.info.package = -1;
    sm->up.info.counter = true;
    snprintf(sm->up.info.name, sizeof sm->up.info.name, "sim-platform");
    snprintf(sm->up.info.path, sizeof sm->up.info.path, "sim:energy_j");
    sm->h = h;
    return &sm->up;
}
