/* sim/simrun.c -- The simulator's main loop.
 *
 * For every trace interval: synthesise each vCPU's bursts once (shared by
 * all policies), then step every host one second at a time; at each of
 * vpower's decision instants, feed each policy what the execution model
 * measured and apply its new plan (schedutil and DPDK: every step). */

#include <config.h>

#include "sim/simrun.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manager/conf.h"
#include "manager/cycle.h"
#include "manager/daemon.h"
#include "manager/log.h"
#include "manager/modelcheck.h"
#include "manager/vmreg.h"
#include "policy/policy.h"
#include "sim/baseline.h"
#include "sim/burst.h"
#include "sim/exec.h"
#include "sim/halt.h"
#include "sim/lowerbound.h"
#include "sim/simhost.h"
#include "sim/xalloc.h"

static const char *const pol_names[SIM_N_POL] = {
    "vpower", "performance", "schedutil", "powersave", "dpdk-vmpm",
    "nova-offline", "hwp-balperf", "hwp-balpower", "tuned-vhost",
    "sched-noturbo", "vpower-nohalt", "vpower-nocap", "lower-bound",
};

bool
sim_pol_is_variant(int p)
{
    return p == SIM_P_VPOWER_NOHALT || p == SIM_P_VPOWER_NOCAP;
}

const char *
sim_pol_name(enum sim_pol p)
{
    return p < SIM_N_POL ? pol_names[p] : "?";
}

int
sim_pol_parse(const char *name)
{
    for (int i = 0; i < SIM_N_POL; i++) {
        if (!strcmp(name, pol_names[i])) {
            return i;
        }
    }
    return -1;
}

/* One policy on one host. */
struct inst {
    struct exec_host *h;
    struct pol_plan *plan;        /* Scratch for the next decision. */
    uint32_t req_khz[POL_MAX_DOMAINS]; /* Last frequency the policy asked
                                   * for (0 = none yet), restored when a
                                   * thermal cap ends. */
    double fed_load_s;            /* vpower kinds: load fed, nominal-vCPU
                                   * seconds. */
    /* vpower kinds: vpowerd's cycle on the simulated drivers. */
    struct vpd *d;
    struct simhost *sh;
    const struct sim_opts *o;
    uint64_t t;                   /* Virtual clock, s. */
    bool told_cap;                /* Sees the thermal cap. */
    uint64_t next_s;              /* Variants: next decision instant. */
};

struct host {
    size_t n_vms, n_vcpus;
    size_t *vm_index;             /* Local VM -> trace VM. */
    uint64_t *vcpu_key;           /* Local vCPU -> global burst key. */
    uint32_t *vcpu_vm;            /* Local vCPU -> trace VM. */
    uint32_t *vcpu_idx;           /* Local vCPU -> index in its VM. */
    uint32_t *vm_nvcpus;          /* Local VM -> its vCPU count. */
    const char **vm_name;         /* Local VM -> trace file name. */
    struct pol_vm_policy *vm_policy; /* Local VM -> policy, NULL: all
                                   * default. */
    uint64_t next_s;              /* Next decision instant. */
    float *demand;                /* [steps * n_vcpus] this interval. */
    struct inst inst[SIM_N_POL];
};

static bool
thermal_capped(const struct sim_opts *o, unsigned dom, uint64_t t)
{
    return o->thermal_cap_khz && o->m->domains[dom].pkg == o->thermal_cap_pkg
           && t >= o->thermal_from_s && t < o->thermal_to_s;
}

/* The hardware's thermal cap on top of policy 'in''s plan: domains of
 * the capped package run at min(requested, cap) while the cap lasts and
 * go back to the request afterwards. */
static void
thermal_apply(const struct sim_opts *o, struct inst *in, uint64_t t)
{
    if (!o->thermal_cap_khz) {
        return;
    }
    for (unsigned d = 0; d < o->m->n_domains; d++) {
        uint32_t *f = &in->plan->dom_freq_khz[d];

        if (*f) {
            in->req_khz[d] = *f;
        }
        if (o->m->domains[d].pkg != o->thermal_cap_pkg) {
            continue;
        }
        if (!in->req_khz[d]) {
            in->req_khz[d] = in->h->plan->dom_freq_khz[d];
        }
        *f = in->req_khz[d];
        if (thermal_capped(o, d, t) && *f > o->thermal_cap_khz) {
            *f = o->thermal_cap_khz;
        }
    }
}

static uint64_t
virtual_clock(void *aux)
{
    return ((const struct inst *) aux)->t * UINT64_C(1000000000);
}

/* The profile's clock: monotonic time, which the C library reads
 * without entering the kernel (tens of ns).  The thread's CPU-time
 * clock is a system call (over a microsecond with page-table
 * isolation): read four times per cycle, it would add a twentieth to the
 * run it measures.  On a machine that runs nothing else the two agree;
 * time the thread spends preempted is charged to what it was running,
 * so the shares stay fair. */
static double
profile_now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t
stopwatch(void *aux)
{
    (void) aux;
    return (uint64_t) llround(profile_now_s() * 1e9);
}

/* What vpowerd's thermal input would report: the caps in force, for the
 * instances that see them. */
static void
told_caps(void *aux, const struct pol_model *m,
          uint32_t caps[POL_MAX_DOMAINS])
{
    const struct inst *vi = aux;

    for (unsigned d = 0; d < m->n_domains && vi->told_cap; d++) {
        caps[d] = thermal_capped(vi->o, d, vi->t) ? vi->o->thermal_cap_khz
                                                   : 0;
    }
}

/* Sets up vpower instance 'p' of host 'hs': the daemon's state with the
 * simulated drivers, its VMs found through them, a first sample. */
static int
vpower_create(const struct sim_opts *o, struct host *hs, int p, char *err,
              size_t errlen)
{
    struct inst *vi = &hs->inst[p];
    const struct cycle_clock clock = { virtual_clock, vi };
    const struct cycle_hooks hooks = {
        .aux = vi,
        .thermal_caps = told_caps,
        .stopwatch_ns = o->profile ? stopwatch : NULL,
    };
    struct vpd *d = sim_xcalloc(1, sizeof *d);

    vi->d = d;
    vi->o = o;
    vi->told_cap = p != SIM_P_VPOWER_NOCAP;
    vi->sh = simhost_create(vi->h, hs->n_vms, hs->vm_nvcpus, hs->vm_name,
                            hs->vm_policy, p != SIM_P_VPOWER_NOHALT);
    conf_defaults(&d->conf);
    if (o->headroom_pct) {
        d->conf.headroom_pct = o->headroom_pct;
    }
    if (o->turbo) {
        /* vpower-sim checked the value with the same function. */
        (void) conf_turbo_of(o->turbo, &d->conf.use_turbo,
                             &d->conf.saturation_turbo);
    }
    conf_to_policy(&d->conf, &d->pcfg);
    d->model = *o->m;
    d->pol = pol_state_create(&d->model, &d->pcfg);
    if (!d->pol) {
        snprintf(err, errlen, "pol_state_create failed");
        return -ENOMEM;
    }
    d->hv_ops = &simhost_hv_ops;
    d->hv = simhost_hv(vi->sh);
    d->host_ops = &simhost_host_ops;
    d->host = simhost_host(vi->sh);
    d->n_cpus = d->model.n_cpus;
    d->energy_source = "model";
    d->sched_core = o->sched_core;
    if (o->true_m) {
        struct mchk_conf mc = {
            .bound_pct = d->conf.model_error_pct,
            .periods = d->conf.model_error_periods,
            .correct = o->model_correction,
        };

        d->mchk = mchk_create(&d->model, simhost_meter_create(vi->h), true,
                              &mc);
    }
    cycle_create(d, &clock, &hooks);
    for (unsigned c = 0; c < d->n_cpus; c++) {
        d->cpus[c].present = d->cpus[c].managed = d->cpus[c].online = true;
        cpuset_set(&d->cyc->managed, c);
        cpuset_set(&d->cyc->online, c);
    }
    if (vmreg_resync(d) < 0 || d->n_vms != hs->n_vms) {
        snprintf(err, errlen, "the simulated hypervisor lists %zu of %zu "
                 "VMs", d->n_vms, hs->n_vms);
        return -EIO;
    }
    cycle_prime(d);
    return 0;
}

static void
vpower_destroy(struct inst *vi)
{
    if (vi->d) {
        if (vi->d->cyc) {
            vmreg_clear(vi->d);
        }
        cycle_destroy(vi->d);
        mchk_destroy(vi->d->mchk);
        pol_state_destroy(vi->d->pol);
        free(vi->d);
        vi->d = NULL;
    }
    simhost_destroy(vi->sh);
    vi->sh = NULL;
}

/* One cycle of vpower instance 'p' (SIM_P_VPOWER or a variant) at 't':
 * the daemon samples what its simulated host ran since its last cycle,
 * decides and acts through the drivers; the host then runs the result.
 * Returns its next decision instant in '*next_s'. */
static int
vpower_cycle(struct host *hs, int p, uint64_t t, uint64_t *next_s,
             struct sim_result *res, char *err, size_t errlen)
{
    struct inst *vi = &hs->inst[p];
    struct vpd *d = vi->d;
    uint32_t cap[POL_MAX_DOMAINS] = { 0 };
    uint64_t n0 = d->n_decisions, in0 = d->cyc->decide_ns, sec;
    double t0 = vi->o->profile ? profile_now_s() : 0;

    vi->t = t;
    cycle_run(d, true);
    if (vi->o->profile) {
        res->cycle_s += profile_now_s() - t0;
    }
    if (d->n_decisions == n0) {
        snprintf(err, errlen, "pol_decide (%s) failed at t=%llu s",
                 sim_pol_name(p), (unsigned long long) t);
        return -EINVAL;
    }
    for (unsigned dm = 0; dm < vi->o->m->n_domains; dm++) {
        cap[dm] = thermal_capped(vi->o, dm, t) ? vi->o->thermal_cap_khz : 0;
    }
    vi->fed_load_s += simhost_commit(vi->sh, cap);
    res->decide_s += (d->cyc->decide_ns - in0) / 1e9;
    res->n_decisions++;
    sec = (cycle_next_delay_ns(d) + 500000000) / 1000000000;
    *next_s = t + (sec ? sec : 1);
    return 0;
}

/* Baseline 'p' plans from what its host measured, and the plan runs. */
static void
decide_baseline(const struct sim_opts *o, struct host *hs, int p, uint64_t t)
{
    struct inst *bi = &hs->inst[p];

    if (!bi->h) {
        return;
    }
    baseline_plan((enum baseline_kind) (p - SIM_P_PERFORMANCE), bi->h,
                  bi->plan);
    thermal_apply(o, bi, t);
    exec_apply(bi->h, bi->plan);
}

/* Between whole plans: baseline 'p' sets new frequencies only (its pins
 * and active set do not change), for the baselines on their own clock;
 * those that follow the load within a step settle on the frequencies
 * the coming step's demands 'demand' ask for. */
static void
refresh_baseline(const struct sim_opts *o, struct host *hs, int p,
                 uint64_t t, const float *demand)
{
    struct inst *bi = &hs->inst[p];

    if (!bi->h) {
        return;
    }
    baseline_step_freqs((enum baseline_kind) (p - SIM_P_PERFORMANCE), bi->h,
                        demand, bi->plan->dom_freq_khz);
    thermal_apply(o, bi, t);
    exec_apply_freqs(bi->h, bi->plan->dom_freq_khz);
}

/* vpower, then every baseline at vpower's instant (schedutil and DPDK
 * also re-plan their frequencies between them, see run_steps()). */
static int
decide(const struct sim_opts *o, struct host *hs, uint64_t t,
       struct sim_result *res, char *err, size_t errlen)
{
    int rc = vpower_cycle(hs, SIM_P_VPOWER, t, &hs->next_s, res, err,
                          errlen);

    if (rc) {
        return rc;
    }
    for (int p = SIM_P_PERFORMANCE; p <= SIM_P_LAST_BASELINE; p++) {
        decide_baseline(o, hs, p, t);
    }
    return 0;
}

static int
cmp_float(const void *a, const void *b)
{
    float x = *(const float *) a, y = *(const float *) b;

    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile 'q' (0..1) of 'v' (sorted in place). */
static double
percentile(float *v, size_t n, double q)
{
    size_t k;

    if (!n) {
        return 0;
    }
    qsort(v, n, sizeof *v, cmp_float);
    k = (size_t) ceil(q * (double) n);
    return v[k ? k - 1 : 0];
}

/* Per-VM demand and ready p99 from 'ready' (% of the interval, laid out
 * interval by interval, hosts in order, each host's vCPUs in order),
 * before the caller sorts it for the totals. */
static void
vm_percentiles(const struct trace_set *ts, const struct host *hosts,
               unsigned H, const float *ready, struct sim_vm_row *rows)
{
    size_t n_slots = 0, *first = sim_xcalloc(ts->n_vms, sizeof *first);
    size_t max_nv = 1;
    float *vals;

    for (unsigned k = 0; k < H; k++) {
        for (size_t v = 0; v < hosts[k].n_vcpus; v++) {
            uint32_t vm = hosts[k].vcpu_vm[v];

            if (!hosts[k].vcpu_idx[v]) {
                first[vm] = n_slots;   /* A VM's vCPUs are contiguous. */
            }
            n_slots++;
        }
    }
    for (size_t i = 0; i < ts->n_vms; i++) {
        max_nv = ts->vms[i].n_vcpus > max_nv ? ts->vms[i].n_vcpus : max_nv;
    }
    vals = sim_xcalloc(max_nv * ts->n_intervals, sizeof *vals);
    for (size_t i = 0; i < ts->n_vms; i++) {
        const struct trace_vm *tv = &ts->vms[i];
        size_t n = 0;
        double dem = 0;

        for (size_t t = 0; t < ts->n_intervals; t++) {
            for (uint32_t c = 0; c < tv->n_vcpus; c++) {
                vals[n++] = ready[t * n_slots + first[i] + c];
                dem += tv->demand_ppm[t * tv->n_vcpus + c] / 1e6;
            }
        }
        rows[i].demand_core_s = dem * ts->interval_s;
        rows[i].ready_p99_pct = percentile(vals, n, 0.99);
    }
    free(vals);
    free(first);
}

/* The hosts of one interval, taken in turn by the threads: a thread
 * that finishes a host early takes the next, so an uneven host does not
 * leave the other core idle until the interval's end. */
struct host_queue {
    atomic_uint next;             /* Index of the next host to run. */
    atomic_bool failed;           /* Some host failed: take no more. */
};

/* One thread's share of an interval: the hosts it takes from 'q', each
 * for all its steps.  Decision timing goes to 'acc' (only decide_s and
 * n_decisions are used), its error to rc/err. */
struct step_job {
    const struct sim_opts *o;
    struct host *hosts;
    struct host_queue *q;
    unsigned H;
    size_t ivl;
    unsigned steps;
    float *burst;                 /* Scratch of 'steps' values. */
    struct sim_result acc;
    int rc;
    unsigned fail_host;           /* With rc: the host that failed. */
    char err[256];
};

/* Host 'hs''s bursts of interval 'ivl', once for every policy, into
 * hs->demand ('burst': scratch of 'steps' values). */
static void
host_bursts(const struct sim_opts *o, struct host *hs, size_t ivl,
            unsigned steps, float *burst)
{
    const struct trace_set *ts = o->ts;

    for (size_t v = 0; v < hs->n_vcpus; v++) {
        const struct trace_vm *tv = &ts->vms[hs->vcpu_vm[v]];
        uint32_t d = tv->demand_ppm[ivl * tv->n_vcpus + hs->vcpu_idx[v]];

        burst_fill(o->seed, hs->vcpu_key[v], ivl, d, o->on_mean_s, steps,
                   burst);
        for (unsigned s = 0; s < steps; s++) {
            hs->demand[(size_t) s * hs->n_vcpus + v] = burst[s];
        }
    }
}

static void *
run_steps(void *arg)
{
    struct step_job *j = arg;

    while (!j->rc && !atomic_load(&j->q->failed)) {
        unsigned k = atomic_fetch_add(&j->q->next, 1);
        struct host *hs;

        if (k >= j->H) {
            break;
        }
        hs = &j->hosts[k];
        host_bursts(j->o, hs, j->ivl, j->steps, j->burst);
        for (unsigned s = 0; s < j->steps && !j->rc; s++) {
            uint64_t t = j->ivl * (uint64_t) j->steps + s;
            const float *dem = &hs->demand[(size_t) s * hs->n_vcpus];

            if (t >= hs->next_s) {
                j->rc = decide(j->o, hs, t, &j->acc, j->err, sizeof j->err);
            } else {
                /* DPDK's monitor runs on its own clock (it polls every
                 * 100 us): every step here, the model's finest, so its
                 * row does not depend on how often vpower decides. */
                refresh_baseline(j->o, hs, SIM_P_DPDK, t, dem);
            }
            /* schedutil and HWP re-evaluate every few ms: within each
             * step they settle on what the step's load asks for. */
            for (int p = SIM_P_PERFORMANCE; p <= SIM_P_LAST_BASELINE;
                 p++) {
                if (baseline_follows_step(p - SIM_P_PERFORMANCE)) {
                    refresh_baseline(j->o, hs, p, t, dem);
                }
            }
            for (int p = 0; p < SIM_P_LOWER && !j->rc; p++) {
                struct inst *vi = &hs->inst[p];

                if (sim_pol_is_variant(p) && vi->d && t >= vi->next_s) {
                    j->rc = vpower_cycle(hs, p, t, &vi->next_s, &j->acc,
                                         j->err, sizeof j->err);
                }
            }
            for (int p = 0; p < SIM_P_LOWER && !j->rc; p++) {
                if (hs->inst[p].h) {
                    exec_step(hs->inst[p].h,
                              &hs->demand[(size_t) s * hs->n_vcpus]);
                }
            }
        }
        if (j->rc) {
            j->fail_host = k;
            atomic_store(&j->q->failed, true);
        }
    }
    return NULL;
}

double
sim_finish_mj_per_unit_s(const struct pol_model *m)
{
    double best = -1;
    double smt = m->smt_capacity_pct > 100 ? m->smt_capacity_pct / 100.0
                                           : 1.0;

    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];
        double idle = d->n_idle ? d->idle[d->n_idle - 1].power_mw : 0;

        for (unsigned j = 0; j < d->n_opps && j <= d->nominal_opp; j++) {
            const struct pol_opp *op = &d->opps[j];
            double mj;

            if (!op->capacity) {
                continue;
            }
            mj = (op->busy_mw > idle ? op->busy_mw - idle : 0)
                 / (op->capacity * smt);
            if (best < 0 || mj < best) {
                best = mj;
            }
        }
    }
    return best < 0 ? 0 : best;
}

double
sim_late_j_per_core_s(const struct pol_model *m)
{
    double worst = 0;

    for (unsigned di = 0; di < m->n_domains; di++) {
        const struct pol_domain *d = &m->domains[di];
        const struct pol_opp *op;
        double cl, j;

        if (!d->n_opps || !d->opps[d->nominal_opp].capacity) {
            continue;
        }
        op = &d->opps[d->nominal_opp];
        cl = op->cluster_mw ? op->cluster_mw : d->cluster_active_mw;
        j = (op->busy_mw + cl) / 1000.0 * POL_CAPACITY_SCALE / op->capacity;
        worst = j > worst ? j : worst;
    }
    return worst;
}

/* Host 'k''s VMs (trace VMs k, k + H, ...), its execution models and
 * vpower instances.  Returns 0 or -errno with 'err' filled. */
static int
host_setup(const struct sim_opts *o, struct host *hs, unsigned k, char *err,
           size_t errlen)
{
    const struct trace_set *ts = o->ts;
    const struct pol_model *m = o->m;
    unsigned H = o->hosts ? o->hosts : 1;
    const unsigned steps = ts->interval_s;
    size_t lv = 0, lm = 0;

    hs->vm_index = sim_xcalloc(hs->n_vms, sizeof *hs->vm_index);
    hs->vcpu_key = sim_xcalloc(hs->n_vcpus, sizeof *hs->vcpu_key);
    hs->vcpu_vm = sim_xcalloc(hs->n_vcpus, sizeof *hs->vcpu_vm);
    hs->vcpu_idx = sim_xcalloc(hs->n_vcpus, sizeof *hs->vcpu_idx);
    hs->vm_nvcpus = sim_xcalloc(hs->n_vms, sizeof *hs->vm_nvcpus);
    hs->vm_name = sim_xcalloc(hs->n_vms, sizeof *hs->vm_name);
    if (o->vm_policy) {
        hs->vm_policy = sim_xcalloc(hs->n_vms, sizeof *hs->vm_policy);
    }
    hs->demand = sim_xcalloc((size_t) steps * hs->n_vcpus,
                             sizeof *hs->demand);
    for (size_t i = k; i < ts->n_vms; i += H) {
        hs->vm_index[lm] = i;
        hs->vm_nvcpus[lm] = ts->vms[i].n_vcpus;
        hs->vm_name[lm] = ts->vms[i].name;
        if (o->vm_policy) {
            hs->vm_policy[lm] = o->vm_policy[i];
        }
        for (uint32_t c = 0; c < ts->vms[i].n_vcpus; c++) {
            hs->vcpu_key[lv] = ((uint64_t) i << 16) | c;
            hs->vcpu_vm[lv] = (uint32_t) i;
            hs->vcpu_idx[lv] = c;
            lv++;
        }
        lm++;
    }
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (p != SIM_P_VPOWER && !(o->mask & (1u << p))) {
            continue;
        }
        hs->inst[p].h = exec_host_create(m, hs->n_vms, hs->n_vcpus);
        hs->inst[p].h->energy_m = o->true_m;
        hs->inst[p].plan = pol_plan_create(hs->n_vms, hs->n_vcpus);
        halt_enable(hs->inst[p].h, o->halt_poll_ns);
        hs->inst[p].h->mig_cost_s = o->migration_cost_us / 1e6;
        hs->inst[p].h->pin_cost_s = o->pin_cost_us / 1e6;
        if (p == SIM_P_VPOWER || sim_pol_is_variant(p)) {
            int rc = vpower_create(o, hs, p, err, errlen);

            if (rc) {
                return rc;
            }
        }
    }
    return 0;
}

/* Runs interval 'ivl''s bursts and steps of every host.  Hosts are
 * independent until its end, so they run on up to n_threads threads
 * (each host whole on one thread); every host computes exactly what it
 * would alone, and the sums run in host order: the output does not
 * depend on the thread count.  Returns 0 or the error of the failed
 * host with the lowest index (in 'err'). */
static int
run_interval(const struct sim_opts *o, struct host *hosts, unsigned n_threads,
             struct step_job *jobs, size_t ivl, struct sim_result *res,
             char *err, size_t errlen)
{
    unsigned H = o->hosts ? o->hosts : 1;
    const unsigned steps = o->ts->interval_s;
    int rc = 0;

    unsigned nt = n_threads < H ? n_threads : H;
    unsigned fail_host = H;
    pthread_t tid[SIM_MAX_THREADS];
    bool started[SIM_MAX_THREADS] = { false };
    struct host_queue q;

    atomic_init(&q.next, 0);
    atomic_init(&q.failed, false);
    for (unsigned i = 0; i < nt; i++) {
        float *burst = jobs[i].burst;

        jobs[i] = (struct step_job) {
            .o = o, .hosts = hosts, .q = &q, .H = H, .ivl = ivl,
            .steps = steps, .burst = burst,
        };
        if (i > 0 && pthread_create(&tid[i], NULL, run_steps,
                                    &jobs[i]) == 0) {
            started[i] = true;
        }
    }
    run_steps(&jobs[0]);
    for (unsigned i = 1; i < nt; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            run_steps(&jobs[i]);     /* No thread: run it here. */
        }
    }
    for (unsigned i = 0; i < nt; i++) {
        res->decide_s += jobs[i].acc.decide_s;
        res->cycle_s += jobs[i].acc.cycle_s;
        res->n_decisions += jobs[i].acc.n_decisions;
        if (jobs[i].rc && jobs[i].fail_host < fail_host) {
            fail_host = jobs[i].fail_host;
            rc = jobs[i].rc;
            snprintf(err, errlen, "%s", jobs[i].err);
        }
    }
    return rc;
}

/* Each policy's totals from its hosts and the ready times 'ready[p]'
 * ('n_ready' per policy, seconds; turned into % of the interval). */
static void
sum_totals(const struct sim_opts *o, const struct host *hosts,
           float *const *ready, size_t n_ready, struct sim_result *res)
{
    const struct trace_set *ts = o->ts;
    unsigned H = o->hosts ? o->hosts : 1;
    /* Work left at the end is charged at one rate: backlog is
     * in capacity-unit seconds, the rate in mJ per such unit. */
    double finish_mj = sim_finish_mj_per_unit_s(o->true_m ? o->true_m
                                                          : o->m);

    res->late_j_per_core_s = sim_late_j_per_core_s(o->m);
    res->cheap_j_per_core_s = finish_mj * POL_CAPACITY_SCALE / 1000.0;
    for (int p = 0; p < SIM_P_LOWER; p++) {
        struct sim_row *r = &res->rows[p];
        double dem = 0, unmet = 0, act = 0, halts = 0, halts_ok = 0;
        double left = 0, overhead = 0, wait = 0, late = 0;
        uint64_t pins = 0, freqs = 0, migs = 0;

        if (!r->ran) {
            continue;
        }
        for (unsigned k = 0; k < H; k++) {
            struct exec_host *h = hosts[k].inst[p].h;
            r->energy_j += h->energy_j;
            r->fed_load_s += hosts[k].inst[p].fed_load_s;
            if (h->halt) {
                r->poll_cpu_s += h->halt->poll_s;
                halts += h->halt->halts;
                halts_ok += h->halt->halts_ok;
            }
            dem += h->demand_work;
            unmet += h->unmet_work;
            for (size_t v = 0; v < h->n_vcpus; v++) {
                left += h->backlog[v];
            }
            pins += h->pin_changes;
            migs += h->migrations;
            overhead += h->overhead_work;
            wait += h->wait_work_s;
            late += h->late_work;
            freqs += h->freq_changes;
            act += h->active_cpu_s;
            /* DPDK's and Nova's managers refuse overcommitted hosts. */
            r->refused |= (p == SIM_P_DPDK || p == SIM_P_NOVA)
                          && hosts[k].n_vcpus > o->m->n_cpus;
        }
        r->unmet_pct = dem > 0 ? 100.0 * unmet / dem : 0;
        r->left_pct = dem > 0 ? 100.0 * left / dem : 0;
        r->left_finish_j = left * finish_mj / 1000.0;
        r->poll_ok_pct = halts > 0 ? 100.0 * halts_ok / halts : 0;
        r->pin_changes_h = res->hours > 0 ? pins / res->hours : 0;
        r->migrations_h = res->hours > 0 ? migs / res->hours : 0;
        r->overhead_pct = dem > 0 ? 100.0 * overhead / dem : 0;
        r->delay_ms = dem > 0 ? 1000.0 * wait / dem : 0;
        r->late_pct = dem > 0 ? 100.0 * late / dem : 0;
        r->late_core_s = late / POL_CAPACITY_SCALE;
        r->freq_changes_h = res->hours > 0 ? freqs / res->hours : 0;
        r->avg_active_cpus = act / (res->hours * 3600.0) / H;
        for (size_t i = 0; i < n_ready; i++) {
            ready[p][i] = (float) (100.0 * ready[p][i] / ts->interval_s);
        }
        vm_percentiles(ts, hosts, H, ready[p], res->vm_rows[p]);
        r->ready_p50_pct = percentile(ready[p], n_ready, 0.50);
        r->ready_p99_pct = percentile(ready[p], n_ready, 0.99);
    }
}

/* Each policy's energy and active-CPU time so far, summed over the
 * hosts into 'e0' and 'a0'. */
static void
sum_so_far(const struct sim_opts *o, const struct host *hosts, double *e0,
           double *a0)
{
    unsigned H = o->hosts ? o->hosts : 1;

    for (unsigned k = 0; k < H; k++) {
        for (int p = 0; p < SIM_P_LOWER; p++) {
            if (hosts[k].inst[p].h) {
                e0[p] += hosts[k].inst[p].h->energy_j;
                a0[p] += hosts[k].inst[p].h->active_cpu_s;
            }
        }
    }
}

/* vpower's model check over its hosts (sim_result.check). */
static void
sum_check(const struct host *hosts, unsigned H, struct sim_model_check *c)
{
    for (unsigned k = 0; k < H; k++) {
        const struct vpd *d = hosts[k].inst[SIM_P_VPOWER].d;
        const struct mchk_stats *st;

        if (!d || !d->mchk) {
            continue;
        }
        st = mchk_stats(d->mchk);
        c->ran = true;
        c->meter_j += st->meter_j;
        c->model_j += st->model_j;
        c->orig_error_pct += 100.0 * st->base_error / H;
        c->busy_scale += st->busy_scale / H;
        c->idle_scale += st->idle_scale / H;
        c->warned += st->warnings > 0;
        c->correcting += st->correcting;
    }
}

/* The end of interval 'ivl' on every host, in host order: each policy's
 * shortfall per VM is unmet (the backlog carries on, sim/exec.h) and its
 * vCPUs' ready times go to 'ready[p]' from '*n_ready' on; the power and
 * active-CPU series take the interval's energy and active time (what
 * the hosts had used before it: 'e0', 'a0'); the lower bound is charged
 * for the interval's demand.  'late': scratch for any host's vCPUs. */
static void
interval_end(const struct sim_opts *o, struct host *hosts,
             const struct lb_model *lb, size_t ivl, const double *e0,
             const double *a0, float *const *ready, size_t *n_ready,
             double *late, struct sim_result *res)
{
    const struct trace_set *ts = o->ts;
    unsigned H = o->hosts ? o->hosts : 1;
    const unsigned steps = ts->interval_s;

    for (unsigned k = 0; k < H; k++) {
        struct host *hs = &hosts[k];
        size_t off = *n_ready;
        double dsum = 0, lbw;

        for (int p = 0; p < SIM_P_LOWER; p++) {
            struct exec_host *h = hs->inst[p].h;

            if (!h) {
                continue;
            }
            exec_interval_end(h, ready[p] + off, late);
            for (size_t v = 0; v < hs->n_vcpus; v++) {
                res->vm_rows[p][hs->vcpu_vm[v]].unmet_core_s +=
                    late[v] / POL_CAPACITY_SCALE;
            }
            for (size_t v = 0; v < hs->n_vcpus; v++) {
                res->vm_rows[p][hs->vcpu_vm[v]].ready_s += ready[p][off + v];
            }
            res->rows[p].power_w[ivl] += h->energy_j;
            res->rows[p].active_cpus[ivl] += h->active_cpu_s;
        }
        *n_ready += hs->n_vcpus;
        for (size_t v = 0; v < hs->n_vcpus; v++) {
            const struct trace_vm *tv = &ts->vms[hs->vcpu_vm[v]];
            dsum += tv->demand_ppm[ivl * tv->n_vcpus + hs->vcpu_idx[v]]
                    / 1e6 * POL_CAPACITY_SCALE;
        }
        lbw = lb_power_mw(lb, dsum) / 1000.0;
        res->rows[SIM_P_LOWER].energy_j += lbw * steps;
        res->rows[SIM_P_LOWER].power_w[ivl] += lbw;
    }
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (!res->rows[p].ran) {
            continue;
        }
        res->rows[p].power_w[ivl] = (res->rows[p].power_w[ivl] - e0[p])
                                    / steps;
        res->rows[p].active_cpus[ivl] =
            (res->rows[p].active_cpus[ivl] - a0[p]) / steps / H;
    }
}

int
sim_run(const struct sim_opts *o, struct sim_result *res, char *err,
        size_t errlen)
{
    const struct pol_model *m = o->m;
    const struct trace_set *ts = o->ts;
    unsigned H = o->hosts ? o->hosts : 1;
    const unsigned steps = ts->interval_s;
    struct host *hosts = sim_xcalloc(H, sizeof *hosts);
    struct lb_model *lb = lb_create(o->true_m ? o->true_m : m);
    float *ready[SIM_N_POL] = { NULL };
    double *late = NULL;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned n_threads = o->threads ? o->threads
                         : ncpu > 0 ? (unsigned) ncpu : 1;
    struct step_job *jobs;
    size_t n_ready = 0, total_vcpus = 0;
    int rc = 0;

    n_threads = n_threads > SIM_MAX_THREADS ? SIM_MAX_THREADS : n_threads;
    jobs = sim_xcalloc(n_threads, sizeof *jobs);
    for (unsigned i = 0; i < n_threads; i++) {
        jobs[i].burst = sim_xcalloc(steps, sizeof *jobs[i].burst);
    }

    memset(res, 0, sizeof *res);
    res->n_intervals = ts->n_intervals;
    res->hours = ts->n_intervals * (double) ts->interval_s / 3600.0;
    res->hosts = H;
    res->n_vms = ts->n_vms;
    /* The daemon's cycle logs what vpowerd would; only trouble here. */
    log_set_level(LOG_LVL_WARN);

    for (size_t i = 0; i < ts->n_vms; i++) {
        hosts[i % H].n_vms++;
        hosts[i % H].n_vcpus += ts->vms[i].n_vcpus;
        total_vcpus += ts->vms[i].n_vcpus;
    }
    res->n_vcpus = total_vcpus;
    for (unsigned k = 0; k < H && !rc; k++) {
        rc = host_setup(o, &hosts[k], k, err, errlen);
    }
    if (rc) {
        goto out;
    }
    for (int p = 0; p < SIM_P_LOWER; p++) {
        if (hosts[0].inst[p].h) {
            ready[p] = sim_xcalloc(total_vcpus * ts->n_intervals,
                                   sizeof *ready[p]);
            res->rows[p].ran = true;
            res->vm_rows[p] = sim_xcalloc(ts->n_vms, sizeof *res->vm_rows[p]);
        }
    }
    res->rows[SIM_P_LOWER].ran = (o->mask & (1u << SIM_P_LOWER)) != 0;
    late = sim_xcalloc(total_vcpus ? total_vcpus : 1, sizeof *late);
    for (int p = 0; p < SIM_N_POL; p++) {
        res->rows[p].power_w = sim_xcalloc(ts->n_intervals, sizeof(double));
        res->rows[p].active_cpus = sim_xcalloc(ts->n_intervals, sizeof(double));
    }

    for (size_t ivl = 0; ivl < ts->n_intervals && !rc; ivl++) {
        double e0[SIM_N_POL] = { 0 }, a0[SIM_N_POL] = { 0 };

        sum_so_far(o, hosts, e0, a0);
        rc = run_interval(o, hosts, n_threads, jobs, ivl, res, err,
                          errlen);
        interval_end(o, hosts, lb, ivl, e0, a0, ready, &n_ready, late,
                     res);
    }
    if (rc) {
        goto out;
    }

    sum_totals(o, hosts, ready, n_ready, res);
    sum_check(hosts, H, &res->check);
    for (int p = 0; p < SIM_N_POL; p++) {
        res->rows[p].avg_power_w = res->hours > 0
            ? res->rows[p].energy_j / (res->hours * 3600.0) : 0;
    }

out:
    for (unsigned k = 0; k < H; k++) {
        struct host *hs = &hosts[k];

        for (int p = 0; p < SIM_N_POL; p++) {
            vpower_destroy(&hs->inst[p]);
            exec_host_destroy(hs->inst[p].h);
            pol_plan_destroy(hs->inst[p].plan);
        }
        free(hs->vm_index);
        free(hs->vcpu_key);
        free(hs->vcpu_vm);
        free(hs->vcpu_idx);
        free(hs->vm_nvcpus);
        free(hs->vm_name);
        free(hs->vm_policy);
        free(hs->demand);
    }
    free(late);
    for (unsigned i = 0; i < n_threads; i++) {
        free(jobs[i].burst);
    }
    free(jobs);
    for (int p = 0; p < SIM_N_POL; p++) {
        free(ready[p]);
    }
    free(hosts);
    lb_destroy(lb);
    return rc;
}

void
sim_result_free(struct sim_result *res)
{
    if (!res) {
        return;
    }
    for (int p = 0; p < SIM_N_POL; p++) {
        free(res->rows[p].power_w);
        free(res->rows[p].active_cpus);
        free(res->vm_rows[p]);
        res->vm_rows[p] = NULL;
        res->rows[p].power_w = NULL;
        res->rows[p].active_cpus = NULL;
    }
}
