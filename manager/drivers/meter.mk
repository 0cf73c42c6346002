# manager/drivers/meter.mk -- power meters read as energy (docs/meters.md): RAPL
# through powercap, hwmon sensors, IPMI DCMI through the OpenIPMI device
# (built only where <linux/ipmi.h> exists; no library), and a dummy
# meter for the simulator and tests.  All of it goes into
# manager/libvpowermgr.a.
manager_libvpowermgr_a_SOURCES += \
	manager/drivers/meter.c manager/drivers/meter.h \
	manager/drivers/meter_rapl.c \
	manager/drivers/meter_hwmon.c \
	manager/drivers/meter_ipmi.c \
	manager/drivers/meter_dummy.c
dist_doc_DATA += docs/meters.md
# The model checked against the whole-host meter each period, and
# corrected online (docs/meters.md, "vpowerd with a meter").
manager_libvpowermgr_a_SOURCES += \
	manager/modelcheck.c manager/modelcheck.h
