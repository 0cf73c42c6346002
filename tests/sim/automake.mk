# tests/sim/automake.mk -- simulator tests: trace readers (with fixtures
# in tests/sim/data/) and a seeded compare scenario with invariants.
check_PROGRAMS += tests/sim/test-trace tests/sim/test-scenario \
	tests/sim/test-mix tests/sim/test-replay tests/sim/test-halt \
	tests/sim/test-baseline
TESTS += tests/sim/test-trace tests/sim/test-scenario tests/sim/test-mix \
	tests/sim/test-replay tests/sim/test-halt tests/sim/test-baseline

tests_sim_test_trace_SOURCES = tests/sim/test-trace.c tests/sim/check.h
tests_sim_test_trace_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_trace_LDADD = $(SIM_LDADD)

tests_sim_test_scenario_SOURCES = tests/sim/test-scenario.c \
	tests/sim/check.h tests/sim/server-model.h
tests_sim_test_scenario_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_scenario_LDADD = $(SIM_LDADD)

tests_sim_test_mix_SOURCES = tests/sim/test-mix.c tests/sim/check.h
tests_sim_test_mix_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_mix_LDADD = $(SIM_LDADD)

tests_sim_test_replay_SOURCES = tests/sim/test-replay.c tests/sim/check.h \
	tests/sim/server-model.h
tests_sim_test_replay_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_replay_LDADD = $(SIM_LDADD)

tests_sim_test_halt_SOURCES = tests/sim/test-halt.c tests/sim/check.h \
	tests/sim/server-model.h
tests_sim_test_halt_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_halt_LDADD = $(SIM_LDADD)

tests_sim_test_baseline_SOURCES = tests/sim/test-baseline.c tests/sim/check.h
tests_sim_test_baseline_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_baseline_LDADD = $(SIM_LDADD)

# Replays a recording the real vpowerd made (tests/sim/data/rec/README).
dist_check_SCRIPTS += tests/sim/test-record.sh tests/sim/record-dummy.sh \
	tests/sim/test-plot.sh tests/sim/test-sim-input.sh \
	tests/sim/test-migration-cost.sh
TESTS += tests/sim/test-record.sh tests/sim/test-plot.sh \
	tests/sim/test-sim-input.sh tests/sim/test-migration-cost.sh

EXTRA_DIST += tests/sim/data
# The set-up the vpower-sim shell tests share (sourced, not run).
EXTRA_DIST += tests/sim/sim-lib.sh

# SMT isolation and core scheduling in the simulator.
check_PROGRAMS += tests/sim/test-smt
TESTS += tests/sim/test-smt
tests_sim_test_smt_SOURCES = tests/sim/test-smt.c tests/sim/check.h \
	tests/sim/server-model.h
tests_sim_test_smt_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_smt_LDADD = $(SIM_LDADD)

# vpower against the serving rival at equal service (vpower-sim --compare).
check_PROGRAMS += tests/sim/test-equal
TESTS += tests/sim/test-equal
tests_sim_test_equal_SOURCES = tests/sim/test-equal.c tests/sim/check.h
tests_sim_test_equal_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_sim_test_equal_LDADD = $(SIM_LDADD)
dist_check_SCRIPTS += tests/sim/test-equal-service.sh
TESTS += tests/sim/test-equal-service.sh
# vpower-sim --true-model and --model-correction: a wrong model made by
# wrong-model.sh, checked against the simulated host's meter.
dist_check_SCRIPTS += tests/sim/test-true-model.sh tests/sim/wrong-model.sh
TESTS += tests/sim/test-true-model.sh
dist_check_SCRIPTS += tests/sim/test-threads.sh
TESTS += tests/sim/test-threads.sh
# vpower-sim --turbo WHEN: saturation turbo by default, idle hosts
# unchanged, a small host served only with it.
dist_check_SCRIPTS += tests/sim/test-turbo.sh
TESTS += tests/sim/test-turbo.sh
