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
	manager/drivers/housekeeping_ops.c
manager_libvpowerhk_a_CFLAGS = $(AM_CFLAGS) $(LIBSYSTEMD_CFLAGS)
dist_doc_DATA += docs/housekeeping.md
