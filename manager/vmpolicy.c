/* manager/vmpolicy.c -- A VM's policy as domain metadata (vmpolicy.h). */

#include <config.h>

#include "manager/vmpolicy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Finds attribute 'name' in 'xml' (one element) and copies its value. */
static bool
md_attr(const char *xml, const char *name, char *buf, size_t len)
{
    size_t nl = strlen(name);

    for (const char *p = strstr(xml, name); p; p = strstr(p + 1, name)) {
        const char *v, *e;

        if (p == xml || (p[-1] != ' ' && p[-1] != '\t' && p[-1] != '\n')
            || p[nl] != '=' || (p[nl + 1] != '"' && p[nl + 1] != '\'')) {
            continue;
        }
        v = p + nl + 2;
        e = strchr(v, p[nl + 1]);
        if (!e || (size_t) (e - v) >= len) {
            return false;
        }
        memcpy(buf, v, (size_t) (e - v));
        buf[e - v] = '\0';
        return true;
    }
    return false;
}

static int
md_u32(const char *xml, const char *name, uint32_t *out, char *err,
       size_t errlen)
{
    char v[32], *end;
    unsigned long long x;

    if (!md_attr(xml, name, v, sizeof v)) {
        return 0;
    }
    errno = 0;
    x = strtoull(v, &end, 10);
    if (errno || end == v || *end || x > UINT32_MAX || v[0] == '-') {
        snprintf(err, errlen, "%s=\"%s\" is not a number in 0..%u", name,
                 v, UINT32_MAX);
        return -EINVAL;
    }
    *out = (uint32_t) x;
    return 0;
}

static int
md_bool(const char *xml, const char *name, bool *out, char *err,
        size_t errlen)
{
    char v[16];

    if (!md_attr(xml, name, v, sizeof v)) {
        return 0;
    }
    if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) {
        *out = true;
    } else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) {
        *out = false;
    } else {
        snprintf(err, errlen, "%s=\"%s\" must be yes or no", name, v);
        return -EINVAL;
    }
    return 0;
}

int
vmpol_from_xml(const char *xml, struct pol_vm_policy *p, char *err,
                size_t errlen)
{
    char kind[32];
    struct pol_vm_policy n = *p;

    if (!strstr(xml, "policy")) {
        snprintf(err, errlen, "metadata is not a <policy> element");
        return -EINVAL;
    }
    if (md_attr(xml, "kind", kind, sizeof kind)
        && pol_kind_parse(kind, &n.kind) < 0) {
        snprintf(err, errlen, "kind=\"%s\" is not balanced, performance "
                 "or powersave", kind);
        return -EINVAL;
    }
    if (md_u32(xml, "latency-us", &n.latency_us, err, errlen) < 0
        || md_u32(xml, "min-freq-khz", &n.min_freq_khz, err, errlen) < 0
        || md_bool(xml, "never-offline", &n.never_offline, err, errlen) < 0
        || md_bool(xml, "share-smt", &n.share_smt, err, errlen) < 0) {
        return -EINVAL;
    }
    *p = n;
    return 0;
}

void
vmpol_to_xml(const struct pol_vm_policy *p, char *buf, size_t len)
{
    snprintf(buf, len,
             "<policy kind=\"%s\" latency-us=\"%" PRIu32 "\" "
             "min-freq-khz=\"%" PRIu32 "\" never-offline=\"%s\" "
             "share-smt=\"%s\"/>",
             pol_kind_name(p->kind), p->latency_us, p->min_freq_khz,
             p->never_offline ? "yes" : "no", p->share_smt ? "yes" : "no");
}

void
vmpol_default(enum pol_kind kind, struct pol_vm_policy *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->share_smt = true;
}
