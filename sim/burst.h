/* sim/burst.h -- Intra-interval burst model for averaged traces.
 *
 * PlanetLab and Bitbrains give 5-minute averages.  To make ready time
 * meaningful, each vCPU's interval is turned into a seeded on/off renewal
 * process: busy phases with exponential lengths of mean 'on_mean_s'
 * (default 2 s) alternate with idle phases of mean on_mean_s * (1-u)/u,
 * so the expected busy fraction is u.  The process is then binned into
 * sim steps (1 s) and rescaled so that the interval's total equals the
 * trace value exactly (bins capped at a full vCPU, excess moved to the
 * others).  Same (seed, vCPU, interval) gives the same bursts for every
 * policy. */

#ifndef VPOWER_SIM_BURST_H
#define VPOWER_SIM_BURST_H 1

#include <stdint.h>

/* Fills 'out[0..n_steps-1]' with the busy fraction (0..1 of one vCPU at
 * nominal capacity) of each 1-second step of interval 'interval' of
 * global vCPU 'vcpu_key', whose interval average is 'demand_ppm'.  The
 * mean of 'out' equals demand_ppm / 1e6 (to float rounding). */
void burst_fill(uint64_t seed, uint64_t vcpu_key, uint64_t interval,
                uint32_t demand_ppm, double on_mean_s, unsigned n_steps,
                float *out);

#endif /* sim/burst.h */
