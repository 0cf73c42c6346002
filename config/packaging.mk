# config/packaging.mk -- install layout beyond the programs (systemd unit,
# tmpfiles.d, sysusers.d, example configuration, docs), the install test,
# and distribution fixes for files other fragments do not list.  Owned by
# packaging; included once from Makefile.am.  docs/install.md describes
# the resulting layout.

# ------------------------------------------------------------ systemd

# vpowerd.service names $(sbindir)/vpowerd, so it is generated.  A
# vpowerd built without libsystemd never says READY=1 nor sends
# keep-alives: its unit is Type=simple without a watchdog.
EXTRA_DIST += config/vpowerd.service.in config/vpower.tmpfiles \
	config/vpower.sysusers
CLEANFILES += config/vpowerd.service
if HAVE_LIBSYSTEMD
VPOWERD_UNIT_SED =
else
VPOWERD_UNIT_SED = -e 's|^Type=notify$$|Type=simple|' \
	-e '/^WatchdogSec=/d' -e '/^NotifyAccess=/d'
endif
config/vpowerd.service: config/vpowerd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) config && sed \
		-e 's|@sbindir[@]|$(sbindir)|g' \
		-e 's|@docdir[@]|$(docdir)|g' $(VPOWERD_UNIT_SED) \
		$(srcdir)/config/vpowerd.service.in > $@.tmp && mv $@.tmp $@
all-local: config/vpowerd.service

if HAVE_SYSTEMDSYSTEMUNITDIR
# vpower-exporter.service is distributed by manager/control/exporter.mk.
nodist_systemdsystemunit_DATA = config/vpowerd.service \
	config/vpower-exporter.service
endif

# tmpfiles.d and sysusers.d want NAME.conf; the sources keep telling names.
PACKAGING_HOOK_INSTALL =
PACKAGING_HOOK_UNINSTALL =
if HAVE_TMPFILESDIR
PACKAGING_HOOK_INSTALL += install-vpower-tmpfiles
PACKAGING_HOOK_UNINSTALL += uninstall-vpower-tmpfiles
endif
if HAVE_SYSUSERSDIR
PACKAGING_HOOK_INSTALL += install-vpower-sysusers
PACKAGING_HOOK_UNINSTALL += uninstall-vpower-sysusers
endif
install-vpower-tmpfiles:
	$(MKDIR_P) '$(DESTDIR)$(tmpfilesdir)'
	$(INSTALL_DATA) $(srcdir)/config/vpower.tmpfiles \
		'$(DESTDIR)$(tmpfilesdir)/vpower.conf'
uninstall-vpower-tmpfiles:
	rm -f '$(DESTDIR)$(tmpfilesdir)/vpower.conf'
install-vpower-sysusers:
	$(MKDIR_P) '$(DESTDIR)$(sysusersdir)'
	$(INSTALL_DATA) $(srcdir)/config/vpower.sysusers \
		'$(DESTDIR)$(sysusersdir)/vpower.conf'
uninstall-vpower-sysusers:
	rm -f '$(DESTDIR)$(sysusersdir)/vpower.conf'
.PHONY: install-vpower-tmpfiles uninstall-vpower-tmpfiles \
	install-vpower-sysusers uninstall-vpower-sysusers

# ------------------------------------------------------------ config, docs

# The example configuration sets every directive to its default, so
# installing it changes nothing; an existing file is kept.
vpowerconfdir = $(sysconfdir)/vpower
install-vpower-conf:
	$(MKDIR_P) '$(DESTDIR)$(vpowerconfdir)'
	@if test -f '$(DESTDIR)$(vpowerconfdir)/vpowerd.conf'; then \
	  echo "keeping existing $(DESTDIR)$(vpowerconfdir)/vpowerd.conf"; \
	else \
	  echo " $(INSTALL_DATA) $(srcdir)/config/vpowerd.conf '$(DESTDIR)$(vpowerconfdir)/vpowerd.conf'"; \
	  $(INSTALL_DATA) $(srcdir)/config/vpowerd.conf \
	    '$(DESTDIR)$(vpowerconfdir)/vpowerd.conf'; \
	fi
uninstall-vpower-conf:
	rm -f '$(DESTDIR)$(vpowerconfdir)/vpowerd.conf'
.PHONY: install-vpower-conf uninstall-vpower-conf
PACKAGING_HOOK_INSTALL += install-vpower-conf
PACKAGING_HOOK_UNINSTALL += uninstall-vpower-conf

install-data-local: $(PACKAGING_HOOK_INSTALL)
uninstall-local: $(PACKAGING_HOOK_UNINSTALL)

# Reference docs other fragments only distribute.  A file appears here
# once it is committed (a fresh clone must build).
dist_doc_DATA += docs/install.md docs/security.md \
	docs/configuration.md docs/energy-model.md docs/inputs.md \
	docs/simulator.md docs/baselines.md docs/fleet.md docs/policy.md \
	docs/guest-agent.md

EXTRA_DIST += LICENSE
dist_doc_DATA += LICENSE

# ------------------------------------------------------------ dist fixes

# Files that tests source or run but no fragment lists (found by make
# distcheck).  Owners: move them into your fragment and drop them here.
EXTRA_DIST += \
	tests/integration/lib.sh \
	tests/integration/services.sh \
	tests/integration/build-guest.sh \
	tests/integration/guest-init.sh \
	tests/integration/README.md

# Packaging and CI sources travel with the tarball.
EXTRA_DIST += .ci/install-deps .ci/run .ci/package \
	debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/vpowerd.install \
	debian/vpower-agent.install debian/not-installed debian/vpowerd.sysusers \
	debian/vpowerd.postrm \
	debian/vpower-agent.lintian-overrides

# distcheck installs under its own prefix, never into /lib/systemd, and
# boots no guests (tests/integration/lib.sh skips them with 77).
AM_DISTCHECK_CONFIGURE_FLAGS = \
	--with-systemdsystemunitdir='$${libdir}/systemd/system' \
	--with-tmpfilesdir='$${libdir}/tmpfiles.d' \
	--with-sysusersdir='$${libdir}/sysusers.d'

# `make distcheck-fast`: distcheck without the minutes-long guest tests.
distcheck-fast:
	VPOWER_FAST_TESTS=1 $(MAKE) $(AM_MAKEFLAGS) distcheck
.PHONY: distcheck-fast

# ------------------------------------------------------------ install test

# tests/install/install.sh runs `make install DESTDIR=<tmp>` and checks
# the layout; `make print-install-dirs` tells it where things go.
INSTALL_TESTS = tests/install/install.sh
dist_check_SCRIPTS += $(INSTALL_TESTS)
TESTS += $(INSTALL_TESTS)
installcheck-local:
	VPOWER_SRCDIR='$(abs_top_srcdir)' VPOWER_BUILDDIR='$(abs_top_builddir)' \
	  $(SHELL) $(srcdir)/tests/install/install.sh

print-install-dirs:
	@echo "bindir='$(bindir)'"
	@echo "sbindir='$(sbindir)'"
	@echo "libdir='$(libdir)'"
	@echo "includedir='$(includedir)'"
	@echo "mandir='$(mandir)'"
	@echo "docdir='$(docdir)'"
	@echo "pkgdatadir='$(pkgdatadir)'"
	@echo "datadir='$(datadir)'"
	@echo "vpowerconfdir='$(vpowerconfdir)'"
	@echo "systemdsystemunitdir='$(systemdsystemunitdir)'"
	@echo "tmpfilesdir='$(tmpfilesdir)'"
	@echo "sysusersdir='$(sysusersdir)'"
.PHONY: print-install-dirs
