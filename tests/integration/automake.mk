# tests/integration/automake.mk -- scripts that run the real programs.
#
# 01x: vpowerd.  012 runs the real daemon with the dummy hypervisor
# against a sysfs fixture (no libvirt, no root); 010 and 011 run it
# against real libvirtd and TCG guests (root; they skip with a reason
# only where libvirtd or QEMU cannot run).
VPOWERD_TESTS = \
	tests/integration/012-vpowerd-dummy.sh
dist_check_SCRIPTS += $(VPOWERD_TESTS)
TESTS += $(VPOWERD_TESTS)
EXTRA_DIST += tests/integration/vpowerd-lib.sh
