# tests/fuzz/proto.mk -- the control protocol's fuzz target.
#
# make check links fuzz-proto.c with the corpus replayer (no clang
# needed); `make fuzz-proto` builds the real libFuzzer binary with clang
# when it exists and runs it for FUZZ_SECONDS (default 60) over a copy of
# the corpus, so new finds do not dirty the tree.
check_PROGRAMS += tests/fuzz/replay-proto
TESTS += tests/fuzz/replay-proto
tests_fuzz_replay_proto_SOURCES = tests/fuzz/fuzz-proto.c tests/fuzz/replay.c
tests_fuzz_replay_proto_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_CORPUS='"proto"'
tests_fuzz_replay_proto_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_fuzz_replay_proto_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(JSONC_LIBS) -lm
EXTRA_DIST += tests/fuzz/corpus/proto

FUZZ_CLANG = clang
FUZZ_SECONDS = 60
tests/fuzz/fuzz-proto: $(srcdir)/tests/fuzz/fuzz-proto.c \
		$(srcdir)/manager/control/proto.c $(srcdir)/manager/util.c \
		$(srcdir)/policy/explain.c
	$(FUZZ_CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
	  -I$(top_builddir) -I$(top_srcdir) $(JSONC_CFLAGS) \
	  -o $@ $(srcdir)/tests/fuzz/fuzz-proto.c $(srcdir)/manager/control/proto.c \
	  $(srcdir)/manager/util.c policy/libvpowerpolicy.a $(JSONC_LIBS) -lm
fuzz-proto: policy/libvpowerpolicy.a
	@command -v $(FUZZ_CLANG) >/dev/null || \
	  { echo "fuzz-proto: $(FUZZ_CLANG) not found"; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) tests/fuzz/fuzz-proto
	rm -rf tests/fuzz/work-proto && mkdir -p tests/fuzz/work-proto
	cp $(srcdir)/tests/fuzz/corpus/proto/* tests/fuzz/work-proto/
	tests/fuzz/fuzz-proto -max_total_time=$(FUZZ_SECONDS) -max_len=70000 \
	  tests/fuzz/work-proto
fuzz: fuzz-proto
.PHONY: fuzz fuzz-proto
CLEANFILES += tests/fuzz/fuzz-proto
clean-local: clean-fuzz-proto
clean-fuzz-proto:
	rm -rf tests/fuzz/work-proto
.PHONY: clean-fuzz-proto
