# tests/unit/agent.mk -- unit tests of agent/ and the host guest channel.
#
# test-gchproto: the wire format, every field and bound.
# test-guestchan: manager/guestchan.c on the real sched loop against a
# socketpair "guest"; the daemon is a stub struct gch_ops in the test.
# guestchan.c and gchproto.c are compiled in here rather than taken from
# libvpowermgr.a.
AGENT_TESTS = \
	tests/unit/test-gchproto \
	tests/unit/test-guestchan
check_PROGRAMS += $(AGENT_TESTS)
TESTS += $(AGENT_TESTS)

tests_unit_test_gchproto_SOURCES = tests/unit/test-gchproto.c \
	agent/gchproto.c agent/gchproto.h
tests_unit_test_gchproto_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_gchproto_LDADD = $(CMOCKA_LIBS)

tests_unit_test_guestchan_SOURCES = tests/unit/test-guestchan.c \
	manager/guestchan.c manager/guestchan.h \
	agent/gchproto.c agent/gchproto.h \
	manager/sched.c manager/log.c manager/util.c
tests_unit_test_guestchan_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_guestchan_LDADD = $(CMOCKA_LIBS)
