/* manager/drivers/virtloop.c -- libvirt event handles and timeouts on sched;
 * see
 * virtloop.h.
 *
 * Handles (fds) and timeouts are one kind of record, a "watch", kept in
 * one list and numbered from one counter: libvirt names both by an int
 * and asks to update or remove them by that number.  A handle is watched
 * through a dup of libvirt's fd (libvirt may watch one fd twice, epoll
 * needs distinct fds); a timeout is a one-shot sched timer re-armed each
 * time it fires.  A removed watch with a free callback stays in the list,
 * marked removed, until a zero-delay timer runs the callback: libvirt
 * forbids running it inside the removing call. */

#include <config.h>

#include "manager/drivers/virtloop.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <libvirt/libvirt.h>

#include "manager/log.h"
#include "manager/sched.h"
#include "manager/util.h"

#define LOG_MODULE "libvirt"

enum watch_kind {
    WATCH_HANDLE,
    WATCH_TIMEOUT,
};

struct watch {
    int id;                         /* libvirt's watch or timer number. */
    enum watch_kind kind;
    bool removed;                   /* Waits for its free callback. */
    virEventHandleCallback fd_cb;   /* WATCH_HANDLE. */
    virEventTimeoutCallback timer_cb; /* WATCH_TIMEOUT. */
    void *opaque;                   /* libvirt's argument to both. */
    virFreeCallback ff;             /* Frees 'opaque', may be NULL. */
    uint64_t timer;                 /* sched timer: a timeout's expiry or
                                     * a removed watch's free; 0 none. */
    int value;                      /* As libvirt asked: a handle's
                                     * VIR_EVENT_HANDLE_* mask, or a
                                     * timeout's period in ms (-1 off, 0
                                     * every loop turn). */
    int fd;                         /* Handle: libvirt's fd. */
    int dupfd;                      /* Handle: our epoll registration. */
    bool registered;                /* Handle: 'dupfd' is in epoll. */
    struct watch *next;
};

/* libvirt's callbacks carry no context pointer, so the loop and the
 * watches are file-scope: set once by virtloop_register(). */
static struct sched *ev_sched;
static struct watch *watches;
static int next_id = 1;

static uint32_t
vir_to_epoll(int ev)
{
    uint32_t e = 0;

    if (ev & VIR_EVENT_HANDLE_READABLE) {
        e |= EPOLLIN;
    }
    if (ev & VIR_EVENT_HANDLE_WRITABLE) {
        e |= EPOLLOUT;
    }
    return e;
}

static int
epoll_to_vir(uint32_t e)
{
    int ev = 0;

    if (e & EPOLLIN) {
        ev |= VIR_EVENT_HANDLE_READABLE;
    }
    if (e & EPOLLOUT) {
        ev |= VIR_EVENT_HANDLE_WRITABLE;
    }
    if (e & EPOLLERR) {
        ev |= VIR_EVENT_HANDLE_ERROR;
    }
    if (e & EPOLLHUP) {
        ev |= VIR_EVENT_HANDLE_HANGUP;
    }
    return ev;
}

/* The live watch of 'kind' numbered 'id', NULL if none. */
static struct watch *
find_watch(int id, enum watch_kind kind)
{
    for (struct watch *w = watches; w; w = w->next) {
        if (w->id == id && w->kind == kind && !w->removed) {
            return w;
        }
    }
    return NULL;
}

static struct watch *
watch_create(enum watch_kind kind, int value, void *opaque,
             virFreeCallback ff)
{
    struct watch *w = XNEW(struct watch);

    w->id = next_id++;
    w->kind = kind;
    w->value = value;
    w->opaque = opaque;
    w->ff = ff;
    w->fd = w->dupfd = -1;
    w->next = watches;
    watches = w;
    return w;
}

/* Unlinks 'w', runs its free callback, frees it. */
static void
watch_destroy(struct watch *w)
{
    for (struct watch **p = &watches; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (w->ff) {
        w->ff(w->opaque);
    }
    free(w);
}

static void
deferred_free_cb(void *aux)
{
    struct watch *w = aux;

    w->timer = 0;
    watch_destroy(w);
}

static void
handle_fd_cb(int fd, uint32_t events, void *aux)
{
    struct watch *w = aux;

    w->fd_cb(w->id, w->fd, epoll_to_vir(events), w->opaque);
}

/* An fd watched for no events is taken out of epoll altogether: epoll
 * would still report HUP/ERR for it, and a hung-up socket libvirt is not
 * interested in would wake us in a loop. */
static void
handle_sync(struct watch *w)
{
    uint32_t e = vir_to_epoll(w->value);

    if (!e && w->registered) {
        sched_del_fd(ev_sched, w->dupfd);
        w->registered = false;
    } else if (e && !w->registered) {
        if (sched_add_fd(ev_sched, w->dupfd, e, handle_fd_cb, w) == 0) {
            w->registered = true;
        } else {
            LOG_ERR("cannot watch libvirt fd %d", w->fd);
        }
    } else if (e) {
        sched_mod_fd(ev_sched, w->dupfd, e);
    }
}

static void timeout_arm(struct watch *);

static void
timeout_fire_cb(void *aux)
{
    struct watch *w = aux;

    w->timer = 0;
    /* Re-arm first: the callback may update or remove the timeout. */
    timeout_arm(w);
    w->timer_cb(w->id, w->opaque);
}

static void
timeout_arm(struct watch *w)
{
    if (w->timer) {
        sched_del_timer(ev_sched, w->timer);
        w->timer = 0;
    }
    if (w->value >= 0) {
        w->timer = sched_add_timer(ev_sched,
                                   (uint64_t) w->value * 1000000u,
                                   timeout_fire_cb, w);
    }
}

/* Puts a new or changed 'value' of 'w' into effect. */
static void
watch_sync(struct watch *w)
{
    if (w->kind == WATCH_HANDLE) {
        handle_sync(w);
    } else {
        timeout_arm(w);
    }
}

static void
watch_update(int id, enum watch_kind kind, int value)
{
    struct watch *w = find_watch(id, kind);

    if (w) {
        w->value = value;
        watch_sync(w);
    }
}

static int
ev_add_handle(int fd, int events, virEventHandleCallback cb, void *opaque,
              virFreeCallback ff)
{
    int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    struct watch *w;

    if (dupfd < 0) {
        return -1;
    }
    w = watch_create(WATCH_HANDLE, events, opaque, ff);
    w->fd = fd;
    w->dupfd = dupfd;
    w->fd_cb = cb;
    watch_sync(w);
    return w->id;
}

static int
ev_add_timeout(int freq_ms, virEventTimeoutCallback cb, void *opaque,
               virFreeCallback ff)
{
    struct watch *w = watch_create(WATCH_TIMEOUT, freq_ms, opaque, ff);

    w->timer_cb = cb;
    watch_sync(w);
    return w->id;
}

static void
ev_update_handle(int id, int events)
{
    watch_update(id, WATCH_HANDLE, events);
}

static void
ev_update_timeout(int id, int freq_ms)
{
    watch_update(id, WATCH_TIMEOUT, freq_ms);
}

/* Stops watch 'id' of 'kind' at once; its free callback runs from the
 * loop.  Returns 0, or -1 if there is no such watch. */
static int
watch_remove(int id, enum watch_kind kind)
{
    struct watch *w = find_watch(id, kind);

    if (!w) {
        return -1;
    }
    if (w->registered) {
        sched_del_fd(ev_sched, w->dupfd);
        w->registered = false;
    }
    if (w->dupfd >= 0) {
        close(w->dupfd);
        w->dupfd = -1;
    }
    if (w->timer) {
        sched_del_timer(ev_sched, w->timer);
        w->timer = 0;
    }
    if (!w->ff) {
        watch_destroy(w);
        return 0;
    }
    w->removed = true;
    w->timer = sched_add_timer(ev_sched, 0, deferred_free_cb, w);
    return 0;
}

static int
ev_remove_handle(int id)
{
    return watch_remove(id, WATCH_HANDLE);
}

static int
ev_remove_timeout(int id)
{
    return watch_remove(id, WATCH_TIMEOUT);
}

int
virtloop_register(struct sched *s)
{
    if (ev_sched) {
        return ev_sched == s ? 0 : -EBUSY;
    }
    ev_sched = s;
    virEventRegisterImpl(ev_add_handle, ev_update_handle, ev_remove_handle,
                         ev_add_timeout, ev_update_timeout,
                         ev_remove_timeout);
    return 0;
}

void
virtloop_flush(void)
{
    bool again = true;

    /* A free callback may remove further watches: rescan until none
     * waits. */
    while (again) {
        again = false;
        for (struct watch *w = watches; w; w = w->next) {
            if (w->removed) {
                sched_del_timer(ev_sched, w->timer);
                watch_destroy(w);
                again = true;
                break;
            }
        }
    }
}
