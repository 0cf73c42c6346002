/* tests/unit/test-thermal.c -- manager/thermal on constructed netlink
 * messages and the real kernel's family.
 *
 * The development machine has no thermal zones (/sys/class/thermal is
 * empty) and its kernel emitted no thermal events to record, so the
 * messages here are BUILT with libnl from the uapi <linux/thermal.h>
 * layout the kernel's thermal_netlink.c uses (one CPU_CAPABILITY nest of
 * repeated ID/PERFORMANCE/EFFICIENCY u32s; CDEV_ID + CDEV_CUR_STATE for
 * cooling-device updates).  Cooling devices live in a fixture
 * /sys/class/thermal built at run time. */

#include <config.h>

#include "manager/inputs/thermal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <linux/thermal.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "manager/sched.h"

#define FAM 33

static char root[256];
static uint32_t seen[8];
static unsigned n_calls;

static void
cb(void *aux, unsigned cpu, uint32_t cap)
{
    assert_ptr_equal(aux, &seen);
    assert_true(cpu < 8);
    seen[cpu] = cap;
    n_calls++;
}

static void
put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int
setup(void **st)
{
    (void) st;
    snprintf(root, sizeof root, "%s/vp-th-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(root)) {
        return -1;
    }
    put("class/cooling_device0/type", "cpufreq-cpu2\n");
    put("class/cooling_device0/max_state", "3\n");
    put("class/cooling_device1/type", "Fan\n");
    put("class/cooling_device1/max_state", "10\n");
    put("class/cooling_device2/type", "cpufreq-cpu0\n");
    put("class/cooling_device2/max_state", "4\n");
    put("cpu/cpu2/cpufreq/related_cpus", "2 3\n");
    put("cpu/cpu2/cpufreq/scaling_available_frequencies",
        "500000 1000000 1500000 2000000 \n");
    put("cpu/cpu0/cpufreq/related_cpus", "0 1\n");
    return 0;
}

static int
teardown(void **st)
{
    (void) st;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static struct thermal *
open_fixture(void)
{
    char c[300], p[300];
    snprintf(c, sizeof c, "%s/class", root);
    snprintf(p, sizeof p, "%s/cpu", root);
    memset(seen, 0, sizeof seen);
    n_calls = 0;
    return thermal_open_detached(FAM, c, p, 8, cb, &seen);
}

static struct nl_msg *
msg(uint8_t cmd)
{
    struct nl_msg *m = nlmsg_alloc();
    assert_non_null(genlmsg_put(m, 0, 0, FAM, 0, 0, cmd,
                                THERMAL_GENL_VERSION));
    return m;
}

static int
deliver(struct thermal *t, struct nl_msg *m)
{
    struct nlmsghdr *h = nlmsg_hdr(m);
    int r = thermal_handle_msg(t, h, h->nlmsg_len);
    nlmsg_free(m);
    return r;
}

static struct nl_msg *
cdev_msg(uint32_t id, uint32_t state)
{
    struct nl_msg *m = msg(THERMAL_GENL_EVENT_CDEV_STATE_UPDATE);
    nla_put_u32(m, THERMAL_GENL_ATTR_CDEV_ID, id);
    nla_put_u32(m, THERMAL_GENL_ATTR_CDEV_CUR_STATE, state);
    return m;
}

static void
test_capability(void **st)
{
    (void) st;
    struct thermal *t = open_fixture();
    struct nl_msg *m = msg(THERMAL_GENL_EVENT_CPU_CAPABILITY_CHANGE);
    struct nlattr *n = nla_nest_start(m, THERMAL_GENL_ATTR_CPU_CAPABILITY);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_ID, 1);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_PERFORMANCE, 511);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_EFFICIENCY, 800);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_ID, 3);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_PERFORMANCE, 1023);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_EFFICIENCY, 100);
    nla_nest_end(m, n);
    assert_int_equal(deliver(t, m), 0);
    assert_int_equal(thermal_capacity(t, 1), 511 * 1024 / 1023);
    assert_int_equal(seen[1], 511);
    assert_int_equal(thermal_capacity(t, 3), THERMAL_CAP_NONE);
    assert_int_equal(n_calls, 1);        /* cpu3 did not change. */
    assert_int_equal(thermal_counts(t)->capability, 1);

    /* Performance out of the 0..1023 scale. */
    m = msg(THERMAL_GENL_EVENT_CPU_CAPABILITY_CHANGE);
    n = nla_nest_start(m, THERMAL_GENL_ATTR_CPU_CAPABILITY);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_ID, 1);
    nla_put_u32(m, THERMAL_GENL_ATTR_CPU_CAPABILITY_PERFORMANCE, 5000);
    nla_nest_end(m, n);
    assert_int_equal(deliver(t, m), -EPROTO);
    /* No nest at all. */
    assert_int_equal(deliver(t, msg(THERMAL_GENL_EVENT_CPU_CAPABILITY_CHANGE)),
                     -EPROTO);
    assert_int_equal(thermal_counts(t)->malformed, 2);
    thermal_close(t);
}

static void
test_cdev(void **st)
{
    (void) st;
    struct thermal *t = open_fixture();
    /* cpufreq cooling of policy cpu2 (cpus 2,3), state 2 = third
     * frequency from the top: 1 GHz of 2 GHz. */
    assert_int_equal(deliver(t, cdev_msg(0, 2)), 0);
    assert_int_equal(thermal_capacity(t, 2), 512);
    assert_int_equal(thermal_capacity(t, 3), 512);
    assert_int_equal(thermal_capacity(t, 0), THERMAL_CAP_NONE);
    assert_int_equal(seen[3], 512);

    /* Domain caps: CPUs 2-3 are domain 1 with OPPs 500 MHz..2 GHz. */
    static struct pol_model m;
    memset(&m, 0, sizeof m);
    m.n_cpus = 4;
    m.n_domains = 2;
    cpuset_parse(&m.domains[0].cpus, "0-1");
    cpuset_parse(&m.domains[1].cpus, "2-3");
    for (int d = 0; d < 2; d++) {
        m.domains[d].n_opps = 2;
        m.domains[d].opps[0].freq_khz = 500000;
        m.domains[d].opps[1].freq_khz = 2000000;
    }
    uint32_t caps[POL_MAX_DOMAINS];
    thermal_domain_caps(t, &m, caps);
    assert_int_equal(caps[0], 0);
    assert_int_equal(caps[1], 1000000);

    /* Deepest state: clamps to the lowest frequency (500 MHz). */
    assert_int_equal(deliver(t, cdev_msg(0, 7)), 0);
    assert_int_equal(thermal_capacity(t, 2), 256);

    /* cpufreq cooling without a frequency table: linear. */
    assert_int_equal(deliver(t, cdev_msg(2, 2)), 0);
    assert_int_equal(thermal_capacity(t, 0), 1024 - 2 * 1024 / 5);
    assert_int_equal(thermal_capacity(t, 1), 1024 - 2 * 1024 / 5);

    /* A fan and an unknown device do not limit CPUs. */
    assert_int_equal(deliver(t, cdev_msg(1, 9)), 0);
    assert_int_equal(deliver(t, cdev_msg(9, 1)), 0);
    assert_int_equal(thermal_counts(t)->ignored, 2);

    /* Back to state 0: the limit goes. */
    assert_int_equal(deliver(t, cdev_msg(0, 0)), 0);
    assert_int_equal(thermal_capacity(t, 2), THERMAL_CAP_NONE);
    /* Device 2 unbound: its CPUs are free again. */
    struct nl_msg *d = msg(THERMAL_GENL_EVENT_CDEV_DELETE);
    nla_put_u32(d, THERMAL_GENL_ATTR_CDEV_ID, 2);
    assert_int_equal(deliver(t, d), 0);
    assert_int_equal(thermal_capacity(t, 0), THERMAL_CAP_NONE);
    thermal_domain_caps(t, &m, caps);
    assert_int_equal(caps[0], 0);
    assert_int_equal(caps[1], 0);

    /* Missing state; a u16 where a u32 belongs. */
    struct nl_msg *b = msg(THERMAL_GENL_EVENT_CDEV_STATE_UPDATE);
    nla_put_u32(b, THERMAL_GENL_ATTR_CDEV_ID, 0);
    assert_int_equal(deliver(t, b), -EPROTO);
    b = msg(THERMAL_GENL_EVENT_CDEV_STATE_UPDATE);
    nla_put_u16(b, THERMAL_GENL_ATTR_CDEV_ID, 0);
    nla_put_u32(b, THERMAL_GENL_ATTR_CDEV_CUR_STATE, 1);
    assert_int_equal(deliver(t, b), -EPROTO);
    thermal_close(t);
}

static void
test_other_events(void **st)
{
    (void) st;
    struct thermal *t = open_fixture();
    struct nl_msg *m = msg(THERMAL_GENL_EVENT_TZ_TRIP_UP);
    nla_put_u32(m, THERMAL_GENL_ATTR_TZ_ID, 0);
    nla_put_u32(m, THERMAL_GENL_ATTR_TZ_TRIP_ID, 1);
    nla_put_u32(m, THERMAL_GENL_ATTR_TZ_TEMP, 95000);
    assert_int_equal(deliver(t, m), 0);
    m = msg(THERMAL_GENL_SAMPLING_TEMP);
    nla_put_u32(m, THERMAL_GENL_ATTR_TZ_ID, 0);
    nla_put_u32(m, THERMAL_GENL_ATTR_TZ_TEMP, 45000);
    assert_int_equal(deliver(t, m), 0);
    assert_int_equal(deliver(t, msg(THERMAL_GENL_EVENT_TZ_GOV_CHANGE)), 0);
    assert_int_equal(thermal_counts(t)->trips, 1);
    assert_int_equal(thermal_counts(t)->sampling, 1);
    assert_int_equal(n_calls, 0);

    /* Another family's message; a cut one. */
    struct nl_msg *o = nlmsg_alloc();
    genlmsg_put(o, 0, 0, FAM + 1, 0, 0, 1, 1);
    assert_int_equal(deliver(t, o), -EPROTO);
    m = msg(THERMAL_GENL_EVENT_TZ_TRIP_UP);
    struct nlmsghdr *h = nlmsg_hdr(m);
    assert_int_equal(thermal_handle_msg(t, h, 8), -EPROTO);
    nlmsg_free(m);
    thermal_close(t);
}

static void
quit(void *aux)
{
    sched_quit(aux, 0);
}

/* The real kernel: the family and its groups resolve, the socket sits on
 * the loop, and with no thermal zones nothing arrives. */
static void
test_real_family(void **st)
{
    (void) st;
    struct sched *s = sched_create();
    char err[256];
    memset(seen, 0, sizeof seen);
    struct thermal *t = thermal_open(s, NULL, NULL, 8, cb, &seen, err,
                                     sizeof err);
    if (!t) {
        print_message("skipping: %s\n", err);
        sched_destroy(s);
        skip();
    }
    sched_add_timer(s, 50 * 1000000ULL, quit, s);
    assert_int_equal(sched_run(s), 0);
    print_message("thermal events in 50 ms: %llu\n",
                  (unsigned long long) thermal_counts(t)->events);
    thermal_close(t);
    sched_destroy(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capability),
        cmocka_unit_test(test_cdev),
        cmocka_unit_test(test_other_events),
        cmocka_unit_test(test_real_family),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
