# agent/automake.mk -- build rules for agent/ (included by Makefile.am).
