/* tests/unit/test-gchproto.c -- The guest channel codec, field by field.
 *
 * Every type round-trips; every bound is tested on both sides; every
 * header field is corrupted once; every prefix of a valid message is
 * "short", never accepted or misread. */

#include <config.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/gchproto.h"

static int
enc(const struct gch_msg *m, uint8_t *buf)
{
    return gch_encode(m, buf, GCH_MAX_MSG);
}

static struct gch_msg
value_msg(unsigned type, uint32_t v)
{
    struct gch_msg m;

    memset(&m, 0, sizeof m);
    m.hdr.type = (uint8_t) type;
    m.hdr.seq = 0x01020304;
    m.u.value = v;
    return m;
}

static struct gch_msg
util_msg(unsigned n)
{
    struct gch_msg m;
    unsigned i;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_UTIL;
    m.hdr.seq = 9;
    m.u.util.interval_ms = 5000;
    m.u.util.pressure_some_ppm = 1234;
    m.u.util.n = (uint16_t) n;
    for (i = 0; i < n && i < GCH_MAX_UTIL_VCPUS; i++) {
        m.u.util.v[i].vcpu = (uint16_t) i;
        m.u.util.v[i].busy_permille = (uint16_t) (i * 10 % 1001);
    }
    return m;
}

static struct gch_msg
hello_msg(void)
{
    struct gch_msg m;

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_HELLO;
    m.hdr.seq = 1;
    m.u.hello.min_version = 1;
    m.u.hello.max_version = 1;
    m.u.hello.caps = GCH_CAP_ALL;
    m.u.hello.n_vcpus = 2;
    strcpy(m.u.hello.agent_version, "agent-0.1.0");
    return m;
}

static void
test_header_layout(void **state)
{
    struct gch_msg m = value_msg(GCH_T_BOOST, 500), d;
    uint8_t buf[GCH_MAX_MSG];
    static const uint8_t want[] = {
        'V', 'P', 'G', '1', 1, GCH_T_BOOST, 0, 0, 1, 2, 3, 4, 0, 4, 0, 0,
        0, 0, 0x01, 0xf4
    };

    (void) state;
    assert_int_equal(enc(&m, buf), 20);
    assert_memory_equal(buf, want, sizeof want);
    assert_int_equal(gch_decode(buf, 20, &d), 20);
    assert_int_equal(d.hdr.type, GCH_T_BOOST);
    assert_int_equal(d.hdr.seq, 0x01020304);
    assert_int_equal(d.hdr.length, 4);
    assert_int_equal(d.u.value, 500);
}

static void
test_roundtrip_all(void **state)
{
    struct gch_msg m, d;
    uint8_t buf[GCH_MAX_MSG];
    int len;

    (void) state;
    m = hello_msg();
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 28);
    assert_int_equal(gch_decode(buf, (size_t) len, &d), len);
    assert_int_equal(d.u.hello.caps, GCH_CAP_ALL);
    assert_int_equal(d.u.hello.n_vcpus, 2);
    assert_string_equal(d.u.hello.agent_version, "agent-0.1.0");

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_HELLO_ACK;
    m.u.hello_ack.version = 1;
    m.u.hello_ack.caps = GCH_CAP_LATENCY;
    m.u.hello_ack.hint_rate = 20;
    m.u.hello_ack.burst = 10;
    m.u.hello_ack.n_vcpus = 4;
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 20);
    assert_int_equal(gch_decode(buf, (size_t) len, &d), len);
    assert_int_equal(d.u.hello_ack.hint_rate, 20);
    assert_int_equal(d.u.hello_ack.burst, 10);
    assert_int_equal(d.u.hello_ack.n_vcpus, 4);

    m = value_msg(GCH_T_LATENCY_END, 0);
    assert_int_equal(enc(&m, buf), GCH_HDR_LEN);
    assert_int_equal(gch_decode(buf, GCH_HDR_LEN, &d), GCH_HDR_LEN);
    assert_int_equal(d.hdr.type, GCH_T_LATENCY_END);

    m = util_msg(GCH_MAX_UTIL_VCPUS);
    len = enc(&m, buf);
    assert_int_equal(len, GCH_MAX_MSG);
    assert_int_equal(gch_decode(buf, (size_t) len, &d), len);
    assert_int_equal(d.u.util.n, GCH_MAX_UTIL_VCPUS);
    assert_int_equal(d.u.util.v[63].vcpu, 63);
    assert_int_equal(d.u.util.v[63].busy_permille, 630);
    assert_int_equal(d.u.util.pressure_some_ppm, 1234);

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_ACK;
    m.hdr.seq = 77;
    m.u.ack.status = GCH_S_RATE_LIMITED;
    m.u.ack.type = GCH_T_BOOST;
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 4);
    assert_int_equal(gch_decode(buf, (size_t) len, &d), len);
    assert_int_equal(d.hdr.seq, 77);
    assert_int_equal(d.u.ack.status, GCH_S_RATE_LIMITED);
    assert_int_equal(d.u.ack.type, GCH_T_BOOST);
}

/* Value bounds: {type, lowest valid, highest valid}; one past either side
 * must be refused by both encoder and decoder. */
static void
test_value_bounds(void **state)
{
    static const struct { unsigned type; uint32_t lo, hi; } t[] = {
        { GCH_T_LATENCY_BEGIN, 0, GCH_MAX_LATENCY_US },
        { GCH_T_BATCH, 0, GCH_MAX_BATCH_MS },
        { GCH_T_BOOST, 1, GCH_MAX_BOOST_MS },
        { GCH_T_IDLE, 1, GCH_MAX_IDLE_MS },
    };
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m, d;
    size_t i;

    (void) state;
    for (i = 0; i < sizeof t / sizeof t[0]; i++) {
        m = value_msg(t[i].type, t[i].lo);
        assert_int_equal(enc(&m, buf), 20);
        m = value_msg(t[i].type, t[i].hi);
        assert_int_equal(enc(&m, buf), 20);
        assert_int_equal(gch_decode(buf, 20, &d), 20);
        assert_int_equal(d.u.value, t[i].hi);
        /* One above: build by hand, the encoder refuses it. */
        m = value_msg(t[i].type, t[i].hi + 1);
        assert_int_equal(enc(&m, buf), GCH_E_FIELD);
        buf[16] = (uint8_t) ((t[i].hi + 1) >> 24);
        buf[17] = (uint8_t) ((t[i].hi + 1) >> 16);
        buf[18] = (uint8_t) ((t[i].hi + 1) >> 8);
        buf[19] = (uint8_t) (t[i].hi + 1);
        assert_int_equal(gch_decode(buf, 20, &d), GCH_E_FIELD);
        if (t[i].lo > 0) {
            m = value_msg(t[i].type, t[i].lo - 1);
            assert_int_equal(enc(&m, buf), GCH_E_FIELD);
        }
        m = value_msg(t[i].type, 0xffffffffu);
        assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    }
}

static void
test_header_corruption(void **state)
{
    struct gch_msg m = value_msg(GCH_T_IDLE, 2000), d;
    uint8_t good[GCH_MAX_MSG], buf[GCH_MAX_MSG];
    struct gch_hdr h;
    size_t i;

    (void) state;
    assert_int_equal(enc(&m, good), 20);
    /* Magic. */
    for (i = 0; i < 4; i++) {
        memcpy(buf, good, 20);
        buf[i] ^= 0x20;
        assert_int_equal(gch_decode(buf, 20, &d), GCH_E_MAGIC);
    }
    /* Version 0, 2, 255. */
    memcpy(buf, good, 20);
    buf[4] = 0;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_VERSION);
    buf[4] = 2;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_VERSION);
    assert_int_equal(gch_decode_header(buf, 20, &h), GCH_E_VERSION);
    assert_int_equal(h.length, 4);      /* Still usable for skipping. */
    buf[4] = 255;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_VERSION);
    /* Types 0, MAX+1, 255. */
    memcpy(buf, good, 20);
    buf[5] = 0;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_TYPE);
    buf[5] = GCH_T_MAX + 1;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_TYPE);
    buf[5] = 255;
    assert_int_equal(gch_decode(buf, 20, &d), GCH_E_TYPE);
    /* Flags and reserved bytes, each byte. */
    for (i = 6; i < 8; i++) {
        memcpy(buf, good, 20);
        buf[i] = 1;
        assert_int_equal(gch_decode(buf, 20, &d), GCH_E_RESERVED);
    }
    for (i = 14; i < 16; i++) {
        memcpy(buf, good, 20);
        buf[i] = 0x80;
        assert_int_equal(gch_decode(buf, 20, &d), GCH_E_RESERVED);
    }
    /* Length: 0, 3, 5, max, max+1, 0xffff for a 4-byte type. */
    {
        static const uint16_t lens[] = { 0, 3, 5, GCH_MAX_PAYLOAD,
                                         GCH_MAX_PAYLOAD + 1, 0xffff };

        for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            memcpy(buf, good, 20);
            buf[12] = (uint8_t) (lens[i] >> 8);
            buf[13] = (uint8_t) lens[i];
            assert_int_equal(gch_decode(buf, 20, &d), GCH_E_LENGTH);
        }
    }
    /* Seq is opaque: any value decodes. */
    memcpy(buf, good, 20);
    memset(buf + 8, 0xff, 4);
    assert_int_equal(gch_decode(buf, 20, &d), 20);
    assert_int_equal(d.hdr.seq, 0xffffffffu);
}

static void
test_truncated(void **state)
{
    struct gch_msg m = util_msg(3), d;
    uint8_t buf[GCH_MAX_MSG];
    int len, i;

    (void) state;
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 12 + 12);
    for (i = 0; i < len; i++) {
        assert_int_equal(gch_decode(buf, (size_t) i, &d), GCH_E_SHORT);
    }
    /* Trailing bytes belong to the next message. */
    assert_int_equal(gch_decode(buf, sizeof buf, &d), len);
}

static void
test_util_fields(void **state)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m, d;
    int len;

    (void) state;
    m = util_msg(0);
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(GCH_MAX_UTIL_VCPUS + 1);
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(2);
    m.u.util.v[1].busy_permille = 1001;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(2);
    m.u.util.v[1].busy_permille = 1000;
    assert_int_equal(enc(&m, buf), GCH_HDR_LEN + 20);
    m = util_msg(2);
    m.u.util.v[1].vcpu = 0;            /* Duplicate. */
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(2);
    m.u.util.interval_ms = 0;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(2);
    m.u.util.pressure_some_ppm = 1000001;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = util_msg(2);
    m.u.util.pressure_some_ppm = GCH_PRESSURE_NONE;
    assert_int_equal(enc(&m, buf), GCH_HDR_LEN + 20);
    /* Count field disagreeing with the length. */
    m = util_msg(2);
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 20);
    buf[GCH_HDR_LEN + 9] = 3;
    assert_int_equal(gch_decode(buf, (size_t) len, &d), GCH_E_FIELD);
    buf[GCH_HDR_LEN + 9] = 2;
    buf[GCH_HDR_LEN + 11] = 1;         /* Reserved. */
    assert_int_equal(gch_decode(buf, (size_t) len, &d), GCH_E_FIELD);
    /* Length not 12 + 4n. */
    m = util_msg(2);
    len = enc(&m, buf);
    buf[13] = 21;
    assert_int_equal(gch_decode(buf, sizeof buf, &d), GCH_E_LENGTH);
    buf[13] = 12;
    assert_int_equal(gch_decode(buf, sizeof buf, &d), GCH_E_LENGTH);
}

static void
test_hello_fields(void **state)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m, d;
    int len;

    (void) state;
    m = hello_msg();
    m.u.hello.caps = 0x100;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = hello_msg();
    m.u.hello.min_version = 2;         /* min > max. */
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = hello_msg();
    m.u.hello.min_version = 0;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = hello_msg();
    m.u.hello.n_vcpus = 0;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = hello_msg();
    m.u.hello.n_vcpus = 4097;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m = hello_msg();
    strcpy(m.u.hello.agent_version, "0123456789abcdef");   /* Full 16. */
    len = enc(&m, buf);
    assert_int_equal(len, GCH_HDR_LEN + 28);
    assert_int_equal(gch_decode(buf, (size_t) len, &d), len);
    assert_string_equal(d.u.hello.agent_version, "0123456789abcdef");
    /* Control byte and bytes after the NUL. */
    buf[GCH_HDR_LEN + 12] = '\n';
    assert_int_equal(gch_decode(buf, (size_t) len, &d), GCH_E_FIELD);
    m = hello_msg();
    len = enc(&m, buf);
    buf[GCH_HDR_LEN + 12 + 15] = 'x';
    assert_int_equal(gch_decode(buf, (size_t) len, &d), GCH_E_FIELD);
}

static void
test_ack_fields(void **state)
{
    uint8_t buf[GCH_MAX_MSG];
    struct gch_msg m;

    (void) state;
    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_ACK;
    m.u.ack.status = GCH_S_MAX + 1;
    m.u.ack.type = GCH_T_BOOST;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m.u.ack.status = GCH_S_APPLIED;
    m.u.ack.type = 0;
    assert_int_equal(enc(&m, buf), GCH_E_FIELD);
    m.hdr.type = 0;
    assert_int_equal(enc(&m, buf), GCH_E_TYPE);
    m.hdr.type = GCH_T_MAX + 1;
    assert_int_equal(enc(&m, buf), GCH_E_TYPE);
    m = value_msg(GCH_T_BOOST, 10);
    assert_int_equal(gch_encode(&m, buf, 19), GCH_E_SHORT);
}

static void
test_resync(void **state)
{
    uint8_t buf[64];
    struct gch_msg m = value_msg(GCH_T_BOOST, 5), d;
    int len;
    size_t off;

    (void) state;
    memset(buf, 'x', sizeof buf);
    len = enc(&m, buf + 7);
    off = gch_resync(buf, 7 + (size_t) len);
    assert_int_equal(off, 7);
    assert_int_equal(gch_decode(buf + off, (size_t) len, &d), len);
    /* A partial magic at the tail is kept. */
    memcpy(buf, "abcVP", 5);
    assert_int_equal(gch_resync(buf, 5), 3);
    memcpy(buf, "abcde", 5);
    assert_int_equal(gch_resync(buf, 5), 5);
    /* Always progresses. */
    memcpy(buf, "VPG1", 4);
    assert_int_equal(gch_resync(buf, 4), 4);
    assert_int_equal(gch_resync(buf, 1), 1);
}

static void
test_names(void **state)
{
    (void) state;
    assert_string_equal(gch_type_name(GCH_T_LATENCY_BEGIN), "latency-begin");
    assert_string_equal(gch_type_name(0), "unknown");
    assert_string_equal(gch_type_name(200), "unknown");
    assert_string_equal(gch_status_name(GCH_S_RATE_LIMITED), "rate-limited");
    assert_string_equal(gch_status_name(99), "unknown");
    assert_string_equal(gch_strerror(GCH_E_MAGIC), "bad magic");
    assert_int_equal(gch_payload_len(GCH_T_UTIL, 0), -1);
    assert_int_equal(gch_payload_len(GCH_T_UTIL, 64), GCH_MAX_PAYLOAD);
    assert_int_equal(gch_payload_len(99, 0), -1);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_layout),
        cmocka_unit_test(test_roundtrip_all),
        cmocka_unit_test(test_value_bounds),
        cmocka_unit_test(test_header_corruption),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_util_fields),
        cmocka_unit_test(test_hello_fields),
        cmocka_unit_test(test_ack_fields),
        cmocka_unit_test(test_resync),
        cmocka_unit_test(test_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
