# manager/automake.mk -- build rules for manager/ (included by Makefile.am).
