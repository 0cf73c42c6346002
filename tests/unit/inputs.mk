# tests/unit/inputs.mk -- unit tests of the measurement inputs
# (manager/inputs.mk): recorded netlink replies in tests/fixtures/netlink,
# KVM stats fixtures in tests/fixtures/kvm, fixture trees built at run time.
INPUTS_TEST_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) \
	-DVPOWER_ABS_SRCDIR='"$(abs_top_srcdir)"'
INPUTS_TEST_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBNL_LIBS) $(CMOCKA_LIBS) -lm

INPUTS_TESTS = \
	tests/unit/test-taskstats
check_PROGRAMS += $(INPUTS_TESTS)
TESTS += $(INPUTS_TESTS)

tests_unit_test_taskstats_SOURCES = tests/unit/test-taskstats.c
tests_unit_test_taskstats_CPPFLAGS = $(INPUTS_TEST_CPPFLAGS)
tests_unit_test_taskstats_LDADD = $(INPUTS_TEST_LDADD)

EXTRA_DIST += \
	tests/fixtures/netlink/README \
	tests/fixtures/netlink/taskstats-reply.bin \
	tests/fixtures/netlink/taskstats-esrch.bin
