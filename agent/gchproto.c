/* agent/gchproto.c -- Guest channel codec (see gchproto.h).
 *
 * Compiled into vpower-agent, libvpowerhint and vpowerd alike.  Decoding
 * follows one order, the cheapest check first: size, magic, reserved
 * bytes, version, type, exact length for the type, then each payload
 * field against its documented bound.  Nothing here allocates or keeps
 * state, which is what makes the host side easy to fuzz. */

#include <config.h>

#include "agent/gchproto.h"

#include <string.h>

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16)
           | ((uint32_t) p[2] << 8) | p[3];
}

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static void
put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t) (v >> 24);
    p[1] = (uint8_t) (v >> 16);
    p[2] = (uint8_t) (v >> 8);
    p[3] = (uint8_t) v;
}

#define HELLO_LEN 28
#define HELLO_ACK_LEN 20
#define VALUE_LEN 4
#define UTIL_BASE_LEN 12
#define UTIL_ENTRY_LEN 4
#define ACK_LEN 4
#define MAX_GUEST_VCPUS 4096u

_Static_assert(UTIL_BASE_LEN + UTIL_ENTRY_LEN * GCH_MAX_UTIL_VCPUS
               == GCH_MAX_PAYLOAD, "GCH_MAX_PAYLOAD is the UTIL maximum");

const char *
gch_strerror(int err)
{
    switch (err) {
    case GCH_OK: return "ok";
    case GCH_E_SHORT: return "truncated message";
    case GCH_E_MAGIC: return "bad magic";
    case GCH_E_VERSION: return "unsupported protocol version";
    case GCH_E_RESERVED: return "nonzero flags or reserved bytes";
    case GCH_E_TYPE: return "unknown message type";
    case GCH_E_LENGTH: return "wrong payload length for the type";
    case GCH_E_FIELD: return "payload field out of range";
    default: return "unknown error";
    }
}

const char *
gch_type_name(unsigned type)
{
    static const char *const names[] = {
        [GCH_T_HELLO] = "hello", [GCH_T_HELLO_ACK] = "hello-ack",
        [GCH_T_LATENCY_BEGIN] = "latency-begin",
        [GCH_T_LATENCY_END] = "latency-end", [GCH_T_BATCH] = "batch",
        [GCH_T_BOOST] = "boost", [GCH_T_IDLE] = "idle",
        [GCH_T_UTIL] = "util", [GCH_T_ACK] = "ack",
    };
    _Static_assert(sizeof names / sizeof names[0] == GCH_T_MAX + 1,
                   "a name for every type");

    return type >= 1 && type <= GCH_T_MAX ? names[type] : "unknown";
}

const char *
gch_status_name(unsigned status)
{
    static const char *const names[] = {
        [GCH_S_APPLIED] = "applied", [GCH_S_RATE_LIMITED] = "rate-limited",
        [GCH_S_INVALID] = "invalid", [GCH_S_NO_HELLO] = "no-hello",
        [GCH_S_UNSUPPORTED] = "unsupported",
    };
    _Static_assert(sizeof names / sizeof names[0] == GCH_S_MAX + 1,
                   "a name for every status");

    return status <= GCH_S_MAX ? names[status] : "unknown";
}

int
gch_payload_len(unsigned type, unsigned n)
{
    switch (type) {
    case GCH_T_HELLO: return HELLO_LEN;
    case GCH_T_HELLO_ACK: return HELLO_ACK_LEN;
    case GCH_T_LATENCY_BEGIN: case GCH_T_BATCH: case GCH_T_BOOST:
    case GCH_T_IDLE:
        return VALUE_LEN;
    case GCH_T_LATENCY_END: return 0;
    case GCH_T_UTIL:
        if (n < 1 || n > GCH_MAX_UTIL_VCPUS) {
            return -1;
        }
        return (int) (UTIL_BASE_LEN + UTIL_ENTRY_LEN * n);
    case GCH_T_ACK: return ACK_LEN;
    default: return -1;
    }
}

/* Is 'len' a possible payload length of 'type'?  UTIL is the only
 * variable one: 12 + 4n with n in 1..64. */
static int
length_ok(unsigned type, unsigned len)
{
    if (type == GCH_T_UTIL) {
        return len >= UTIL_BASE_LEN + UTIL_ENTRY_LEN
               && len <= GCH_MAX_PAYLOAD
               && (len - UTIL_BASE_LEN) % UTIL_ENTRY_LEN == 0;
    }
    return gch_payload_len(type, 0) == (int) len;
}

int
gch_decode_header(const uint8_t *buf, size_t len, struct gch_hdr *h)
{
    if (len < GCH_HDR_LEN) {
        return GCH_E_SHORT;
    }
    if (get32(buf) != GCH_MAGIC) {
        return GCH_E_MAGIC;
    }
    h->version = buf[4];
    h->type = buf[5];
    h->flags = get16(buf + 6);
    h->seq = get32(buf + 8);
    h->length = get16(buf + 12);
    if (h->flags != 0 || get16(buf + 14) != 0) {
        return GCH_E_RESERVED;
    }
    if (h->version != GCH_VERSION) {
        return GCH_E_VERSION;
    }
    if (h->type < 1 || h->type > GCH_T_MAX) {
        return GCH_E_TYPE;
    }
    if (!length_ok(h->type, h->length)) {
        return GCH_E_LENGTH;
    }
    return GCH_OK;
}

/* Printable ASCII, NUL-padded: no control bytes reach a host log. */
static int
decode_version_string(const uint8_t *p, char *out)
{
    size_t i;
    int ended = 0;

    for (i = 0; i < GCH_AGENT_VERSION_LEN; i++) {
        if (p[i] == 0) {
            ended = 1;
        } else if (ended || p[i] < 0x20 || p[i] > 0x7e) {
            return GCH_E_FIELD;
        }
        out[i] = (char) p[i];
    }
    out[GCH_AGENT_VERSION_LEN] = '\0';
    return GCH_OK;
}

static int
check_value(unsigned type, uint32_t v)
{
    switch (type) {
    case GCH_T_LATENCY_BEGIN: return v <= GCH_MAX_LATENCY_US;
    case GCH_T_BATCH: return v <= GCH_MAX_BATCH_MS;
    case GCH_T_BOOST: return v >= 1 && v <= GCH_MAX_BOOST_MS;
    case GCH_T_IDLE: return v >= 1 && v <= GCH_MAX_IDLE_MS;
    default: return 0;
    }
}

int
gch_decode_payload(const struct gch_hdr *h, const uint8_t *p, size_t len,
                   struct gch_msg *m)
{
    unsigned i, n;

    if (len != h->length || !length_ok(h->type, h->length)) {
        return GCH_E_LENGTH;
    }
    memset(&m->u, 0, sizeof m->u);
    m->hdr = *h;
    switch (h->type) {
    case GCH_T_HELLO:
        m->u.hello.min_version = p[0];
        m->u.hello.max_version = p[1];
        m->u.hello.caps = get32(p + 4);
        m->u.hello.n_vcpus = get32(p + 8);
        if (get16(p + 2) != 0
            || m->u.hello.min_version < 1
            || m->u.hello.min_version > m->u.hello.max_version
            || (m->u.hello.caps & ~GCH_CAP_ALL) != 0
            || m->u.hello.n_vcpus < 1
            || m->u.hello.n_vcpus > MAX_GUEST_VCPUS) {
            return GCH_E_FIELD;
        }
        return decode_version_string(p + 12, m->u.hello.agent_version);
    case GCH_T_HELLO_ACK:
        m->u.hello_ack.version = p[0];
        m->u.hello_ack.caps = get32(p + 4);
        m->u.hello_ack.hint_rate = get32(p + 8);
        m->u.hello_ack.burst = get32(p + 12);
        m->u.hello_ack.n_vcpus = get32(p + 16);
        if (p[1] != 0 || get16(p + 2) != 0
            || m->u.hello_ack.version != GCH_VERSION
            || (m->u.hello_ack.caps & ~GCH_CAP_ALL) != 0
            || m->u.hello_ack.n_vcpus > MAX_GUEST_VCPUS) {
            return GCH_E_FIELD;
        }
        return GCH_OK;
    case GCH_T_LATENCY_BEGIN: case GCH_T_BATCH: case GCH_T_BOOST:
    case GCH_T_IDLE:
        m->u.value = get32(p);
        return check_value(h->type, m->u.value) ? GCH_OK : GCH_E_FIELD;
    case GCH_T_LATENCY_END:
        return GCH_OK;
    case GCH_T_UTIL:
        m->u.util.interval_ms = get32(p);
        m->u.util.pressure_some_ppm = get32(p + 4);
        n = get16(p + 8);
        m->u.util.n = (uint16_t) n;
        if (gch_payload_len(GCH_T_UTIL, n) != (int) len
            || get16(p + 10) != 0
            || m->u.util.interval_ms < 1
            || m->u.util.interval_ms > GCH_MAX_UTIL_INTERVAL_MS
            || (m->u.util.pressure_some_ppm > 1000000u
                && m->u.util.pressure_some_ppm != GCH_PRESSURE_NONE)) {
            return GCH_E_FIELD;
        }
        for (i = 0; i < n; i++) {
            const uint8_t *e = p + UTIL_BASE_LEN + UTIL_ENTRY_LEN * i;

            m->u.util.v[i].vcpu = get16(e);
            m->u.util.v[i].busy_permille = get16(e + 2);
            /* Strictly increasing: no duplicates, one obvious order. */
            if (m->u.util.v[i].busy_permille > GCH_MAX_PERMILLE
                || (i > 0 && m->u.util.v[i].vcpu <= m->u.util.v[i - 1].vcpu)
                || m->u.util.v[i].vcpu >= MAX_GUEST_VCPUS) {
                return GCH_E_FIELD;
            }
        }
        return GCH_OK;
    case GCH_T_ACK:
        m->u.ack.status = p[0];
        m->u.ack.type = p[1];
        if (get16(p + 2) != 0 || m->u.ack.status > GCH_S_MAX
            || m->u.ack.type < 1 || m->u.ack.type > GCH_T_MAX) {
            return GCH_E_FIELD;
        }
        return GCH_OK;
    default:
        return GCH_E_TYPE;
    }
}

int
gch_decode(const uint8_t *buf, size_t len, struct gch_msg *m)
{
    struct gch_hdr h;
    int err;

    err = gch_decode_header(buf, len, &h);
    if (err != GCH_OK) {
        return err;
    }
    if (len - GCH_HDR_LEN < h.length) {
        return GCH_E_SHORT;
    }
    err = gch_decode_payload(&h, buf + GCH_HDR_LEN, h.length, m);
    if (err != GCH_OK) {
        return err;
    }
    return GCH_HDR_LEN + h.length;
}

int
gch_encode(const struct gch_msg *m, uint8_t *buf, size_t cap)
{
    uint8_t *p = buf + GCH_HDR_LEN;
    struct gch_msg check;
    unsigned i;
    int len;

    len = gch_payload_len(m->hdr.type,
                          m->hdr.type == GCH_T_UTIL ? m->u.util.n : 0);
    if (len < 0) {
        return m->hdr.type >= 1 && m->hdr.type <= GCH_T_MAX
               ? GCH_E_FIELD : GCH_E_TYPE;
    }
    if (cap < (size_t) GCH_HDR_LEN + (size_t) len) {
        return GCH_E_SHORT;
    }
    memset(buf, 0, GCH_HDR_LEN + (size_t) len);
    put32(buf, GCH_MAGIC);
    buf[4] = GCH_VERSION;
    buf[5] = m->hdr.type;
    put32(buf + 8, m->hdr.seq);
    put16(buf + 12, (uint16_t) len);

    switch (m->hdr.type) {
    case GCH_T_HELLO:
        p[0] = m->u.hello.min_version;
        p[1] = m->u.hello.max_version;
        put32(p + 4, m->u.hello.caps);
        put32(p + 8, m->u.hello.n_vcpus);
        memcpy(p + 12, m->u.hello.agent_version,
               strnlen(m->u.hello.agent_version, GCH_AGENT_VERSION_LEN));
        break;
    case GCH_T_HELLO_ACK:
        p[0] = m->u.hello_ack.version;
        put32(p + 4, m->u.hello_ack.caps);
        put32(p + 8, m->u.hello_ack.hint_rate);
        put32(p + 12, m->u.hello_ack.burst);
        put32(p + 16, m->u.hello_ack.n_vcpus);
        break;
    case GCH_T_LATENCY_BEGIN: case GCH_T_BATCH: case GCH_T_BOOST:
    case GCH_T_IDLE:
        put32(p, m->u.value);
        break;
    case GCH_T_LATENCY_END:
        break;
    case GCH_T_UTIL:
        put32(p, m->u.util.interval_ms);
        put32(p + 4, m->u.util.pressure_some_ppm);
        put16(p + 8, m->u.util.n);
        for (i = 0; i < m->u.util.n; i++) {
            put16(p + UTIL_BASE_LEN + UTIL_ENTRY_LEN * i, m->u.util.v[i].vcpu);
            put16(p + UTIL_BASE_LEN + UTIL_ENTRY_LEN * i + 2,
                  m->u.util.v[i].busy_permille);
        }
        break;
    case GCH_T_ACK:
        p[0] = m->u.ack.status;
        p[1] = m->u.ack.type;
        break;
    }
    /* The encoder refuses what the decoder refuses, so a bug in a sender
     * shows up at the sender, not as a rejection counter on the host. */
    if (gch_decode(buf, GCH_HDR_LEN + (size_t) len, &check)
        != GCH_HDR_LEN + len) {
        return GCH_E_FIELD;
    }
    return GCH_HDR_LEN + len;
}

size_t
gch_resync(const uint8_t *buf, size_t len)
{
    static const uint8_t magic[4] = {
        GCH_MAGIC >> 24, (GCH_MAGIC >> 16) & 0xff, (GCH_MAGIC >> 8) & 0xff,
        GCH_MAGIC & 0xff
    };
    size_t i, k;

    for (i = 1; i < len; i++) {
        for (k = 0; k < 4 && i + k < len; k++) {
            if (buf[i + k] != magic[k]) {
                break;
            }
        }
        if (k == 4 || i + k == len) {
            return i;       /* Full magic, or a prefix of it at the tail. */
        }
    }
    return len;
}
