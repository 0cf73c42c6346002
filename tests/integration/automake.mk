# tests/integration/automake.mk
