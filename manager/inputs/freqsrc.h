/* manager/inputs/freqsrc.h -- The frequency each CPU actually ran at.
 *
 * pol_load_update() converts busy time into capacity at the frequency
 * that ran, so a slowed core does not look busier.  The best source is
 * the APERF/MPERF ratio (x86 MSRs 0xE8 and 0xE7 through /dev/cpu/N/msr):
 * both count only while the CPU is not idle, MPERF at the base
 * frequency, APERF at the actual one, so delta(APERF)/delta(MPERF) x base
 * is the average non-idle frequency over the interval between two reads.
 * Without readable MSRs, cpufreq's scaling_cur_freq (an instantaneous
 * value) is used; without cpufreq the answer is 0, which the policy reads
 * as "nominal".  freqsrc_name() says which source is in use. */

#ifndef VPOWER_FREQSRC_H
#define VPOWER_FREQSRC_H 1

#include <stddef.h>
#include <stdint.h>

#define FREQSRC_MSR_MPERF 0xE7
#define FREQSRC_MSR_APERF 0xE8

enum freqsrc_kind { FREQSRC_APERF_MPERF, FREQSRC_CPUFREQ, FREQSRC_NOMINAL };

struct freqsrc;

/* 'cpu_root' replaces /sys/devices/system/cpu and 'msr_root' /dev/cpu
 * (NULL: the real ones).  'n_cpus' CPUs are tracked.  'base_khz' is the
 * frequency MPERF counts at (0: read cpufreq's base_frequency, else
 * cpuinfo_max_freq; APERF/MPERF is not used if neither exists).  The
 * source is chosen once from CPU 0; it never fails: the worst case is
 * FREQSRC_NOMINAL. */
struct freqsrc *freqsrc_open(const char *cpu_root, const char *msr_root,
                             unsigned n_cpus, uint32_t base_khz);
void freqsrc_close(struct freqsrc *);       /* NULL is fine. */

enum freqsrc_kind freqsrc_kind_of(const struct freqsrc *);
const char *freqsrc_name(const struct freqsrc *); /* "aperf-mperf",
                                                   * "cpufreq", "nominal" */

/* Average frequency of 'cpu' since the previous call for it (APERF/
 * MPERF; the first call only primes the counters and gives 0), or the
 * current one (cpufreq), or 0 (nominal).  Call once per CPU per cycle.
 * Returns 0 or -errno (-ERANGE for an implausible ratio; '*khz' is then
 * 0).  A CPU whose counters did not move (idle throughout) gives 0. */
int freqsrc_read(struct freqsrc *, unsigned cpu, uint32_t *khz);

/* The arithmetic, exposed for tests: base x dA / dM, 0 when dM is 0,
 * -ERANGE when the ratio exceeds 8 (no CPU boosts that far; a counter
 * was reset or is garbage). */
int freqsrc_ratio_khz(uint64_t d_aperf, uint64_t d_mperf, uint32_t base_khz,
                      uint32_t *khz);

#endif /* manager/inputs/freqsrc.h */
