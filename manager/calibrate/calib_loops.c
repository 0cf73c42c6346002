/* manager/calibrate/calib_loops.c -- Pinned busy loops, the clock and
 * sleeping for
 * calibration on a real host.
 *
 * See calib_loops.h.  Each loop thread pins itself (sched_setaffinity on
 * its own thread id), reports the result, and only then spins, so
 * busy_start() returns with every loop on its CPU or none running.  The
 * loop body is a few integer operations on a volatile: the same work on
 * every point, so that the measured power depends on the frequency and
 * not on what the loop does. */

#include <config.h>

#include "manager/calibrate/calib_loops.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manager/util.h"

struct loop {
    struct calib_loops *set;
    pthread_t thread;
    unsigned cpu;
    int result;                  /* 0 pinned, errno, or 1 pending. */
};

struct calib_loops {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    atomic_bool stop;
    struct loop *loops;
    size_t n;
    unsigned long long cpu_ns;   /* Of threads already joined. */
};

static void *
loop_main(void *arg)
{
    struct loop *l = arg;
    struct calib_loops *s = l->set;
    volatile unsigned long x = l->cpu;
    cpu_set_t set;
    uint64_t cpu;
    int r;

    CPU_ZERO(&set);
    CPU_SET(l->cpu, &set);
    r = sched_setaffinity(0, sizeof set, &set) < 0 ? errno : 0;
    pthread_mutex_lock(&s->mu);
    l->result = r;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
    while (r == 0 && !atomic_load_explicit(&s->stop,
                                           memory_order_relaxed)) {
        for (int i = 0; i < 4096; i++) {
            x = x * 2862933555777941757ul + 3037000493ul;
        }
    }
    cpu = util_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    pthread_mutex_lock(&s->mu);
    s->cpu_ns += cpu;                  /* 0 if the clock is unreadable. */
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

struct calib_loops *
calib_loops_create(void)
{
    struct calib_loops *s = XNEW(struct calib_loops);

    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cond, NULL);
    return s;
}

static void
loops_stop(void *aux)
{
    struct calib_loops *s = aux;

    atomic_store(&s->stop, true);
    for (size_t i = 0; i < s->n; i++) {
        pthread_join(s->loops[i].thread, NULL);
    }
    free(s->loops);
    s->loops = NULL;
    s->n = 0;
}

static int
loops_start(void *aux, const struct cpuset *cpus, char *err, size_t errlen)
{
    struct calib_loops *s = aux;
    size_t want = cpuset_count(cpus);
    int r = 0;

    atomic_store(&s->stop, false);
    s->loops = xcalloc(want ? want : 1, sizeof *s->loops);
    for (int cpu = cpuset_next(cpus, 0); cpu >= 0 && r == 0;
         cpu = cpuset_next(cpus, (unsigned) cpu + 1)) {
        struct loop *l = &s->loops[s->n];

        l->set = s;
        l->cpu = (unsigned) cpu;
        l->result = 1;
        r = pthread_create(&l->thread, NULL, loop_main, l);
        if (r) {
            snprintf(err, errlen, "cpu%d: cannot start a busy loop: %s",
                     cpu, strerror(r));
            r = -r;
            break;
        }
        s->n++;
    }
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++) {
        while (s->loops[i].result == 1) {
            pthread_cond_wait(&s->cond, &s->mu);
        }
        if (s->loops[i].result && r == 0) {
            snprintf(err, errlen, "cpu%u: cannot pin a busy loop to it: "
                     "%s", s->loops[i].cpu, strerror(s->loops[i].result));
            r = -s->loops[i].result;
        }
    }
    pthread_mutex_unlock(&s->mu);
    if (r < 0) {
        loops_stop(s);
    }
    return r;
}

static uint64_t
loops_now_ns(void *aux)
{
    (void) aux;
    return util_clock_ns(CLOCK_MONOTONIC);
}

static void
loops_sleep_ns(void *aux, uint64_t ns)
{
    struct timespec ts = { .tv_sec = (time_t) (ns / 1000000000u),
                           .tv_nsec = (long) (ns % 1000000000u) };

    (void) aux;
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
        continue;
    }
}

void
calib_loops_destroy(struct calib_loops *s)
{
    if (s) {
        loops_stop(s);
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cond);
        free(s);
    }
}

unsigned long long
calib_loops_cpu_ns(const struct calib_loops *s)
{
    return s->cpu_ns;
}

static volatile sig_atomic_t loops_signalled;

void
calib_loops_signal(int sig)
{
    (void) sig;
    loops_signalled = 1;
}

static bool
loops_cancelled(void *aux)
{
    (void) aux;
    return loops_signalled != 0;
}

const struct calib_ops calib_loops_ops = {
    .cancelled = loops_cancelled,
    .busy_start = loops_start,
    .busy_stop = loops_stop,
    .now_ns = loops_now_ns,
    .sleep_ns = loops_sleep_ns,
};
