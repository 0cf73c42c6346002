# manager/ctl.mk -- build rules of one manager area.
