# manager/inputs/inputs.mk -- measurement inputs for vpowerd: vCPU run and ready
# time (taskstats netlink, schedstat fallback), thermal capacity limits
# (thermal netlink), KVM halt statistics and the frequency that ran
# (APERF/MPERF, cpufreq).  Everything goes into manager/libvpowermgr.a;
# a program that calls ts_* or thermal_* links $(LIBNL_LIBS).
AM_CPPFLAGS += $(LIBNL_CFLAGS)
manager_libvpowermgr_a_SOURCES += \
	manager/inputs/taskstats.c manager/inputs/taskstats.h \
	manager/inputs/freqsrc.c manager/inputs/freqsrc.h \
	manager/inputs/haltstats.c manager/inputs/haltstats.h \
	manager/inputs/thermal.c manager/inputs/thermal.h
EXTRA_DIST += docs/inputs.md
