# tests/unit/automake.mk
