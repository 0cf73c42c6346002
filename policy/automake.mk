# policy/automake.mk -- build rules for policy/ (included by Makefile.am).
# The pure policy core: libc and libm only (checked by tests/lint).
noinst_LIBRARIES += policy/libvpowerpolicy.a
policy_libvpowerpolicy_a_SOURCES = \
	policy/cpuset.c policy/cpuset.h \
	policy/num.c policy/num.h \
	policy/model.c policy/model.h \
	policy/load.c \
	policy/plan.c \
	policy/energy.c \
	policy/correct.c policy/correct.h \
	policy/state.c policy/state.h \
	policy/level.c \
	policy/own.c \
	policy/iso.c \
	policy/pool.c \
	policy/demand.c \
	policy/misfit.c \
	policy/idle.c \
	policy/eval.c \
	policy/trim.c \
	policy/race.c \
	policy/choose.c \
	policy/emit.c \
	policy/decide.c \
	policy/explain.c \
	policy/internal.h \
	policy/policy.h

# The file format and model derivations the parser implements.
EXTRA_DIST += docs/energy-model.md docs/policy.md
