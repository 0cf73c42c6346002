/* manager/vmreg.c -- The registry of running VMs (see vmreg.h). */

#include <config.h>

#include "manager/vmreg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/cycle.h"
#include "manager/drivers/domxml.h"
#include "manager/log.h"
#include "manager/util.h"
#include "manager/vmpolicy.h"
#include "manager/vpd_types.h"

#define LOG_MODULE "vpowerd"

struct vpd_vm *
vmreg_find_uuid(struct vpd *d, const char *uuid)
{
    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        if (!strcmp(vm->dom.uuid, uuid)) {
            return vm;
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

static void
find_threads(struct vpd *d, struct vpd_vm *vm)
{
    const struct cycle_hooks *h = &d->cyc->hooks;

    if (h->find_threads) {
        h->find_threads(h->aux, vm);
    }
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
    d->cyc->applied_stale = true;
    find_threads(d, vm);
    if (cycle_read_vcpus(d, vm, st, src, to, &n) == 0) {
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
read_policy(struct vpd *d, struct vpd_vm *vm)
{
    char md[DOMXML_POLICY_MAX_BYTES + 1], err[256];

    vmpol_default(d->conf.default_policy, d->conf.default_share_smt,
                  &vm->policy);
    vm->policy_from_metadata = false;
    if (d->hv_ops->get_metadata(d->hv, vm->dom.uuid, md, sizeof md) < 0
        || !md[0]) {
        return;
    }
    if (domxml_policy_parse(md, &vm->policy, err, sizeof err) < 0) {
        LOG_WARN("%s: ignoring vpower metadata: %s", vm->dom.name, err);
        return;
    }
    vm->policy_from_metadata = true;
}

static struct vpd_vm *
vm_add(struct vpd *d, const struct drv_dom *dom)
{
    const struct cycle_hooks *h = &d->cyc->hooks;
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
    d->cyc->applied_stale = true;
    read_policy(d, vm);
    if (dom->migrated_in) {
        vmreg_arrived(d, vm);
    }
    vm->next = d->vms;
    d->vms = vm;
    d->n_vms++;
    if (vm->unmanaged) {
        cpuset_format(&dom->static_cpus, buf, sizeof buf);
    }
    LOG_INFO("domain %s (%s): %u vCPUs, %s%s, policy %s", vm->dom.name,
             vm->dom.uuid, vm->n_vcpus,
             vm->unmanaged ? "statically pinned to " : "managed",
             vm->unmanaged ? buf : "", pol_kind_name(vm->policy.kind));
    if (h->vm_added) {
        h->vm_added(h->aux, vm);
    }
    return vm;
}

void
vmreg_arrived(struct vpd *d, struct vpd_vm *vm)
{
    vm->dom.static_pinning = false;
    cpuset_zero(&vm->dom.static_cpus);
    vm->unmanaged = false;
    for (unsigned i = 0; i < vm->n_vcpus; i++) {
        vm->vcpus[i].original = host_all(d);
    }
    vm->emu_original = host_all(d);
    read_policy(d, vm);
    LOG_INFO("domain %s arrived by migration: policy %s%s", vm->dom.name,
             pol_kind_name(vm->policy.kind),
             vm->policy_from_metadata ? " (metadata)" : " (default)");
}

void
vmreg_remove(struct vpd *d, struct vpd_vm *gone)
{
    LOG_INFO("domain %s gone", gone->dom.name);
    cycle_drop_vm(d, gone);
}

void
vmreg_clear(struct vpd *d)
{
    while (d->vms) {
        cycle_drop_vm(d, d->vms);
    }
}

/* Applies a changed definition: new vCPUs start from their current
 * pins. */
static void
vm_update(struct vpd *d, struct vpd_vm *vm, const struct drv_dom *dom)
{
    const struct cycle_hooks *h = &d->cyc->hooks;
    unsigned old_n = vm->n_vcpus;
    struct drv_dom old = vm->dom;

    vm->dom = *dom;
    if (dom->migrated_in) {
        /* Live pins that came with a migration are nobody's static
         * pins here. */
        vm->dom.static_pinning = false;
        cpuset_zero(&vm->dom.static_cpus);
    }
    if (dom->n_vcpus == old_n) {
        for (unsigned i = 0; i < vm->n_vcpus; i++) {
            if (!vm->vcpus[i].tid) {
                find_threads(d, vm);    /* Threads may have appeared. */
                break;
            }
        }
    } else {
        LOG_INFO("domain %s: %u -> %u vCPUs", dom->name, old_n,
                 dom->n_vcpus);
        vm->vcpus = xrealloc(vm->vcpus, (dom->n_vcpus ? dom->n_vcpus : 1)
                                        * sizeof *vm->vcpus);
        vm->n_vcpus = dom->n_vcpus;
        if (dom->n_vcpus > old_n) {
            init_vcpus(d, vm, old_n, dom->n_vcpus);
        }
    }
    if (h->vm_changed) {
        h->vm_changed(h->aux, vm, &old, old_n);
    }
}

int
vmreg_resync(struct vpd *d)
{
    struct drv_dom *doms = NULL;
    size_t n = 0;
    struct vpd_vm *vm, *next;
    const char *only = d->only_domains;
    int r;

    r = d->hv_ops->list(d->hv, &doms, &n);
    if (r < 0) {
        free(doms);
        return r;
    }
    if (only && *only) {
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
            vmreg_remove(d, vm);
        }
    }
    for (size_t i = 0; i < n; i++) {
        vm = vmreg_find_uuid(d, doms[i].uuid);
        if (vm) {
            vm_update(d, vm, &doms[i]);
        } else {
            vm_add(d, &doms[i]);
        }
    }
    free(doms);
    return 0;
}
