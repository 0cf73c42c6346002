/* policy/idle.c -- How deep each CPU may sleep, and which go offline.
 *
 * An awake CPU may use every idle state unless a VM that may run there
 * has a latency bound (the deepest state whose exit latency fits it) or
 * the core is a VM's own or the override is on (at most the first state
 * past polling: those cores wake for every request).  A CPU that is not
 * awake has no limit, so it sleeps in its deepest state; with
 * allow_offline and no VM forbidding it, parked CPUs go offline instead
 * (never CPU0, never a core carrying unmanaged load). */

#include <config.h>

#include "policy/policy.h"

#include "policy/state.h"

void
idle_limits(struct pol_state *st, const struct pol_input *in)
{
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        const struct pol_domain *d = &st->m->domains[st->core_dom[kc]];

        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            unsigned c = st->core_cpu[kc][s];
            int lim = -1;

            if (cpuset_has(&in->managed, c)) {
                lim = st->lat_limit[c];
                if (in->override_performance || st->core_use[kc] == 1) {
                    int sh = d->n_idle >= 2 ? 1 : 0;

                    lim = lim < 0 || sh < lim ? sh : lim;
                }
            }
            if (lim >= (int) d->n_idle - 1) {
                lim = -1;
            }
            st->awake_limit[c] = (int8_t) lim;
        }
    }
}

void
idle_awake(const struct pol_state *st, struct pol_plan *p)
{
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        bool act = false;

        for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
            act |= cpuset_has(&p->active, st->core_cpu[kc][s]);
        }
        for (unsigned s = 0; act && s < st->core_nsib[kc]; s++) {
            unsigned c = st->core_cpu[kc][s];

            p->idle_limit[c] = st->awake_limit[c];
        }
    }
}

void
idle_parked(const struct pol_state *st, struct pol_plan *p)
{
    for (unsigned c = 0; c < st->m->n_cpus; c++) {
        if (!cpuset_has(&p->active, c)) {
            p->idle_limit[c] = -1;
        }
    }
    if (!st->cfg.allow_offline || st->any_never_offline) {
        return;
    }
    cpuset_andnot(&p->offline, &st->usable, &p->active);
    cpuset_clr(&p->offline, 0);
    for (unsigned kc = 0; kc < st->n_cores; kc++) {
        if (st->core_fixed[kc]) {
            for (unsigned s = 0; s < st->core_nsib[kc]; s++) {
                cpuset_clr(&p->offline, st->core_cpu[kc][s]);
            }
        }
    }
}
