# tests/unit/hostdrv.mk -- unit tests of the host drivers, the energy
# model from sysfs, the config parser and the journal.  Fixture trees are
# generated at run time by tests/fixtures/mksysfs.sh in $TMPDIR.
HOSTDRV_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) \
	-DVPOWER_ABS_SRCDIR='"$(abs_top_srcdir)"'
HOSTDRV_TEST_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(CMOCKA_LIBS) -lm

HOSTDRV_TESTS = \
	tests/unit/test-conf \
	tests/unit/test-sysfs \
	tests/unit/test-cgpin \
	tests/unit/test-journal \
	tests/unit/test-hostmodel
check_PROGRAMS += $(HOSTDRV_TESTS)
TESTS += $(HOSTDRV_TESTS)

tests_unit_test_conf_SOURCES = tests/unit/test-conf.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_conf_CPPFLAGS = $(HOSTDRV_TEST_CPPFLAGS)
tests_unit_test_conf_LDADD = $(HOSTDRV_TEST_LDADD)

# write(2) is wrapped to observe the order of sysfs writes and to inject
# EBUSY and short writes.
tests_unit_test_sysfs_SOURCES = tests/unit/test-sysfs.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_sysfs_CPPFLAGS = $(HOSTDRV_TEST_CPPFLAGS)
tests_unit_test_sysfs_LDFLAGS = -Wl,--wrap=write -pthread
tests_unit_test_sysfs_LDADD = $(HOSTDRV_TEST_LDADD)

tests_unit_test_cgpin_SOURCES = tests/unit/test-cgpin.c
tests_unit_test_cgpin_CPPFLAGS = $(HOSTDRV_TEST_CPPFLAGS)
tests_unit_test_cgpin_LDADD = $(HOSTDRV_TEST_LDADD)

tests_unit_test_journal_SOURCES = tests/unit/test-journal.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_journal_CPPFLAGS = $(HOSTDRV_TEST_CPPFLAGS)
tests_unit_test_journal_LDADD = $(HOSTDRV_TEST_LDADD)

tests_unit_test_hostmodel_SOURCES = tests/unit/test-hostmodel.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_hostmodel_CPPFLAGS = $(HOSTDRV_TEST_CPPFLAGS)
tests_unit_test_hostmodel_LDADD = $(HOSTDRV_TEST_LDADD)

EXTRA_DIST += tests/fixtures/mksysfs.sh config/vpowerd.conf \
	docs/configuration.md
