/* manager/vmpolicy.h -- A VM's policy as domain metadata.
 *
 * vpowerd keeps each VM's policy in the domain's own metadata (namespace
 * VPOWER_XML_NS, manager/drv.h), so it survives daemon restarts and
 * travels with the domain: one element
 *   <policy kind="balanced" latency-us="0" min-freq-khz="0"
 *           never-offline="no" share-smt="yes"/>
 * whose attributes are each optional.  The text is a guest owner's input:
 * a bad attribute is an error naming it. */

#ifndef VPOWER_VMPOLICY_H
#define VPOWER_VMPOLICY_H 1

#include <stddef.h>

#include "policy/policy.h"

/* The policy of a VM without metadata: 'kind', SMT sharing allowed. */
void vmpol_default(enum pol_kind kind, struct pol_vm_policy *p);

/* Parses a <policy> element over 'p' (which holds the defaults).
 * Returns 0, or -EINVAL with the reason in 'err' ('p' unchanged). */
int vmpol_from_xml(const char *xml, struct pol_vm_policy *p, char *err,
                   size_t errlen);

/* Writes 'p' as a <policy> element into 'buf'. */
void vmpol_to_xml(const struct pol_vm_policy *p, char *buf, size_t len);

#endif /* manager/vmpolicy.h */
