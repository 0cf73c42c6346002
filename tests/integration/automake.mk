# tests/integration/automake.mk -- scripts that run the real programs.
#
# 01x: vpowerd.  012 runs the real daemon with the dummy hypervisor
# against a sysfs fixture (no libvirt, no root); 013 checks the wiring
# (control socket, status sources, energy split, guest channel, record)
# with the dummy hypervisor and host; 015 the refusals of bad files and
# settings before anything changes; 017 another power agent writing
# the files vpowerd manages (dummy hypervisor, sysfs fixture); 010 and
# 011 run it against real libvirtd and TCG guests (root; they skip with
# a reason only where libvirtd or QEMU cannot run).
# 00x: the guest harness itself -- guests boot and carry load, and the
# reference measurement: pinning three light guests onto cpu0 by hand
# frees cpu1 (what 011 then asks of vpowerd on its own).
HARNESS_TESTS = \
	tests/integration/001-guests-boot.sh \
	tests/integration/002-manual-pinning.sh
dist_check_SCRIPTS += $(HARNESS_TESTS)
TESTS += $(HARNESS_TESTS)

VPOWERD_TESTS = \
	tests/integration/010-vpowerd-pack.sh \
	tests/integration/011-vpowerd-light3.sh \
	tests/integration/012-vpowerd-dummy.sh \
	tests/integration/013-vpowerd-wiring.sh \
	tests/integration/014-vpowerd-offline.sh \
	tests/integration/015-vpowerd-notify.sh \
	tests/integration/016-vpowerd-startup-checks.sh \
	tests/integration/018-vpowerd-agents.sh \
	tests/integration/019-vpowerd-migration.sh \
	tests/integration/020-vpowerd-meters.sh \
	tests/integration/021-vpowerd-housekeeping.sh \
	tests/integration/023-vpowerd-hk-guests.sh
dist_check_SCRIPTS += $(VPOWERD_TESTS)
TESTS += $(VPOWERD_TESTS)
EXTRA_DIST += tests/integration/vpowerd-lib.sh \
	tests/integration/notify-check.py

# 05x: vpower-exporter scraped by a real Prometheus server (050: dummy
# or fake daemon; 051: real vpowerd and guests; 052: scrapes during a
# slowloris from the scraper's own address, dummy daemon).
PROMETHEUS_TESTS = \
	tests/integration/050-prometheus.sh \
	tests/integration/051-prometheus-guests.sh \
	tests/integration/052-exporter-slowloris.sh
dist_check_SCRIPTS += $(PROMETHEUS_TESTS)
TESTS += $(PROMETHEUS_TESTS)
EXTRA_DIST += tests/integration/prom-lib.sh tests/integration/prom-flood.py \
	tests/integration/prom-slowloris.py tests/integration/fake-vpowerd.py
dist_check_SCRIPTS += tests/integration/040-taskstats.sh
TESTS += tests/integration/040-taskstats.sh
dist_check_SCRIPTS += tests/integration/030-agent-channel.sh
TESTS += tests/integration/030-agent-channel.sh
dist_check_SCRIPTS += tests/integration/031-agent-vpowerd.sh
TESTS += tests/integration/031-agent-vpowerd.sh
# 032: vpower-hint bench through gch-testhost over a pty standing in for
# the virtio-serial port (no guest, no root).
dist_check_SCRIPTS += tests/integration/032-hint-bench-pty.sh
TESTS += tests/integration/032-hint-bench-pty.sh
EXTRA_DIST += tests/integration/pty-relay.py
# 033: vpowerd's timing of the host side of guest hints (status
# hint_apply_seconds), dummy hypervisor and host, a fake guest end.
dist_check_SCRIPTS += tests/integration/033-hint-apply-dummy.sh
TESTS += tests/integration/033-hint-apply-dummy.sh
# 034: three guests hint at once (1, 1 and 4 vCPUs) through the real
# vpowerd while a status client is served: each VM's host side.
dist_check_SCRIPTS += tests/integration/034-hint-three-guests.sh
TESTS += tests/integration/034-hint-three-guests.sh
dist_check_SCRIPTS += tests/integration/060-policy-metadata.sh
TESTS += tests/integration/060-policy-metadata.sh
# 061: a real live migration between the system libvirtd and a second
# one in a private mount namespace (own sockets, own host_uuid).
dist_check_SCRIPTS += tests/integration/061-migration.sh
TESTS += tests/integration/061-migration.sh

# migr-watch: the libvirt driver's view of one domain through a
# migration, on each end (061).
check_PROGRAMS += tests/integration/migr-watch
tests_integration_migr_watch_SOURCES = tests/integration/migr-watch.c
tests_integration_migr_watch_LDADD = manager/libvpowervirt.a \
	manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBVPOWERVIRT_LIBS) -lm

# pin-floor: one live vCPU pin through the libvirt driver, timed, with
# no vpowerd running (031: the floor under a hint's host side).
check_PROGRAMS += tests/integration/pin-floor
tests_integration_pin_floor_SOURCES = tests/integration/pin-floor.c
tests_integration_pin_floor_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS)
tests_integration_pin_floor_LDADD = manager/libvpowervirt.a \
	manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBVPOWERVIRT_LIBS) -lm

# gch-testhost: the real manager/guestchan.c on the real event loop with
# stub gch_ops in place of the daemon, the host end of 030.
check_PROGRAMS += tests/integration/gch-testhost
tests_integration_gch_testhost_SOURCES = tests/integration/gch-testhost.c
tests_integration_gch_testhost_LDADD = manager/libvpowermgr.a

# replay-check: a minimal reader of docs/record-format.md that replays a
# vpowerd record through the policy and compares every plan (013).
check_PROGRAMS += tests/integration/replay-check
tests_integration_replay_check_SOURCES = tests/integration/replay-check.c
tests_integration_replay_check_LDADD = policy/libvpowerpolicy.a -lm

# SMT isolation in vpowerd on the dummy hypervisor (no root).
dist_check_SCRIPTS += tests/integration/017-vpowerd-smt.sh
TESTS += tests/integration/017-vpowerd-smt.sh
# 07x: vpower-calibrate on the real CPUs with fixture sysfs and powercap
# trees (no root; the limits it sets land in the fixture).
CALIBRATE_TESTS = tests/integration/070-calibrate-fixture.sh
dist_check_SCRIPTS += $(CALIBRATE_TESTS)
TESTS += $(CALIBRATE_TESTS)
