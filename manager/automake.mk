# manager/automake.mk -- host-side programs and their shared library.
#
# manager/libvpowermgr.a holds the modules that vpowerd, vpowerctl, the
# exporter and the unit tests share (event loop, logging, protocol).
noinst_LIBRARIES += manager/libvpowermgr.a
manager_libvpowermgr_a_SOURCES = \
	manager/log.c manager/log.h \
	manager/sched.c manager/sched.h \
	manager/util.c manager/util.h \
	manager/record.c manager/record.h \
	manager/cycle.c manager/cycle.h \
	manager/vmreg.c manager/vmreg.h \
	manager/vmpolicy.c manager/vmpolicy.h

# vpowerd: the daemon.  The libvirt driver lives here, not in the shared
# library, so that vpowerctl and the exporter do not link libvirt.
sbin_PROGRAMS += manager/vpowerd
manager_vpowerd_SOURCES = \
	manager/vpowerd.c \
	manager/daemon.c manager/daemon.h \
	manager/restore.c manager/restore.h \
	manager/drv_libvirt.c \
	manager/drv_dummy_hv.c \
	manager/drv.h manager/conf.h
manager_vpowerd_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) $(JSONC_CFLAGS)
manager_vpowerd_LDADD = \
	manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBVIRT_LIBS) $(JSONC_LIBS) $(LIBNL_LIBS) -lm
dist_doc_DATA += docs/vpowerd.md docs/record-format.md

# Each area keeps its own fragment (see /tmp/vpower-brief.md ownership).
include manager/hostdrv.mk
include manager/ctl.mk
include manager/gch.mk
include manager/exporter.mk
include manager/inputs.mk
