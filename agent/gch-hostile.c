/* agent/gch-hostile.c -- A misbehaving guest, for integration tests.
 *
 * Runs inside a test guest instead of vpower-agent and writes straight
 * to the org.vpower.agent.0 port what a broken or malicious guest might:
 * a valid HELLO, then garbage, an oversized header, an unknown type, a
 * utilisation report naming a vCPU the VM does not have, and a flood of
 * valid BOOST hints as fast as the port takes them.  The host must count
 * and ignore all of it (beyond its rate limit) without affecting any
 * other VM.  Prints one summary line "VPOWER-HOSTILE ..." on stdout.
 *
 *   gch-hostile [--flood N] [--bad-vcpu K] [PORT] */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/gchproto.h"
#include "agent/port.h"

static int
write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

static int
send_msg(int fd, struct gch_msg *m)
{
    uint8_t buf[GCH_MAX_MSG];
    int len = gch_encode(m, buf, sizeof buf);

    return len < 0 ? -1 : write_all(fd, buf, (size_t) len);
}

int
main(int argc, char **argv)
{
    unsigned long flood = 10000, bad_vcpu = 7, i;
    char path[64] = "";
    uint8_t junk[4096], *big, hdr[GCH_HDR_LEN];
    struct gch_msg m;
    struct timespec t0, t1;
    int fd, a, fails = 0;
    uint32_t seq = 0;
    size_t blen;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--flood") && a + 1 < argc) {
            flood = strtoul(argv[++a], NULL, 10);
        } else if (!strcmp(argv[a], "--bad-vcpu") && a + 1 < argc) {
            bad_vcpu = strtoul(argv[++a], NULL, 10);
        } else {
            snprintf(path, sizeof path, "%s", argv[a]);
        }
    }
    if (!path[0] && port_find(NULL, path, sizeof path) < 0) {
        fprintf(stderr, "gch-hostile: no port named %s\n", GCH_PORT_NAME);
        return 3;
    }
    fd = open(path, O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "gch-hostile: %s: %s\n", path, strerror(errno));
        return 3;
    }

    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_HELLO;
    m.hdr.seq = ++seq;
    m.u.hello.min_version = m.u.hello.max_version = GCH_VERSION;
    m.u.hello.caps = GCH_CAP_ALL;
    m.u.hello.n_vcpus = 1;
    strcpy(m.u.hello.agent_version, "hostile");
    fails += send_msg(fd, &m) < 0;

    /* Garbage: a pseudo-random run with no magic in it. */
    srand(42);
    for (i = 0; i < sizeof junk; i++) {
        junk[i] = (uint8_t) (rand() % 0x50);   /* Below 'P': no "VPG1". */
    }
    fails += write_all(fd, junk, sizeof junk) < 0;

    /* Oversized: length 65535 and 1000 bytes of payload after it. */
    memset(hdr, 0, sizeof hdr);
    memcpy(hdr, "VPG1", 4);
    hdr[4] = GCH_VERSION;
    hdr[5] = GCH_T_BOOST;
    hdr[12] = hdr[13] = 0xff;
    fails += write_all(fd, hdr, sizeof hdr) < 0;
    fails += write_all(fd, junk, 1000) < 0;

    /* Unknown type with a sane length. */
    hdr[5] = 77;
    hdr[12] = 0;
    hdr[13] = 4;
    fails += write_all(fd, hdr, sizeof hdr) < 0;
    fails += write_all(fd, "\0\0\0\1", 4) < 0;

    /* A vCPU this VM does not have. */
    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_UTIL;
    m.hdr.seq = ++seq;
    m.u.util.interval_ms = 1000;
    m.u.util.pressure_some_ppm = GCH_PRESSURE_NONE;
    m.u.util.n = 1;
    m.u.util.v[0].vcpu = (uint16_t) bad_vcpu;
    m.u.util.v[0].busy_permille = 1000;
    fails += send_msg(fd, &m) < 0;

    /* Flood: N valid boost hints in as few writes as possible. */
    blen = flood * (GCH_HDR_LEN + 4);
    big = malloc(blen ? blen : 1);
    if (!big) {
        return 1;
    }
    memset(&m, 0, sizeof m);
    m.hdr.type = GCH_T_BOOST;
    m.u.value = 60000;
    for (i = 0; i < flood; i++) {
        m.hdr.seq = ++seq;
        gch_encode(&m, big + i * (GCH_HDR_LEN + 4), GCH_HDR_LEN + 4);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fails += write_all(fd, big, blen) < 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("VPOWER-HOSTILE garbage=%zu oversized=1 unknown=1 bad_vcpu=%lu "
           "flood=%lu flood_seconds=%.3f write_failures=%d\n", sizeof junk,
           bad_vcpu, flood, (double) (t1.tv_sec - t0.tv_sec)
           + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9, fails);
    fflush(stdout);
    /* Keep the port open a while: closing it would not matter to the
     * host, but the acks it sends back are then read, not discarded. */
    for (i = 0; i < 50; i++) {
        uint8_t sink[4096];
        struct timespec ts = { 0, 100000000 };

        fcntl(fd, F_SETFL, O_NONBLOCK);
        while (read(fd, sink, sizeof sink) > 0) {
        }
        nanosleep(&ts, NULL);
    }
    free(big);
    close(fd);
    return fails ? 1 : 0;
}
