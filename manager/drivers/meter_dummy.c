/* manager/drivers/meter_dummy.c -- A meter whose value a simulator or a test
 * sets.
 *
 * The simulated host charges energy with its own model and moves this
 * meter by it, so calibration and the model-versus-meter check run the
 * same code against a host whose model nobody told them.  It behaves
 * like hardware: a counter wraps at its range (the generic reader
 * unwraps it), a power is integrated between reads, and an error set
 * with meter_dummy_fail() is what the next read returns. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/util.h"

struct dummy_meter {
    struct meter up;
    uint64_t value;              /* Counter (uJ) or power (uW). */
    int fail;                    /* Negative errno for the next read. */
};

static struct meter *
dummy_open(const struct meter_info *info, char *err, size_t errlen)
{
    struct dummy_meter *d = XNEW(struct dummy_meter);

    (void) err;
    (void) errlen;
    d->up.ops = &meter_dummy_ops;
    d->up.info = *info;
    d->up.info.ops = &meter_dummy_ops;
    d->up.info.kind = METER_KIND_DUMMY;
    return &d->up;
}

struct meter *
meter_dummy_create(const char *name, enum meter_scope scope, bool counter,
                   uint64_t max_range_uj)
{
    struct meter_info info = { .scope = scope, .package = -1,
                               .counter = counter,
                               .max_range_uj = counter ? max_range_uj : 0 };

    snprintf(info.name, sizeof info.name, "%s", name);
    snprintf(info.path, sizeof info.path, "dummy:%s", name);
    return dummy_open(&info, NULL, 0);
}

void
meter_dummy_set(struct meter *m, uint64_t value)
{
    ((struct dummy_meter *) m)->value = value;
}

void
meter_dummy_fail(struct meter *m, int error)
{
    ((struct dummy_meter *) m)->fail = error < 0 ? error : -error;
}

static void
dummy_discover(const char *root, struct meter_list *list)
{
    (void) root;
    (void) list;
}

static int
dummy_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
             size_t errlen)
{
    struct dummy_meter *d = (struct dummy_meter *) m;
    int r = d->fail;

    (void) now_ns;
    if (r < 0) {
        d->fail = 0;
        snprintf(err, errlen, "%s: %s", m->info.path, strerror(-r));
        return r;
    }
    *raw = d->value;
    return 0;
}

static void
dummy_close(struct meter *m)
{
    free(m);
}

const struct meter_ops meter_dummy_ops = {
    .name = "dummy",
    .discover = dummy_discover,
    .open = dummy_open,
    .sample = dummy_sample,
    .close = dummy_close,
};
