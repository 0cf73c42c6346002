# config/automake.mk -- build rules for config/ (included by Makefile.am).
