# manager/calibrate/calib.mk -- vpower-calibrate: measures this host's energy model
# (docs/man/vpower-calibrate.8).  The core (plan, measure, fit, write)
# and the least-squares solver go into manager/libvpowermgr.a so the
# unit test drives them against a simulated host; the real pinned busy
# loops and the program are only in the program.
manager_libvpowermgr_a_SOURCES += \
	manager/calibrate/calib.c manager/calibrate/calib.h \
	manager/calibrate/calib_lsq.c manager/calibrate/calib_lsq.h

sbin_PROGRAMS += manager/vpower-calibrate
manager_vpower_calibrate_SOURCES = \
	manager/calibrate/vpower-calibrate.c \
	manager/calibrate/calib_loops.c manager/calibrate/calib_loops.h
manager_vpower_calibrate_CFLAGS = $(AM_CFLAGS) -pthread
manager_vpower_calibrate_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a -lm
manager_vpower_calibrate_LDFLAGS = -pthread
# man_MANS is set in manager/control/ctl.mk, which puts it into EXTRA_DIST.
man_MANS += docs/man/vpower-calibrate.8
