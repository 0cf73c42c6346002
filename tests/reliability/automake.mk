# tests/reliability/automake.mk -- crash safety, faults and resource
# bounds of vpowerd (docs/reliability.md).
#
# make check runs the tests below that need no guests in minutes, plus
# the 10-kill crash test on real TCG guests (skipped with
# VPOWER_FAST_TESTS=1 like every guest test).  `make check-long` runs
# the same with the long settings (RELIABILITY_LONG=1: 300 kills, 10 min
# of churn) and the tests that restart libvirtd or guests many times.

# The daemon core (manager/daemon.c) with the dummy host's error
# injection and a fake hypervisor that raises events.
check_PROGRAMS += tests/reliability/rel-daemon
tests_reliability_rel_daemon_SOURCES = tests/reliability/rel-daemon.c \
	manager/daemon.c manager/daemon.h \
	manager/restore.c manager/restore.h \
	manager/hkopen.c manager/hkopen.h \
	manager/drivers/drv_dummy_hv.c
tests_reliability_rel_daemon_CFLAGS = $(AM_CFLAGS) $(LIBVIRT_CFLAGS) \
	$(JSONC_CFLAGS) $(LIBNL_CFLAGS)
tests_reliability_rel_daemon_LDADD = manager/libvpowervirt.a \
	manager/libvpowerhk.a manager/libvpowermgr.a policy/libvpowerpolicy.a \
	$(LIBVPOWERVIRT_LIBS) $(JSONC_LIBS) $(LIBNL_LIBS) $(LIBSYSTEMD_LIBS) -lm

RELIABILITY_TESTS = \
	tests/reliability/010-crash-kill.sh \
	tests/reliability/011-crash-kill-guests.sh \
	tests/reliability/020-faults.sh \
	tests/reliability/030-resources.sh \
	tests/reliability/040-dummy-new-domains.sh
RELIABILITY_LONG_TESTS = \
	tests/reliability/031-libvirtd-restart.sh \
	tests/reliability/032-guest-restarts.sh
TESTS += $(RELIABILITY_TESTS)
dist_check_SCRIPTS += $(RELIABILITY_TESTS) $(RELIABILITY_LONG_TESTS)
EXTRA_DIST += tests/reliability/rel-lib.sh tests/reliability/guest-lib.sh \
	docs/reliability.md

# Automake writes a log rule only for tests listed in TESTS when it runs
# (our tests have no TEST_EXTENSIONS suffix); the long-only tests need
# theirs spelled out, in the form automake generates, or `make check-long`
# cannot create their logs.
tests/reliability/031-libvirtd-restart.sh.log: tests/reliability/031-libvirtd-restart.sh
	@p='tests/reliability/031-libvirtd-restart.sh'; \
	b='tests/reliability/031-libvirtd-restart.sh'; \
	$(am__check_pre) $(LOG_DRIVER) --test-name "$$f" \
	--log-file $$b.log --trs-file $$b.trs \
	$(am__common_driver_flags) $(AM_LOG_DRIVER_FLAGS) $(LOG_DRIVER_FLAGS) -- $(LOG_COMPILE) \
	"$$tst" $(AM_TESTS_FD_REDIRECT)
tests/reliability/032-guest-restarts.sh.log: tests/reliability/032-guest-restarts.sh
	@p='tests/reliability/032-guest-restarts.sh'; \
	b='tests/reliability/032-guest-restarts.sh'; \
	$(am__check_pre) $(LOG_DRIVER) --test-name "$$f" \
	--log-file $$b.log --trs-file $$b.trs \
	$(am__common_driver_flags) $(AM_LOG_DRIVER_FLAGS) $(LOG_DRIVER_FLAGS) -- $(LOG_COMPILE) \
	"$$tst" $(AM_TESTS_FD_REDIRECT)

# The tests that only check-long runs: libvirtd restarted 10 times and 20
# guest restarts under a running vpowerd (about 3 minutes; CI runs them).
check-restarts:
	$(MAKE) $(AM_MAKEFLAGS) check RELIABILITY_LONG=1 \
	  TESTS="$(RELIABILITY_LONG_TESTS)"
.PHONY: check-restarts

# Long runs through the same harness (logs in tests/reliability/*.log).
check-long:
	$(MAKE) $(AM_MAKEFLAGS) check RELIABILITY_LONG=1 \
	  TESTS="$(RELIABILITY_TESTS) $(RELIABILITY_LONG_TESTS)"
.PHONY: check-long
