# tests/unit/exporter.mk -- unit tests of the exporter's rendering and of
# energy attribution.
check_PROGRAMS += tests/unit/test-metrics tests/unit/test-attrib \
	tests/unit/test-histo
TESTS += tests/unit/test-metrics tests/unit/test-attrib tests/unit/test-histo

tests_unit_test_metrics_SOURCES = tests/unit/test-metrics.c \
	manager/control/metrics.c manager/control/metrics.h
tests_unit_test_metrics_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) \
	$(CMOCKA_CFLAGS)
tests_unit_test_metrics_LDADD = manager/libvpowermgr.a $(JSONC_LIBS) -lm \
	$(CMOCKA_LIBS)

tests_unit_test_attrib_SOURCES = tests/unit/test-attrib.c
tests_unit_test_attrib_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_attrib_LDADD = manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(CMOCKA_LIBS) -lm

tests_unit_test_histo_SOURCES = tests/unit/test-histo.c \
	manager/control/metrics.c manager/control/metrics.h
tests_unit_test_histo_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) \
	$(CMOCKA_CFLAGS)
tests_unit_test_histo_LDADD = manager/libvpowermgr.a $(JSONC_LIBS) -lm \
	$(CMOCKA_LIBS)
