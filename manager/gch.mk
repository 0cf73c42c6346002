# manager/gch.mk -- host side of the guest channel (guestchan.c) and the
# shared wire format it decodes (agent/gchproto.c, also built into the
# agent: one format, one file).
manager_libvpowermgr_a_SOURCES += \
	manager/guestchan.c manager/guestchan.h \
	agent/gchproto.c agent/gchproto.h
