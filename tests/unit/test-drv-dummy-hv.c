/* tests/unit/test-drv-dummy-hv.c -- drv_hv_dummy: the domains file, pins
 * kept in memory and written to $VPOWER_DUMMY_STATE, synthetic vCPU time,
 * and "FILE:LINE: reason" for a bad domains file. */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "manager/drv.h"
#include "manager/log.h"
#include "manager/sched.h"

static char dir[64];

static void
write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void
test_list_pin_state(void **state)
{
    char doms_path[128], state_path[128], err[256], line[256];
    struct drv_dom *doms = NULL;
    struct drv_vcpu_stat st[4];
    struct drv_hv *hv;
    struct cpuset s, got;
    size_t n = 0;
    FILE *f;
    bool found = false;
    struct timespec ts = { 0, 50000000 };

    snprintf(doms_path, sizeof doms_path, "%s/doms", dir);
    snprintf(state_path, sizeof state_path, "%s/state", dir);
    write_file(doms_path, "# test\nweb 2 80 10\nbatch 1 5 static=0\n\n");
    setenv("VPOWER_DUMMY_STATE", state_path, 1);
    hv = drv_hv_dummy.open(doms_path, NULL, NULL, NULL, err, sizeof err);
    assert_non_null(hv);
    assert_int_equal(drv_hv_dummy.list(hv, &doms, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(doms[0].name, "web");
    assert_int_equal(doms[0].n_vcpus, 2);
    assert_false(doms[0].static_pinning);
    assert_true(doms[1].static_pinning);
    assert_true(cpuset_has(&doms[1].static_cpus, 0));

    cpuset_zero(&s);
    cpuset_set(&s, 0);
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, doms[0].uuid, 1, &s), 0);
    assert_int_equal(drv_hv_dummy.get_vcpu_pin(hv, doms[0].uuid, 1, &got),
                     0);
    assert_true(cpuset_equal(&s, &got));
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, doms[0].uuid, 2, &s),
                     -EINVAL);
    assert_int_equal(drv_hv_dummy.pin_vcpu(hv, "nope", 0, &s), -ENOENT);

    f = fopen(state_path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        found |= !strcmp(line, "web vcpu1 0\n");
    }
    fclose(f);
    assert_true(found);

    nanosleep(&ts, NULL);
    assert_int_equal(drv_hv_dummy.vcpu_stats(hv, doms[0].uuid, st, 4, &n),
                     0);
    assert_int_equal(n, 2);
    /* 80% of >= 50 ms of wall time, 10% for the second vCPU. */
    assert_true(st[0].time_ns >= 35000000u);
    assert_true(st[1].time_ns < st[0].time_ns);
    free(doms);
    drv_hv_dummy.close(hv);
    unlink(state_path);
    unlink(doms_path);
    unsetenv("VPOWER_DUMMY_STATE");
}

static void
test_bad_file(void **state)
{
    char path[128], err[256], want[192];
    struct drv_hv *hv;

    snprintf(path, sizeof path, "%s/bad", dir);
    write_file(path, "ok 1 10\nbroken 1 150\n");
    hv = drv_hv_dummy.open(path, NULL, NULL, NULL, err, sizeof err);
    assert_null(hv);
    snprintf(want, sizeof want, "%s:2: ", path);
    assert_non_null(strstr(err, want));
    write_file(path, "zero 0\n");
    hv = drv_hv_dummy.open(path, NULL, NULL, NULL, err, sizeof err);
    assert_null(hv);
    assert_non_null(strstr(err, ":1: "));
    unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_pin_state),
        cmocka_unit_test(test_bad_file),
    };
    int r;

    snprintf(dir, sizeof dir, "/tmp/test-dummy-hv.XXXXXX");
    if (!mkdtemp(dir)) {
        return 99;
    }
    log_init("test-drv-dummy-hv", false, LOG_LVL_WARN);
    r = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return r;
}
