# tests/unit/manager.mk -- unit tests of manager/ (daemon engineer's
# modules: the hypervisor drivers and what the libvirt one reads).
MANAGER_TESTS = \
	tests/unit/test-drv-libvirt \
	tests/unit/test-virtloop \
	tests/unit/test-drv-dummy-hv
check_PROGRAMS += $(MANAGER_TESTS)
TESTS += $(MANAGER_TESTS)
MANAGER_TEST_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(CMOCKA_LIBS) $(LIBXML2_LIBS) $(JSONC_LIBS) -lm
tests_unit_test_drv_libvirt_SOURCES = tests/unit/test-drv-libvirt.c
tests_unit_test_drv_libvirt_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(LIBVIRT_CFLAGS)
tests_unit_test_drv_libvirt_LDADD = manager/libvpowervirt.a \
	$(MANAGER_TEST_LDADD) $(LIBVPOWERVIRT_LIBS)
# The test counts the driver's calls into libvirt through --wrap.
tests_unit_test_drv_libvirt_LDFLAGS = \
	-Wl,--wrap=virDomainLookupByUUIDString \
	-Wl,--wrap=virDomainPinVcpuFlags -Wl,--wrap=virDomainPinEmulator \
	-Wl,--wrap=virDomainPinIOThread -Wl,--wrap=virDomainGetIOThreadInfo \
	-Wl,--wrap=virDomainGetVcpuPinInfo \
	-Wl,--wrap=virDomainGetEmulatorPinInfo
tests_unit_test_virtloop_SOURCES = tests/unit/test-virtloop.c
tests_unit_test_virtloop_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(LIBVIRT_CFLAGS)
tests_unit_test_virtloop_LDADD = manager/libvpowervirt.a \
	$(MANAGER_TEST_LDADD) $(LIBVPOWERVIRT_LIBS)
tests_unit_test_drv_dummy_hv_SOURCES = \
	tests/unit/test-drv-dummy-hv.c manager/drivers/drv_dummy_hv.c
tests_unit_test_drv_dummy_hv_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_drv_dummy_hv_LDADD = $(MANAGER_TEST_LDADD)

# The replay record writer (manager/record.c, in libvpowermgr.a so that
# every program built from daemon.c links it).
check_PROGRAMS += tests/unit/test-record
TESTS += tests/unit/test-record
tests_unit_test_record_SOURCES = tests/unit/test-record.c \
	tests/unit/shipped-model.h
tests_unit_test_record_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_record_LDADD = $(MANAGER_TEST_LDADD)

# sd_notify readiness, status and watchdog keep-alives (manager/notify.c;
# skipped when built without libsystemd).
check_PROGRAMS += tests/unit/test-notify
TESTS += tests/unit/test-notify
tests_unit_test_notify_SOURCES = tests/unit/test-notify.c manager/notify.c
tests_unit_test_notify_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(LIBSYSTEMD_CFLAGS)
tests_unit_test_notify_LDADD = $(MANAGER_TEST_LDADD) $(LIBSYSTEMD_LIBS)

# The domain XML and metadata reader (manager/drivers/domxml.c, libxml2).
check_PROGRAMS += tests/unit/test-domxml
TESTS += tests/unit/test-domxml
tests_unit_test_domxml_SOURCES = tests/unit/test-domxml.c
tests_unit_test_domxml_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_domxml_LDADD = manager/libvpowervirt.a \
	$(MANAGER_TEST_LDADD) $(LIBVPOWERVIRT_LIBS)

# The decision cycle on dummy drivers and a virtual clock.
check_PROGRAMS += tests/unit/test-cycle
TESTS += tests/unit/test-cycle
tests_unit_test_cycle_SOURCES = tests/unit/test-cycle.c
tests_unit_test_cycle_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cycle_LDADD = $(MANAGER_TEST_LDADD)
