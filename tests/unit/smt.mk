# tests/unit/smt.mk -- the qemu.conf 'sched_core' reader.
check_PROGRAMS += tests/unit/test-qemuconf
TESTS += tests/unit/test-qemuconf
tests_unit_test_qemuconf_SOURCES = tests/unit/test-qemuconf.c
tests_unit_test_qemuconf_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_qemuconf_LDADD = manager/libvpowermgr.a $(CMOCKA_LIBS)
