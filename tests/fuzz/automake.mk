# tests/fuzz/automake.mk

# Guest channel decoder (agent/gchproto.c): the corpus in
# tests/fuzz/corpus/gch and tests/fuzz/regressions/gch is replayed by
# `make check`; `make fuzz-gch` builds the libFuzzer binary with clang.
check_PROGRAMS += tests/fuzz/fuzz-gch-replay
TESTS += tests/fuzz/fuzz-gch-replay
tests_fuzz_fuzz_gch_replay_SOURCES = tests/fuzz/fuzz-gch.c \
	agent/gchproto.c agent/gchproto.h
tests_fuzz_fuzz_gch_replay_CPPFLAGS = $(AM_CPPFLAGS) -DGCH_REPLAY_MAIN
EXTRA_DIST += tests/fuzz/corpus/gch
FUZZ_CC = clang
fuzz-gch: $(srcdir)/tests/fuzz/fuzz-gch.c $(srcdir)/agent/gchproto.c
	$(AM_V_CC)$(MKDIR_P) tests/fuzz && $(FUZZ_CC) -g -O1 \
		-fsanitize=fuzzer,address,undefined -I$(top_builddir) \
		-I$(top_srcdir) -o tests/fuzz/fuzz-gch $^
	@echo "run: tests/fuzz/fuzz-gch -max_len=2048 $(srcdir)/tests/fuzz/corpus/gch"
CLEANFILES += tests/fuzz/fuzz-gch
.PHONY: fuzz-gch
include tests/fuzz/proto.mk
include tests/fuzz/reliability.mk
