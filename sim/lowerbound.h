/* sim/lowerbound.h -- Offline lower bound on host power for a demand.
 *
 * For one trace interval and the host's total demand D (capacity units,
 * averaged over the interval), the bound is the minimum over which cores
 * are active and at which operating points they run -- with time-sharing
 * between points and between busy and idle -- of busy + idle + cluster +
 * uncore + platform power that serves D, ignoring transition costs.  It
 * is a bound on what pol_energy_power_mw() can charge any plan serving D
 * (see lowerbound.c for the relaxations that make it one), so no policy
 * that serves the demand can come in below it. */

#ifndef VPOWER_SIM_LOWERBOUND_H
#define VPOWER_SIM_LOWERBOUND_H 1

#include "policy/model.h"

struct lb_model;

/* Precomputes per-core convex hulls for model 'm' (borrowed).  Never
 * returns NULL. */
struct lb_model *lb_create(const struct pol_model *m);
void lb_destroy(struct lb_model *);           /* NULL is fine. */

/* Lower bound on host power (mW) to serve 'demand' capacity units on
 * average.  Demand above the host's capacity is capped at it. */
double lb_power_mw(const struct lb_model *lb, double demand);

#endif /* sim/lowerbound.h */
