# manager/inputs/smt.mk -- libvirt's core scheduling setting (qemu.conf), which
# the policy's SMT model takes as pol_input.sched_core.
manager_libvpowermgr_a_SOURCES += manager/inputs/qemuconf.c manager/inputs/qemuconf.h
