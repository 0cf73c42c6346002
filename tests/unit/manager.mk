# tests/unit/manager.mk -- unit tests of manager/ (daemon engineer's
# modules: the hypervisor drivers).
MANAGER_TESTS = \
	tests/unit/test-drv-libvirt \
	tests/unit/test-drv-dummy-hv
check_PROGRAMS += $(MANAGER_TESTS)
TESTS += $(MANAGER_TESTS)
MANAGER_TEST_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(CMOCKA_LIBS) -lm
tests_unit_test_drv_libvirt_SOURCES = \
	tests/unit/test-drv-libvirt.c manager/drv_libvirt.c
tests_unit_test_drv_libvirt_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(LIBVIRT_CFLAGS)
tests_unit_test_drv_libvirt_LDADD = $(MANAGER_TEST_LDADD) $(LIBVIRT_LIBS)
tests_unit_test_drv_dummy_hv_SOURCES = \
	tests/unit/test-drv-dummy-hv.c manager/drv_dummy_hv.c
tests_unit_test_drv_dummy_hv_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_drv_dummy_hv_LDADD = $(MANAGER_TEST_LDADD)

# The replay record writer (manager/record.c, in libvpowermgr.a so that
# every program built from daemon.c links it).
check_PROGRAMS += tests/unit/test-record
TESTS += tests/unit/test-record
tests_unit_test_record_SOURCES = tests/unit/test-record.c
tests_unit_test_record_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_record_LDADD = $(MANAGER_TEST_LDADD)

# The decision cycle on dummy drivers and a virtual clock.
check_PROGRAMS += tests/unit/test-cycle
TESTS += tests/unit/test-cycle
tests_unit_test_cycle_SOURCES = tests/unit/test-cycle.c
tests_unit_test_cycle_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cycle_LDADD = $(MANAGER_TEST_LDADD)
