/* policy/cpuset.h -- Fixed-size CPU bitmaps for the policy core.
 *
 * The policy core allocates nothing per decision, so CPU sets are plain
 * values of POL_MAX_CPUS bits (no 64-CPU cap, unlike DPDK's masks).  They
 * are copied by assignment.  Host CPU numbers are Linux logical CPU ids. */

#ifndef VPOWER_POLICY_CPUSET_H
#define VPOWER_POLICY_CPUSET_H 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POL_MAX_CPUS 1024
#define CPUSET_WORDS (POL_MAX_CPUS / 64)

struct cpuset {
    uint64_t w[CPUSET_WORDS];
};

/* The whole-set operations run in every loop of the policy, the cycle
 * and the simulator's execution model, so they are inline. */
static inline void
cpuset_zero(struct cpuset *s)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        s->w[i] = 0;
    }
}

/* Single CPUs: 'cpu' >= POL_MAX_CPUS is ignored (set, clr) or absent
 * (has).  The range check is arithmetic, not a branch: inlined, a branch
 * makes the compiler infer that callers' own arrays indexed by the same
 * CPU may be indexed out of bounds, and warn.  Inline because the policy
 * tests single CPUs in its innermost loops. */
static inline void
cpuset_set(struct cpuset *s, unsigned cpu)
{
    s->w[cpu / 64 % CPUSET_WORDS] |= (uint64_t) (cpu < POL_MAX_CPUS)
                                     << (cpu % 64);
}

static inline void
cpuset_clr(struct cpuset *s, unsigned cpu)
{
    s->w[cpu / 64 % CPUSET_WORDS] &= ~((uint64_t) (cpu < POL_MAX_CPUS)
                                       << (cpu % 64));
}

static inline bool
cpuset_has(const struct cpuset *s, unsigned cpu)
{
    uint64_t w = s->w[cpu / 64 % CPUSET_WORDS];

    return (cpu < POL_MAX_CPUS) & (unsigned) (w >> (cpu % 64));
}

unsigned cpuset_count(const struct cpuset *);

/* The tests stop at the first word that decides: sets of a host's CPUs
 * keep their bits in the first words. */
static inline bool
cpuset_empty(const struct cpuset *s)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        if (s->w[i]) {
            return false;
        }
    }
    return true;
}

static inline bool
cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        if (a->w[i] != b->w[i]) {
            return false;
        }
    }
    return true;
}

/* Whether a <= b. */
static inline bool
cpuset_subset(const struct cpuset *a, const struct cpuset *b)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        if (a->w[i] & ~b->w[i]) {
            return false;
        }
    }
    return true;
}

static inline void
cpuset_and(struct cpuset *dst, const struct cpuset *a,
           const struct cpuset *b)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        dst->w[i] = a->w[i] & b->w[i];
    }
}

static inline void
cpuset_or(struct cpuset *dst, const struct cpuset *a,
          const struct cpuset *b)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        dst->w[i] = a->w[i] | b->w[i];
    }
}

/* dst = a & ~b. */
static inline void
cpuset_andnot(struct cpuset *dst, const struct cpuset *a,
              const struct cpuset *b)
{
    for (size_t i = 0; i < CPUSET_WORDS; i++) {
        dst->w[i] = a->w[i] & ~b->w[i];
    }
}

/* Lowest CPU >= 'from' in the set, or -1. */
static inline int
cpuset_next(const struct cpuset *s, unsigned from)
{
    for (unsigned i = from / 64; from < POL_MAX_CPUS && i < CPUSET_WORDS;
         i++) {
        uint64_t w = s->w[i];

        if (i == from / 64) {
            w &= ~UINT64_C(0) << (from % 64);
        }
        if (w) {
            return (int) (i * 64 + (unsigned) __builtin_ctzll(w));
        }
    }
    return -1;
}

#define CPUSET_FOREACH(CPU, SET) \
    for (int CPU = cpuset_next(SET, 0); CPU >= 0; \
         CPU = cpuset_next(SET, (unsigned) CPU + 1))

/* Parses a Linux cpulist ("0-3,8,10-11") into 'set'.  Returns 0, or
 * -EINVAL on syntax errors, ranges backwards, or CPUs >= POL_MAX_CPUS.
 * Trailing whitespace/newline is accepted (sysfs files end in one). */
int cpuset_parse(struct cpuset *set, const char *list);
/* Formats 'set' as a cpulist into 'buf' (always NUL-terminated).  Returns
 * the length it needed, like snprintf. */
int cpuset_format(const struct cpuset *set, char *buf, size_t len);
/* cpuset_format() for log lines: an empty set reads "-".  Returns
 * 'buf'. */
const char *cpuset_label(const struct cpuset *set, char *buf, size_t len);

#endif /* policy/cpuset.h */
