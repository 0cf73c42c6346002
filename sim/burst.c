/* sim/burst.c -- Seeded on/off bursts whose mean matches the trace.
 *
 * See burst.h for the model.  The rescaling step makes the work in every
 * interval exactly what the trace says, so the bursts change when work
 * arrives, never how much work there is. */

#include <config.h>

#include "sim/burst.h"
#include "sim/rng.h"

#include <stdbool.h>

void
burst_fill(uint64_t seed, uint64_t vcpu_key, uint64_t interval,
           uint32_t demand_ppm, double on_mean_s, unsigned n_steps,
           float *out)
{
    double u = demand_ppm / 1e6;
    double target = u * n_steps, total = 0;
    struct rng r;

    if (u <= 0 || n_steps == 0) {
        for (unsigned i = 0; i < n_steps; i++) {
            out[i] = 0;
        }
        return;
    }
    if (u >= 1) {
        for (unsigned i = 0; i < n_steps; i++) {
            out[i] = 1;
        }
        return;
    }
    for (unsigned i = 0; i < n_steps; i++) {
        out[i] = 0;
    }
    rng_init(&r, seed, vcpu_key, interval);
    {
        double off_mean = on_mean_s * (1 - u) / u;
        /* Start in a random phase, in proportion to the phase means. */
        bool on = rng_uniform(&r) < u;
        double t = 0;

        while (t < n_steps) {
            double len = rng_exp(&r, on ? on_mean_s : off_mean);
            double end = t + len > n_steps ? n_steps : t + len;

            if (on) {
                /* Add [t, end) to the 1 s bins it overlaps. */
                double a = t;
                while (a < end) {
                    unsigned bin = (unsigned) a;
                    double b = bin + 1.0 < end ? bin + 1.0 : end;
                    out[bin] += (float) (b - a);
                    total += b - a;
                    a = b;
                }
            }
            t = end;
            on = !on;
        }
    }
    if (total <= 0) {
        for (unsigned i = 0; i < n_steps; i++) {
            out[i] = (float) u;
        }
        return;
    }
    /* Rescale to the exact interval total; bins saturate at 1. */
    for (int round = 0; round < 8; round++) {
        double sum_free = 0, sum_full = 0;

        for (unsigned i = 0; i < n_steps; i++) {
            if (out[i] >= 1.0f) {
                sum_full += 1.0;
            } else {
                sum_free += out[i];
            }
        }
        if (sum_free <= 0) {
            break;
        }
        double k = (target - sum_full) / sum_free;
        bool capped = false;
        for (unsigned i = 0; i < n_steps; i++) {
            if (out[i] < 1.0f) {
                out[i] = (float) (out[i] * k);
                if (out[i] > 1.0f) {
                    out[i] = 1.0f;
                    capped = true;
                }
            }
        }
        if (!capped) {
            break;
        }
    }
    /* If the busy bins cannot hold the total, spread the rest over the
     * bins that still have room (only for u close to 1). */
    {
        double sum = 0, room = 0;

        for (unsigned i = 0; i < n_steps; i++) {
            sum += out[i];
            room += 1.0 - out[i];
        }
        if (target - sum > 1e-6 && room > 0) {
            double k = (target - sum) / room;
            for (unsigned i = 0; i < n_steps; i++) {
                out[i] = (float) (out[i] + (1.0 - out[i]) * k);
            }
        }
    }
}
