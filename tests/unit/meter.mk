# tests/unit/meter.mk -- unit tests of the power meters (manager/drivers/meter.mk)
# on fixture powercap and hwmon trees built at run time in $TMPDIR.
# ioctl(2) is wrapped to play the OpenIPMI device's side of a DCMI
# exchange on a regular file.
check_PROGRAMS += tests/unit/test-meter
TESTS += tests/unit/test-meter
tests_unit_test_meter_SOURCES = tests/unit/test-meter.c
tests_unit_test_meter_CPPFLAGS = $(AM_CPPFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_meter_LDFLAGS = -Wl,--wrap=ioctl
tests_unit_test_meter_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(CMOCKA_LIBS) -lm
