# manager/gch.mk -- build rules of one manager area.
