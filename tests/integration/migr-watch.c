/* tests/integration/migr-watch.c -- vpowerd's libvirt driver watching
 * one domain through a migration (061): prints, one line each and in
 * order, what the driver reports for it.
 *
 *     migr-watch URI UUID SECONDS
 *
 * Lines: "migr out_begin|in_begin|gone|resumed" (migration callback),
 * "ev started|stopped|changed" (plain events), "job none|migr_out|
 * migr_in|other" or "job error N" (migr_job, polled every 100 ms, printed
 * when it changes), "listed migrated_in=0|1" and "unlisted" (list(), on
 * change).  Ends after SECONDS or on SIGTERM.  Exit 0, 2 on bad usage,
 * 99 if the driver cannot open. */

#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/drv.h"
#include "manager/log.h"
#include "manager/sched.h"

struct watch {
    struct sched *s;
    struct drv_hv *hv;
    const char *uuid;
    char last_job[32];
    char last_list[32];
};

static void
say(const char *what, const char *detail)
{
    printf("%s %s\n", what, detail);
    fflush(stdout);
}

static void
ev_cb(void *aux, enum drv_event ev, const char *uuid)
{
    static const char *const names[] = { "started", "stopped", "changed",
                                         "disconnected" };
    struct watch *w = aux;

    if (ev == DRV_EV_DISCONNECTED || (uuid && !strcmp(uuid, w->uuid))) {
        say("ev", (unsigned) ev < 4 ? names[ev] : "?");
    }
}

static void
migr_cb(void *aux, enum drv_migr ev, const char *uuid)
{
    static const char *const names[] = { "out_begin", "in_begin", "gone",
                                         "resumed" };
    struct watch *w = aux;

    if (uuid && !strcmp(uuid, w->uuid)) {
        say("migr", (unsigned) ev < 4 ? names[ev] : "?");
    }
}

static void
poll_cb(void *aux)
{
    static const char *const jobs[] = { "none", "migr_out", "migr_in",
                                        "other" };
    struct watch *w = aux;
    enum drv_job job;
    struct drv_dom *doms = NULL;
    size_t n = 0;
    char now[32];
    int r = drv_hv_libvirt.migr_job(w->hv, w->uuid, &job);

    if (r == 0) {
        snprintf(now, sizeof now, "%s", (unsigned) job < 4 ? jobs[job] : "?");
    } else {
        snprintf(now, sizeof now, "error %d", r);
    }
    if (strcmp(now, w->last_job)) {
        say("job", now);
        snprintf(w->last_job, sizeof w->last_job, "%s", now);
    }
    snprintf(now, sizeof now, "unlisted");
    if (drv_hv_libvirt.list(w->hv, &doms, &n) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(doms[i].uuid, w->uuid)) {
                snprintf(now, sizeof now, "listed migrated_in=%d",
                         doms[i].migrated_in);
            }
        }
    }
    free(doms);
    if (strcmp(now, w->last_list)) {
        printf("%s\n", now);
        fflush(stdout);
        snprintf(w->last_list, sizeof w->last_list, "%s", now);
    }
    sched_add_timer(w->s, 100000000u, poll_cb, w);
}

static void
quit_cb(void *aux)
{
    sched_quit(aux, 0);
}

static void
term_cb(int signo, void *aux)
{
    sched_quit(aux, 0);
}

int
main(int argc, char **argv)
{
    struct watch w = { 0 };
    char err[256];
    int rc;

    if (argc != 4 || strlen(argv[2]) != DRV_UUID_LEN - 1
        || atoi(argv[3]) <= 0) {
        fprintf(stderr, "usage: migr-watch URI UUID SECONDS\n");
        return 2;
    }
    log_init("migr-watch", false, LOG_LVL_WARN);
    w.uuid = argv[2];
    w.s = sched_create();
    w.hv = drv_hv_libvirt.open(argv[1], w.s, ev_cb, &w, err, sizeof err);
    if (!w.hv) {
        fprintf(stderr, "migr-watch: %s\n", err);
        return 99;
    }
    drv_hv_libvirt.set_migr_cb(w.hv, migr_cb, &w);
    sched_add_signal(w.s, SIGTERM, term_cb, w.s);
    sched_add_timer(w.s, (uint64_t) atoi(argv[3]) * 1000000000u, quit_cb,
                    w.s);
    poll_cb(&w);
    rc = sched_run(w.s);
    drv_hv_libvirt.close(w.hv);
    sched_destroy(w.s);
    return rc;
}
