# manager/drivers/hk.mk -- the housekeeping driver: confines host processes
# (cgroup cpusets, or systemd units over sd-bus), device interrupts and
# unbound workqueues to the housekeeping CPUs and restores them.  Its own
# library because of sd-bus: a program linking it also needs
# $(LIBSYSTEMD_LIBS) (empty without libsystemd).
noinst_LIBRARIES += manager/libvpowerhk.a
manager_libvpowerhk_a_SOURCES = \
	manager/drivers/housekeeping.c manager/drivers/housekeeping.h \
	manager/drivers/housekeeping_int.h \
	manager/drivers/housekeeping_cg.c \
	manager/drivers/housekeeping_irq.c \
	manager/drivers/housekeeping_stats.c \
	manager/drivers/housekeeping_ops.c \
	manager/drivers/drv_hk.c manager/drivers/drv_hk.h
manager_libvpowerhk_a_CFLAGS = $(AM_CFLAGS) $(LIBSYSTEMD_CFLAGS)
dist_doc_DATA += docs/housekeeping.md

# The cycle's side (the housekeeping set follows the active set) goes
# into the shared library with the cycle; opening the driver from
# vpowerd.conf into vpowerd, which links libvpowerhk.a.
manager_libvpowermgr_a_SOURCES += manager/hkset.c manager/hkset.h
manager_vpowerd_SOURCES += manager/hkopen.c manager/hkopen.h
