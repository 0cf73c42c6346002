# tests/lint/automake.mk
