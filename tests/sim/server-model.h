/* tests/sim/server-model.h -- The shipped server energy model and the
 * trace day the simulator tests run on.
 *
 * The tests run from the build tree; VPOWER_SRCDIR (set by the test
 * harness) names the source tree that holds config/models/. */

#ifndef VPOWER_TESTS_SIM_SERVER_MODEL_H
#define VPOWER_TESTS_SIM_SERVER_MODEL_H 1

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "policy/policy.h"

/* Parses config/models/xeon-r640-2s.model into 'm'.  Returns 0, or -1
 * after printing the file and the reason to stderr (callers exit 99: a
 * missing or broken shipped model is a hard error, not a skip). */
static inline int
load_server_model(struct pol_model *m)
{
    const char *src = getenv("VPOWER_SRCDIR");
    char path[4096], err[512], *text = NULL;
    FILE *f;
    long n;
    int rc = -1;

    snprintf(path, sizeof path, "%s/config/models/xeon-r640-2s.model",
             src ? src : ".");
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0
        || fseek(f, 0, SEEK_SET)) {
        fprintf(stderr, "%s: cannot read\n", path);
    } else if (!(text = calloc(1, (size_t) n + 1))
               || fread(text, 1, (size_t) n, f) != (size_t) n) {
        fprintf(stderr, "%s: cannot read\n", path);
    } else if (pol_model_parse(m, text, err, sizeof err)) {
        fprintf(stderr, "%s:%s\n", path, err);
    } else {
        rc = 0;
    }
    free(text);
    fclose(f);
    return rc;
}

/* The PlanetLab day the simulator tests replay: $VPOWER_SIM_TRACE if
 * set, else the shared data beside the source tree
 * ($VPOWER_SRCDIR/../shared/..., as make bench uses), else the shared
 * data of this project's machines (/work/shared, also reached from a
 * distcheck tree).  'buf' holds the built path; the result may not
 * exist (callers skip then). */
static inline const char *
test_trace_day(char *buf, size_t len)
{
    static const char day[] = "shared/data/traces/planetlab-cloudsim/20110303";
    const char *env = getenv("VPOWER_SIM_TRACE");
    const char *src = getenv("VPOWER_SRCDIR");

    if (env) {
        return env;
    }
    if (src && snprintf(buf, len, "%s/../%s", src, day) < (int) len
        && access(buf, R_OK) == 0) {
        return buf;
    }
    snprintf(buf, len, "/work/%s", day);
    return buf;
}

#endif /* tests/sim/server-model.h */
