# agent/automake.mk -- build rules for agent/ (included by Makefile.am).
#
# Everything here runs inside a guest: vpower-agent and vpower-hint are
# linked -static (no libvirt, no json-c, no shared libc needed in the
# guest image) and libvpowerhint is a plain static library plus a
# pkg-config file.  agent/gchproto.c is also compiled into vpowerd (see
# manager/gch.mk): one wire format for both ends.

lib_LIBRARIES = agent/libvpowerhint.a
agent_libvpowerhint_a_SOURCES = \
	agent/hint.c agent/vpowerhint.h \
	agent/gchproto.c agent/gchproto.h \
	agent/port.c agent/port.h
include_HEADERS = agent/vpowerhint.h

sbin_PROGRAMS += agent/vpower-agent
agent_vpower_agent_SOURCES = agent/vpower-agent.c \
	agent/gchproto.c agent/gchproto.h agent/port.c agent/port.h
agent_vpower_agent_LDFLAGS = $(GUEST_LDFLAGS)

bin_PROGRAMS += agent/vpower-hint
agent_vpower_hint_SOURCES = agent/vpower-hint.c
agent_vpower_hint_LDADD = agent/libvpowerhint.a
agent_vpower_hint_LDFLAGS = $(GUEST_LDFLAGS)

dist_man_MANS = agent/vpower-agent.8 agent/vpower-hint.1 agent/vpowerhint.3

pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = agent/vpowerhint.pc
EXTRA_DIST += agent/vpowerhint.pc.in
CLEANFILES += agent/vpowerhint.pc
agent/vpowerhint.pc: agent/vpowerhint.pc.in Makefile
	$(AM_V_GEN)$(MKDIR_P) agent && sed \
		-e 's|@prefix[@]|$(prefix)|g' \
		-e 's|@libdir[@]|$(libdir)|g' \
		-e 's|@includedir[@]|$(includedir)|g' \
		-e 's|@VERSION[@]|$(VERSION)|g' \
		$(srcdir)/agent/vpowerhint.pc.in > $@.tmp && mv $@.tmp $@

# Test tools for tests/integration/03x-agent-*.sh that run in the guest:
# a misbehaving guest (static, goes into the guest image) and the
# guest-side scenario script.  The host end of those tests lives in
# tests/integration: agent/ links no host code.
check_PROGRAMS += agent/gch-hostile
agent_gch_hostile_SOURCES = agent/gch-hostile.c \
	agent/gchproto.c agent/gchproto.h agent/port.c agent/port.h
agent_gch_hostile_LDFLAGS = $(GUEST_LDFLAGS)
EXTRA_DIST += agent/guest-agent-test.sh
