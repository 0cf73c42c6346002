/* tests/cli/ctl-server.c -- The real control server over a hand-built vpd.
 *
 * Links manager/control/ctl.c and manager/control/cmds.c exactly as vpowerd
 * does, but
 * around a 'struct vpd' filled here (two CPUs, two VMs, counters with
 * known values) and small stand-ins for daemon.c's vpd_* calls, so the
 * socket server, access control and every verb's JSON are tested without
 * a hypervisor.  tests/cli/ctl-server.sh drives it with vpowerctl;
 * tests/cli/vpowerctl.sh does the same against the real vpowerd.
 *
 * Usage: ctl-server SOCKET [ADMIN_GROUP]; runs until SIGTERM/SIGINT and
 * prints "ready" on stdout once listening. */

#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/control/cmds.h"
#include "manager/control/histo.h"
#include "manager/daemon.h"
#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "ctl-server"

/* ---- Stand-ins for daemon.c ------------------------------------------ */

struct vpd_vm *
vpd_find_vm(struct vpd *d, const char *key)
{
    char *end;
    long id = strtol(key, &end, 10);

    for (struct vpd_vm *vm = d->vms; vm; vm = vm->next) {
        if (!strcmp(vm->dom.name, key) || !strcasecmp(vm->dom.uuid, key)
            || (!*end && *key && vm->dom.id == id)) {
            return vm;
        }
    }
    return NULL;
}

int
vpd_set_policy(struct vpd *d, struct vpd_vm *vm,
               const struct pol_vm_policy *p, char *err, size_t errlen)
{
    /* Like daemon.c: the model's highest frequency bounds the floor. */
    if (p->min_freq_khz > 3000000) {
        snprintf(err, errlen, "minimum frequency %u kHz is above the "
                 "host's highest (3000000 kHz)", (unsigned) p->min_freq_khz);
        return -ERANGE;
    }
    vm->policy = *p;
    vm->policy_from_metadata = true;
    vpd_kick(d);
    return 0;
}

void
vpd_set_override(struct vpd *d, bool on)
{
    d->override_performance = on;
    vpd_kick(d);
}

void
vpd_kick(struct vpd *d)
{
    d->n_decisions++;
}

/* ---- A small host --------------------------------------------------- */

static const struct drv_hv_ops fake_hv_ops = { .name = "dummy" };

static struct vpd_vm *
make_vm(const char *name, const char *uuid, int id, unsigned n_vcpus,
        enum pol_reason reason)
{
    struct vpd_vm *vm = XNEW(struct vpd_vm);

    snprintf(vm->dom.name, sizeof vm->dom.name, "%s", name);
    snprintf(vm->dom.uuid, sizeof vm->dom.uuid, "%s", uuid);
    vm->dom.id = id;
    vm->dom.n_vcpus = n_vcpus;
    vm->n_vcpus = n_vcpus;
    vm->vcpus = XNEWARRAY(struct vpd_vcpu, n_vcpus);
    vm->reason = reason;
    vm->energy_j = 12.5;
    for (unsigned i = 0; i < n_vcpus; i++) {
        struct vpd_vcpu *v = &vm->vcpus[i];

        v->idx = i;
        v->cpu = 1;
        v->busy_total_ns = 1500000000ull;
        v->ready_total_ns = 20000000ull;
        v->load.last_cap = 256;            /* 25% of a core. */
        v->load.last_ready_ppm = 1000;     /* 0.1% */
        cpuset_set(&v->applied, 1);
    }
    vm->hints_total[VPD_HINT_BOOST] = 2;
    snprintf(vm->last_hint, sizeof vm->last_hint, "boost 100 ms");
    return vm;
}

static void
build(struct vpd *d)
{
    struct vpd_vm *web, *db;

    d->start_ns = clk_now_ns() - 90ull * 1000000000ull;
    d->hv_ops = &fake_hv_ops;
    d->hv = (struct drv_hv *) d;       /* Non-NULL: "connected". */
    d->conf.period_ms = 1000;
    d->conf.max_period_ms = 10000;
    d->n_decisions = 41;
    d->n_actions[POL_A_PIN_VCPU] = 3;
    d->n_actions[POL_A_PIN_EMULATOR] = 2;
    d->n_errors[VPD_E_SYSFS] = 1;
    d->host_energy_j = 100.0;
    d->baseline_energy_j = 160.0;
    d->saved_energy_j = 60.0;           /* The daemon accumulates it. */
    d->est_power_mw = 12500;
    d->n_cpus = 2;
    for (unsigned c = 0; c < 2; c++) {
        d->cpus[c].present = d->cpus[c].online = d->cpus[c].managed = true;
        d->cpus[c].freq_khz = 2400000;
        d->cpus[c].nonidle_us = 1200000;
        d->cpus[c].idle.n_states = 2;
        snprintf(d->cpus[c].idle.name[0], 32, "POLL");
        snprintf(d->cpus[c].idle.name[1], 32, "haltpoll");
        d->cpus[c].idle.time_us[0] = 100000;
        d->cpus[c].idle.time_us[1] = 3400000;
    }
    d->model.n_cpus = 2;
    d->model.n_domains = 1;
    cpuset_set(&d->model.domains[0].cpus, 0);
    cpuset_set(&d->model.domains[0].cpus, 1);
    d->dom_freq_changes[0] = 1;
    d->applied = pol_plan_create(4, 8);
    cpuset_set(&d->applied->active, 1);   /* CPU 0 parked. */

    web = make_vm("web", "6c1b2f0e-2a4c-4b8e-9f01-0123456789ab", 3, 2,
                  POL_R_PACKED);
    db = make_vm("db", "0d2e4f60-7a8b-4c9d-8e0f-a1b2c3d4e5f6", 5, 1,
                 POL_R_PERFORMANCE);
    db->policy.kind = POL_PERFORMANCE;
    db->policy_from_metadata = true;
    /* Two of web's hints were timed: 1 ms and 3 ms. */
    web->hint_apply = XNEW(struct histo);
    histo_add(web->hint_apply, 1000000);
    histo_add(web->hint_apply, 3000000);
    web->next = db;
    d->vms = web;
    d->n_vms = 2;
}

static void
quit_cb(int signo, void *aux)
{
    sched_quit(aux, 0);
}

int
main(int argc, char **argv)
{
    struct vpd *d;
    char err[512];
    int code;

    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: ctl-server SOCKET [ADMIN_GROUP]\n");
        return 99;
    }
    log_init("ctl-server", false, LOG_LVL_INFO);
    signal(SIGPIPE, SIG_IGN);
    d = XNEW(struct vpd);
    d->sched = sched_create();
    build(d);
    snprintf(d->conf.socket_path, sizeof d->conf.socket_path, "%s", argv[1]);
    if (argc == 3) {
        snprintf(d->conf.admin_group, sizeof d->conf.admin_group, "%s",
                 argv[2]);
    }
    sched_add_signal(d->sched, SIGTERM, quit_cb, d->sched);
    sched_add_signal(d->sched, SIGINT, quit_cb, d->sched);
    if (cmds_start(d, err, sizeof err) < 0) {
        /* A refusal the tests provoke on purpose: free like any exit so
         * the sanitizer run's LeakSanitizer stays meaningful. */
        fprintf(stderr, "ctl-server: %s\n", err);
        code = 1;
    } else {
        printf("ready\n");
        fflush(stdout);
        code = sched_run(d->sched);
        cmds_stop(d);
    }
    sched_destroy(d->sched);
    while (d->vms) {
        struct vpd_vm *next = d->vms->next;

        free(d->vms->hint_apply);
        free(d->vms->vcpus);
        free(d->vms);
        d->vms = next;
    }
    pol_plan_destroy(d->applied);
    free(d);
    return code;
}
