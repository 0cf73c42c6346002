# tests/unit/inputs.mk -- unit tests of the measurement inputs
# (manager/inputs/inputs.mk): recorded netlink replies in tests/fixtures/netlink,
# KVM stats fixtures in tests/fixtures/kvm, fixture trees built at run time.
INPUTS_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) \
	-DVPOWER_ABS_SRCDIR='"$(abs_top_srcdir)"'
INPUTS_TEST_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBNL_LIBS) $(CMOCKA_LIBS) -lm

INPUTS_TESTS = \
	tests/unit/test-taskstats \
	tests/unit/test-freqsrc \
	tests/unit/test-haltstats \
	tests/unit/test-thermal
check_PROGRAMS += $(INPUTS_TESTS)
TESTS += $(INPUTS_TESTS)

tests_unit_test_taskstats_SOURCES = tests/unit/test-taskstats.c
tests_unit_test_taskstats_CPPFLAGS = $(INPUTS_TEST_CPPFLAGS)
tests_unit_test_taskstats_LDADD = $(INPUTS_TEST_LDADD)
tests_unit_test_freqsrc_SOURCES = tests/unit/test-freqsrc.c
tests_unit_test_freqsrc_CPPFLAGS = $(INPUTS_TEST_CPPFLAGS)
tests_unit_test_freqsrc_LDADD = $(INPUTS_TEST_LDADD)
tests_unit_test_haltstats_SOURCES = tests/unit/test-haltstats.c
tests_unit_test_haltstats_CPPFLAGS = $(INPUTS_TEST_CPPFLAGS)
tests_unit_test_haltstats_LDADD = $(INPUTS_TEST_LDADD)
tests_unit_test_thermal_SOURCES = tests/unit/test-thermal.c
tests_unit_test_thermal_CPPFLAGS = $(INPUTS_TEST_CPPFLAGS)
tests_unit_test_thermal_LDADD = $(INPUTS_TEST_LDADD)

EXTRA_DIST += \
	tests/fixtures/netlink/README \
	tests/fixtures/netlink/taskstats-reply.bin \
	tests/fixtures/netlink/taskstats-esrch.bin \
	tests/fixtures/kvm

# Helper of tests/integration/040-taskstats.sh (real vCPU threads).
check_PROGRAMS += tests/integration/ts-probe
tests_integration_ts_probe_SOURCES = tests/integration/ts-probe.c
tests_integration_ts_probe_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(LIBNL_LIBS) -lm
