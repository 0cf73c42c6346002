/* tests/sim/test-smt.c -- SMT isolation in the simulator.
 *
 * 20 PlanetLab VMs (day 20110303, first 2 hours) on the server model,
 * vpower and the performance baseline:
 *  - every VM no-share (what --no-share-smt sets): vpower spends more
 *    than with every VM sharing (isolation costs cores), still no more
 *    than performance, and leaves at most 1 % of the demand unmet;
 *  - core scheduling (--sched-core) changes vpower's plans (the pool
 *    counts no SMT gain) and leaves the performance row as it was;
 *  - mix_default() and mix_assign() give VMs that share.
 * Skips (77) when the shared traces are not on this machine. */

#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/model.h"
#include "sim/mix.h"
#include "sim/simrun.h"
#include "sim/trace.h"
#include "tests/sim/check.h"
#include "tests/sim/server-model.h"

static struct pol_model model;

static void
run(const struct trace_set *ts, const struct pol_vm_policy *vmp,
    bool sched_core, struct sim_result *res)
{
    struct sim_opts so;
    char err[512];

    memset(&so, 0, sizeof so);
    so.m = &model;
    so.ts = ts;
    so.hosts = 1;
    so.seed = 1;
    so.on_mean_s = 2.0;
    so.mask = 1u << SIM_P_VPOWER | 1u << SIM_P_PERFORMANCE;
    so.vm_policy = vmp;
    so.sched_core = sched_core;
    if (sim_run(&so, res, err, sizeof err)) {
        fprintf(stderr, "sim_run: %s\n", err);
        exit(1);
    }
}

int
main(void)
{
    char dirbuf[4096], err[512];
    const char *dir = test_trace_day(dirbuf, sizeof dirbuf);
    struct trace_opts to = { 20, 24, 1 };
    struct trace_set ts;
    struct sim_result shared, iso, sc;
    struct pol_vm_policy *pol;
    struct mix_spec spec;

    pol = calloc(64, sizeof *pol);
    CHECK(pol != NULL);
    mix_default(64, pol);
    CHECK(pol[0].share_smt && pol[63].share_smt);
    CHECK(pol[5].kind == POL_BALANCED);
    CHECK(mix_parse("powersave=50%", &spec, err, sizeof err) == 0);
    mix_assign(&spec, 64, 1, pol);
    CHECK(pol[0].share_smt && pol[63].share_smt);
    if (access(dir, R_OK)) {
        printf("SKIP: %s not available\n", dir);
        free(pol);
        return fail_count ? 1 : 77;
    }
    if (load_server_model(&model)) {
        return 99;
    }
    if (trace_planetlab.load(dir, &to, &ts, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 99;
    }
    run(&ts, NULL, false, &shared);
    mix_default(ts.n_vms < 64 ? ts.n_vms : 64, pol);
    for (size_t v = 0; v < ts.n_vms && v < 64; v++) {
        pol[v].share_smt = false;
    }
    run(&ts, pol, false, &iso);
    run(&ts, NULL, true, &sc);
    printf("vpower: sharing %.0f J (unmet %.3f %%), no-share %.0f J "
           "(unmet %.3f %%), core scheduling %.0f J; performance %.0f J\n",
           shared.rows[SIM_P_VPOWER].energy_j,
           shared.rows[SIM_P_VPOWER].unmet_pct,
           iso.rows[SIM_P_VPOWER].energy_j,
           iso.rows[SIM_P_VPOWER].unmet_pct,
           sc.rows[SIM_P_VPOWER].energy_j,
           shared.rows[SIM_P_PERFORMANCE].energy_j);
    CHECK(iso.rows[SIM_P_VPOWER].energy_j
          > shared.rows[SIM_P_VPOWER].energy_j);
    CHECK(iso.rows[SIM_P_VPOWER].energy_j
          <= iso.rows[SIM_P_PERFORMANCE].energy_j);
    CHECK(iso.rows[SIM_P_VPOWER].unmet_pct <= 1.0);
    CHECK(sc.rows[SIM_P_VPOWER].energy_j
          != shared.rows[SIM_P_VPOWER].energy_j);
    CHECK(sc.rows[SIM_P_PERFORMANCE].energy_j
          == shared.rows[SIM_P_PERFORMANCE].energy_j);
    CHECK(iso.rows[SIM_P_PERFORMANCE].energy_j
          == shared.rows[SIM_P_PERFORMANCE].energy_j);
    free(pol);
    sim_result_free(&shared);
    sim_result_free(&iso);
    sim_result_free(&sc);
    trace_set_free(&ts);
    return fail_count ? 1 : 0;
}
