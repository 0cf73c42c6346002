/* manager/drivers/domxml.c -- Domain XML and vpower metadata through libxml2;
 * see domxml.h.
 *
 * Each call parses its text into a tree and walks the few elements it
 * needs by name from the root, never searching the text: a string like
 * "<vcpupin" inside another element's metadata or a description is not a
 * pin.  libxml2 runs with XML_PARSE_NONET and without XML_PARSE_NOENT
 * or DTD loading, and a document with a DOCTYPE is refused, so neither an
 * external nor an internal entity is ever expanded; its messages are
 * collected per parse instead of going to stderr. */

#include <config.h>

#include "manager/drivers/domxml.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "manager/control/proto.h"
#include "policy/cpuset.h"

#define XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR \
                     | XML_PARSE_NOWARNING | XML_PARSE_NOCDATA)

/* Parses 'xml' (at most 'max' bytes) into a tree whose root element is
 * returned in '*root'.  'what' names the text in errors.  Returns the
 * document (xmlFreeDoc) or NULL with 'err' filled. */
static xmlDocPtr
parse(const char *xml, size_t max, const char *what, xmlNodePtr *root,
      char *err, size_t errlen)
{
    size_t len = strnlen(xml, max + 1);
    xmlParserCtxtPtr ctxt;
    xmlDocPtr doc;

    if (len > max) {
        snprintf(err, errlen, "%s is larger than %zu bytes", what, max);
        return NULL;
    }
    ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        snprintf(err, errlen, "%s: out of memory for the XML parser", what);
        return NULL;
    }
    doc = xmlCtxtReadMemory(ctxt, xml, (int) len, NULL, NULL, XML_OPTIONS);
    if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        const char *msg = e && e->message ? e->message : "unknown error";
        size_t ml = strcspn(msg, "\n");

        snprintf(err, errlen, "%s is not well-formed XML: line %d: %.*s",
                 what, e ? e->line : 0, (int) ml, msg);
        xmlFreeParserCtxt(ctxt);
        return NULL;
    }
    xmlFreeParserCtxt(ctxt);
    if (doc->intSubset || doc->extSubset) {
        snprintf(err, errlen, "%s must not have a DOCTYPE", what);
        xmlFreeDoc(doc);
        return NULL;
    }
    *root = xmlDocGetRootElement(doc);
    if (!*root) {
        snprintf(err, errlen, "%s has no element", what);
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

/* True if 'n' is an element named 'name' in no namespace (libvirt's own
 * elements; those of other namespaces belong to someone else). */
static bool
is_elem(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !n->ns
           && !strcmp((const char *) n->name, name);
}

/* The first child element of 'parent' named 'name', NULL if none. */
static xmlNodePtr
child(const xmlNode *parent, const char *name)
{
    for (xmlNodePtr c = parent->children; c; c = c->next) {
        if (is_elem(c, name)) {
            return c;
        }
    }
    return NULL;
}

/* The value of attribute 'name' (no namespace) of 'n', xmlFree()d by
 * the caller, NULL if absent. */
static char *
attr(const xmlNode *n, const char *name)
{
    return (char *) xmlGetNoNsProp(n, (const xmlChar *) name);
}

/* ---- Static pins ---------------------------------------------------- */

/* Adds the cpuset attribute of pin element 'n' to d's static pins
 * unless it covers every one of the host's 'n_host' CPUs.  An absent
 * attribute is no pin where 'optional', an error otherwise. */
static int
add_pin(const xmlNode *n, bool optional, int n_host, struct drv_dom *d,
        char *err, size_t errlen)
{
    char *v = attr(n, "cpuset");
    struct cpuset s;
    bool all = n_host > 0;

    if (!v) {
        if (optional) {
            return 0;
        }
        snprintf(err, errlen, "<%s> has no cpuset", (const char *) n->name);
        return -EINVAL;
    }
    /* Empty is valid for cpuset_parse() (sysfs lists) but pins a
     * thread to nothing. */
    if (cpuset_parse(&s, v) < 0 || cpuset_empty(&s)) {
        snprintf(err, errlen, "<%s cpuset=\"%.40s\">: not a CPU list",
                 (const char *) n->name, v);
        xmlFree(v);
        return -EINVAL;
    }
    xmlFree(v);
    for (int c = 0; all && c < n_host && c < POL_MAX_CPUS; c++) {
        all = cpuset_has(&s, (unsigned) c);
    }
    if (!all) {
        d->static_pinning = true;
        cpuset_or(&d->static_cpus, &d->static_cpus, &s);
    }
    return 0;
}

static int
read_pins(const xmlNode *root, int n_host, struct drv_dom *d, char *err,
          size_t errlen)
{
    xmlNodePtr vcpu = child(root, "vcpu");
    xmlNodePtr tune = child(root, "cputune");

    if (vcpu && add_pin(vcpu, true, n_host, d, err, errlen) < 0) {
        return -EINVAL;
    }
    for (xmlNodePtr c = tune ? tune->children : NULL; c; c = c->next) {
        if ((is_elem(c, "vcpupin") || is_elem(c, "emulatorpin"))
            && add_pin(c, false, n_host, d, err, errlen) < 0) {
            return -EINVAL;
        }
    }
    return 0;
}

int
domxml_static_pins(const char *xml, int n_host, struct drv_dom *d,
                   char *err, size_t errlen)
{
    xmlNodePtr root = NULL;
    xmlDocPtr doc = parse(xml, DOMXML_MAX_BYTES, "domain XML", &root, err,
                          errlen);
    int r = -EINVAL;

    cpuset_zero(&d->static_cpus);
    d->static_pinning = false;
    if (doc && !is_elem(root, "domain")) {
        snprintf(err, errlen, "domain XML has <%.40s> at the top, not "
                 "<domain>", (const char *) root->name);
    } else if (doc) {
        r = read_pins(root, n_host, d, err, errlen);
    }
    xmlFreeDoc(doc);
    if (r < 0) {
        cpuset_zero(&d->static_cpus);
        for (int c = 0; c < n_host && c < POL_MAX_CPUS; c++) {
            cpuset_set(&d->static_cpus, (unsigned) c);
        }
        d->static_pinning = true;
    }
    return r;
}

/* ---- Agent channel -------------------------------------------------- */

/* True if channel element 'ch' has a <target> named 'name'. */
static bool
channel_named(const xmlNode *ch, const char *name)
{
    xmlNodePtr t = child(ch, "target");
    char *v = t ? attr(t, "name") : NULL;
    bool match = v && !strcmp(v, name);

    xmlFree(v);
    return match;
}

static int
read_channel(const xmlNode *ch, const char *name, char *path, size_t len,
             char *err, size_t errlen)
{
    char *type = attr(ch, "type");
    xmlNodePtr src = child(ch, "source");
    char *v = src ? attr(src, "path") : NULL;
    int r = -EINVAL;

    if (!type || strcmp(type, "unix")) {
        snprintf(err, errlen, "channel %s is of type \"%.20s\", not unix",
                 name, type ? type : "");
    } else if (!v || v[0] != '/') {
        snprintf(err, errlen, "channel %s has no absolute source path",
                 name);
    } else if (strlen(v) >= len) {
        snprintf(err, errlen, "channel %s: source path is longer than "
                 "%zu bytes", name, len - 1);
    } else {
        memcpy(path, v, strlen(v) + 1);
        r = 0;
    }
    xmlFree(type);
    xmlFree(v);
    return r;
}

int
domxml_agent_path(const char *xml, const char *channel, char *path,
                  size_t len, char *err, size_t errlen)
{
    xmlNodePtr root = NULL, devs;
    xmlDocPtr doc = parse(xml, DOMXML_MAX_BYTES, "domain XML", &root, err,
                          errlen);
    int r = 0;

    if (len) {
        path[0] = '\0';
    }
    if (!doc) {
        return -EINVAL;
    }
    if (!is_elem(root, "domain")) {
        snprintf(err, errlen, "domain XML has <%.40s> at the top, not "
                 "<domain>", (const char *) root->name);
        xmlFreeDoc(doc);
        return -EINVAL;
    }
    devs = child(root, "devices");
    for (xmlNodePtr c = devs ? devs->children : NULL; c; c = c->next) {
        if (is_elem(c, "channel") && channel_named(c, channel)) {
            r = read_channel(c, channel, path, len, err, errlen);
            break;
        }
    }
    xmlFreeDoc(doc);
    return r;
}

/* ---- vpower metadata ------------------------------------------------ */

static int
parse_bool(const char *name, const char *v, bool *out, char *err,
           size_t errlen)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) {
        *out = true;
    } else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) {
        *out = false;
    } else {
        snprintf(err, errlen, "%s=\"%.40s\" must be yes or no", name, v);
        return -EINVAL;
    }
    return 0;
}

static int
parse_u32(const char *name, const char *v, uint32_t *out, char *err,
          size_t errlen)
{
    if (proto_parse_u32(v, 0, UINT32_MAX, out) < 0) {
        snprintf(err, errlen, "%s=\"%.40s\" is not a number in 0..%u",
                 name, v, UINT32_MAX);
        return -EINVAL;
    }
    return 0;
}

/* Sets the field of 'p' named by attribute 'name' from its value 'v'. */
static int
policy_attr(const char *name, const char *v, struct pol_vm_policy *p,
            char *err, size_t errlen)
{
    if (!strcmp(name, "kind")) {
        if (pol_kind_parse(v, &p->kind) < 0) {
            snprintf(err, errlen, "kind=\"%.40s\" is not balanced, "
                     "performance or powersave", v);
            return -EINVAL;
        }
        return 0;
    } else if (!strcmp(name, "latency-us")) {
        return parse_u32(name, v, &p->latency_us, err, errlen);
    } else if (!strcmp(name, "min-freq-khz")) {
        return parse_u32(name, v, &p->min_freq_khz, err, errlen);
    } else if (!strcmp(name, "never-offline")) {
        return parse_bool(name, v, &p->never_offline, err, errlen);
    } else if (!strcmp(name, "share-smt")) {
        return parse_bool(name, v, &p->share_smt, err, errlen);
    }
    snprintf(err, errlen, "unknown attribute %.40s (known: kind, "
             "latency-us, min-freq-khz, never-offline, share-smt)", name);
    return -EINVAL;
}

static int
read_policy(const xmlNode *root, struct pol_vm_policy *p, char *err,
            size_t errlen)
{
    if (root->type != XML_ELEMENT_NODE
        || strcmp((const char *) root->name, "policy")) {
        snprintf(err, errlen, "metadata is <%.40s>, not a <policy> element",
                 (const char *) root->name);
        return -EINVAL;
    }
    if (root->ns && (!root->ns->href
                     || strcmp((const char *) root->ns->href,
                               VPOWER_XML_NS))) {
        snprintf(err, errlen, "<policy> is in namespace \"%.60s\", not %s",
                 root->ns->href ? (const char *) root->ns->href : "",
                 VPOWER_XML_NS);
        return -EINVAL;
    }
    for (xmlNodePtr c = root->children; c; c = c->next) {
        if (c->type == XML_ELEMENT_NODE) {
            snprintf(err, errlen, "<policy> must be empty, has <%.40s>",
                     (const char *) c->name);
            return -EINVAL;
        }
    }
    for (xmlAttrPtr a = root->properties; a; a = a->next) {
        const char *name = (const char *) a->name;
        char *v;
        int r;

        if (a->ns) {
            snprintf(err, errlen, "unknown attribute %.20s:%.40s",
                     a->ns->prefix ? (const char *) a->ns->prefix : "",
                     name);
            return -EINVAL;
        }
        v = (char *) xmlNodeListGetString(root->doc, a->children, 1);
        r = policy_attr(name, v ? v : "", p, err, errlen);
        xmlFree(v);
        if (r < 0) {
            return r;
        }
    }
    return 0;
}

int
domxml_policy_parse(const char *xml, struct pol_vm_policy *p, char *err,
                    size_t errlen)
{
    struct pol_vm_policy n = *p;
    xmlNodePtr root = NULL;
    xmlDocPtr doc = parse(xml, DOMXML_POLICY_MAX_BYTES, "metadata", &root,
                          err, errlen);
    int r;

    if (!doc) {
        return -EINVAL;
    }
    r = read_policy(root, &n, err, errlen);
    xmlFreeDoc(doc);
    if (r == 0) {
        *p = n;
    }
    return r;
}
