/* tests/sim/test-replay.c -- The replayer reproduces a daemon's plans.
 *
 * A "live" loop does what vpowerd does each period (pol_load_update()
 * per vCPU with what it measured, pol_decide()) on the server model for
 * 6 VMs with seeded loads, and keeps every plan.  Replaying the same
 * observations through replay_step() must give 0 differing plans; a
 * recorded plan changed in one vCPU's allowed set, one frequency or the
 * next interval must be found, and named, at that decision. */

#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "policy/model.h"
#include "sim/replay.h"
#include "sim/rng.h"
#include "tests/sim/check.h"
#include "tests/sim/server-model.h"

#define N_VMS 6
#define N_VCPUS 16
#define N_DEC 120

static struct pol_model model;

int
main(void)
{
    static struct replay_obs obs[N_DEC][N_VCPUS];
    static uint32_t busy[N_DEC][POL_MAX_CPUS], khz[N_DEC][POL_MAX_CPUS];
    static uint64_t ivls[N_DEC];
    struct pol_plan *live[N_DEC], *out;
    struct pol_vm vms[N_VMS];
    struct pol_vcpu vcpus[N_VCPUS];
    struct pol_config cfg;
    struct pol_state *st;
    struct replay *r;
    struct rng g;
    struct cpuset all;
    uint64_t now = 0;
    unsigned same = 0, differ = 0;
    char what[256];
    uint32_t per_vm[N_VMS] = { 1, 2, 4, 1, 6, 2 };

    if (load_server_model(&model)) {
        return 99;
    }
    memset(vms, 0, sizeof vms);
    memset(vcpus, 0, sizeof vcpus);
    for (uint32_t i = 0, v = 0; i < N_VMS; i++) {
        vms[i].id = 100 + i;
        vms[i].first_vcpu = v;
        vms[i].n_vcpus = per_vm[i];
        vms[i].policy.kind = i == 1 ? POL_PERFORMANCE : POL_BALANCED;
        vms[i].policy.share_smt = true;
        for (uint32_t c = 0; c < per_vm[i]; c++, v++) {
            vcpus[v].vm = i;
            vcpus[v].idx = c;
            vcpus[v].cpu = -1;
        }
    }
    cpuset_zero(&all);
    for (unsigned c = 0; c < model.n_cpus; c++) {
        cpuset_set(&all, c);
    }
    pol_config_default(&cfg);
    st = pol_state_create(&model, &cfg);
    CHECK(st != NULL);
    rng_init(&g, 42, 0, 0);

    /* The live daemon loop. */
    for (int k = 0; k < N_DEC; k++) {
        struct pol_input in;
        uint64_t ivl = k ? (live[k - 1]->next_interval_ns
                            ? live[k - 1]->next_interval_ns : 1000000000)
                         : 0;

        now += ivl;
        ivls[k] = ivl;
        /* Each CPU's busy share and the frequency it ran at, as the
         * daemon measures them: the policy sizes pool cores from them. */
        for (unsigned c = 0; c < model.n_cpus; c++) {
            busy[k][c] = (uint32_t) (rng_uniform(&g) * 1000000.0);
            khz[k][c] = k ? live[k - 1]->dom_freq_khz[model.cpu_domain[c]]
                          : 0;
        }
        for (int v = 0; v < N_VCPUS; v++) {
            struct replay_obs *o = &obs[k][v];
            double u = rng_uniform(&g);

            o->vm = vcpus[v].vm;
            o->idx = vcpus[v].idx;
            o->cpu = k ? cpuset_next(&live[k - 1]->vcpu_allowed[v], 0) : -1;
            o->s_cpu = o->cpu;
            o->freq_khz = o->cpu >= 0 ? khz[k][o->cpu] : 0;
            o->interval_ns = ivl;
            o->busy_ns = (uint64_t) (ivl * u * (v % 3 ? 0.3 : 0.9));
            o->ready_ns = (uint64_t) (ivl * u * 0.01);
            if (ivl) {
                pol_load_update(&vcpus[v].load, &model, o->cpu, o->freq_khz,
                                o->busy_ns, o->ready_ns, ivl);
            }
            vcpus[v].cpu = o->cpu;
        }
        memset(&in, 0, sizeof in);
        in.vms = vms;
        in.n_vms = N_VMS;
        in.vcpus = vcpus;
        in.n_vcpus = N_VCPUS;
        in.managed = all;
        in.online = all;
        in.now_ns = now;
        in.cpu_busy_ppm = busy[k];
        in.cpu_ran_khz = khz[k];
        live[k] = pol_plan_create(N_VMS, N_VCPUS);
        CHECK(pol_decide(st, &in, live[k]) == 0);
    }
    pol_state_destroy(st);

    /* Perturb three recorded plans, as a diverging daemon would. */
    {
        int v = 3;
        unsigned c = (unsigned) cpuset_next(&live[40]->vcpu_allowed[v], 0);

        if (cpuset_count(&live[40]->vcpu_allowed[v]) > 1) {
            cpuset_clr(&live[40]->vcpu_allowed[v], c);
        } else {
            cpuset_set(&live[40]->vcpu_allowed[v], c == 0 ? 1 : 0);
        }
    }
    live[70]->dom_freq_khz[0] += 100000;
    live[100]->next_interval_ns += 1;

    /* Replay. */
    r = replay_create(&model, &cfg);
    CHECK(r != NULL);
    out = pol_plan_create(N_VMS, N_VCPUS);
    now = 0;
    for (int k = 0; k < N_DEC && r; k++) {
        struct replay_decision d;
        int rc;

        memset(&d, 0, sizeof d);
        now += obs[k][0].interval_ns;
        d.now_ns = now;
        d.sample = true;
        d.interval_ns = ivls[k];
        d.cpu_busy_ppm = busy[k];
        d.cpu_ran_khz = khz[k];
        d.vms = vms;
        d.n_vms = N_VMS;
        d.obs = obs[k];
        d.n_vcpus = N_VCPUS;
        d.managed = all;
        d.online = all;
        d.recorded = live[k];
        what[0] = '\0';
        rc = replay_step(r, &d, out, what, sizeof what);
        CHECK(rc >= 0);
        if (rc == 0) {
            same++;
        } else {
            differ++;
            if (k != 40 && k != 70 && k != 100) {
                fprintf(stderr, "  unexpected difference at %d: %s\n", k,
                        what);
                fail_count++;
            }
            if (k == 40) {
                CHECK(strstr(what, "vcpu allowed 3 ") != NULL);
            } else if (k == 70) {
                CHECK(strstr(what, "domain 0 frequency") != NULL);
            } else if (k == 100) {
                CHECK(strstr(what, "next interval") != NULL);
            }
        }
    }
    printf("replayed %d decisions: %u identical, %u different\n", N_DEC,
           same, differ);
    CHECK(same == N_DEC - 3 && differ == 3);
    pol_plan_destroy(out);
    replay_destroy(r);
    for (int k = 0; k < N_DEC; k++) {
        pol_plan_destroy(live[k]);
    }
    return fail_count ? 1 : 0;
}
