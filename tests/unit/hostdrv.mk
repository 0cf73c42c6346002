# tests/unit/hostdrv.mk
