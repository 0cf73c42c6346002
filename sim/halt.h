/* sim/halt.h -- KVM halt polling in the execution model.
 *
 * When a guest vCPU halts, KVM spins in the host for up to halt_poll_ns
 * before it really sleeps (Documentation/virt/kvm/halt-polling.rst): the
 * vCPU thread is on a CPU, burning power, but does no guest work.  This
 * module adds that CPU time to the execution model (sim/exec.c) through
 * one hook per step, so that
 *  - energy includes it for every policy (the host really burns it),
 *  - per-CPU busy time (what schedutil, DPDK and any plain-CPU-time
 *    observer sees) includes it,
 *  - each vCPU's polled time since the last decision is kept apart, so
 *    the simulator can feed vpower its busy time with the halt-stats
 *    signal (busy only) or without it (busy + polled, plain CPU time).
 *
 * Model, per vCPU and 1 s step, after the step's work is served:
 *  - halted time H = 1 - min(1, want / rate) (neither running nor
 *    runnable); wake-ups W = WAKE_IDLE_HZ + WAKE_BUSY_HZ * busy, the
 *    execution model's wake rate; each wake-up ends one halt, so there
 *    are W halts (none if H = 0) with mean gap g = H / W;
 *  - gaps are exponential (Poisson wake-ups), each halt polls for
 *    min(window, gap) and the poll succeeds if the gap is <= the window
 *    T = halt_poll_ns.  In expectation (x = T / g):
 *      polled  = W g (1 - e^-x) = H (1 - e^-x)      (<= H, <= W T)
 *      failed  = W T e^-x      (spun the whole window, then slept)
 *      success = polled - failed;  successful halts = W (1 - e^-x)
 *    Expected values, not draws: the model adds no randomness of its own,
 *    so it is a deterministic function of the seeded bursts;
 *  - polling yields to runnable tasks (KVM stops when
 *    !single_task_running()), so it only fills idle thread time of the
 *    vCPU's home core: the first thread's idle time, then the sibling's;
 *    if the vCPUs homed on a core want to poll more than that, each gets
 *    the same fraction.  It thus costs power and idle depth, never guest
 *    capacity;
 *  - successful polls never enter a CPU idle state: they are taken off
 *    the core's wake-up count used for the idle-state choice (the idle
 *    time left is the failed halts' gaps minus the window).
 * The window is fixed: KVM's adaptive grow/shrink of the per-vCPU window
 * is not modelled (this is the cost with the window at its maximum).
 * halt_poll_ns = 0 (polling disabled on the host) attaches nothing and
 * leaves the execution model exactly as without this module. */

#ifndef VPOWER_SIM_HALT_H
#define VPOWER_SIM_HALT_H 1

#include <stddef.h>
#include <stdint.h>

#include "sim/exec.h"

/* Expected polling of one vCPU in one step (formulas above). */
struct halt_expect {
    double poll_s;                /* Spun in all. */
    double ok_s, fail_s;          /* Of which until a wake-up / in vain. */
    double halts, halts_ok;       /* Halts, and those a poll caught. */
};

struct exec_halt {
    double window_s;              /* halt_poll_ns in seconds (> 0). */
    size_t n_vcpus;
    unsigned n_cores;
    double *want_s;               /* [n_vcpus] scratch: wanted poll, */
    double *fail_s;               /* of which in vain, */
    double *ok_n;                 /* and successful halts. */
    double *core_want, *core_ok;  /* [n_cores] scratch. */
    double *period_s;             /* [n_vcpus] polled since the last
                                   * decision (host CPU seconds). */
    struct halt_expect idle;      /* halt_expect() of a vCPU with no
                                   * work in the step (halted 1 s, woken
                                   * WAKE_IDLE_HZ times): the same for
                                   * every step, so worked out once. */
    /* Totals over the run (host CPU seconds; expected counts). */
    double poll_s, poll_ok_s, poll_fail_s;
    double halts, halts_ok;
};

void halt_expect(double halted_s, double wakes, double window_s,
                 struct halt_expect *out);

/* Attaches a halt-poll model with window 'halt_poll_ns' to 'h' (0 =
 * none; replaces an earlier one).  Aborts on allocation failure. */
void halt_enable(struct exec_host *h, uint32_t halt_poll_ns);

/* The hooks exec.c calls (all no-ops without a model). */
void halt_step(struct exec_host *h);     /* After serving, before the
                                          * step's busy and idle states. */
void halt_period_reset(struct exec_host *h);  /* At each exec_apply(). */
void halt_destroy(struct exec_halt *);   /* NULL is fine. */

/* Host CPU seconds vCPU 'v' polled since the last decision (0 without
 * a model).  Inline: the simulated drivers ask for every vCPU at every
 * cycle. */
static inline double
halt_period_poll_s(const struct exec_host *h, size_t v)
{
    return h->halt && v < h->halt->n_vcpus ? h->halt->period_s[v] : 0;
}

#endif /* sim/halt.h */
