/* manager/drivers/domxml.h -- What vpowerd reads from libvirt domain XML and
 * from its own domain metadata, parsed with libxml2.
 *
 * Both texts are untrusted: any libvirt user who may define a domain or
 * set its metadata chooses them.  So every function parses a whole
 * document with libxml2 (no network, no entity substitution, no DTD
 * accepted, bounded size), reads only the elements at their documented
 * place in the tree, and answers a bad document with an error that says
 * what is wrong; it never aborts and keeps no state.  The libvirt driver
 * uses the domain XML readers, the daemon the metadata reader. */

#ifndef VPOWER_DOMXML_H
#define VPOWER_DOMXML_H 1

#include <stddef.h>

#include "manager/drivers/drv.h"
#include "policy/policy.h"

/* Largest domain XML read, in bytes (libvirt's own definitions are a
 * few KiB; a domain with hundreds of devices stays far below). */
#define DOMXML_MAX_BYTES (4u << 20)
/* Largest vpower metadata element read, in bytes. */
#define DOMXML_POLICY_MAX_BYTES 4096u

/* The administrator's static pins in domain XML 'xml': the union of the
 * cpusets of /domain/vcpu, /domain/cputune/vcpupin and
 * /domain/cputune/emulatorpin into d->static_cpus, and
 * d->static_pinning set if there is one.  A pin covering every one of
 * the host's 'n_host' CPUs constrains nothing and is not counted (it is
 * also what a restore leaves in a transient domain's live XML); with
 * 'n_host' <= 0 (unknown) every pin counts.  Returns 0, or -EINVAL with
 * 'err' filled when the XML is malformed, too large, not a <domain> or
 * holds a cpuset that is not a CPU list; then d->static_pinning is true
 * and d->static_cpus covers CPUs 0..n_host-1, so that the domain is left
 * alone (the safe side). */
int domxml_static_pins(const char *xml, int n_host, struct drv_dom *d,
                       char *err, size_t errlen);

/* The host end of the virtio-serial channel named 'channel' in domain
 * XML 'xml': the source path of /domain/devices/channel[@type='unix']
 * whose <target> has that name, copied into 'path' ('len' bytes).
 * Returns 0 with 'path' set ("" when the domain has no such channel), or
 * -EINVAL with 'path' "" and 'err' filled when the XML is malformed, too
 * large, not a <domain>, or that channel is not a unix socket or has no
 * absolute path that fits 'len'. */
int domxml_agent_path(const char *xml, const char *channel, char *path,
                      size_t len, char *err, size_t errlen);

/* Parses vpower's metadata element 'xml' (as virDomainGetMetadata
 * returns it) over 'p', which holds the defaults:
 *     <policy kind="balanced|performance|powersave" latency-us="N"
 *             min-freq-khz="N" never-offline="yes|no" share-smt="yes|no"/>
 * in no namespace or in VPOWER_XML_NS; every attribute is optional,
 * numbers are decimal 0..4294967295, booleans yes/no (true/false, 1/0).
 * Returns 0 with 'p' updated, or -EINVAL with 'p' untouched and 'err'
 * filled when the element is malformed, too large, not an empty
 * <policy>, or has an unknown attribute or a bad value. */
int domxml_policy_parse(const char *xml, struct pol_vm_policy *p,
                        char *err, size_t errlen);

#endif /* manager/drivers/domxml.h */
