# tests/sim/automake.mk
