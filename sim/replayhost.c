/* sim/replayhost.c -- Driver tables that answer from a recording (see
 * replayhost.h). */

#include <config.h>

#include "sim/replayhost.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

/* A vCPU's cumulative counters, by (VM key, vCPU number). */
struct rh_counter {
    uint64_t key;
    uint32_t idx;
    bool seen;                    /* In the current decision. */
    uint64_t time_ns, delay_ns;
};

struct replayhost {
    const struct pol_model *m;
    const struct replay_decision *dec;
    struct rh_counter *ctr;       /* Unsorted; recordings are small. */
    size_t n_ctr, cap_ctr;
};

struct replayhost *
replayhost_create(const struct pol_model *m)
{
    struct replayhost *h = sim_xcalloc(1, sizeof *h);

    h->m = m;
    return h;
}

void
replayhost_destroy(struct replayhost *h)
{
    if (h) {
        free(h->ctr);
        free(h);
    }
}

void
replayhost_set(struct replayhost *h, const struct replay_decision *dec)
{
    h->dec = dec;
}

static uint64_t
vm_key(const struct replay_decision *dec, size_t i)
{
    return dec->vm_key ? dec->vm_key[i] : dec->vms[i].id;
}

void
replayhost_uuid(uint64_t key, char buf[DRV_UUID_LEN])
{
    snprintf(buf, DRV_UUID_LEN, "00000000-0000-4000-9000-%012llx",
             (unsigned long long) key & 0xffffffffffffULL);
}

int
replayhost_vm_index(const struct replayhost *h, const char *uuid, size_t *i)
{
    char u[DRV_UUID_LEN];

    for (size_t k = 0; h->dec && k < h->dec->n_vms; k++) {
        replayhost_uuid(vm_key(h->dec, k), u);
        if (!strcmp(u, uuid)) {
            *i = k;
            return 0;
        }
    }
    return -ENOENT;
}

/* The counters of vCPU 'idx' of the VM of key 'key', created at 0. */
static struct rh_counter *
counter_of(struct replayhost *h, uint64_t key, uint32_t idx)
{
    for (size_t i = 0; i < h->n_ctr; i++) {
        if (h->ctr[i].key == key && h->ctr[i].idx == idx) {
            return &h->ctr[i];
        }
    }
    if (h->n_ctr == h->cap_ctr) {
        h->cap_ctr = h->cap_ctr ? 2 * h->cap_ctr : 64;
        h->ctr = realloc(h->ctr, h->cap_ctr * sizeof *h->ctr);
        if (!h->ctr) {
            abort();
        }
    }
    memset(&h->ctr[h->n_ctr], 0, sizeof h->ctr[0]);
    h->ctr[h->n_ctr].key = key;
    h->ctr[h->n_ctr].idx = idx;
    return &h->ctr[h->n_ctr++];
}

void
replayhost_advance(struct replayhost *h)
{
    const struct replay_decision *dec = h->dec;
    size_t j = 0;

    for (size_t v = 0; dec && v < dec->n_vcpus; v++) {
        const struct replay_obs *o = &dec->obs[v];
        struct rh_counter *c;

        if (o->vm >= dec->n_vms) {
            continue;
        }
        c = counter_of(h, vm_key(dec, o->vm), o->idx);
        c->seen = true;
        if (o->interval_ns) {
            c->time_ns += o->busy_ns;
            c->delay_ns += o->ready_ns;
        }
    }
    /* vCPUs not in this decision are gone (VM gone or shrunk). */
    for (size_t i = 0; i < h->n_ctr; i++) {
        if (h->ctr[i].seen) {
            h->ctr[i].seen = false;
            h->ctr[j++] = h->ctr[i];
        }
    }
    h->n_ctr = j;
}

struct drv_hv *
replayhost_hv(struct replayhost *h)
{
    return (struct drv_hv *) h;
}

struct drv_host *
replayhost_host(struct replayhost *h)
{
    return (struct drv_host *) h;
}

/* ---- Hypervisor ------------------------------------------------------ */

static struct drv_hv *
hv_open(const char *uri, struct sched *sched, drv_event_cb *cb, void *aux,
        char *err, size_t errlen)
{
    (void) uri;
    (void) sched;
    (void) cb;
    (void) aux;
    snprintf(err, errlen, "the replay driver is made by "
             "replayhost_create()");
    return NULL;
}

static void
hv_close(struct drv_hv *hv)
{
    (void) hv;
}

static int
hv_list(struct drv_hv *hv, struct drv_dom **doms, size_t *n)
{
    struct replayhost *h = (struct replayhost *) hv;
    const struct replay_decision *dec = h->dec;
    size_t nv = dec ? dec->n_vms : 0;
    struct drv_dom *out = sim_xcalloc(nv ? nv : 1, sizeof *out);

    for (size_t i = 0; i < nv; i++) {
        const struct pol_vm *v = &dec->vms[i];
        uint64_t key = vm_key(dec, i);

        replayhost_uuid(key, out[i].uuid);
        snprintf(out[i].name, sizeof out[i].name, "rec%llu",
                 (unsigned long long) key);
        out[i].id = (int) v->id;
        out[i].n_vcpus = v->n_vcpus;
        out[i].persistent = true;
        out[i].static_pinning = !cpuset_empty(&v->fixed);
        out[i].static_cpus = v->fixed;
    }
    *doms = out;
    *n = nv;
    return 0;
}

static int
hv_vcpu_stats(struct drv_hv *hv, const char *uuid, struct drv_vcpu_stat *out,
              size_t max, size_t *n)
{
    struct replayhost *h = (struct replayhost *) hv;
    const struct replay_decision *dec = h->dec;
    const struct pol_vm *v;
    size_t i;

    if (replayhost_vm_index(h, uuid, &i) < 0) {
        return -ENOENT;
    }
    v = &dec->vms[i];
    if (v->first_vcpu > dec->n_vcpus
        || v->n_vcpus > dec->n_vcpus - v->first_vcpu) {
        return -EINVAL;
    }
    for (uint32_t k = 0; k < v->n_vcpus && k < max; k++) {
        const struct replay_obs *o = &dec->obs[v->first_vcpu + k];
        const struct rh_counter *c = counter_of(h, vm_key(dec, i), o->idx);

        memset(&out[k], 0, sizeof out[k]);
        out[k].time_ns = c->time_ns;
        out[k].delay_ns = c->delay_ns;
        out[k].has_delay = true;
        out[k].cpu = o->interval_ns ? o->s_cpu : o->cpu;
    }
    *n = v->n_vcpus;
    return 0;
}

static int
hv_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
       const struct cpuset *set)
{
    size_t i;

    (void) vcpu;
    (void) set;
    return replayhost_vm_index((struct replayhost *) hv, uuid, &i);
}

static int
hv_pin_emulator(struct drv_hv *hv, const char *uuid, const struct cpuset *set)
{
    return hv_pin(hv, uuid, 0, set);
}

/* Pins as found are unknown: the registry takes every CPU. */
static int
hv_get_vcpu_pin(struct drv_hv *hv, const char *uuid, unsigned vcpu,
                struct cpuset *set)
{
    (void) hv;
    (void) uuid;
    (void) vcpu;
    (void) set;
    return -ENOTSUP;
}

static int
hv_get_emulator_pin(struct drv_hv *hv, const char *uuid, struct cpuset *set)
{
    return hv_get_vcpu_pin(hv, uuid, 0, set);
}

/* The recorded policy is set on the registry by the replayer. */
static int
hv_get_metadata(struct drv_hv *hv, const char *uuid, char *buf, size_t len)
{
    (void) hv;
    (void) uuid;
    if (len) {
        buf[0] = '\0';
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

const struct drv_hv_ops replayhost_hv_ops = {
    .name = "replay",
    .open = hv_open,
    .close = hv_close,
    .list = hv_list,
    .vcpu_stats = hv_vcpu_stats,
    .pin_vcpu = hv_pin,
    .pin_emulator = hv_pin_emulator,
    .get_vcpu_pin = hv_get_vcpu_pin,
    .get_emulator_pin = hv_get_emulator_pin,
    .get_metadata = hv_get_metadata,
    .set_metadata = hv_set_metadata,
};

/* ---- Host ------------------------------------------------------------ */

static struct drv_host *
host_open(const char *root, char *err, size_t errlen)
{
    (void) root;
    snprintf(err, errlen, "the replay driver is made by "
             "replayhost_create()");
    return NULL;
}

static void
host_close(struct drv_host *host)
{
    (void) host;
}

static int
host_n_cpus(struct drv_host *host, unsigned *n)
{
    *n = ((struct replayhost *) host)->m->n_cpus;
    return 0;
}

static int
host_cpu_ok(const struct replayhost *h, unsigned cpu)
{
    return cpu < h->m->n_cpus && cpu < POL_MAX_CPUS ? 0 : -ENOENT;
}

static int
host_is_online(struct drv_host *host, unsigned cpu, bool *online)
{
    struct replayhost *h = (struct replayhost *) host;

    if (host_cpu_ok(h, cpu) < 0) {
        return -ENOENT;
    }
    *online = !h->dec || cpuset_has(&h->dec->online, cpu);
    return 0;
}

static int
host_set_online(struct drv_host *host, unsigned cpu, bool online)
{
    (void) online;
    return host_cpu_ok((struct replayhost *) host, cpu);
}

/* The current frequency is the one the CPU ran at (0 = nominal). */
static int
host_get_freq(struct drv_host *host, unsigned cpu, struct drv_freq *f)
{
    struct replayhost *h = (struct replayhost *) host;

    if (host_cpu_ok(h, cpu) < 0) {
        return -ENOENT;
    }
    memset(f, 0, sizeof *f);
    if (h->dec && h->dec->cpu_ran_khz) {
        f->cur_khz = h->dec->cpu_ran_khz[cpu];
    }
    return 0;
}

static int
host_set_freq_range(struct drv_host *host, unsigned cpu, uint32_t min_khz,
                    uint32_t max_khz)
{
    (void) min_khz;
    (void) max_khz;
    return host_cpu_ok((struct replayhost *) host, cpu);
}

static int
host_set_governor(struct drv_host *host, unsigned cpu, const char *gov)
{
    (void) gov;
    return host_cpu_ok((struct replayhost *) host, cpu);
}

static int
host_get_idle(struct drv_host *host, unsigned cpu, struct drv_idle *id)
{
    (void) host;
    (void) cpu;
    (void) id;
    return -ENOTSUP;
}

static int
host_set_idle_disable(struct drv_host *host, unsigned cpu, unsigned state,
                      bool disable)
{
    (void) host;
    (void) cpu;
    (void) state;
    (void) disable;
    return -ENOTSUP;
}

static int
host_busy_ppm(struct drv_host *host, unsigned cpu, uint32_t *ppm)
{
    struct replayhost *h = (struct replayhost *) host;

    if (host_cpu_ok(h, cpu) < 0 || !h->dec || !h->dec->cpu_busy_ppm
        || h->dec->cpu_busy_ppm[cpu] == UINT32_MAX) {
        return -ENODATA;
    }
    *ppm = h->dec->cpu_busy_ppm[cpu];
    return 0;
}

const struct drv_host_ops replayhost_host_ops = {
    .name = "replay",
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
    .busy_ppm = host_busy_ppm,
};
