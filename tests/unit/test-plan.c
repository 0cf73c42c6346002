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
    /* A frequency first set and a first idle limit speed up: before
     * the pins. */
    assert_int_equal(acts[1].type, POL_A_SET_FREQ);
    assert_int_equal(acts[2].type, POL_A_IDLE_LIMIT);
    assert_int_equal(acts[2].state, 1);
    assert_int_equal(acts[3].type, POL_A_PIN_VCPU);
    assert_int_equal(acts[3].vcpu, 2);
    assert_int_equal(acts[3].vm, 1);
    assert_true(cpuset_has(&acts[3].set, 5));
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

/* Expects action 'i' of 'acts' to be of 'type' on 'what' (a vCPU for
 * vCPU pins, a VM for emulator pins, a domain or a CPU). */
static void
expect(const struct pol_action *acts, int i, enum pol_action_type type,
       uint32_t what)
{
    const struct pol_action *a = &acts[i];
    uint32_t got = type == POL_A_PIN_VCPU ? a->vcpu
                   : type == POL_A_PIN_EMULATOR ? a->vm
                   : type == POL_A_SET_FREQ ? a->domain : a->cpu;

    if (a->type != type || got != what) {
        fail_msg("action %d: type %d on %u, expected type %d on %u", i,
                 (int) a->type, got, (int) type, what);
    }
}

/* A VM that receives a latency hint is made fast first: its cores'
 * frequency raise and shallower idle limit, then its own pins, then
 * a performance VM's, then a set that widens, and only then the
 * narrowing of others, the frequency cut and the deeper idle limit.
 * The indices run against that order, so index order fails. */
static void
test_diff_order(void **state)
{
    struct pol_plan *a = pol_plan_create(4, 5);
    struct pol_plan *b = pol_plan_create(4, 5);
    static const uint32_t vm_of[5] = { 0, 1, 2, 2, 3 };
    struct pol_action acts[64];
    int n, i = 0;

    (void) state;
    a->n_vms = b->n_vms = 4;
    a->n_vcpus = b->n_vcpus = 5;
    for (unsigned v = 0; v < 5; v++) {
        a->vcpu_vm[v] = b->vcpu_vm[v] = vm_of[v];
    }
    /* VM 0 packed, narrowed: {1,2,3} -> {1,2}. */
    cpuset_set(&a->vcpu_allowed[0], 1);
    cpuset_set(&a->vcpu_allowed[0], 2);
    cpuset_set(&a->vcpu_allowed[0], 3);
    cpuset_set(&b->vcpu_allowed[0], 1);
    cpuset_set(&b->vcpu_allowed[0], 2);
    /* VM 1 packed, widened: {1} -> {1,2}. */
    cpuset_set(&a->vcpu_allowed[1], 1);
    cpuset_set(&b->vcpu_allowed[1], 1);
    cpuset_set(&b->vcpu_allowed[1], 2);
    /* VM 2 hinted: its two vCPUs from the pool {1,2,3} to own CPUs 3
     * and 4, its emulator from {1} to {1,2}. */
    for (unsigned v = 2; v < 4; v++) {
        cpuset_set(&a->vcpu_allowed[v], 1);
        cpuset_set(&a->vcpu_allowed[v], 2);
        cpuset_set(&a->vcpu_allowed[v], 3);
    }
    cpuset_set(&b->vcpu_allowed[2], 3);
    cpuset_set(&b->vcpu_allowed[3], 4);
    cpuset_set(&a->vm_emulator[2], 1);
    cpuset_set(&b->vm_emulator[2], 1);
    cpuset_set(&b->vm_emulator[2], 2);
    b->vm_reason[2] = POL_R_LATENCY_HINT;
    /* VM 3 performance, moved: {5} -> {6}. */
    cpuset_set(&a->vcpu_allowed[4], 5);
    cpuset_set(&b->vcpu_allowed[4], 6);
    b->vm_reason[3] = POL_R_PERFORMANCE;
    /* Domain 0 cut, domain 1 raised; CPU 2 deeper, CPU 4 shallower. */
    a->dom_freq_khz[0] = 2000000;
    b->dom_freq_khz[0] = 1000000;
    a->dom_freq_khz[1] = 1000000;
    b->dom_freq_khz[1] = 2000000;
    a->idle_limit[2] = 0;
    b->idle_limit[2] = -1;
    a->idle_limit[4] = 2;
    b->idle_limit[4] = 0;

    n = pol_plan_diff(a, b, acts, 64);
    assert_int_equal(n, 10);
    expect(acts, i++, POL_A_SET_FREQ, 1);
    expect(acts, i++, POL_A_IDLE_LIMIT, 4);
    assert_int_equal(acts[i - 1].state, 0);
    expect(acts, i++, POL_A_PIN_VCPU, 2);
    expect(acts, i++, POL_A_PIN_VCPU, 3);
    expect(acts, i++, POL_A_PIN_EMULATOR, 2);
    expect(acts, i++, POL_A_PIN_VCPU, 4);
    expect(acts, i++, POL_A_PIN_VCPU, 1);
    expect(acts, i++, POL_A_PIN_VCPU, 0);
    expect(acts, i++, POL_A_SET_FREQ, 0);
    assert_int_equal(acts[i - 1].khz, 1000000);
    expect(acts, i++, POL_A_IDLE_LIMIT, 2);
    assert_int_equal(acts[i - 1].state, -1);
    /* The hint over, VM 2 is packed again: its pins rank with the
     * others' and index order is back. */
    b->vm_reason[2] = POL_R_PACKED;
    n = pol_plan_diff(a, b, acts, 64);
    assert_int_equal(n, 10);
    expect(acts, 2, POL_A_PIN_VCPU, 4);
    expect(acts, 3, POL_A_PIN_VCPU, 1);
    expect(acts, 4, POL_A_PIN_EMULATOR, 2);
    expect(acts, 5, POL_A_PIN_VCPU, 0);
    pol_plan_destroy(a);
    pol_plan_destroy(b);
}

/* 'n' one-vCPU VMs all move from CPU 1 to CPU 2; every third has a
 * latency hint: the hinted VMs' pins come first, then the others, each
 * in index order, however many pins change at once. */
static void
diff_many(size_t n)
{
    struct pol_plan *a = pol_plan_create(n, n);
    struct pol_plan *b = pol_plan_create(n, n);
    struct pol_action *acts = calloc(n, sizeof *acts);
    size_t i = 0;
    int got;

    assert_non_null(acts);
    a->n_vms = b->n_vms = a->n_vcpus = b->n_vcpus = n;
    for (size_t v = 0; v < n; v++) {
        a->vcpu_vm[v] = b->vcpu_vm[v] = (uint32_t) v;
        cpuset_set(&a->vcpu_allowed[v], 1);
        cpuset_set(&b->vcpu_allowed[v], 2);
        b->vm_reason[v] = v % 3 ? POL_R_PACKED : POL_R_LATENCY_HINT;
    }
    got = pol_plan_diff(a, b, acts, n);
    assert_int_equal(got, (int) n);
    for (size_t v = 0; v < n; v += 3) {
        expect(acts, (int) i++, POL_A_PIN_VCPU, (uint32_t) v);
    }
    for (size_t v = 0; v < n; v++) {
        if (v % 3) {
            expect(acts, (int) i++, POL_A_PIN_VCPU, (uint32_t) v);
        }
    }
    /* One slot short: no room. */
    assert_int_equal(pol_plan_diff(a, b, acts, n - 1), -ENOSPC);
    free(acts);
    pol_plan_destroy(a);
    pol_plan_destroy(b);
}

static void
test_diff_many(void **state)
{
    (void) state;
    diff_many(40);
    diff_many(1500);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_diff_order),
        cmocka_unit_test(test_diff_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
