# tests/fuzz/gch.mk -- the guest channel's fuzz targets.
#
# fuzz-gch: the wire decoder alone (agent/gchproto.c); every accepted
# message must re-encode to the same bytes.  fuzz-guestchan: the host's
# whole input path (manager/guestchan.c: resync, skip, bounds, dispatch).
# make check replays tests/fuzz/corpus/gch (and regressions/gch) through
# both without clang; `make fuzz-gch` builds the libFuzzer binaries with
# clang and runs each for FUZZ_SECONDS over a copy of the corpus.
check_PROGRAMS += tests/fuzz/fuzz-gch-replay tests/fuzz/replay-guestchan
TESTS += tests/fuzz/fuzz-gch-replay tests/fuzz/replay-guestchan
tests_fuzz_fuzz_gch_replay_SOURCES = tests/fuzz/fuzz-gch.c \
	agent/gchproto.c agent/gchproto.h
tests_fuzz_fuzz_gch_replay_CPPFLAGS = $(AM_CPPFLAGS) -DGCH_REPLAY_MAIN
tests_fuzz_replay_guestchan_SOURCES = tests/fuzz/fuzz-guestchan.c \
	tests/fuzz/replay.c manager/guestchan.c agent/gchproto.c \
	manager/sched.c manager/log.c manager/util.c
tests_fuzz_replay_guestchan_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"gch"'
EXTRA_DIST += tests/fuzz/corpus/gch

GCH_FUZZ_CLANG = clang
GCH_FUZZ_SECONDS = 60
GCH_FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-I$(top_builddir) -I$(top_srcdir)
fuzz-gch:
	@command -v $(GCH_FUZZ_CLANG) >/dev/null || \
	  { echo "fuzz-gch: $(GCH_FUZZ_CLANG) not found"; exit 1; }
	$(MKDIR_P) tests/fuzz
	$(GCH_FUZZ_CLANG) $(GCH_FUZZ_FLAGS) -o tests/fuzz/fuzz-gch \
	  $(srcdir)/tests/fuzz/fuzz-gch.c $(srcdir)/agent/gchproto.c
	$(GCH_FUZZ_CLANG) $(GCH_FUZZ_FLAGS) -o tests/fuzz/fuzz-guestchan \
	  $(srcdir)/tests/fuzz/fuzz-guestchan.c \
	  $(srcdir)/manager/guestchan.c $(srcdir)/agent/gchproto.c \
	  $(srcdir)/manager/sched.c $(srcdir)/manager/log.c \
	  $(srcdir)/manager/util.c
	for t in gch guestchan; do \
	  rm -rf tests/fuzz/work-$$t && mkdir -p tests/fuzz/work-$$t && \
	  cp $(srcdir)/tests/fuzz/corpus/gch/* tests/fuzz/work-$$t/ && \
	  tests/fuzz/fuzz-$$t -max_total_time=$(GCH_FUZZ_SECONDS) \
	    -max_len=4096 tests/fuzz/work-$$t || exit 1; \
	done
fuzz: fuzz-gch
.PHONY: fuzz fuzz-gch
CLEANFILES += tests/fuzz/fuzz-gch tests/fuzz/fuzz-guestchan
clean-local: clean-fuzz-gch
clean-fuzz-gch:
	rm -rf tests/fuzz/work-gch tests/fuzz/work-guestchan
.PHONY: clean-fuzz-gch
