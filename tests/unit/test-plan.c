/* tests/unit/test-plan.c -- plan copy and diff ordering. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"

static void
test_diff(void **state)
{
    struct pol_plan *a = pol_plan_create(2, 4);
    struct pol_plan *b = pol_plan_create(2, 4);
    struct pol_action acts[64];
    int n;

    (void) state;
    a->n_vms = 2;
    a->n_vcpus = 4;
    cpuset_set(&a->offline, 5);
    cpuset_set(&a->active, 1);
    for (int i = 0; i < 4; i++) {
        cpuset_set(&a->vcpu_allowed[i], 1);
    }
    pol_plan_copy(b, a);
    assert_int_equal(pol_plan_diff(a, b, acts, 64), 0);
    assert_int_equal(pol_plan_diff(a, b, NULL, 0), 0);
    /* b: online 5, pin vcpu 2 onto 5, freq, idle, offline 7. */
    cpuset_clr(&b->offline, 5);
    cpuset_set(&b->offline, 7);
    cpuset_set(&b->vcpu_allowed[2], 5);
    b->vcpu_vm[2] = 1;
    b->dom_freq_khz[3] = 1000;
    b->idle_limit[4] = 1;
    n = pol_plan_diff(a, b, acts, 64);
    assert_int_equal(n, 5);
    assert_int_equal(acts[0].type, POL_A_ONLINE);
    assert_int_equal(acts[0].cpu, 5);
    assert_int_equal(acts[1].type, POL_A_PIN_VCPU);
    assert_int_equal(acts[1].vcpu, 2);
    assert_int_equal(acts[1].vm, 1);
    assert_true(cpuset_has(&acts[1].set, 5));
    assert_int_equal(acts[2].type, POL_A_SET_FREQ);
    assert_int_equal(acts[3].type, POL_A_IDLE_LIMIT);
    assert_int_equal(acts[3].state, 1);
    assert_int_equal(acts[4].type, POL_A_OFFLINE);
    assert_int_equal(acts[4].cpu, 7);
    assert_int_equal(pol_plan_diff(a, b, acts, 4), -ENOSPC);
    /* Frequency 0 means leave alone: no action. */
    b->dom_freq_khz[3] = 0;
    assert_int_equal(pol_plan_diff(a, b, acts, 64), 4);
    pol_plan_destroy(a);
    pol_plan_destroy(b);
    pol_plan_destroy(NULL);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
