# manager/smt.mk -- libvirt's core scheduling setting (qemu.conf), which
# the policy's SMT model takes as pol_input.sched_core.
manager_libvpowermgr_a_SOURCES += manager/qemuconf.c manager/qemuconf.h
