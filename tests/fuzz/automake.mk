# tests/fuzz/automake.mk

include tests/fuzz/proto.mk
include tests/fuzz/reliability.mk
include tests/fuzz/gch.mk
include tests/fuzz/trace.mk
