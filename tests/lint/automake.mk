# tests/lint/automake.mk -- build-time rules checked by `make check`.
TESTS += tests/lint/policy-pure.sh tests/lint/include-rules.sh \
	tests/lint/include-cycles.sh tests/lint/fuzz-sources.sh \
	tests/lint/unit-syscalls.sh tests/lint/function-length.sh
EXTRA_DIST += tests/lint/policy-pure.sh tests/lint/include-rules.sh \
	tests/lint/include-cycles.sh tests/lint/fuzz-sources.sh \
	tests/lint/unit-syscalls.sh tests/lint/function-length.sh
