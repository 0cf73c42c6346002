/* tests/fuzz/fuzz-model.c -- libFuzzer target for the energy-model parser.
 *
 * Energy-model files come from config/models/, from vendors or from an
 * operator's hand; vpowerd and vpower-sim hand their text to
 * pol_model_parse().  This feeds arbitrary bytes to it and checks the
 * contract of policy/model.h on every accepted model (every CPU in
 * exactly one domain and one package, OPPs ascending with a valid
 * nominal point, idle states ascending, SMT siblings in one domain),
 * then runs the policy over it once -- one VM, a decision, an energy
 * estimate and the model queries -- because an accepted model is what
 * pol_decide() indexes with.  A rejected text must give "LINE: reason".
 * Built with clang -fsanitize=fuzzer by `make fuzz-model` / .ci/fuzz;
 * replayed over the committed corpus by make check. */

#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/model.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless 'm' keeps the promises of pol_model_parse(). */
static void
check_model(const struct pol_model *m)
{
    struct cpuset seen;

    if (!m->n_cpus || m->n_cpus > POL_MAX_CPUS || !m->n_domains
        || m->n_domains > POL_MAX_DOMAINS || !m->n_pkgs
        || m->n_pkgs > POL_MAX_PKGS || !m->smt_capacity_pct
        || !memchr(m->name, '\0', sizeof m->name)) {
        abort();
    }
    cpuset_zero(&seen);
    for (unsigned i = 0; i < m->n_domains; i++) {
        const struct pol_domain *d = &m->domains[i];
        struct cpuset both;

        if (!d->n_opps || d->n_opps > POL_MAX_OPPS
            || d->nominal_opp >= d->n_opps || !d->n_idle
            || d->n_idle > POL_MAX_IDLE || d->pkg >= m->n_pkgs
            || cpuset_empty(&d->cpus)
            || !cpuset_subset(&d->cpus, &m->pkgs[d->pkg].cpus)) {
            abort();
        }
        cpuset_and(&both, &seen, &d->cpus);
        if (!cpuset_empty(&both)) {
            abort();            /* A CPU in two domains. */
        }
        cpuset_or(&seen, &seen, &d->cpus);
        for (unsigned k = 1; k < d->n_opps; k++) {
            if (d->opps[k].freq_khz <= d->opps[k - 1].freq_khz) {
                abort();
            }
        }
        for (unsigned k = 0; k < d->n_idle; k++) {
            if (!memchr(d->idle[k].name, '\0', sizeof d->idle[k].name)) {
                abort();
            }
            if (k && (d->idle[k].exit_latency_us
                      < d->idle[k - 1].exit_latency_us
                      || d->idle[k].target_residency_us
                      < d->idle[k - 1].target_residency_us)) {
                abort();
            }
        }
    }
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        if (cpuset_has(&seen, c) != (c < m->n_cpus)) {
            abort();            /* A CPU in no domain, or one too many. */
        }
    }
    for (unsigned c = 0; c < m->n_cpus; c++) {
        unsigned dom = m->cpu_domain[c];

        if (dom >= m->n_domains || !cpuset_has(&m->domains[dom].cpus, c)
            || m->cpu_core[c] >= m->n_cpus
            || m->cpu_domain[m->cpu_core[c]] != dom) {
            abort();
        }
        (void) pol_model_capacity_at(m, c, 0);
        (void) pol_model_capacity_at(m, c, 1);
        (void) pol_model_capacity_at(m, c, UINT32_MAX);
        if (pol_model_idle_for_latency(m, c, 0)
            >= m->domains[dom].n_idle
            || pol_model_idle_for_latency(m, c, 1)
            >= m->domains[dom].n_idle) {
            abort();
        }
    }
}

/* One VM with two busy vCPUs through the real policy on model 'm'. */
static void
run_policy(const struct pol_model *m)
{
    struct pol_config cfg;
    struct pol_state *st;
    struct pol_plan *plan;
    struct pol_vm vm;
    struct pol_vcpu vc[2];
    struct pol_input in;
    uint32_t *busy;

    pol_config_default(&cfg);
    cfg.warmup_samples = 0;
    cfg.max_vcpus = 16;
    st = pol_state_create(m, &cfg);
    plan = pol_plan_create(1, 2);
    busy = calloc(POL_MAX_CPUS, sizeof *busy);
    if (!st || !plan || !busy) {
        abort();
    }
    memset(&vm, 0, sizeof vm);
    vm.n_vcpus = 2;
    memset(vc, 0, sizeof vc);
    memset(&in, 0, sizeof in);
    for (unsigned i = 0; i < 2; i++) {
        vc[i].idx = i;
        vc[i].cpu = (int32_t) (i % m->n_cpus);
        for (unsigned s = 0; s < 4; s++) {
            pol_load_update(&vc[i].load, m, vc[i].cpu, 0,
                            (i + 1) * 300000000ull, 1000000ull,
                            1000000000ull);
        }
    }
    in.vms = &vm;
    in.n_vms = 1;
    in.vcpus = vc;
    in.n_vcpus = 2;
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&in.managed, c);
        busy[c] = 500000;
    }
    in.online = in.managed;
    for (unsigned round = 0; round < 2; round++) {
        in.now_ns = 1000000000ull * (round + 1);
        if (pol_decide(st, &in, plan)) {
            abort();
        }
        for (unsigned i = 0; i < 2; i++) {
            struct cpuset ok;

            cpuset_and(&ok, &in.managed, &plan->active);
            if (cpuset_empty(&plan->vcpu_allowed[i])
                || !cpuset_subset(&plan->vcpu_allowed[i], &ok)) {
                abort();
            }
        }
        (void) pol_energy_power_mw(m, plan, busy);
    }
    free(busy);
    pol_plan_destroy(plan);
    pol_state_destroy(st);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pol_model *m;
    char err[256];
    char *text;
    int r;

    if (size > 256 * 1024) {
        return 0;
    }
    text = malloc(size + 1);
    m = malloc(sizeof *m);
    if (!text || !m) {
        abort();
    }
    memcpy(text, data, size);
    text[size] = '\0';
    memset(err, 0x55, sizeof err);
    r = pol_model_parse(m, text, err, sizeof err);
    if (r) {
        if (r != -EINVAL || !memchr(err, '\0', sizeof err)
            || err[0] < '0' || err[0] > '9' || !strstr(err, ": ")) {
            abort();
        }
    } else {
        check_model(m);
        run_policy(m);
    }
    free(m);
    free(text);
    return 0;
}
