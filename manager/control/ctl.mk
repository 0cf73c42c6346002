# manager/control/ctl.mk -- the control socket (server side in the daemon's
# library), the vpowerctl client, their docs, man pages and completion.
#
# proto.c is shared by vpowerd, vpowerctl and vpower-exporter, and so are
# the client (ctlclient.c) and the result accessors (jsonget.c); ctl.c and
# cmds.c only by vpowerd (they need daemon.c's vpd_* calls, which the
# static library resolves only where they are linked).  vpowerctl links
# json-c and the pure policy library (policy names), never libvirt.
manager_libvpowermgr_a_SOURCES += \
	manager/control/proto.c manager/control/proto.h \
	manager/control/ctlclient.c manager/control/ctlclient.h \
	manager/control/jsonget.c manager/control/jsonget.h \
	manager/control/ctl.c manager/control/ctl.h \
	manager/control/cmds.c manager/control/cmds.h

bin_PROGRAMS += manager/vpowerctl
manager_vpowerctl_SOURCES = manager/control/vpowerctl.c
manager_vpowerctl_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
manager_vpowerctl_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(JSONC_LIBS) -lm

# man_MANS (not dist_man_MANS, which agent/automake.mk defines) plus
# EXTRA_DIST, so the two fragments do not collide.
man_MANS = docs/man/vpowerctl.8 docs/man/vpowerd.8 docs/man/vpowerd.conf.5
EXTRA_DIST += $(man_MANS)
dist_doc_DATA += docs/control-protocol.md
dist_noinst_DATA += docs/schema/request.json docs/schema/reply.json \
	docs/schema/status.json docs/schema/list.json \
	docs/schema/get-policy.json docs/schema/explain.json \
	docs/schema/version.json docs/schema/override.json

bashcompletiondir = $(datadir)/bash-completion/completions
dist_bashcompletion_DATA = config/bash-completion/vpowerctl
