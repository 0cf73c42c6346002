# tests/unit/migr.mk -- live migration: the verdict helper.
check_PROGRAMS += tests/unit/test-migration
TESTS += tests/unit/test-migration
tests_unit_test_migration_SOURCES = tests/unit/test-migration.c
tests_unit_test_migration_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_migration_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(CMOCKA_LIBS) -lm
