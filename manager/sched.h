/* manager/sched.h -- The one event loop: epoll + timerfd + signalfd.
 *
 * Every host-side event (libvirt callbacks, the control socket, guest
 * channels, the policy period, signals) arrives here, in one thread, so
 * no module needs a lock.  Nothing polls: with no fd ready and no timer
 * due, the process sleeps in epoll_wait(), which is what a power manager
 * owes the cores it is trying to park.  Times are CLOCK_MONOTONIC ns. */

#ifndef VPOWER_SCHED_H
#define VPOWER_SCHED_H 1

#include <stdint.h>

struct sched;

typedef void sched_fd_cb(int fd, uint32_t events, void *aux);
typedef void sched_timer_cb(void *aux);
typedef void sched_signal_cb(int signo, void *aux);

struct sched *sched_create(void);
/* Frees the loop; registered fds are not closed (their owners close
 * them).  NULL is fine. */
void sched_destroy(struct sched *);

/* Watches 'fd' for EPOLL* 'events'.  An fd may be registered once.
 * Returns 0 or -errno.  Callbacks may add or remove any registration,
 * including their own, while being called. */
int sched_add_fd(struct sched *, int fd, uint32_t events,
                 sched_fd_cb *, void *aux);
int sched_mod_fd(struct sched *, int fd, uint32_t events);
void sched_del_fd(struct sched *, int fd);

/* One-shot timer 'delay_ns' from now.  Returns an id > 0 for
 * sched_del_timer(); deleting an id that already fired is harmless. */
uint64_t sched_add_timer(struct sched *, uint64_t delay_ns,
                         sched_timer_cb *, void *aux);
void sched_del_timer(struct sched *, uint64_t id);

/* Blocks 'signo' and delivers it through the loop.  Returns 0/-errno. */
int sched_add_signal(struct sched *, int signo, sched_signal_cb *,
                     void *aux);

/* Runs until sched_quit(); returns the code given to it. */
int sched_run(struct sched *);
void sched_quit(struct sched *, int code);

/* CLOCK_MONOTONIC at the start of the current dispatch round (one
 * timestamp per wakeup, like chrony's SCH_GetLastEventTime). */
uint64_t sched_now_ns(const struct sched *);
/* Reads CLOCK_MONOTONIC now. */
uint64_t clk_now_ns(void);
/* CPU time (user + system, all threads) this process has used since it
 * started, ns (0 if the clock cannot be read): what the power manager
 * itself costs. */
uint64_t clk_process_cpu_ns(void);

#endif /* manager/sched.h */
