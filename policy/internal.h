/* policy/internal.h -- Declarations shared between the policy modules.
 *
 * Nothing here is part of the contract in policy.h/model.h: these are the
 * helpers that energy.c, model.c, the decision's steps and explain.c use
 * on each other (operating point interpolation, idle-state choice for a
 * utilisation, the active pool size).  The decision state's layout is in
 * state.h.  Only policy/ and its unit tests include it. */

#ifndef VPOWER_POLICY_INTERNAL_H
#define VPOWER_POLICY_INTERNAL_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"

/* Typical length of one busy burst of a guest vCPU, used to turn a
 * utilisation into a typical idle gap: gap = burst * (1 - u) / u.  An
 * assumption (about one 1 kHz tick); see docs/energy-model.md. */
#define POL_ENERGY_BURST_US 1000

/* Most SMT siblings per physical core the parser accepts. */
#define POL_MAX_SMT 4

/* Busy power (mW) of one physical core of domain 'd' at 'freq_khz'
 * (0 = nominal), linear between operating points, clamped at the ends. */
double pol_opp_power_mw(const struct pol_domain *d, uint32_t freq_khz);

/* Cluster busy power of domain 'd' at 'freq_khz' (per-OPP cluster power
 * when the model gives one, else cluster_active_mw). */
double pol_opp_cluster_mw(const struct pol_domain *d, uint32_t freq_khz);

/* Index of the idle state an awake core of 'd' uses for its idle time at
 * busy fraction 'busy' (0..1) with limit 'limit' (-1 = none): the deepest
 * allowed state whose target residency fits the typical idle gap. */
unsigned pol_idle_state_for_busy(const struct pol_domain *d, double busy,
                                 int limit);

/* Highest operating point frequency of 'd' that is allowed: nominal, or
 * the top turbo point when 'turbo'. */
uint32_t pol_dom_max_khz(const struct pol_domain *d, bool turbo);

/* Number of packed-pool cores the last pol_decide() kept active. */
unsigned pol_state_active_cores(const struct pol_state *st);

#endif /* policy/internal.h */
