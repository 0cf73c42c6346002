/* sim/baseline.c -- cpufreq governors, intel_pstate with HWP, tuned,
 * DPDK vm_power_manager and Nova CPU power management, as plans.
 *
 * Each is modelled as strong as it is on a real host (docs/baselines.md):
 * schedutil and HWP follow the load within a step and use turbo points
 * like the kernel and the hardware do; idle states are chosen by the
 * same gap rule for everyone; the 1:1 pinning baselines fill cores in
 * the order their documentation recommends. */

#include <config.h>

#include "sim/baseline.h"

#include <stdlib.h>
#include <string.h>

/* schedutil's margin: next_freq = 1.25 * max_freq * util / max_cap. */
#define SU_MARGIN 1.25
/* EPP values intel_pstate writes for "balance_performance" and
 * "balance_power" (HWP_EPP_* in arch/x86/include/asm/msr-index.h). */
#define EPP_BALANCE_PERFORMANCE 128
#define EPP_BALANCE_POWER 192
/* Rounds of the in-step fixed point before settling for the higher of
 * the last two choices. */
#define STEP_ROUNDS 8
/* DPDK level choice keeps a pinned core at most this busy. */
#define DPDK_TARGET_BUSY 0.7

static const char *const names[BL_N_KINDS] = {
    "performance", "schedutil", "powersave", "dpdk-vmpm", "nova-offline",
    "hwp-balperf", "hwp-balpower", "tuned-vhost", "sched-noturbo",
};

const char *
baseline_name(enum baseline_kind k)
{
    return k < BL_N_KINDS ? names[k] : "?";
}

static uint32_t
nominal_khz(const struct pol_domain *d)
{
    return d->opps[d->nominal_opp].freq_khz;
}

/* The highest point, turbo included (cpuinfo.max_freq with turbo on):
 * the model's last point; the nominal one when the model lists no turbo
 * points. */
static unsigned
top_opp(const struct pol_domain *d)
{
    return d->n_opps ? d->n_opps - 1 : 0;
}

bool
baseline_follows_step(enum baseline_kind k)
{
    return k == BL_SCHEDUTIL || k == BL_HWP_BALPERF || k == BL_HWP_BALPOWER
           || k == BL_SCHED_NOTURBO;
}

uint32_t
baseline_rule_khz(enum baseline_kind kind, const struct pol_model *m,
                  unsigned d, double util)
{
    const struct pol_domain *dom = &m->domains[d];
    unsigned top = top_opp(dom);
    double epp;

    switch (kind) {
    case BL_POWERSAVE:
        return dom->opps[0].freq_khz;
    case BL_TUNED_VHOST:
        return dom->opps[top].freq_khz;
    case BL_SCHED_NOTURBO:
        top = dom->nominal_opp;
        /* Fall through. */
    case BL_SCHEDUTIL: {
        double cap = dom->opps[top].capacity;
        double next = cap > 0 ? SU_MARGIN * dom->opps[top].freq_khz * util
                                / cap : 0;

        for (unsigned o = 0; o <= top; o++) {
            if (dom->opps[o].freq_khz >= next) {
                return dom->opps[o].freq_khz;
            }
        }
        return dom->opps[top].freq_khz;
    }
    case BL_HWP_BALPERF:
    case BL_HWP_BALPOWER:
        epp = kind == BL_HWP_BALPERF ? EPP_BALANCE_PERFORMANCE
                                     : EPP_BALANCE_POWER;
        for (unsigned o = 0; o <= top; o++) {
            if (dom->opps[o].capacity * (epp / 255.0) >= util) {
                return dom->opps[o].freq_khz;
            }
        }
        return dom->opps[top].freq_khz;
    default:
        return nominal_khz(dom);
    }
}

/* Utilisation of the busiest CPU of domain 'd' in 'util' (per CPU). */
static double
dom_util(const struct pol_model *m, unsigned d, const double *util)
{
    double best = 0;

    CPUSET_FOREACH (c, &m->domains[d].cpus) {
        if (util[c] > best) {
            best = util[c];
        }
    }
    return best;
}

/* fits_capacity(): util with the 20 % margin below capacity. */
static bool
fits(double util, double cap)
{
    return util * 1.25 < cap;
}

/* The energy model's estimate for domain 'd' with per-CPU utilisation
 * 'util' (em_cpu_energy()): the point schedutil would pick for its
 * busiest CPU, then that point's power per unit of capacity times the
 * domain's summed utilisation.  CPU power only, as the kernel's model. */
static double
eas_pd_energy(const struct pol_model *m, unsigned d, const double *util)
{
    const struct pol_domain *dom = &m->domains[d];
    double sum = 0, khz;
    unsigned o;

    CPUSET_FOREACH (c, &dom->cpus) {
        sum += util[c];
    }
    khz = baseline_rule_khz(BL_SCHEDUTIL, m, d, dom_util(m, d, util));
    for (o = 0; o + 1 < dom->n_opps && dom->opps[o].freq_khz < khz; o++) {
        continue;
    }
    return dom->opps[o].capacity
           ? dom->opps[o].busy_mw * sum / dom->opps[o].capacity : 0;
}

/* Whether CPUs of 'm' differ in capacity at their highest points. */
static bool
asymmetric(const struct pol_model *m)
{
    for (unsigned d = 1; d < m->n_domains; d++) {
        if (m->domains[d].opps[top_opp(&m->domains[d])].capacity
            != m->domains[0].opps[top_opp(&m->domains[0])].capacity) {
            return true;
        }
    }
    return false;
}

/* The load balancer's misfit rule when overutilized: a vCPU whose
 * utilisation does not fit its CPU (with the 20 % margin) moves to the
 * CPU of its set with more capacity and the most spare capacity. */
static void
eas_misfits(struct exec_host *h, double *util, const double *maxcap)
{
    const struct pol_model *m = h->m;

    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t prev = h->vcpu_home[v], pick = -1;
        double u = h->served[v];

        if (prev < 0 || u <= 0 || fits(u, maxcap[prev])) {
            continue;
        }
        for (unsigned c = 0; c < m->n_cpus; c++) {
            if (maxcap[c] > maxcap[prev] && exec_may_home(h, v, c)
                && (pick < 0 || maxcap[c] - util[c]
                                > maxcap[pick] - util[pick])) {
                pick = (int32_t) c;
            }
        }
        if (pick >= 0) {
            util[prev] -= u;
            util[pick] += u;
            exec_set_home(h, v, (unsigned) pick);
        }
    }
}

void
baseline_eas_place(struct exec_host *h)
{
    const struct pol_model *m = h->m;
    double util[POL_MAX_CPUS], maxcap[POL_MAX_CPUS];

    if (!asymmetric(m)) {
        return;
    }
    memset(util, 0, m->n_cpus * sizeof *util);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        const struct pol_domain *dom = &m->domains[m->cpu_domain[c]];

        maxcap[c] = dom->opps[top_opp(dom)].capacity;
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        if (h->vcpu_home[v] >= 0) {
            util[h->vcpu_home[v]] += h->served[v];
        }
    }
    /* Overutilized: a CPU above 80 % of its capacity turns EAS off; the
     * load balancer then moves misfit tasks up. */
    for (unsigned c = 0; c < m->n_cpus; c++) {
        if (!fits(util[c], maxcap[c]) && util[c] > 0) {
            eas_misfits(h, util, maxcap);
            return;
        }
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t prev = h->vcpu_home[v], best = -1;
        double u = h->served[v], best_delta = 0;
        int32_t cand[POL_MAX_DOMAINS + 1];
        unsigned n = 0;

        if (prev < 0) {
            continue;
        }
        util[prev] -= u;
        /* Candidates: the previous CPU and, per domain, the CPU of the
         * vCPU's set with the most spare capacity that fits it. */
        if (fits(util[prev] + u, maxcap[prev])) {
            cand[n++] = prev;
        }
        for (unsigned d = 0; d < m->n_domains; d++) {
            int32_t pick = -1;

            CPUSET_FOREACH (c, &m->domains[d].cpus) {
                if (!exec_may_home(h, v, (unsigned) c)) {
                    continue;
                }
                if (fits(util[c] + u, maxcap[c])
                    && (pick < 0 || maxcap[c] - util[c]
                                    > maxcap[pick] - util[pick])) {
                    pick = c;
                }
            }
            if (pick >= 0 && pick != prev) {
                cand[n++] = pick;
            }
        }
        for (unsigned i = 0; i < n; i++) {
            unsigned d = m->cpu_domain[cand[i]];
            double before = eas_pd_energy(m, d, util), delta;

            util[cand[i]] += u;
            delta = eas_pd_energy(m, d, util) - before;
            util[cand[i]] -= u;
            if (best < 0 || delta < best_delta) {
                best = cand[i];
                best_delta = delta;
            }
        }
        if (best < 0) {
            best = prev;
        }
        util[best] += u;
        exec_set_home(h, v, (unsigned) best);
    }
}

void
baseline_step_freqs(enum baseline_kind kind, struct exec_host *h,
                    const float *demand, uint32_t *dom_freq_khz)
{
    const struct pol_model *m = h->m;
    uint32_t prev[POL_MAX_DOMAINS];
    double util[POL_MAX_CPUS];
    bool settled = false;

    if (!baseline_follows_step(kind)) {
        baseline_freqs(kind, h, dom_freq_khz);
        return;
    }
    if (kind == BL_SCHEDUTIL) {
        baseline_eas_place(h);
    }
    memcpy(dom_freq_khz, h->plan->dom_freq_khz,
           m->n_domains * sizeof *dom_freq_khz);
    memcpy(prev, dom_freq_khz, m->n_domains * sizeof *prev);
    for (int r = 0; r < STEP_ROUNDS && !settled; r++) {
        exec_probe_util(h, demand, dom_freq_khz, util);
        settled = true;
        memcpy(prev, dom_freq_khz, m->n_domains * sizeof *prev);
        for (unsigned d = 0; d < m->n_domains; d++) {
            uint32_t f = baseline_rule_khz(kind, m, d, dom_util(m, d, util));

            if (f != dom_freq_khz[d]) {
                settled = false;
                dom_freq_khz[d] = f;
            }
        }
    }
    if (!settled) {
        for (unsigned d = 0; d < m->n_domains; d++) {
            if (prev[d] > dom_freq_khz[d]) {
                dom_freq_khz[d] = prev[d];
            }
        }
    }
}

/* CPUs in pinning order.  DPDK: one thread of every physical core
 * first, then the siblings ("each vCPU on its own core").  Nova with the
 * default hw:cpu_thread_policy=prefer: siblings together. */
static unsigned
pin_order(const struct pol_model *m, bool siblings_together,
          unsigned *order)
{
    bool seen[POL_MAX_CPUS], used[POL_MAX_CPUS];   /* Not static: hosts
                                                    * run on threads. */
    bool first[POL_MAX_CPUS];
    unsigned n = 0;

    memset(seen, 0, sizeof seen);
    memset(used, 0, sizeof used);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        first[c] = !seen[m->cpu_core[c]];
        seen[m->cpu_core[c]] = true;
    }
    if (!siblings_together) {
        for (int pass = 0; pass < 2; pass++) {
            for (unsigned c = 0; c < m->n_cpus; c++) {
                if (first[c] == !pass) {
                    order[n++] = c;
                }
            }
        }
        return n;
    }
    /* Siblings together: each core's threads in CPU order, cores in the
     * order of their first thread. */
    for (unsigned c = 0; c < m->n_cpus; c++) {
        if (!first[c]) {
            continue;
        }
        for (unsigned s = c; s < m->n_cpus; s++) {
            if (m->cpu_core[s] == m->cpu_core[c] && !used[s]) {
                used[s] = true;
                order[n++] = s;
            }
        }
    }
    return n;
}

static void
plan_common(const struct exec_host *h, struct pol_plan *plan)
{
    const struct pol_model *m = h->m;

    plan->n_vms = h->n_vms;
    plan->n_vcpus = h->n_vcpus;
    cpuset_zero(&plan->active);
    cpuset_zero(&plan->offline);
    for (unsigned c = 0; c < m->n_cpus; c++) {
        cpuset_set(&plan->active, c);
    }
    for (unsigned c = 0; c < POL_MAX_CPUS; c++) {
        plan->idle_limit[c] = -1;
    }
    for (size_t v = 0; v < h->n_vcpus; v++) {
        plan->vcpu_allowed[v] = plan->active;
    }
    for (size_t i = 0; i < h->n_vms; i++) {
        plan->vm_emulator[i] = plan->active;
        plan->vm_reason[i] = POL_R_PACKED;
    }
    plan->next_interval_ns = 0;
    plan->est_power_mw = 0;
}

static void
plan_pinned(const struct exec_host *h, struct pol_plan *plan,
            bool siblings_together)
{
    const struct pol_model *m = h->m;
    unsigned order[POL_MAX_CPUS];
    unsigned n = pin_order(m, siblings_together, order);

    for (size_t v = 0; v < h->n_vcpus; v++) {
        /* More vCPUs than CPUs cannot be pinned 1:1: wrap around
         * (documented overcommit; Nova itself would refuse the VM). */
        cpuset_zero(&plan->vcpu_allowed[v]);
        cpuset_set(&plan->vcpu_allowed[v], order[v % n]);
    }
}

void
baseline_freqs(enum baseline_kind kind, const struct exec_host *h,
               uint32_t *dom_freq_khz)
{
    const struct pol_model *m = h->m;
    double period = h->period_s > 0 ? h->period_s : 1.0;

    switch (kind) {
    case BL_PERFORMANCE:
    case BL_NOVA:
        for (unsigned d = 0; d < m->n_domains; d++) {
            dom_freq_khz[d] = nominal_khz(&m->domains[d]);
        }
        break;

    case BL_POWERSAVE:
    case BL_TUNED_VHOST:
    case BL_SCHEDUTIL:
    case BL_SCHED_NOTURBO:
    case BL_HWP_BALPERF:
    case BL_HWP_BALPOWER:
        /* From the last step's utilisation: what a whole plan starts
         * from; the rows that follow the step then settle within it
         * (baseline_step_freqs()). */
        for (unsigned d = 0; d < m->n_domains; d++) {
            dom_freq_khz[d] = baseline_rule_khz(kind, m, d,
                                                dom_util(m, d,
                                                         h->cpu_work_last));
        }
        break;

    case BL_DPDK:
        /* Per core: the workload policy's MIN / MED / MAX levels, the
         * lowest that keeps the core at most 70% busy at the utilisation
         * measured over the last period; a shared clock takes the
         * highest request of its CPUs. */
        for (unsigned d = 0; d < m->n_domains; d++) {
            const struct pol_domain *dom = &m->domains[d];
            uint32_t lv[3] = {
                dom->opps[0].freq_khz,
                dom->opps[dom->nominal_opp / 2].freq_khz,
                nominal_khz(dom),
            };
            uint32_t khz = lv[0];

            CPUSET_FOREACH (c, &dom->cpus) {
                double u = h->cpu_work_period[c] / period;
                for (int l = 0; l < 3; l++) {
                    if (l == 2 || pol_model_capacity_at(m, c, lv[l])
                                  * DPDK_TARGET_BUSY >= u) {
                        if (lv[l] > khz) {
                            khz = lv[l];
                        }
                        break;
                    }
                }
            }
            dom_freq_khz[d] = khz;
        }
        break;

    default:
        break;
    }
}

void
baseline_plan(enum baseline_kind kind, const struct exec_host *h,
              struct pol_plan *plan)
{
    const struct pol_model *m = h->m;

    plan_common(h, plan);
    if (kind == BL_DPDK) {
        plan_pinned(h, plan, false);
    } else if (kind == BL_NOVA) {
        struct cpuset used;

        plan_pinned(h, plan, true);
        cpuset_zero(&used);
        for (size_t v = 0; v < h->n_vcpus; v++) {
            cpuset_or(&used, &used, &plan->vcpu_allowed[v]);
        }
        /* cpu_power_management_strategy=cpu_state: dedicated CPUs no
         * instance uses are offline; CPU0 stays (host housekeeping). */
        for (unsigned c = 1; c < m->n_cpus; c++) {
            if (!cpuset_has(&used, c)) {
                cpuset_set(&plan->offline, c);
                cpuset_clr(&plan->active, c);
            }
        }
    }
    baseline_freqs(kind, h, plan->dom_freq_khz);
}
