/* tests/sim/check.h -- Minimal check macros for the simulator tests.
 *
 * CHECK() records a failure and continues, so one run reports every
 * broken expectation; main() returns fail_count ? 1 : 0 (77 = skip). */

#ifndef VPOWER_TESTS_SIM_CHECK_H
#define VPOWER_TESTS_SIM_CHECK_H 1

#include <stdio.h>

static int fail_count;

#define CHECK(EXPR)                                                     \
    do {                                                                \
        if (!(EXPR)) {                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,      \
                    __LINE__, #EXPR);                                   \
            fail_count++;                                               \
        }                                                               \
    } while (0)

#endif /* tests/sim/check.h */
