/* sim/mix.c -- Per-VM policy assignment for the simulator (see mix.h):
 * exact, seeded percentages or a file naming each VM's policy. */

#include <config.h>

#include "sim/mix.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"

int
mix_parse(const char *text, struct mix_spec *spec, char *err,
          size_t errlen)
{
    char buf[256], *save = NULL;
    uint32_t total = 0;

    memset(spec, 0, sizeof *spec);
    if (strlen(text) >= sizeof buf || !*text) {
        snprintf(err, errlen, "policy mix '%s': empty or too long", text);
        return -EINVAL;
    }
    strcpy(buf, text);
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end;
        enum pol_kind kind;
        double pct;

        if (!eq) {
            snprintf(err, errlen, "policy mix: '%s' is not KIND=PCT%%",
                     item);
            return -EINVAL;
        }
        *eq = '\0';
        if (pol_kind_parse(item, &kind)) {
            snprintf(err, errlen, "policy mix: unknown policy '%s' "
                     "(balanced, performance, powersave)", item);
            return -EINVAL;
        }
        if (!isdigit((unsigned char) eq[1])) {
            snprintf(err, errlen, "policy mix: bad percentage '%s'",
                     eq + 1);
            return -EINVAL;
        }
        pct = strtod(eq + 1, &end);
        if (*end == '%') {
            end++;
        }
        if (*end || !(pct >= 0 && pct <= 100)) {
            snprintf(err, errlen, "policy mix: bad percentage '%s'",
                     eq + 1);
            return -EINVAL;
        }
        if (spec->pct_centi[kind]) {
            snprintf(err, errlen, "policy mix: '%s' given twice", item);
            return -EINVAL;
        }
        spec->pct_centi[kind] = (uint32_t) (pct * 100 + 0.5);
        total += spec->pct_centi[kind];
    }
    if (total > 10000) {
        snprintf(err, errlen, "policy mix '%s': more than 100%%", text);
        return -EINVAL;
    }
    return 0;
}

void
mix_default(size_t n_vms, struct pol_vm_policy *out)
{
    memset(out, 0, n_vms * sizeof *out);
    for (size_t i = 0; i < n_vms; i++) {
        out[i].kind = POL_BALANCED;
        out[i].share_smt = true;
    }
}

void
mix_assign(const struct mix_spec *spec, size_t n_vms, uint64_t seed,
           struct pol_vm_policy *out)
{
    size_t count[POL_N_KINDS] = { 0 }, given = 0, *perm;
    uint64_t rem[POL_N_KINDS] = { 0 };
    uint64_t n100 = 0;
    struct rng r;

    mix_default(n_vms, out);
    for (int k = 0; k < POL_N_KINDS; k++) {
        uint64_t x = (uint64_t) spec->pct_centi[k] * n_vms;

        count[k] = (size_t) (x / 10000);
        rem[k] = x % 10000;
        given += count[k];
        n100 += spec->pct_centi[k];
    }
    /* Largest remainders, ties to the lower kind, while the rounded
     * total stays within round(sum of percentages x n). */
    for (;;) {
        uint64_t want = (n100 * n_vms + 5000) / 10000;
        int best = -1;

        if (given >= want || given >= n_vms) {
            break;
        }
        for (int k = 0; k < POL_N_KINDS; k++) {
            if (rem[k] >= 5000 && (best < 0 || rem[k] > rem[best])) {
                best = k;
            }
        }
        if (best < 0) {
            for (int k = 0; k < POL_N_KINDS; k++) {
                if (rem[k] && (best < 0 || rem[k] > rem[best])) {
                    best = k;
                }
            }
        }
        if (best < 0) {
            break;
        }
        count[best]++;
        rem[best] = 0;
        given++;
    }
    /* Seeded Fisher-Yates shuffle of the VM indices. */
    perm = malloc((n_vms ? n_vms : 1) * sizeof *perm);
    if (!perm) {
        abort();
    }
    for (size_t i = 0; i < n_vms; i++) {
        perm[i] = i;
    }
    rng_init(&r, seed ^ UINT64_C(0x3175), n_vms, 0);
    for (size_t i = n_vms; i > 1; i--) {
        size_t j = (size_t) (rng_next(&r) % i), t = perm[i - 1];

        perm[i - 1] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0, k = 0; k < POL_N_KINDS; k++) {
        if (k == POL_BALANCED) {
            continue;
        }
        for (size_t c = 0; c < count[k] && i < n_vms; c++) {
            out[perm[i++]].kind = (enum pol_kind) k;
        }
    }
    free(perm);
}

/* True if trace VM name 'vm' is 'name' or a --repeat copy "name@k". */
static int
name_matches(const char *vm, const char *name)
{
    size_t n = strlen(name);

    if (strncmp(vm, name, n)) {
        return 0;
    }
    if (!vm[n]) {
        return 1;
    }
    if (vm[n] != '@' || !vm[n + 1]) {
        return 0;
    }
    for (const char *p = vm + n + 1; *p; p++) {
        if (!isdigit((unsigned char) *p)) {
            return 0;
        }
    }
    return 1;
}

int
mix_load_file(const char *path, const struct trace_set *ts,
              struct pol_vm_policy *out, char *err, size_t errlen)
{
    FILE *f;
    char line[1024], *text;
    unsigned char *seen;
    size_t lineno = 0, len;
    /* Read as traces are (a FIFO or device is refused, not waited on),
     * then parsed line by line from memory. */
    int rc = trace_read_path(path, 0, &text, &len, err, errlen);

    mix_default(ts->n_vms, out);
    if (rc || len == 0) {
        if (!rc) {
            free(text);               /* No lines: every VM balanced. */
        }
        return rc;
    }
    f = fmemopen(text, len, "r");
    if (!f) {
        abort();
    }
    seen = calloc(ts->n_vms ? ts->n_vms : 1, 1);
    if (!seen) {
        abort();
    }
    while (!rc && fgets(line, sizeof line, f)) {
        char *name, *kind, *lat, *extra, *save = NULL, *hash;
        enum pol_kind k;
        unsigned long long us = 0;
        size_t hits = 0;

        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%zu: line longer than %zu bytes",
                     path, lineno, sizeof line - 2);
            rc = -EINVAL;
            break;
        }
        hash = strchr(line, '#');
        if (hash) {
            *hash = '\0';
        }
        name = strtok_r(line, " \t\r\n", &save);
        if (!name) {
            continue;
        }
        kind = strtok_r(NULL, " \t\r\n", &save);
        lat = kind ? strtok_r(NULL, " \t\r\n", &save) : NULL;
        extra = lat ? strtok_r(NULL, " \t\r\n", &save) : NULL;
        if (!kind || extra) {
            snprintf(err, errlen, "%s:%zu: expected 'NAME POLICY "
                     "[LATENCY_US]'", path, lineno);
            rc = -EINVAL;
            break;
        }
        if (pol_kind_parse(kind, &k)) {
            snprintf(err, errlen, "%s:%zu: unknown policy '%s'", path,
                     lineno, kind);
            rc = -EINVAL;
            break;
        }
        if (lat) {
            char *end;

            errno = 0;
            us = strtoull(lat, &end, 10);
            if (errno || *end || !isdigit((unsigned char) *lat)
                || us > 10000000) {
                snprintf(err, errlen, "%s:%zu: bad latency '%s' (us, "
                         "0..10000000)", path, lineno, lat);
                rc = -EINVAL;
                break;
            }
        }
        for (size_t i = 0; i < ts->n_vms; i++) {
            if (!name_matches(ts->vms[i].name, name)) {
                continue;
            }
            if (seen[i]) {
                snprintf(err, errlen, "%s:%zu: VM '%s' named twice", path,
                         lineno, ts->vms[i].name);
                rc = -EINVAL;
                break;
            }
            seen[i] = 1;
            out[i].kind = k;
            out[i].latency_us = (uint32_t) us;
            hits++;
        }
        if (!rc && !hits) {
            snprintf(err, errlen, "%s:%zu: no VM named '%s' in the trace",
                     path, lineno, name);
            rc = -ENOENT;
        }
    }
    if (!rc && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -EIO;
    }
    fclose(f);
    free(text);
    free(seen);
    if (rc) {
        memset(out, 0, ts->n_vms * sizeof *out);
    }
    return rc;
}
