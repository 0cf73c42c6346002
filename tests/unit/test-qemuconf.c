/* tests/unit/test-qemuconf.c -- the 'sched_core' reader of qemu.conf. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "manager/inputs/qemuconf.h"

static char path[256];

/* Writes 'text' to a fresh temporary file named in 'path'. */
static void
write_conf(const char *text)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    snprintf(path, sizeof path, "%s/qemuconf-XXXXXX", dir ? dir : "/tmp");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
    close(fd);
}

/* Reads 'text' as qemu.conf: the return value, '*out' and 'err'. */
static int
read_text(const char *text, enum qemuconf_sched *out, char *err,
          size_t errlen)
{
    int rc;

    write_conf(text);
    err[0] = '\0';
    rc = qemuconf_sched_core(path, out, err, errlen);
    unlink(path);
    return rc;
}

static void
test_values(void **state)
{
    enum qemuconf_sched v = QEMUCONF_SCHED_FULL;
    char err[256];

    (void) state;
    /* No file: libvirt's default. */
    assert_int_equal(qemuconf_sched_core("/nonexistent/qemu.conf", &v, err,
                                         sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_NONE);
    assert_false(qemuconf_sched_apart(v));
    /* The shipped file: every setting commented out. */
    assert_int_equal(read_text("# Possible options are:\n"
                               "#sched_core = \"none\"\n"
                               "#sched_core = \"full\"\n", &v, err,
                               sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_NONE);
    assert_int_equal(read_text("user = \"qemu\"\n"
                               "sched_core = \"vcpus\"\n", &v, err,
                               sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_VCPUS);
    assert_true(qemuconf_sched_apart(v));
    assert_string_equal(qemuconf_sched_name(v), "vcpus");
    assert_int_equal(read_text("  sched_core=\"emulator\"  # comment\n",
                               &v, err, sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_EMULATOR);
    /* The last one counts; a key inside a multi-line list is not one. */
    assert_int_equal(read_text("sched_core = \"full\"\n"
                               "cgroup_device_acl = [\n"
                               "    \"/dev/null\", \"[\",\n"
                               "sched_core = \"bad\"\n"
                               "]\n"
                               "sched_core = \"none\"\n"
                               "sched_core_other = 1\n", &v, err,
                               sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_NONE);
    assert_int_equal(read_text("sched_core = \"full\"\n"
                               "cgroup_device_acl = [ \"/dev/null\" ]\n",
                               &v, err, sizeof err), 0);
    assert_int_equal(v, QEMUCONF_SCHED_FULL);
}

static void
test_errors(void **state)
{
    enum qemuconf_sched v = QEMUCONF_SCHED_FULL;
    char err[256];

    (void) state;
    assert_int_equal(read_text("\nsched_core = \"yes\"\n", &v, err,
                               sizeof err), -EINVAL);
    assert_int_equal(v, QEMUCONF_SCHED_NONE);
    assert_non_null(strstr(err, ":2: sched_core: unknown value \"yes\""));
    assert_int_equal(read_text("sched_core = vcpus\n", &v, err,
                               sizeof err), -EINVAL);
    assert_non_null(strstr(err, ":1: sched_core: value must be a string"));
    assert_int_equal(read_text("sched_core \"vcpus\"\n", &v, err,
                               sizeof err), -EINVAL);
    assert_non_null(strstr(err, "expected '='"));
    assert_int_equal(read_text("sched_core = \"full\" x\n", &v, err,
                               sizeof err), -EINVAL);
    assert_non_null(strstr(err, "text after the value"));
    assert_int_equal(qemuconf_sched_core("/", &v, err, sizeof err), -EIO);
    assert_non_null(strstr(err, "/: read error"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
