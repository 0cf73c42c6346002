# manager/migr.mk -- live migration: the per-domain verdict the daemon
# follows (pure, in the shared library so that unit tests link it).
manager_libvpowermgr_a_SOURCES += manager/migration.c manager/migration.h
