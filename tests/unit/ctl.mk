# tests/unit/ctl.mk -- unit tests of the control protocol (manager/proto.c).
check_PROGRAMS += tests/unit/test-proto
TESTS += tests/unit/test-proto
tests_unit_test_proto_SOURCES = tests/unit/test-proto.c
tests_unit_test_proto_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_proto_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(CMOCKA_LIBS) $(JSONC_LIBS) -lm
