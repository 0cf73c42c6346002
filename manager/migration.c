/* manager/migration.c -- Per-domain migration state and the verdict the
 * daemon follows (contract in manager/migration.h). */

#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/migration.h"
#include "manager/util.h"

/* What the events said about one domain. */
enum migr_state {
    ST_OUT,                     /* Leaving: a migration to elsewhere runs. */
    ST_IN,                      /* Arriving: started here to receive. */
    ST_GONE,                    /* Left: runs on another host now. */
    ST_ARRIVED,                 /* Arrived and runs here. */
    ST_TAKEN,                   /* Taken as arrived (the job ended); its
                                 * resume event is still to come. */
};

struct migr_dom {
    char uuid[DRV_UUID_LEN];
    enum migr_state st;
};

struct migr {
    struct migr_dom *d;
    size_t n;
};

struct migr *
migr_create(void)
{
    return XNEW(struct migr);
}

void
migr_destroy(struct migr *m)
{
    if (m) {
        free(m->d);
        free(m);
    }
}

static struct migr_dom *
find(const struct migr *m, const char *uuid)
{
    for (size_t i = 0; i < m->n; i++) {
        if (!strcmp(m->d[i].uuid, uuid)) {
            return &m->d[i];
        }
    }
    return NULL;
}

void
migr_done(struct migr *m, const char *uuid)
{
    struct migr_dom *d = find(m, uuid);

    if (d) {
        *d = m->d[--m->n];
    }
}

void
migr_taken(struct migr *m, const char *uuid)
{
    struct migr_dom *d = find(m, uuid);

    if (d && d->st == ST_IN) {
        d->st = ST_TAKEN;
    } else {
        migr_done(m, uuid);
    }
}

static void
set_state(struct migr *m, const char *uuid, enum migr_state st)
{
    struct migr_dom *d = find(m, uuid);

    if (!d) {
        m->d = xrealloc(m->d, (m->n + 1) * sizeof *m->d);
        d = &m->d[m->n++];
        memset(d, 0, sizeof *d);
        snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    }
    d->st = st;
}

void
migr_event(struct migr *m, enum drv_migr ev, const char *uuid)
{
    struct migr_dom *d;

    if (!uuid || strlen(uuid) >= DRV_UUID_LEN) {
        return;
    }
    d = find(m, uuid);
    switch (ev) {
    case DRV_MIGR_OUT_BEGIN:
        /* Iteration events may trail the final one: a domain that left
         * stays gone. */
        if (!d || d->st != ST_GONE) {
            set_state(m, uuid, ST_OUT);
        }
        break;
    case DRV_MIGR_IN_BEGIN:
        set_state(m, uuid, ST_IN);
        break;
    case DRV_MIGR_GONE:
        set_state(m, uuid, ST_GONE);
        break;
    case DRV_MIGR_RESUMED:
        if (d && (d->st == ST_OUT || d->st == ST_TAKEN)) {
            /* Cancelled or failed after the final pause: it stays; or
             * the resume of an arrival already taken. */
            migr_done(m, uuid);
        } else if (!d || d->st == ST_IN) {
            /* Arrived; also when its start was missed (re-reading the
             * policy of a domain that stayed is harmless). */
            set_state(m, uuid, ST_ARRIVED);
        }
        break;
    }
}

enum migr_verdict
migr_verdict(const struct migr *m, const char *uuid, enum drv_job job,
             bool job_known)
{
    const struct migr_dom *d = find(m, uuid);
    bool migrating = job_known && (job == DRV_JOB_MIGR_OUT
                                   || job == DRV_JOB_MIGR_IN);

    if (d && d->st == ST_GONE) {
        return MIGR_GONE;
    }
    if (migrating) {
        return MIGR_FROZEN;
    }
    if (!d) {
        return MIGR_MANAGE;
    }
    switch (d->st) {
    case ST_OUT:
        /* No job any more: it failed before the final pause and stays. */
        return job_known ? MIGR_MANAGE : MIGR_FROZEN;
    case ST_IN:
        /* No job any more: it finished and the resume event is on its
         * way. */
        return job_known ? MIGR_ARRIVED : MIGR_FROZEN;
    case ST_ARRIVED:
        return MIGR_ARRIVED;
    case ST_GONE:
        return MIGR_GONE;
    case ST_TAKEN:
        return MIGR_MANAGE;
    }
    return MIGR_FROZEN;         /* Unreachable; the safe side. */
}

size_t
migr_count(const struct migr *m)
{
    return m->n;
}

const char *
migr_verdict_name(enum migr_verdict v)
{
    switch (v) {
    case MIGR_MANAGE:
        return "manage";
    case MIGR_FROZEN:
        return "frozen";
    case MIGR_GONE:
        return "gone";
    case MIGR_ARRIVED:
        return "arrived";
    }
    return "?";
}
