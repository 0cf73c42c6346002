# tests/fuzz/reliability.mk -- fuzz targets for the two file parsers:
# vpowerd.conf (conf_parse, manager/conf.c) and energy models
# (pol_model_parse, policy/model.c).
#
# make check links each target with the generic corpus replayer
# tests/fuzz/replay.c (no clang needed), so every committed input in
# tests/fuzz/corpus/{conf,model} -- good files, mutations, regressions --
# runs on every build.  `make fuzz-conf` / `make fuzz-model` build the
# libFuzzer binaries with clang (parser and policy compiled with the
# sanitizers, so coverage reaches them) and run them for FUZZ_SECONDS over
# a copy of the corpus.  .ci/fuzz runs all four targets.
check_PROGRAMS += tests/fuzz/replay-conf tests/fuzz/replay-model
TESTS += tests/fuzz/replay-conf tests/fuzz/replay-model
tests_fuzz_replay_conf_SOURCES = tests/fuzz/fuzz-conf.c tests/fuzz/replay.c
tests_fuzz_replay_conf_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"conf"'
tests_fuzz_replay_conf_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a -lm
tests_fuzz_replay_model_SOURCES = tests/fuzz/fuzz-model.c tests/fuzz/replay.c
tests_fuzz_replay_model_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"model"'
tests_fuzz_replay_model_LDADD = policy/libvpowerpolicy.a -lm
EXTRA_DIST += tests/fuzz/corpus/conf tests/fuzz/corpus/model

# The whole policy core, compiled by clang with the fuzzer's
# instrumentation (the model target runs pol_decide on what it parses).
# Every .c of policy/automake.mk: tests/lint/fuzz-sources.sh checks it.
FUZZ_POLICY_SRC = $(srcdir)/policy/cpuset.c $(srcdir)/policy/num.c \
	$(srcdir)/policy/model.c \
	$(srcdir)/policy/load.c $(srcdir)/policy/plan.c \
	$(srcdir)/policy/energy.c $(srcdir)/policy/state.c \
	$(srcdir)/policy/level.c $(srcdir)/policy/own.c $(srcdir)/policy/pool.c \
	$(srcdir)/policy/demand.c $(srcdir)/policy/misfit.c \
	$(srcdir)/policy/idle.c $(srcdir)/policy/eval.c $(srcdir)/policy/trim.c \
	$(srcdir)/policy/race.c $(srcdir)/policy/choose.c \
	$(srcdir)/policy/iso.c $(srcdir)/policy/emit.c $(srcdir)/policy/decide.c \
	$(srcdir)/policy/explain.c $(srcdir)/policy/correct.c
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I$(top_builddir) -I$(top_srcdir)

tests/fuzz/fuzz-conf: $(srcdir)/tests/fuzz/fuzz-conf.c \
		$(srcdir)/manager/conf.c $(srcdir)/manager/util.c \
		$(FUZZ_POLICY_SRC)
	$(AM_V_CC)$(MKDIR_P) tests/fuzz && $(FUZZ_CLANG) $(FUZZ_FLAGS) \
	  -o $@ $(srcdir)/tests/fuzz/fuzz-conf.c $(srcdir)/manager/conf.c \
	  $(srcdir)/manager/util.c $(FUZZ_POLICY_SRC) -lm
tests/fuzz/fuzz-model: $(srcdir)/tests/fuzz/fuzz-model.c $(FUZZ_POLICY_SRC)
	$(AM_V_CC)$(MKDIR_P) tests/fuzz && $(FUZZ_CLANG) $(FUZZ_FLAGS) \
	  -o $@ $(srcdir)/tests/fuzz/fuzz-model.c $(FUZZ_POLICY_SRC) -lm

# Runs a file parser's target over a copy of its corpus; trace.mk's
# fuzz-trace is one more such parser and uses this recipe too.
fuzz-conf fuzz-model fuzz-trace:
	@command -v $(FUZZ_CLANG) >/dev/null || \
	  { echo "$@: $(FUZZ_CLANG) not found"; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) tests/fuzz/$@
	rm -rf tests/fuzz/work-$@ && mkdir -p tests/fuzz/work-$@
	cp $(srcdir)/tests/fuzz/corpus/$(@:fuzz-%=%)/* tests/fuzz/work-$@/
	tests/fuzz/$@ -max_total_time=$(FUZZ_SECONDS) -max_len=8192 \
	  -timeout=10 tests/fuzz/work-$@
fuzz: fuzz-conf fuzz-model
.PHONY: fuzz-conf fuzz-model
CLEANFILES += tests/fuzz/fuzz-conf tests/fuzz/fuzz-model
clean-local: clean-fuzz-parsers
clean-fuzz-parsers:
	rm -rf tests/fuzz/work-fuzz-conf tests/fuzz/work-fuzz-model \
	  tests/fuzz/work-fuzz-trace
.PHONY: clean-fuzz-parsers
