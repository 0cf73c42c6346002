/* policy/model.h -- The host energy model: topology, operating points,
 * idle states and package power.
 *
 * Everything the policy knows about the hardware is in 'struct pol_model'.
 * vpowerd builds one from an energy-model file (config/models/) or from
 * the live sysfs topology plus defaults; vpower-sim loads one from a file.
 * Units are in the member names: kHz, mW, us, and "capacity units" where
 * 1024 is one core of the model's biggest type running at its highest
 * non-turbo operating point (the kernel's SCHED_CAPACITY_SCALE).  Load
 * expressed in capacity units is frequency-invariant.
 *
 * The parser is pure: it takes the file's text, not a path, so it can be
 * fuzzed and unit-tested without I/O. */

#ifndef VPOWER_POLICY_MODEL_H
#define VPOWER_POLICY_MODEL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/cpuset.h"

#define POL_CAPACITY_SCALE 1024
#define POL_MAX_OPPS 32
#define POL_MAX_IDLE 8
#define POL_MAX_DOMAINS 256
#define POL_MAX_PKGS 16
#define POL_NAME_LEN 32

/* One operating point of a frequency domain. */
struct pol_opp {
    uint32_t freq_khz;
    uint32_t capacity;        /* Per CPU at this point, capacity units. */
    uint32_t busy_mw;         /* One physical core 100% busy here. */
    bool turbo;               /* Above nominal: not guaranteed. */
    uint32_t cluster_mw;      /* Cluster power while the domain
                               * runs at this point (Arm EAS per-OPP
                               * cluster cost); 0 = cluster_active_mw. */
};

/* One idle state, as cpuidle describes it. Index 0 is the shallowest. */
struct pol_idle_state {
    char name[POL_NAME_LEN];
    uint32_t exit_latency_us;
    uint32_t target_residency_us;
    uint32_t power_mw;        /* One physical core resident in it. */
};

/* A set of CPUs that share one clock (a cpufreq policy). */
struct pol_domain {
    struct cpuset cpus;
    unsigned pkg;                              /* Index into pkgs[]. */
    unsigned n_opps;                           /* >= 1, ascending freq. */
    struct pol_opp opps[POL_MAX_OPPS];
    unsigned nominal_opp;                      /* Highest non-turbo. */
    unsigned n_idle;                           /* >= 1, shallow first. */
    struct pol_idle_state idle[POL_MAX_IDLE];
    uint32_t cluster_active_mw;   /* Shared cluster logic while any CPU of
                                   * the domain is awake (Arm clusters);
                                   * 0 where it is folded into the package. */
    uint32_t cluster_idle_mw;     /* ...while all of them sleep deeply. */
};

/* A physical package (socket) with its uncore. */
struct pol_pkg {
    struct cpuset cpus;
    uint32_t uncore_active_mw;   /* While any core of the package is awake. */
    uint32_t uncore_idle_mw;     /* While all cores are in the deepest
                                  * state (package C-state reachable). */
};

struct pol_model {
    char name[64];
    unsigned n_cpus;                  /* CPUs 0..n_cpus-1 exist. */
    unsigned n_domains;
    struct pol_domain domains[POL_MAX_DOMAINS];
    unsigned n_pkgs;
    struct pol_pkg pkgs[POL_MAX_PKGS];
    uint32_t platform_mw;             /* Constant rest of the machine
                                       * (fans, DRAM, disks, PSU loss). */
    uint16_t cpu_domain[POL_MAX_CPUS];   /* CPU -> domain index. */
    uint16_t cpu_core[POL_MAX_CPUS];     /* CPU -> physical core id;
                                          * SMT siblings share it. */
    uint16_t smt_capacity_pct;   /* Throughput of a core with both
                                  * siblings busy, relative to one thread
                                  * (e.g. 125); 100 without SMT. */
};

/* Parses the energy-model text 'text' (NUL-terminated; format in
 * docs/energy-model.md) into 'm'.  On error returns -EINVAL and writes
 * "LINE: reason" into 'err' (NUL-terminated, at most 'errlen' bytes); 'm'
 * is then undefined.  Validates: every CPU in exactly one domain, OPPs
 * ascending, idle states ascending in exit latency and target residency,
 * values in range.  Returns 0 on success. */
int pol_model_parse(struct pol_model *m, const char *text,
                    char *err, size_t errlen);

/* Capacity of one CPU of domain 'd' at 'freq_khz': linear between
 * operating points, proportional to the clock below the lowest, the
 * highest point's above it, the nominal point's when freq_khz is 0.
 * Inline: the cycle converts every vCPU's run time with it, and the
 * policy and the simulator look capacities up in their inner loops. */
static inline uint32_t
pol_dom_capacity_at(const struct pol_domain *d, uint32_t freq_khz)
{
    const struct pol_opp *o = d->opps;
    unsigned n = d->n_opps;

    if (!n) {
        return 0;
    }
    if (!freq_khz) {
        return o[d->nominal_opp < n ? d->nominal_opp : n - 1].capacity;
    }
    if (freq_khz <= o[0].freq_khz) {
        return (uint32_t) ((uint64_t) o[0].capacity * freq_khz
                           / o[0].freq_khz);
    }
    for (unsigned i = 1; i < n; i++) {
        if (freq_khz == o[i].freq_khz) {
            return o[i].capacity;      /* What the line below gives. */
        }
        if (freq_khz < o[i].freq_khz) {
            uint64_t span = o[i].freq_khz - o[i - 1].freq_khz;
            uint64_t dc = o[i].capacity - o[i - 1].capacity;

            return o[i - 1].capacity
                   + (uint32_t) (dc * (freq_khz - o[i - 1].freq_khz) / span);
        }
    }
    return o[n - 1].capacity;
}

/* Capacity of 'cpu' when its domain runs at 'freq_khz'
 * (pol_dom_capacity_at()); 0 for a CPU outside the model. */
static inline uint32_t
pol_model_capacity_at(const struct pol_model *m, unsigned cpu,
                      uint32_t freq_khz)
{
    if (cpu >= m->n_cpus || m->cpu_domain[cpu] >= m->n_domains) {
        return 0;
    }
    return pol_dom_capacity_at(&m->domains[m->cpu_domain[cpu]], freq_khz);
}

/* Busy power (mW) of one physical core of 'cpu''s domain at 'freq_khz'
 * (linear between operating points, clamped to the first and last; the
 * nominal point's when freq_khz is 0).  A negative or out-of-range
 * 'cpu' means domain 0; 0 for a model without domains or points. */
double pol_model_busy_mw(const struct pol_model *m, int cpu,
                         uint32_t freq_khz);

/* Index of the deepest idle state of 'cpu''s domain whose exit latency is
 * at most 'latency_us' (0 = no bound: the deepest). Never below 0. */
unsigned pol_model_idle_for_latency(const struct pol_model *m, unsigned cpu,
                                    uint32_t latency_us);

#endif /* policy/model.h */
