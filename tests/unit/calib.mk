# tests/unit/calib.mk -- calibration (manager/calibrate/calib.mk) against a
# simulated host with a hidden true model; the sysfs fixture tree comes
# from tests/fixtures/mksysfs.sh at run time; the true model is
# config/models/xeon-r640-2s.model (distributed by config/automake.mk).
check_PROGRAMS += tests/unit/test-calibrate
TESTS += tests/unit/test-calibrate
tests_unit_test_calibrate_SOURCES = tests/unit/test-calibrate.c \
	tests/unit/hostdrv-fixture.h
tests_unit_test_calibrate_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS) \
	-DVPOWER_ABS_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_calibrate_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(CMOCKA_LIBS) -lm
