# manager/automake.mk -- host-side programs and their shared library.
#
# manager/libvpowermgr.a holds the modules that vpowerd, vpowerctl, the
# exporter and the unit tests share (event loop, logging, protocol).
noinst_LIBRARIES += manager/libvpowermgr.a
manager_libvpowermgr_a_SOURCES = \
	manager/log.c manager/log.h \
	manager/sched.c manager/sched.h \
	manager/util.c manager/util.h \
	manager/record.c manager/record.h

# The libvirt driver with libvirt's event adapter on the loop and the
# domain XML reader (libxml2), in their own library so that vpowerctl and
# the exporter, which link libvpowermgr.a, link neither libvirt nor
# libxml2.  A program linking it also needs $(LIBVPOWERVIRT_LIBS).
noinst_LIBRARIES += manager/libvpowervirt.a
manager_libvpowervirt_a_SOURCES = \
	manager/drv_libvirt.c manager/drv_libvirt.h \
	manager/virtloop.c manager/virtloop.h \
	manager/domxml.c manager/domxml.h
manager_libvpowervirt_a_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) \
	$(LIBXML2_CFLAGS)
LIBVPOWERVIRT_LIBS = $(LIBVIRT_LIBS) $(LIBXML2_LIBS) $(JSONC_LIBS)

# vpowerd: the daemon.
sbin_PROGRAMS += manager/vpowerd
manager_vpowerd_SOURCES = \
	manager/vpowerd.c \
	manager/daemon.c manager/daemon.h \
	manager/notify.c manager/notify.h \
	manager/drv_dummy_hv.c \
	manager/drv.h manager/conf.h
manager_vpowerd_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) $(JSONC_CFLAGS) \
	$(LIBSYSTEMD_CFLAGS)
manager_vpowerd_LDADD = \
	manager/libvpowervirt.a manager/libvpowermgr.a \
	policy/libvpowerpolicy.a \
	$(LIBVPOWERVIRT_LIBS) $(JSONC_LIBS) $(LIBNL_LIBS) $(LIBSYSTEMD_LIBS) -lm
dist_doc_DATA += docs/vpowerd.md docs/record-format.md

# Each area keeps its own fragment.
include manager/hostdrv.mk
include manager/ctl.mk
include manager/gch.mk
include manager/exporter.mk
include manager/inputs.mk
include manager/meter.mk
include manager/hk.mk
include manager/smt.mk
include manager/calib.mk
include manager/migr.mk
