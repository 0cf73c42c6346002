# config/automake.mk -- build rules for config/ (included by Makefile.am).

# Energy models shipped for vpowerd and vpower-sim (docs/energy-model.md).
modelsdir = $(pkgdatadir)/models
dist_models_DATA = \
	config/models/xeon-r640-2s.model \
	config/models/juno-r0.model
