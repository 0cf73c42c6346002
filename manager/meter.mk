# manager/meter.mk -- power meters read as energy (docs/meters.md): RAPL
# through powercap, hwmon sensors, IPMI DCMI through the OpenIPMI device
# (built only where <linux/ipmi.h> exists; no library), and a dummy
# meter for the simulator and tests.  All of it goes into
# manager/libvpowermgr.a.
manager_libvpowermgr_a_SOURCES += \
	manager/meter.c manager/meter.h \
	manager/meter_rapl.c \
	manager/meter_hwmon.c \
	manager/meter_ipmi.c \
	manager/meter_dummy.c
dist_doc_DATA += docs/meters.md
