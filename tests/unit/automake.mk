# tests/unit/automake.mk -- cmocka unit tests, one fragment per area.
include tests/unit/policy.mk
include tests/unit/manager.mk
include tests/unit/agent.mk
include tests/unit/hostdrv.mk
include tests/unit/exporter.mk
include tests/unit/ctl.mk
include tests/unit/inputs.mk
include tests/unit/meter.mk
include tests/unit/hk.mk
include tests/unit/smt.mk
include tests/unit/calib.mk
include tests/unit/migr.mk
