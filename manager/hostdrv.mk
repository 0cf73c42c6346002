# manager/hostdrv.mk -- build rules of one manager area.
