# tests/fuzz/trace.mk -- the fuzz target for vpower-sim's trace readers:
# PlanetLab and Bitbrains directories (sim/trace_planetlab.c,
# sim/trace_bitbrains.c) and vpowerd recordings (sim/trace_record.c,
# replayed through sim/replay.c and the daemon's cycle).
#
# make check links the target with the corpus replayer tests/fuzz/replay.c
# and the simulator's libraries (no clang needed), so every input in
# tests/fuzz/corpus/trace runs on every build.  `make fuzz-trace` builds
# the libFuzzer binary with clang and runs it for FUZZ_SECONDS over a copy
# of the corpus; .ci/fuzz runs it with the other targets.
check_PROGRAMS += tests/fuzz/replay-trace
TESTS += tests/fuzz/replay-trace
tests_fuzz_replay_trace_SOURCES = tests/fuzz/fuzz-trace.c tests/fuzz/replay.c
tests_fuzz_replay_trace_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"trace"'
tests_fuzz_replay_trace_LDADD = $(SIM_LDADD)
tests_fuzz_replay_trace_LDFLAGS = -pthread
EXTRA_DIST += tests/fuzz/corpus/trace

# Compiled by clang with the fuzzer's instrumentation: every .c of
# sim/libvpowersim.a (its automake list, so a reader added there is
# fuzzed without touching this file; the recipe keeps the .c files, make
# finds the sources through VPATH), the daemon's cycle and VM registry
# that a recording's decisions run through, and the policy core
# (FUZZ_POLICY_SRC, tests/fuzz/reliability.mk).  The rest of
# manager/libvpowermgr.a (logging, drivers the replay does not use)
# comes from the ordinary build: the linker takes from the archive only
# what the instrumented objects leave undefined.
FUZZ_TRACE_SRC = $(sim_libvpowersim_a_SOURCES) manager/cycle.c \
	manager/vmreg.c
tests/fuzz/fuzz-trace: $(srcdir)/tests/fuzz/fuzz-trace.c $(FUZZ_TRACE_SRC) \
		$(FUZZ_POLICY_SRC) manager/libvpowermgr.a
	$(AM_V_CC)$(MKDIR_P) tests/fuzz && srcs= && \
	for f in $(FUZZ_TRACE_SRC); do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f" ;; esac; \
	done && $(FUZZ_CLANG) $(FUZZ_FLAGS) $(AM_CPPFLAGS) $(JSONC_CFLAGS) \
	  -pthread -o $@ $(srcdir)/tests/fuzz/fuzz-trace.c $$srcs \
	  $(FUZZ_POLICY_SRC) manager/libvpowermgr.a $(JSONC_LIBS) \
	  $(LIBXML2_LIBS) -lm

# `make fuzz-trace` runs it with the file parsers' recipe in
# reliability.mk: the recording replays a policy decision per few dozen
# bytes, so inputs stay at 8 KiB like theirs.
fuzz: fuzz-trace
.PHONY: fuzz-trace
CLEANFILES += tests/fuzz/fuzz-trace
