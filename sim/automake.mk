# sim/automake.mk -- build rules for sim/ (included by Makefile.am).
# vpower-sim: the trace-driven simulator.  Everything but main() lives in
# sim/libvpowersim.a so tests/sim and the benchmark link the same code.
# manager/util.c (allocation helpers, util_read_file()) is shared with
# vpowerd: it depends on nothing else of manager/.
noinst_LIBRARIES += sim/libvpowersim.a
sim_libvpowersim_a_SOURCES = \
	sim/rng.c sim/rng.h \
	sim/trace.c sim/trace.h \
	sim/trace_planetlab.c \
	sim/trace_bitbrains.c \
	sim/burst.c sim/burst.h \
	sim/exec.c sim/exec.h \
	sim/halt.c sim/halt.h \
	sim/baseline.c sim/baseline.h \
	sim/lowerbound.c sim/lowerbound.h \
	sim/simrun.c sim/simrun.h \
	sim/simhost.c sim/simhost.h \
	sim/report.c sim/report.h \
	sim/equal.c sim/equal.h \
	sim/mix.c sim/mix.h \
	sim/replay.c sim/replay.h sim/trace_record.c \
	sim/replayhost.c sim/replayhost.h \
	sim/xalloc.c sim/xalloc.h \
	manager/util.c manager/util.h
sim_libvpowersim_a_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) -pthread

SIM_LDADD = sim/libvpowersim.a manager/libvpowermgr.a \
	policy/libvpowerpolicy.a $(JSONC_LIBS) $(LIBXML2_LIBS) -lm

bin_PROGRAMS += sim/vpower-sim
sim_vpower_sim_SOURCES = sim/vpower-sim.c
sim_vpower_sim_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
sim_vpower_sim_LDADD = $(SIM_LDADD)
sim_vpower_sim_LDFLAGS = -pthread

# `make bench`: prints pol_decide() latency on a synthetic 256-CPU host
# and the wall and CPU time of one PlanetLab day (split into pol_decide,
# the cycle's own code and the simulator); never part of `make check`.
noinst_PROGRAMS += sim/bench
sim_bench_SOURCES = sim/bench.c
sim_bench_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
sim_bench_LDADD = $(SIM_LDADD)
sim_bench_LDFLAGS = -pthread

.PHONY: bench
bench: sim/bench sim/vpower-sim
	sim/bench --srcdir $(abs_top_srcdir) \
	  --trace $(VPOWER_BENCH_TRACE)

# The day the issue names; override with make bench VPOWER_BENCH_TRACE=DIR.
VPOWER_BENCH_TRACE = $(abs_top_srcdir)/../shared/data/traces/planetlab-cloudsim/20110303

EXTRA_DIST += docs/simulator.md docs/baselines.md
# man_MANS is set in manager/control/ctl.mk (included before this file), which
# also puts $(man_MANS) into EXTRA_DIST.
man_MANS += docs/man/vpower-sim.1

# The README's "Power over a day" plots and the script that makes them.
EXTRA_DIST += docs/img/make-plots.sh docs/img/planetlab-20110303-xeon.svg \
	docs/img/bitbrains-xeon.svg
