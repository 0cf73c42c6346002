# tests/unit/hk.mk -- unit tests of the housekeeping driver on fixture
# trees (cgroup v1/v2, /proc/irq, the workqueue mask) built in $TMPDIR.
tests_unit_test_housekeeping_SOURCES = tests/unit/test-housekeeping.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_housekeeping_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) \
	-DVPOWER_ABS_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_housekeeping_LDADD = manager/libvpowerhk.a \
	manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBSYSTEMD_LIBS) $(CMOCKA_LIBS) -lm
check_PROGRAMS += tests/unit/test-housekeeping
TESTS += tests/unit/test-housekeeping
