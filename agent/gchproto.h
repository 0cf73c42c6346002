/* agent/gchproto.h -- Guest channel wire format, shared by both ends.
 *
 * vpower-agent (in the guest), libvpowerhint and vpowerd's guestchan.c
 * compile this same file, so there is exactly one definition of the
 * format.  It is pure: bytes in, structs out, no I/O, no allocation, no
 * logging, so the host decoder is fuzzed and tested exhaustively.
 *
 * Every message is a fixed 16-byte header followed by a small typed
 * payload, all integers big-endian:
 *
 *   off size field
 *     0   4  magic     GCH_MAGIC ("VPG1")
 *     4   1  version   GCH_VERSION
 *     5   1  type      enum gch_type
 *     6   2  flags     0 (reserved, must be 0)
 *     8   4  seq       sender's sequence number (an ACK echoes the hint's)
 *    12   2  length    payload bytes, exactly gch_payload_len(type[, n])
 *    14   2  reserved  0
 *
 * The host treats everything from the guest as hostile: gch_decode_header
 * checks magic, version, reserved bytes, type range and the exact length
 * of the type before anyone looks at a payload, and gch_decode_payload
 * range-checks every field.  See docs/guest-agent.md. */

#ifndef VPOWER_GCHPROTO_H
#define VPOWER_GCHPROTO_H 1

#include <stddef.h>
#include <stdint.h>

#define GCH_MAGIC 0x56504731u       /* "VPG1" */
#define GCH_VERSION 1
#define GCH_HDR_LEN 16
#define GCH_MAX_PAYLOAD 268         /* Largest valid payload (UTIL, 64). */
#define GCH_MAX_MSG (GCH_HDR_LEN + GCH_MAX_PAYLOAD)
#define GCH_PORT_NAME "org.vpower.agent.0"
#define GCH_AGENT_SOCK "/run/vpower-agent.sock"

/* Field bounds (inclusive).  A value outside them is a malformed message,
 * not something to clamp: the guest said something that cannot be. */
#define GCH_MAX_LATENCY_US 1000000u /* 1 s: beyond that it is not a bound. */
#define GCH_MAX_BOOST_MS 60000u     /* 1 min. */
#define GCH_MAX_IDLE_MS 3600000u    /* 1 h. */
#define GCH_MAX_BATCH_MS 3600000u   /* 1 h; 0 = host default. */
#define GCH_MAX_UTIL_VCPUS 64
#define GCH_MAX_PERMILLE 1000u
#define GCH_PRESSURE_NONE 0xffffffffu
#define GCH_MAX_UTIL_INTERVAL_MS 3600000u
#define GCH_AGENT_VERSION_LEN 16

enum gch_type {
    GCH_T_HELLO = 1,            /* guest -> host: versions, capabilities. */
    GCH_T_HELLO_ACK = 2,        /* host -> guest: chosen version, limits. */
    GCH_T_LATENCY_BEGIN = 3,    /* guest -> host: u32 latency_us. */
    GCH_T_LATENCY_END = 4,      /* guest -> host: empty. */
    GCH_T_BATCH = 5,            /* guest -> host: u32 ms (0 = default). */
    GCH_T_BOOST = 6,            /* guest -> host: u32 ms. */
    GCH_T_IDLE = 7,             /* guest -> host: u32 ms. */
    GCH_T_UTIL = 8,             /* guest -> host: per-vCPU view. */
    GCH_T_ACK = 9,              /* host -> guest: hint applied/refused. */
    GCH_T_MAX = GCH_T_ACK
};

/* Capability bits (HELLO: what the guest may send; HELLO_ACK: what the
 * host acts on). */
#define GCH_CAP_LATENCY 0x01u
#define GCH_CAP_BATCH 0x02u
#define GCH_CAP_BOOST 0x04u
#define GCH_CAP_IDLE 0x08u
#define GCH_CAP_UTIL 0x10u
#define GCH_CAP_ALL 0x1fu

/* ACK status. */
enum gch_status {
    GCH_S_APPLIED = 0,          /* Plan decided with the hint and applied. */
    GCH_S_RATE_LIMITED = 1,     /* Over the VM's hint_rate: ignored. */
    GCH_S_INVALID = 2,          /* Well framed, bad field: ignored. */
    GCH_S_NO_HELLO = 3,         /* Hint before HELLO: ignored. */
    GCH_S_UNSUPPORTED = 4,      /* Host does not act on this type. */
    GCH_S_MAX = GCH_S_UNSUPPORTED
};

struct gch_hdr {
    uint8_t version;
    uint8_t type;
    uint16_t flags;
    uint32_t seq;
    uint16_t length;
};

struct gch_hello {
    uint8_t min_version, max_version;
    uint32_t caps;
    uint32_t n_vcpus;                         /* Guest's online CPUs. */
    char agent_version[GCH_AGENT_VERSION_LEN + 1];  /* Printable ASCII. */
};

struct gch_hello_ack {
    uint8_t version;
    uint32_t caps;
    uint32_t hint_rate;                       /* Per second. */
    uint32_t burst;
    uint32_t n_vcpus;                         /* As the host counts them. */
};

struct gch_util_vcpu {
    uint16_t vcpu;
    uint16_t busy_permille;
};

struct gch_util {
    uint32_t interval_ms;
    uint32_t pressure_some_ppm;               /* GCH_PRESSURE_NONE. */
    uint16_t n;                               /* 1..GCH_MAX_UTIL_VCPUS. */
    struct gch_util_vcpu v[GCH_MAX_UTIL_VCPUS];
};

struct gch_ack {
    uint8_t status;                           /* enum gch_status. */
    uint8_t type;                             /* Type of the acked hint. */
};

/* One decoded message: header + the union member 'hdr.type' selects. */
struct gch_msg {
    struct gch_hdr hdr;
    union {
        struct gch_hello hello;
        struct gch_hello_ack hello_ack;
        uint32_t value;                       /* LATENCY_BEGIN, BATCH,
                                               * BOOST, IDLE. */
        struct gch_util util;
        struct gch_ack ack;
    } u;
};

enum gch_err {
    GCH_OK = 0,
    GCH_E_SHORT = -1,           /* Need more bytes (not an error yet). */
    GCH_E_MAGIC = -2,
    GCH_E_VERSION = -3,
    GCH_E_RESERVED = -4,        /* Nonzero flags or reserved bytes. */
    GCH_E_TYPE = -5,            /* Unknown type. */
    GCH_E_LENGTH = -6,          /* Length wrong for the type / too big. */
    GCH_E_FIELD = -7,           /* A payload field is out of range. */
};

/* Human text for a gch_err / enum gch_type / enum gch_status. */
const char *gch_strerror(int err);
const char *gch_type_name(unsigned type);
const char *gch_status_name(unsigned status);

/* The exact payload length of 'type' (for UTIL: with 'n' entries), or -1
 * for an unknown type or n out of 1..GCH_MAX_UTIL_VCPUS. */
int gch_payload_len(unsigned type, unsigned n);

/* Decodes and validates the header in 'buf' (at least GCH_HDR_LEN
 * bytes, else GCH_E_SHORT).  On GCH_E_VERSION / GCH_E_TYPE the header is
 * still filled, and 'h->length' is trustworthy when <= GCH_MAX_PAYLOAD,
 * so a receiver may skip exactly that message instead of resyncing. */
int gch_decode_header(const uint8_t *buf, size_t len, struct gch_hdr *h);

/* Decodes the payload of a message whose header 'h' was accepted:
 * 'buf' holds exactly h->length bytes.  Range-checks every field.
 * Returns GCH_OK or GCH_E_LENGTH / GCH_E_FIELD / GCH_E_TYPE. */
int gch_decode_payload(const struct gch_hdr *h, const uint8_t *buf,
                       size_t len, struct gch_msg *m);

/* Decodes one whole message at the start of 'buf'.  Returns the number
 * of bytes it occupies (> 0), or a gch_err (< 0). */
int gch_decode(const uint8_t *buf, size_t len, struct gch_msg *m);

/* Encodes 'm' (m->hdr.type, seq and the union member; version, flags
 * and length are filled here) into 'buf'.  Returns the bytes written, or
 * GCH_E_SHORT if 'cap' is too small, GCH_E_TYPE / GCH_E_FIELD when 'm'
 * would not decode -- the encoder refuses what the decoder refuses. */
int gch_encode(const struct gch_msg *m, uint8_t *buf, size_t cap);

/* Offset of the next possible message start (the magic) in 'buf' after
 * position 0, or a position where a partial magic may start at the
 * tail; used to resync after garbage.  Always >= 1 when len >= 1. */
size_t gch_resync(const uint8_t *buf, size_t len);

#endif /* agent/gchproto.h */
