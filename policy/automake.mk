# policy/automake.mk -- build rules for policy/ (included by Makefile.am).
