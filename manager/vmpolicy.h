/* manager/vmpolicy.h -- A VM's policy as domain metadata.
 *
 * vpowerd keeps each VM's policy in the domain's own metadata (namespace
 * VPOWER_XML_NS, manager/drivers/drv.h), so it survives daemon restarts and
 * travels with the domain: one element
 *   <policy kind="balanced" latency-us="0" min-freq-khz="0"
 *           never-offline="no" share-smt="yes"/>
 * whose attributes are each optional.  The text is a guest owner's input:
 * a bad attribute is an error naming it. */

#ifndef VPOWER_VMPOLICY_H
#define VPOWER_VMPOLICY_H 1

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* The policy of a VM without metadata: 'kind', and whether its vCPUs
 * may share a core's SMT threads with other VMs' (the configuration's
 * default_policy and default_share_smt). */
void vmpol_default(enum pol_kind kind, bool share_smt,
                   struct pol_vm_policy *p);

/* Reading the element back is domxml_policy_parse()
 * (manager/drivers/domxml.h):
 * the guest owner's text goes through an XML parser, never a scanner. */

/* Writes 'p' as a <policy> element into 'buf'. */
void vmpol_to_xml(const struct pol_vm_policy *p, char *buf, size_t len);

#endif /* manager/vmpolicy.h */
