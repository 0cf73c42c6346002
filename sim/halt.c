/* sim/halt.c -- Expected KVM halt polling per vCPU and step.
 *
 * See halt.h for the model.  The only state exec.c needs to know about is
 * the 'halt' pointer of its host; everything else goes through the three
 * hooks, so the execution model without halt polling is unchanged. */

#include <config.h>

#include "sim/halt.h"
#include "sim/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
halt_expect(double halted_s, double wakes, double window_s,
            struct halt_expect *out)
{
    double x, e;

    memset(out, 0, sizeof *out);
    if (!(halted_s > 0) || !(wakes > 0) || !(window_s > 0)) {
        return;
    }
    /* x = window / mean gap; gaps exponential with mean halted / wakes. */
    x = window_s * wakes / halted_s;
    e = exp(-x);
    out->halts = wakes;
    out->halts_ok = wakes * (1 - e);
    out->poll_s = halted_s * -expm1(-x);
    out->fail_s = wakes * window_s * e;
    if (out->fail_s > out->poll_s) {
        out->fail_s = out->poll_s;     /* Rounding only. */
    }
    out->ok_s = out->poll_s - out->fail_s;
}

void
halt_destroy(struct exec_halt *z)
{
    if (!z) {
        return;
    }
    free(z->want_s);
    free(z->fail_s);
    free(z->ok_n);
    free(z->core_want);
    free(z->core_ok);
    free(z->period_s);
    free(z);
}

void
halt_enable(struct exec_host *h, uint32_t halt_poll_ns)
{
    struct exec_halt *z;

    halt_destroy(h->halt);
    h->halt = NULL;
    if (!halt_poll_ns) {
        return;
    }
    z = sim_xcalloc(1, sizeof *z);
    z->window_s = halt_poll_ns / 1e9;
    z->n_vcpus = h->n_vcpus;
    z->n_cores = h->n_cores;
    z->want_s = sim_xcalloc(h->n_vcpus, sizeof *z->want_s);
    z->fail_s = sim_xcalloc(h->n_vcpus, sizeof *z->fail_s);
    z->ok_n = sim_xcalloc(h->n_vcpus, sizeof *z->ok_n);
    z->core_want = sim_xcalloc(h->n_cores, sizeof *z->core_want);
    z->core_ok = sim_xcalloc(h->n_cores, sizeof *z->core_ok);
    z->period_s = sim_xcalloc(h->n_vcpus, sizeof *z->period_s);
    halt_expect(1.0, WAKE_IDLE_HZ, z->window_s, &z->idle);
    h->halt = z;
}

void
halt_period_reset(struct exec_host *h)
{
    if (h->halt) {
        memset(h->halt->period_s, 0,
               h->halt->n_vcpus * sizeof *h->halt->period_s);
    }
}

void
halt_step(struct exec_host *h)
{
    struct exec_halt *z = h->halt;
    const struct pol_model *m = h->m;
    double smt_extra = m->smt_capacity_pct / 100.0 - 1.0;
    double halts, halts_ok, poll_s, poll_ok_s, poll_fail_s;

    if (!z) {
        return;
    }
    /* The totals are summed in locals (the arrays written in the loops
     * could alias them), in vCPU order. */
    halts = z->halts;
    memset(z->core_want, 0, z->n_cores * sizeof *z->core_want);
    memset(z->core_ok, 0, z->n_cores * sizeof *z->core_ok);
    /* What each vCPU would poll if its core had the idle time. */
    for (size_t v = 0; v < h->n_vcpus; v++) {
        int32_t c = h->vcpu_home[v];
        double rate = h->vcpu_rate[v], run, busy;
        struct halt_expect e;
        unsigned k;

        z->want_s[v] = z->fail_s[v] = z->ok_n[v] = 0;
        if (c < 0 || rate <= 0) {
            continue;
        }
        if (h->want[v] == 0) {
            e = z->idle;         /* Nothing served either. */
        } else {
            busy = h->served[v] / rate;
            run = h->want[v] / rate;
            halt_expect(1.0 - (run < 1.0 ? run : 1.0),
                        WAKE_IDLE_HZ + WAKE_BUSY_HZ * busy, z->window_s, &e);
        }
        if (!(e.poll_s > 0)) {
            continue;
        }
        k = m->cpu_core[c];
        z->want_s[v] = e.poll_s;
        z->fail_s[v] = e.fail_s;
        z->ok_n[v] = e.halts_ok;
        z->core_want[k] += e.poll_s;
        z->core_ok[k] += e.halts_ok;
        halts += e.halts;
    }
    z->halts = halts;
    /* Per core: polling fills idle thread time only (it yields to
     * runnable tasks), first thread then sibling, in the execution
     * model's own busy mapping; core_want becomes the granted fraction. */
    for (unsigned k = 0; k < z->n_cores; k++) {
        double want = z->core_want[k], cap = h->core_cap[k];
        double w = h->core_work[k], extra = cap * smt_extra;
        double i1 = 0, i2 = 0, got, a;

        if (!(want > 0)) {
            z->core_want[k] = 0;
            continue;
        }
        if (cap > 0 && h->core_threads[k] >= 1 && w < cap) {
            i1 = 1.0 - w / cap;
        }
        if (cap > 0 && h->core_threads[k] >= 2 && extra > 0) {
            double b2 = w <= cap ? 0 : (w - cap) / extra;
            i2 = b2 >= 1.0 ? 0 : 1.0 - b2;
        }
        got = want < i1 + i2 ? want : i1 + i2;
        a = got < i1 ? got : i1;
        h->core_work[k] = w + a * cap + (got - a) * extra;
        z->core_want[k] = got / want;
        h->core_wake[k] -= z->core_ok[k] * z->core_want[k];
        if (h->core_wake[k] < 0) {
            h->core_wake[k] = 0;
        }
    }
    halts_ok = z->halts_ok;
    poll_s = z->poll_s;
    poll_ok_s = z->poll_ok_s;
    poll_fail_s = z->poll_fail_s;
    for (size_t v = 0; v < h->n_vcpus; v++) {
        double f, p;

        if (!(z->want_s[v] > 0)) {
            continue;
        }
        f = z->core_want[m->cpu_core[h->vcpu_home[v]]];
        p = z->want_s[v] * f;
        z->period_s[v] += p;
        poll_s += p;
        poll_fail_s += z->fail_s[v] * f;
        poll_ok_s += (z->want_s[v] - z->fail_s[v]) * f;
        halts_ok += z->ok_n[v] * f;
    }
    z->halts_ok = halts_ok;
    z->poll_s = poll_s;
    z->poll_ok_s = poll_ok_s;
    z->poll_fail_s = poll_fail_s;
}
