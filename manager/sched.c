/* manager/sched.c -- epoll reactor with timers and signals; see sched.h.
 *
 * Timers live in a small unsorted array and one timerfd is armed for the
 * earliest; the daemon has a handful of timers (period, libvirt's few,
 * per-guest reconnects), so a scan beats a heap in code and in cost.
 * Removed fd entries are only marked dead during a dispatch round and
 * freed after it, so a callback can safely remove another fd whose event
 * is still pending in the same epoll batch. */

#include <config.h>

#include "manager/sched.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "manager/util.h"

struct fd_entry {
    int fd;
    bool dead;
    sched_fd_cb *cb;
    void *aux;
    struct fd_entry *next;          /* All entries, for lookup by fd. */
};

struct timer {
    uint64_t id;
    uint64_t due_ns;
    sched_timer_cb *cb;
    void *aux;
};

struct sig_entry {
    int signo;
    sched_signal_cb *cb;
    void *aux;
};

struct sched {
    int epfd;
    int tfd;                        /* timerfd for the earliest timer. */
    int sfd;                        /* signalfd, -1 until first signal. */
    sigset_t sigs;
    struct fd_entry *fds;
    struct timer *timers;
    size_t n_timers, max_timers;
    uint64_t next_id;
    struct sig_entry sig[16];
    size_t n_sig;
    uint64_t now_ns;
    bool quit;
    int code;
    int depth;                      /* >0 while dispatching. */
};

uint64_t
clk_now_ns(void)
{
    return util_clock_ns(CLOCK_MONOTONIC);
}

uint64_t
clk_process_cpu_ns(void)
{
    return util_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

static void tfd_cb(int fd, uint32_t events, void *aux);

struct sched *
sched_create(void)
{
    struct sched *s = XNEW(struct sched);

    s->sfd = -1;
    sigemptyset(&s->sigs);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (s->epfd < 0 || s->tfd < 0
        || sched_add_fd(s, s->tfd, EPOLLIN, tfd_cb, s) < 0) {
        sched_destroy(s);
        return NULL;
    }
    s->now_ns = clk_now_ns();
    return s;
}

void
sched_destroy(struct sched *s)
{
    if (!s) {
        return;
    }
    while (s->fds) {
        struct fd_entry *e = s->fds;
        s->fds = e->next;
        free(e);
    }
    if (s->tfd >= 0) {
        close(s->tfd);
    }
    if (s->sfd >= 0) {
        close(s->sfd);
    }
    if (s->epfd >= 0) {
        close(s->epfd);
    }
    free(s->timers);
    free(s);
}

static struct fd_entry *
find_fd(struct sched *s, int fd)
{
    for (struct fd_entry *e = s->fds; e; e = e->next) {
        if (e->fd == fd && !e->dead) {
            return e;
        }
    }
    return NULL;
}

int
sched_add_fd(struct sched *s, int fd, uint32_t events, sched_fd_cb *cb,
             void *aux)
{
    struct epoll_event ev = { .events = events };
    struct fd_entry *e;

    if (find_fd(s, fd)) {
        return -EEXIST;
    }
    e = XNEW(struct fd_entry);
    e->fd = fd;
    e->cb = cb;
    e->aux = aux;
    ev.data.ptr = e;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int err = -errno;
        free(e);
        return err;
    }
    e->next = s->fds;
    s->fds = e;
    return 0;
}

int
sched_mod_fd(struct sched *s, int fd, uint32_t events)
{
    struct fd_entry *e = find_fd(s, fd);
    struct epoll_event ev = { .events = events };

    if (!e) {
        return -ENOENT;
    }
    ev.data.ptr = e;
    return epoll_ctl(s->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

static void
reap_dead(struct sched *s)
{
    struct fd_entry **pp = &s->fds;

    while (*pp) {
        struct fd_entry *e = *pp;
        if (e->dead) {
            *pp = e->next;
            free(e);
        } else {
            pp = &e->next;
        }
    }
}

void
sched_del_fd(struct sched *s, int fd)
{
    struct fd_entry *e = find_fd(s, fd);

    if (!e) {
        return;
    }
    /* The fd may already be closed by its owner; EBADF is fine then. */
    epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
    e->dead = true;
    if (!s->depth) {
        reap_dead(s);
    }
}

static void
arm_timerfd(struct sched *s)
{
    struct itimerspec its;
    uint64_t due = UINT64_MAX;

    memset(&its, 0, sizeof its);
    for (size_t i = 0; i < s->n_timers; i++) {
        if (s->timers[i].due_ns < due) {
            due = s->timers[i].due_ns;
        }
    }
    if (due != UINT64_MAX) {
        /* An absolute time of 0 would disarm: use at least 1 ns. */
        due = due ? due : 1;
        its.it_value.tv_sec = (time_t) (due / 1000000000u);
        its.it_value.tv_nsec = (long) (due % 1000000000u);
    }
    timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

uint64_t
sched_add_timer(struct sched *s, uint64_t delay_ns, sched_timer_cb *cb,
                void *aux)
{
    struct timer *t;

    if (s->n_timers == s->max_timers) {
        s->max_timers = s->max_timers ? 2 * s->max_timers : 8;
        s->timers = xrealloc(s->timers, s->max_timers * sizeof *s->timers);
    }
    t = &s->timers[s->n_timers++];
    t->id = ++s->next_id;
    t->due_ns = clk_now_ns() + delay_ns;
    t->cb = cb;
    t->aux = aux;
    arm_timerfd(s);
    return t->id;
}

void
sched_del_timer(struct sched *s, uint64_t id)
{
    for (size_t i = 0; i < s->n_timers; i++) {
        if (s->timers[i].id == id) {
            s->timers[i] = s->timers[--s->n_timers];
            arm_timerfd(s);
            return;
        }
    }
}

static void
tfd_cb(int fd, uint32_t events, void *aux)
{
    struct sched *s = aux;
    uint64_t ticks, now = clk_now_ns();
    bool fired;

    if (read(fd, &ticks, sizeof ticks) < 0) {
        /* EAGAIN: re-armed earlier than it fired; due timers run below. */
    }
    /* Run due timers one at a time: a callback may add or delete timers,
     * so the array is rescanned after each call. */
    do {
        fired = false;
        for (size_t i = 0; i < s->n_timers; i++) {
            if (s->timers[i].due_ns <= now) {
                struct timer t = s->timers[i];
                s->timers[i] = s->timers[--s->n_timers];
                t.cb(t.aux);
                fired = true;
                break;
            }
        }
    } while (fired && !s->quit);
    arm_timerfd(s);
}

static void
sfd_cb(int fd, uint32_t events, void *aux)
{
    struct sched *s = aux;
    struct signalfd_siginfo si;

    while (read(fd, &si, sizeof si) == (ssize_t) sizeof si) {
        for (size_t i = 0; i < s->n_sig; i++) {
            if (s->sig[i].signo == (int) si.ssi_signo) {
                s->sig[i].cb((int) si.ssi_signo, s->sig[i].aux);
            }
        }
    }
}

int
sched_add_signal(struct sched *s, int signo, sched_signal_cb *cb, void *aux)
{
    int fd;

    if (s->n_sig == ARRAY_SIZE(s->sig)) {
        return -ENOSPC;
    }
    sigaddset(&s->sigs, signo);
    if (sigprocmask(SIG_BLOCK, &s->sigs, NULL) < 0) {
        return -errno;
    }
    fd = signalfd(s->sfd, &s->sigs, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    if (s->sfd < 0) {
        s->sfd = fd;
        if (sched_add_fd(s, fd, EPOLLIN, sfd_cb, s) < 0) {
            return -EIO;
        }
    }
    s->sig[s->n_sig++] = (struct sig_entry) { signo, cb, aux };
    return 0;
}

int
sched_run(struct sched *s)
{
    struct epoll_event evs[32];

    s->quit = false;
    while (!s->quit) {
        int n = epoll_wait(s->epfd, evs, (int) ARRAY_SIZE(evs), -1);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        s->now_ns = clk_now_ns();
        s->depth++;
        for (int i = 0; i < n && !s->quit; i++) {
            struct fd_entry *e = evs[i].data.ptr;
            if (!e->dead) {
                e->cb(e->fd, evs[i].events, e->aux);
            }
        }
        s->depth--;
        reap_dead(s);
    }
    return s->code;
}

void
sched_quit(struct sched *s, int code)
{
    s->quit = true;
    s->code = code;
}

uint64_t
sched_now_ns(const struct sched *s)
{
    return s->now_ns;
}
