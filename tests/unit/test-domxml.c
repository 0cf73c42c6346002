/* tests/unit/test-domxml.c -- The domain XML and metadata reader: good
 * policies in both spellings libvirt produces, absent and unknown
 * attributes, bad values, malformed and oversized documents, entity
 * tricks, and static pins and the agent channel read only from their
 * place in the tree (look-alikes in metadata are not taken). */

#include <config.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "manager/drivers/domxml.h"
#include "policy/cpuset.h"

#define AGENT "org.vpower.agent.0"

/* Field by field: struct padding is not part of the value. */
static void
assert_policy_equal(const struct pol_vm_policy *a,
                    const struct pol_vm_policy *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->latency_us, b->latency_us);
    assert_int_equal(a->min_freq_khz, b->min_freq_khz);
    assert_int_equal(a->never_offline, b->never_offline);
    assert_int_equal(a->share_smt, b->share_smt);
}

static struct pol_vm_policy
defaults(void)
{
    struct pol_vm_policy p;

    memset(&p, 0, sizeof p);
    p.kind = POL_POWERSAVE;
    p.latency_us = 7;
    p.share_smt = true;
    return p;
}

/* Parses 'xml' over the defaults and expects failure with 'word' in the
 * message and the policy untouched. */
static void
expect_policy_error(const char *xml, const char *word)
{
    struct pol_vm_policy p = defaults(), d = defaults();
    char err[256] = "";

    assert_int_equal(domxml_policy_parse(xml, &p, err, sizeof err),
                     -EINVAL);
    if (!strstr(err, word)) {
        fail_msg("error \"%s\" for %s does not name \"%s\"", err, xml, word);
    }
    assert_policy_equal(&p, &d);
}

static void
test_policy_good(void **state)
{
    struct pol_vm_policy p = defaults();
    char err[256] = "";

    (void) state;
    /* As virDomainGetMetadata returns it: no namespace. */
    assert_int_equal(domxml_policy_parse(
        "<policy kind=\"performance\" latency-us=\"50\" "
        "min-freq-khz=\"2000000\" never-offline=\"yes\" share-smt='no'/>",
        &p, err, sizeof err), 0);
    assert_int_equal(p.kind, POL_PERFORMANCE);
    assert_int_equal(p.latency_us, 50);
    assert_int_equal(p.min_freq_khz, 2000000);
    assert_true(p.never_offline);
    assert_false(p.share_smt);

    /* As docs/vpowerd.md shows it, in vpower's namespace; the other
     * boolean spellings. */
    p = defaults();
    assert_int_equal(domxml_policy_parse(
        "<vpower:policy xmlns:vpower=\"" VPOWER_XML_NS "\"\n"
        "    kind=\"balanced\" never-offline=\"true\" share-smt=\"0\">"
        "  </vpower:policy>", &p, err, sizeof err), 0);
    assert_int_equal(p.kind, POL_BALANCED);
    assert_true(p.never_offline);
    assert_false(p.share_smt);
    assert_int_equal(p.latency_us, 7);     /* Absent: the default. */

    /* A character reference is plain XML, not an entity trick. */
    p = defaults();
    assert_int_equal(domxml_policy_parse(
        "<policy kind=\"&#112;erformance\" latency-us=\"4294967295\"/>",
        &p, err, sizeof err), 0);
    assert_int_equal(p.kind, POL_PERFORMANCE);
    assert_int_equal(p.latency_us, UINT32_MAX);
}

static void
test_policy_missing_attributes(void **state)
{
    struct pol_vm_policy p = defaults(), d = defaults();
    char err[256] = "";

    (void) state;
    assert_int_equal(domxml_policy_parse("<policy/>", &p, err, sizeof err),
                     0);
    assert_policy_equal(&p, &d);
    assert_int_equal(domxml_policy_parse("<policy latency-us=\"0\"/>", &p,
                                         err, sizeof err), 0);
    assert_int_equal(p.latency_us, 0);
    assert_int_equal(p.kind, POL_POWERSAVE);
}

static void
test_policy_bad_values(void **state)
{
    (void) state;
    expect_policy_error("<policy kind=\"fast\"/>", "kind=\"fast\"");
    expect_policy_error("<policy kind=\"\"/>", "kind");
    expect_policy_error("<policy latency-us=\"-1\"/>", "latency-us");
    expect_policy_error("<policy latency-us=\"+5\"/>", "latency-us");
    expect_policy_error("<policy latency-us=\" 5\"/>", "latency-us");
    expect_policy_error("<policy latency-us=\"12abc\"/>", "latency-us");
    expect_policy_error("<policy latency-us=\"\"/>", "latency-us");
    expect_policy_error("<policy min-freq-khz=\"4294967296\"/>",
                        "min-freq-khz");
    expect_policy_error("<policy never-offline=\"maybe\"/>",
                        "never-offline");
    expect_policy_error("<policy share-smt=\"YES \"/>", "share-smt");
    /* A good attribute before a bad one is not applied either. */
    expect_policy_error("<policy kind=\"performance\" latency-us=\"x\"/>",
                        "latency-us");
}

static void
test_policy_unknown_attribute(void **state)
{
    (void) state;
    /* A misspelt setting is an error, not silently the default. */
    expect_policy_error("<policy latency_us=\"50\"/>",
                        "unknown attribute latency_us");
    expect_policy_error("<policy xmlns:x=\"urn:x\" x:kind=\"balanced\"/>",
                        "unknown attribute x:kind");
}

static void
test_policy_wrong_element(void **state)
{
    (void) state;
    expect_policy_error("<polite kind=\"balanced\"/>", "not a <policy>");
    expect_policy_error("<x><policy kind=\"balanced\"/></x>",
                        "not a <policy>");
    expect_policy_error("<policy xmlns=\"urn:other\"/>", "urn:other");
    expect_policy_error("<policy><kind>balanced</kind></policy>",
                        "must be empty");
}

static void
test_policy_malformed(void **state)
{
    (void) state;
    expect_policy_error("", "not well-formed");
    expect_policy_error("policy kind=balanced", "not well-formed");
    expect_policy_error("<policy kind=\"balanced\">", "not well-formed");
    expect_policy_error("<policy kind=balanced/>", "not well-formed");
    expect_policy_error("<policy kind=\"a\" kind=\"b\"/>",
                        "not well-formed");
    expect_policy_error("<policy/><policy/>", "not well-formed");
    expect_policy_error("<policy kind=\"balanced\"", "not well-formed");
}

/* A fresh <policy kind="performance" .../> of exactly 'len' bytes,
 * padded with spaces before its "/>". */
static char *
padded_policy(size_t len)
{
    const char *head = "<policy kind=\"performance\"";
    char *xml = malloc(len + 1);

    assert_non_null(xml);
    memset(xml, ' ', len);
    memcpy(xml, head, strlen(head));
    memcpy(xml + len - 2, "/>", 3);
    return xml;
}

static void
test_policy_huge(void **state)
{
    struct pol_vm_policy p = defaults();
    char err[256] = "";
    char *xml;

    (void) state;
    /* Exactly at the bound: still read. */
    xml = padded_policy(DOMXML_POLICY_MAX_BYTES);
    assert_int_equal(domxml_policy_parse(xml, &p, err, sizeof err), 0);
    assert_int_equal(p.kind, POL_PERFORMANCE);
    free(xml);
    /* One byte more: refused before parsing. */
    xml = padded_policy(DOMXML_POLICY_MAX_BYTES + 1);
    expect_policy_error(xml, "larger than 4096 bytes");
    free(xml);
    /* Far more (a libvirt user may store megabytes of metadata). */
    xml = padded_policy(16u << 20);
    expect_policy_error(xml, "larger than 4096 bytes");
    free(xml);
}

static void
test_policy_entities(void **state)
{
    static const char laughs[] =
        "<!DOCTYPE policy [\n"
        " <!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">\n"
        " <!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
        " <!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
        " <!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
        " <!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
        " <!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n"
        " <!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\">\n"
        "]>\n<policy kind=\"&g;\"/>";
    clock_t t0 = clock();

    (void) state;
    /* Billion laughs: refused, and fast (nothing was expanded). */
    expect_policy_error(laughs, "metadata");
    assert_true(clock() - t0 < CLOCKS_PER_SEC / 2);
    /* An internal entity naming a good value is refused all the same. */
    expect_policy_error("<!DOCTYPE policy [<!ENTITY k \"performance\">]>"
                        "<policy kind=\"&k;\"/>", "DOCTYPE");
    /* An external entity is neither fetched nor read. */
    expect_policy_error("<!DOCTYPE policy [<!ENTITY k SYSTEM "
                        "\"file:///etc/hostname\">]><policy kind=\"&k;\"/>",
                        "metadata");
    expect_policy_error("<!DOCTYPE policy SYSTEM \"http://127.0.0.1:9/x\">"
                        "<policy/>", "DOCTYPE");
    /* Without a DTD an entity is undefined. */
    expect_policy_error("<policy kind=\"&k;\"/>", "not well-formed");
}

/* ---- Domain XML ----------------------------------------------------- */

static const char pinned_xml[] =
    "<domain type='kvm'>\n"
    "  <name>g</name>\n"
    "  <metadata>\n"
    "    <x:fake xmlns:x='urn:x'>\n"
    "      <x:vcpu cpuset='7'/>\n"
    "      <cputune><vcpupin vcpu='0' cpuset='6'/></cputune>\n"
    "    </x:fake>\n"
    "  </metadata>\n"
    "  <vcpu placement='static' cpuset='1'>2</vcpu>\n"
    "  <cputune>\n"
    "    <vcpupin vcpu='0' cpuset='2-3'/>\n"
    "    <vcpupin vcpu='1' cpuset='0-7'/>\n"
    "    <emulatorpin cpuset='4'/>\n"
    "  </cputune>\n"
    "</domain>\n";

static void
test_static_pins(void **state)
{
    struct drv_dom d;
    char err[256] = "", buf[64];

    (void) state;
    memset(&d, 0, sizeof d);
    assert_int_equal(domxml_static_pins(pinned_xml, 8, &d, err, sizeof err),
                     0);
    assert_true(d.static_pinning);
    cpuset_format(&d.static_cpus, buf, sizeof buf);
    /* 0-7 covers the host: no constraint; 6 and 7 sit in metadata. */
    assert_string_equal(buf, "1-4");

    /* Unknown host size: every pin counts. */
    assert_int_equal(domxml_static_pins(pinned_xml, -1, &d, err, sizeof err),
                     0);
    cpuset_format(&d.static_cpus, buf, sizeof buf);
    assert_string_equal(buf, "0-7");

    /* No pins at all, and look-alikes only in metadata. */
    assert_int_equal(domxml_static_pins(
        "<domain><metadata><p:vcpu xmlns:p='urn:p' cpuset='0'/>"
        "<p:cputune xmlns:p='urn:p'><p:vcpupin cpuset='1'/></p:cputune>"
        "</metadata><vcpu>2</vcpu></domain>", 4, &d, err, sizeof err), 0);
    assert_false(d.static_pinning);
    assert_true(cpuset_empty(&d.static_cpus));
}

static void
expect_pins_error(const char *xml, const char *word)
{
    struct drv_dom d;
    char err[256] = "", buf[64];

    memset(&d, 0, sizeof d);
    assert_int_equal(domxml_static_pins(xml, 4, &d, err, sizeof err),
                     -EINVAL);
    if (!strstr(err, word)) {
        fail_msg("error \"%s\" does not name \"%s\"", err, word);
    }
    /* The safe side: hands off, on any host CPU. */
    assert_true(d.static_pinning);
    cpuset_format(&d.static_cpus, buf, sizeof buf);
    assert_string_equal(buf, "0-3");
}

static void
test_static_pins_bad(void **state)
{
    char *big = malloc(DOMXML_MAX_BYTES + 2);

    (void) state;
    expect_pins_error("<domain><vcpu cpuset='1-x'>2</vcpu></domain>",
                      "<vcpu cpuset=\"1-x\">: not a CPU list");
    expect_pins_error("<domain><cputune><vcpupin vcpu='0'/></cputune>"
                      "</domain>", "<vcpupin> has no cpuset");
    expect_pins_error("<domain><cputune><emulatorpin cpuset=''/>"
                      "</cputune></domain>", "emulatorpin");
    expect_pins_error("<domian/>", "not <domain>");
    expect_pins_error("<domain><vcpu>2</domain>", "not well-formed");
    assert_non_null(big);
    memset(big, ' ', DOMXML_MAX_BYTES + 1);
    memcpy(big, "<domain>", 8);
    memcpy(big + DOMXML_MAX_BYTES - 8, "</domain>", 9);
    big[DOMXML_MAX_BYTES + 1] = '\0';
    expect_pins_error(big, "larger than");
    free(big);
}

static const char channel_xml[] =
    "<domain>\n"
    "  <metadata>\n"
    "    <e:channel xmlns:e='urn:e' type='unix'>\n"
    "      <e:source path='/tmp/evil'/><e:target name='" AGENT "'/>\n"
    "    </e:channel>\n"
    "  </metadata>\n"
    "  <devices>\n"
    "    <channel type='unix'>\n"
    "      <source mode='bind' path='/run/other'/>\n"
    "      <target type='virtio' name='org.qemu.guest_agent.0'/>\n"
    "    </channel>\n"
    "    <channel type='unix'>\n"
    "      <source mode='bind' path='/run/vp/g.sock'/>\n"
    "      <target type='virtio' name='" AGENT "'/>\n"
    "    </channel>\n"
    "  </devices>\n"
    "</domain>\n";

static void
test_agent_path(void **state)
{
    char path[DRV_PATH_LEN] = "x", err[256] = "";

    (void) state;
    assert_int_equal(domxml_agent_path(channel_xml, AGENT, path,
                                       sizeof path, err, sizeof err), 0);
    assert_string_equal(path, "/run/vp/g.sock");
    assert_int_equal(domxml_agent_path(
        "<domain><metadata><channel xmlns='urn:e' type='unix'>"
        "<source path='/tmp/evil'/><target name='" AGENT "'/></channel>"
        "</metadata><devices/></domain>", AGENT, path, sizeof path, err,
        sizeof err), 0);
    assert_string_equal(path, "");
}

static void
expect_agent_error(const char *xml, size_t len, const char *word)
{
    char path[DRV_PATH_LEN] = "x", err[256] = "";

    assert_int_equal(domxml_agent_path(xml, AGENT, path, len, err,
                                       sizeof err), -EINVAL);
    assert_string_equal(path, "");
    if (!strstr(err, word)) {
        fail_msg("error \"%s\" does not name \"%s\"", err, word);
    }
}

static void
test_agent_path_bad(void **state)
{
    (void) state;
    expect_agent_error("<domain><devices><channel type='pty'>"
                       "<target name='" AGENT "'/></channel></devices>"
                       "</domain>", DRV_PATH_LEN, "not unix");
    expect_agent_error("<domain><devices><channel type='unix'>"
                       "<source path='rel/x'/><target name='" AGENT "'/>"
                       "</channel></devices></domain>", DRV_PATH_LEN,
                       "no absolute source path");
    expect_agent_error(channel_xml, 8, "longer than 7 bytes");
    expect_agent_error("<domain><devices>", DRV_PATH_LEN, "not well-formed");
    expect_agent_error("<channel/>", DRV_PATH_LEN, "not <domain>");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policy_good),
        cmocka_unit_test(test_policy_missing_attributes),
        cmocka_unit_test(test_policy_bad_values),
        cmocka_unit_test(test_policy_unknown_attribute),
        cmocka_unit_test(test_policy_wrong_element),
        cmocka_unit_test(test_policy_malformed),
        cmocka_unit_test(test_policy_huge),
        cmocka_unit_test(test_policy_entities),
        cmocka_unit_test(test_static_pins),
        cmocka_unit_test(test_static_pins_bad),
        cmocka_unit_test(test_agent_path),
        cmocka_unit_test(test_agent_path_bad),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
