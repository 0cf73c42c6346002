/* policy/load.c -- Frequency-invariant per-vCPU load tracking.
 *
 * The manager measures each vCPU's busy and run-queue (ready) time per
 * interval and folds it into the caller-owned 'struct pol_load' here;
 * pol_decide() then reads only the tracked values.  Busy time is turned
 * into capacity units at the frequency the vCPU actually ran, so a vCPU
 * slowed down by the policy does not look busier and make the policy
 * spread it again (the frequency-invariance point of the 2013 debate).
 *
 * Decay: the average takes 1/8 of each new sample, so an old sample's
 * weight halves about every 5.2 samples; the peak jumps up at once and
 * decays by 1/32 of the gap per sample (half-life about 22 samples);
 * ready time takes 1/4 per sample (half-life about 2.4 samples), so a
 * burst of run-queue delay is seen quickly and forgotten quickly.
 *
 * Variance: each sample's squared deviation from the previous average is
 * multiplied by the interval length in seconds before it is averaged
 * (1/8 per sample, a plain mean over the first 8): the mean of T one-
 * second samples of a positively correlated process has at least 1/T of
 * their variance, so T x var(T-sample) over-estimates the 1 s variance
 * rather than under-estimating it when the policy lengthens its interval.
 * It is capped at avg x (1024 - avg), the largest variance a quantity in
 * [0, 1024] with that mean can have.
 *
 * slow_cap averages with a time constant of 60 s (weight 1 - e^(-T/60s)
 * per sample of length T), so the per-vCPU need pol_decide() derives
 * from it does not get noisier when the interval shrinks. */

#include "policy/policy.h"

#include <math.h>

/* Scales 'part' (<= 'whole') of 'whole' to 'scale' without overflow for
 * any 64-bit times. */
static uint32_t
ratio(uint64_t part, uint64_t whole, uint32_t scale)
{
    while (whole > (UINT64_C(1) << 40)) {
        part >>= 1;
        whole >>= 1;
    }
    if (!whole) {
        return 0;
    }
    return (uint32_t) ((part * scale + whole / 2) / whole);
}

/* Moves 'avg' towards 'x' by 1/'div', rounding so it converges. */
static uint32_t
ewma(uint32_t avg, uint32_t x, uint32_t div)
{
    if (x >= avg) {
        return avg + (x - avg + div - 1) / div;
    }
    return avg - (avg - x + div - 1) / div;
}

void
pol_load_update(struct pol_load *l, const struct pol_model *m,
                int cpu, uint32_t freq_khz, uint64_t busy_ns,
                uint64_t ready_ns, uint64_t interval_ns)
{
    uint32_t cap = POL_CAPACITY_SCALE;
    uint32_t x, r;

    if (!interval_ns) {
        return;
    }
    if (m && cpu >= 0 && (unsigned) cpu < m->n_cpus) {
        uint32_t c = pol_model_capacity_at(m, (unsigned) cpu, freq_khz);

        if (c) {
            cap = c;
        }
    }
    if (busy_ns > interval_ns) {
        busy_ns = interval_ns;
    }
    if (ready_ns > interval_ns) {
        ready_ns = interval_ns;
    }
    x = ratio(busy_ns, interval_ns, cap);
    r = ratio(ready_ns, interval_ns, 1000000);
    l->last_cap = x;
    l->last_ready_ppm = r;
    l->run_cap = cap;
    if (!l->n_samples) {
        l->avg_cap = x;
        l->peak_cap = x;
        l->ready_ppm = r;
        l->var_cap2 = 0;
        l->slow_cap = x;
    } else {
        double a;
        double dev = (double) x - (double) l->avg_cap;
        double sec = (double) interval_ns / 1e9;
        double v = dev * dev * sec;
        uint32_t div = l->n_samples < 8 ? l->n_samples + 1 : 8;

        if (l->slow_interval_ns != interval_ns) {
            l->slow_interval_ns = interval_ns;
            l->slow_weight = 1 - exp(-(double) interval_ns / 60e9);
        }
        a = l->slow_weight;
        /* Times 1/8 is exact where dividing by 8 is, and far cheaper;
         * 8 is the divisor from the eighth sample on. */
        v = l->var_cap2 + (div == 8 ? (v - l->var_cap2) * 0.125
                                    : (v - l->var_cap2) / div);
        l->var_cap2 = (uint32_t) (v < 0 ? 0 : v > 4e9 ? 4e9 : v);
        l->slow_cap = (uint32_t) lround(l->slow_cap
                                        + a * ((double) x - l->slow_cap));
        l->avg_cap = ewma(l->avg_cap, x, 8);
        l->peak_cap = x > l->peak_cap ? x : ewma(l->peak_cap, x, 32);
        l->ready_ppm = ewma(l->ready_ppm, r, 4);
    }
    if (l->avg_cap > l->peak_cap) {
        l->peak_cap = l->avg_cap;
    }
    {
        uint64_t bound = (uint64_t) l->avg_cap
                         * (POL_CAPACITY_SCALE > l->avg_cap
                            ? POL_CAPACITY_SCALE - l->avg_cap : 0);

        if (l->var_cap2 > bound) {
            l->var_cap2 = (uint32_t) bound;
        }
    }
    if (l->ready_ppm > 1000000) {
        l->ready_ppm = 1000000;
    }
    if (l->n_samples < UINT32_MAX) {
        l->n_samples++;
    }
}
