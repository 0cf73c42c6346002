/* manager/vmpolicy.c -- A VM's policy as domain metadata (vmpolicy.h). */

#include <config.h>

#include "manager/vmpolicy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
vmpol_default(enum pol_kind kind, bool share_smt, struct pol_vm_policy *p)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->share_smt = share_smt;
}
