# manager/drivers/hostdrv.mk -- host drivers (sysfs, dummy), the energy model built
# from sysfs, the config parser and the restore journal.  All of it goes
# into manager/libvpowermgr.a, which vpowerd and the unit tests link.
manager_libvpowermgr_a_SOURCES += \
	manager/conf.c manager/conf.h \
	manager/drivers/cgpin.c manager/drivers/cgpin.h \
	manager/drivers/drv_dummy_host.c manager/drivers/drv_dummy_host.h \
	manager/inputs/hostmodel.c manager/inputs/hostmodel.h \
	manager/journal.c manager/journal.h \
	manager/drivers/selfpin.c manager/drivers/selfpin.h \
	manager/drivers/sysfs.c manager/drivers/sysfs.h \
	manager/drivers/sysfs_io.c manager/drivers/sysfs_io.h

