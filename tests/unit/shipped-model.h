/* tests/unit/shipped-model.h -- Reading the energy models shipped in
 * config/models/ from a cmocka test.
 *
 * The tests run from the build tree; VPOWER_SRCDIR (set by the test
 * harness) names the source tree.  A missing or broken shipped model
 * fails the calling test with the file and the reason: it is a defect
 * of the tree, not a reason to skip.  Include after <cmocka.h>. */

#ifndef VPOWER_TESTS_UNIT_SHIPPED_MODEL_H
#define VPOWER_TESTS_UNIT_SHIPPED_MODEL_H 1

#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"

/* The text of config/models/NAME, NUL-terminated; the caller frees it. */
static inline char *
shipped_model_text(const char *name)
{
    const char *dir = getenv("VPOWER_SRCDIR");
    char path[1024];
    char *buf = calloc(1, 1 << 20);
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "%s/config/models/%s", dir ? dir : ".",
             name);
    f = fopen(path, "r");
    if (!buf || !f) {
        fail_msg("cannot read %s", path);
    }
    n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Parses config/models/NAME into 'out'. */
static inline void
load_shipped_model(struct pol_model *out, const char *name)
{
    char err[256], *text = shipped_model_text(name);

    if (pol_model_parse(out, text, err, sizeof err)) {
        fail_msg("%s: %s", name, err);
    }
    free(text);
}

#endif
