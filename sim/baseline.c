/* sim/baseline.c -- cpufreq governors, DPDK vm_power_manager and Nova
 * CPU power management, as plans.
 *
 * Modelling choices that could favour vpower are made in the baselines'
 * favour: "maximum" frequency means the highest non-turbo point (turbo
 * would cost the baselines more), idle states are chosen by the same
 * gap rule for everyone, and the 1:1 pinning baselines fill cores in the
 * order their documentation recommends. */

#include <config.h>

#include "sim/baseline.h"

#include <stdlib.h>
#include <string.h>

/* schedutil's margin: next_freq = 1.25 * max_freq * util / max_cap. */
#define SU_MARGIN 1.25
/* DPDK level choice keeps a pinned core at most this busy. */
#define DPDK_TARGET_BUSY 0.7

static const char *const names[BL_N_KINDS] = {
    "performance", "schedutil", "powersave", "dpdk-vmpm", "nova-offline",
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
        for (unsigned d = 0; d < m->n_domains; d++) {
            dom_freq_khz[d] = m->domains[d].opps[0].freq_khz;
        }
        break;

    case BL_SCHEDUTIL:
        /* Per cpufreq policy: util of its busiest CPU (the most recent
         * step, as PELT reflects the recent past), then
         * next_freq = 1.25 * max_freq * util / max_capacity, rounded up
         * to the next operating point (CPUFREQ_RELATION_L). */
        for (unsigned d = 0; d < m->n_domains; d++) {
            const struct pol_domain *dom = &m->domains[d];
            double best = 0;

            CPUSET_FOREACH (c, &dom->cpus) {
                double maxcap = pol_model_capacity_at(m, c, 0);
                double u = maxcap > 0 ? h->cpu_work_last[c] / maxcap : 0;
                if (u > best) {
                    best = u;
                }
            }
            double next_khz = SU_MARGIN * nominal_khz(dom) * best;
            dom_freq_khz[d] = nominal_khz(dom);
            for (unsigned o = 0; o <= dom->nominal_opp; o++) {
                if (dom->opps[o].freq_khz >= next_khz) {
                    dom_freq_khz[d] = dom->opps[o].freq_khz;
                    break;
                }
            }
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
