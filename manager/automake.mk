# manager/automake.mk -- host-side programs and their shared library.
#
# manager/libvpowermgr.a holds the modules that vpowerd, vpowerctl, the
# exporter and the unit tests share (event loop, logging, protocol).
noinst_LIBRARIES += manager/libvpowermgr.a
manager_libvpowermgr_a_SOURCES = \
	manager/log.c manager/log.h \
	manager/sched.c manager/sched.h \
	manager/util.c manager/util.h

# Each area keeps its own fragment (see /tmp/vpower-brief.md ownership).
include manager/hostdrv.mk
include manager/ctl.mk
include manager/gch.mk
include manager/exporter.mk
