# tests/unit/manager.mk -- unit tests of manager/.
