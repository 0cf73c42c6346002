# sim/automake.mk -- build rules for sim/ (included by Makefile.am).
