# manager/automake.mk -- host-side programs and their shared library.
#
# manager/libvpowermgr.a holds the modules that vpowerd, vpowerctl, the
# exporter, vpower-sim and the unit tests share (event loop, logging,
# protocol, the decision cycle).  The cycle reads a VM's policy from its
# domain metadata with libxml2 (manager/drivers/domxml.c), so a program that
# runs the cycle also links $(LIBXML2_LIBS); vpowerctl and the exporter
# do not pull it in.
AM_CPPFLAGS += $(LIBXML2_CFLAGS)
noinst_LIBRARIES += manager/libvpowermgr.a
manager_libvpowermgr_a_SOURCES = \
	manager/log.c manager/log.h \
	manager/sched.c manager/sched.h \
	manager/util.c manager/util.h \
	manager/record.c manager/record.h \
	manager/cycle.c manager/cycle.h \
	manager/vmreg.c manager/vmreg.h \
	manager/vmpolicy.c manager/vmpolicy.h \
	manager/drivers/domxml.c manager/drivers/domxml.h

# The libvirt driver with libvirt's event adapter on the loop, in its
# own library so that vpowerctl, the exporter and vpower-sim, which link
# libvpowermgr.a, do not link libvirt.  A program linking it also needs
# $(LIBVPOWERVIRT_LIBS).
noinst_LIBRARIES += manager/libvpowervirt.a
manager_libvpowervirt_a_SOURCES = \
	manager/drivers/drv_libvirt.c manager/drivers/drv_libvirt.h \
	manager/drivers/virtloop.c manager/drivers/virtloop.h
manager_libvpowervirt_a_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS)
LIBVPOWERVIRT_LIBS = $(LIBVIRT_LIBS) $(LIBXML2_LIBS) $(JSONC_LIBS) $(LIBNL_LIBS)

# vpowerd: the daemon.
sbin_PROGRAMS += manager/vpowerd
manager_vpowerd_SOURCES = \
	manager/vpowerd.c \
	manager/daemon.c manager/daemon.h manager/vpd_types.h \
	manager/notify.c manager/notify.h \
	manager/restore.c manager/restore.h \
	manager/drivers/drv_dummy_hv.c \
	manager/drivers/drv.h manager/conf.h
manager_vpowerd_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) $(JSONC_CFLAGS) \
	$(LIBSYSTEMD_CFLAGS)
manager_vpowerd_LDADD = \
	manager/libvpowervirt.a manager/libvpowerhk.a manager/libvpowermgr.a \
	policy/libvpowerpolicy.a \
	$(LIBVPOWERVIRT_LIBS) $(JSONC_LIBS) $(LIBNL_LIBS) $(LIBSYSTEMD_LIBS) -lm
dist_doc_DATA += docs/vpowerd.md docs/record-format.md

# Each area keeps its own fragment.
include manager/drivers/hostdrv.mk
include manager/control/ctl.mk
include manager/gch.mk
include manager/control/exporter.mk
include manager/inputs/inputs.mk
include manager/drivers/meter.mk
include manager/drivers/hk.mk
include manager/inputs/smt.mk
include manager/calibrate/calib.mk
include manager/migr.mk
