/* sim/rng.c -- splitmix64 seeding and xoshiro256** generation.
 *
 * Both are public-domain algorithms by Sebastiano Vigna and David
 * Blackman; they are tiny, fast and identical on every platform, which
 * keeps simulator output bit-for-bit reproducible. */

#include <config.h>

#include "sim/rng.h"

#include <math.h>

static uint64_t
splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t
rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void
rng_init(struct rng *r, uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = seed;

    /* Mix the keys in one at a time so (a, b) and (b, a) differ. */
    x = splitmix64(&x) ^ a;
    x = splitmix64(&x) ^ b;
    for (int i = 0; i < 4; i++) {
        r->s[i] = splitmix64(&x);
    }
}

uint64_t
rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double
rng_uniform(struct rng *r)
{
    return (rng_next(r) >> 11) * 0x1.0p-53;
}

double
rng_exp(struct rng *r, double mean)
{
    /* 1 - U is in (0, 1], so the log is finite. */
    return -mean * log(1.0 - rng_uniform(r));
}
