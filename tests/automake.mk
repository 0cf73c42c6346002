# tests/automake.mk -- test programs and scripts.  Each area keeps its own
# fragment so the people working on them do not edit one file.
include tests/unit/automake.mk
include tests/sim/automake.mk
include tests/fuzz/automake.mk
include tests/integration/automake.mk
include tests/lint/automake.mk
include tests/reliability/automake.mk
