# manager/control/exporter.mk -- vpower-exporter and per-VM energy attribution.
#
# attrib.c is pure and called from vpowerd's cycle, so it goes into the
# shared library the daemon links; so does histo.c, the latency
# histogram the daemon fills and the exporter renders.  The exporter is a separate,
# unprivileged program: json-c and libmicrohttpd, never libvirt.
manager_libvpowermgr_a_SOURCES += manager/attrib.c manager/attrib.h \
	manager/control/histo.c manager/control/histo.h

bin_PROGRAMS += manager/vpower-exporter
manager_vpower_exporter_SOURCES = \
	manager/control/exporter.c \
	manager/control/metrics.c manager/control/metrics.h
manager_vpower_exporter_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) $(MHD_CFLAGS) \
	-pthread
manager_vpower_exporter_LDADD = manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(MHD_LIBS) $(JSONC_LIBS) -lpthread -lm

dist_noinst_DATA += config/vpower-exporter.service config/grafana/vpower.json
dist_doc_DATA += docs/metrics.md
# man_MANS is set in manager/control/ctl.mk (included before this file), which
# also puts $(man_MANS) into EXTRA_DIST.
man_MANS += docs/man/vpower-exporter.8
