# tests/unit/policy.mk -- unit tests of policy/.
POLICY_TESTS = \
	tests/unit/test-cpuset \
	tests/unit/test-num \
	tests/unit/test-model \
	tests/unit/test-load \
	tests/unit/test-plan \
	tests/unit/test-energy \
	tests/unit/test-correct \
	tests/unit/test-decide
check_PROGRAMS += $(POLICY_TESTS)
TESTS += $(POLICY_TESTS)
POLICY_TEST_LDADD = policy/libvpowerpolicy.a $(CMOCKA_LIBS) -lm
tests_unit_test_cpuset_SOURCES = tests/unit/test-cpuset.c
tests_unit_test_cpuset_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cpuset_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_num_SOURCES = tests/unit/test-num.c
tests_unit_test_num_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_num_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_model_SOURCES = tests/unit/test-model.c \
	tests/unit/shipped-model.h
tests_unit_test_model_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_model_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_load_SOURCES = tests/unit/test-load.c
tests_unit_test_load_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_load_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_plan_SOURCES = tests/unit/test-plan.c
tests_unit_test_plan_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_plan_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_energy_SOURCES = tests/unit/test-energy.c \
	tests/unit/shipped-model.h
tests_unit_test_energy_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_energy_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_decide_SOURCES = tests/unit/test-decide.c
tests_unit_test_decide_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_decide_LDADD = $(POLICY_TEST_LDADD)
tests_unit_test_correct_SOURCES = tests/unit/test-correct.c \
	tests/unit/shipped-model.h
tests_unit_test_correct_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_correct_LDADD = $(POLICY_TEST_LDADD)
