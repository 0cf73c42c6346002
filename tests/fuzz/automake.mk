# tests/fuzz/automake.mk
