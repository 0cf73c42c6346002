# tests/unit/ctl.mk -- unit tests of the control protocol (manager/control/proto.c),
# its client (ctlclient.c, jsonget.c) and of what keeps foreign bytes out
# of log lines (manager/log.c).
check_PROGRAMS += tests/unit/test-proto
TESTS += tests/unit/test-proto
tests_unit_test_proto_SOURCES = tests/unit/test-proto.c
tests_unit_test_proto_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_proto_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(CMOCKA_LIBS) $(JSONC_LIBS) -lm

check_PROGRAMS += tests/unit/test-ctlclient
TESTS += tests/unit/test-ctlclient
tests_unit_test_ctlclient_SOURCES = tests/unit/test-ctlclient.c
tests_unit_test_ctlclient_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) \
	$(JSONC_CFLAGS)
tests_unit_test_ctlclient_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(CMOCKA_LIBS) $(JSONC_LIBS) -lm

check_PROGRAMS += tests/unit/test-log
TESTS += tests/unit/test-log
tests_unit_test_log_SOURCES = tests/unit/test-log.c
tests_unit_test_log_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_log_LDADD = manager/libvpowermgr.a $(CMOCKA_LIBS)

# tests/cli: vpowerctl end to end.  ctl-server links the real ctl.c and
# cmds.c around a hand-built daemon state; vpowerctl.sh runs the real
# vpowerd (dummy hypervisor, sysfs fixture); top.sh drives `top` in tmux.
check_PROGRAMS += tests/cli/ctl-server
tests_cli_ctl_server_SOURCES = tests/cli/ctl-server.c
tests_cli_ctl_server_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_cli_ctl_server_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(JSONC_LIBS) -lm
CLI_TESTS = tests/cli/ctl-server.sh tests/cli/vpowerctl.sh tests/cli/top.sh
dist_check_SCRIPTS += $(CLI_TESTS)
TESTS += $(CLI_TESTS)
EXTRA_DIST += tests/cli/lib.sh tests/cli/verbs.sh tests/cli/check-schema.py \
	tests/cli/proto-client.py
