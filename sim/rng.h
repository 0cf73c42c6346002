/* sim/rng.h -- The simulator's own seeded pseudo-random generator.
 *
 * Every random choice of vpower-sim (burst phases, Bitbrains vCPU weights)
 * comes from here, never from rand(), so a run is a pure function of its
 * inputs and --seed.  Streams are derived from (seed, key...) with
 * splitmix64, so the bursts of one vCPU in one interval do not depend on
 * how many other vCPUs, hosts or policies are simulated. */

#ifndef VPOWER_SIM_RNG_H
#define VPOWER_SIM_RNG_H 1

#include <stdint.h>

/* xoshiro256** state; caller-owned, initialise with rng_init(). */
struct rng {
    uint64_t s[4];
};

/* Seeds 'r' from 'seed' mixed with the keys 'a' and 'b' (e.g. vCPU index
 * and interval index) through splitmix64. */
void rng_init(struct rng *r, uint64_t seed, uint64_t a, uint64_t b);

/* Next 64 random bits. */
uint64_t rng_next(struct rng *r);

/* Uniform double in [0, 1). */
double rng_uniform(struct rng *r);

/* Exponentially distributed double with mean 'mean' (> 0). */
double rng_exp(struct rng *r, double mean);

#endif /* sim/rng.h */
