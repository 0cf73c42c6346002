# tests/automake.mk -- test programs and scripts.  Each area keeps its own
# fragment so the people working on them do not edit one file.
include tests/unit/automake.mk
include tests/sim/automake.mk
include tests/fuzz/automake.mk
include tests/integration/automake.mk
include tests/lint/automake.mk
include tests/reliability/automake.mk

# `make demo`: the main job on the machine at hand (README's first
# command).  Live guests under libvirt as root, else a simulator replay.
EXTRA_DIST += tests/demo/demo.sh
.PHONY: demo
demo: all
	VPOWER_SRCDIR='$(abs_top_srcdir)' VPOWER_BUILDDIR='$(abs_top_builddir)' \
	    bash $(top_srcdir)/tests/demo/demo.sh
