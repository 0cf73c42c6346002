/* manager/drivers/meter_ipmi.c -- The BMC's power reading over IPMI DCMI.
 *
 * DCMI's Get Power Reading (netfn 0x2C, command 0x02, group extension
 * 0xDC) returns the platform's power in watts as the BMC measures it,
 * usually at the power supplies: the whole host.  The request goes
 * through the kernel's OpenIPMI device (/dev/ipmi0, configurable) with
 * the ioctls of <linux/ipmi.h>, so no library is needed; without that
 * header the driver is built without device access and discovers
 * nothing.  Encoding and decoding are plain functions, tested without a
 * BMC.
 *
 * A read is one request and its response, waited for with poll() for at
 * most IPMI_TIMEOUT_MS: BMCs answer in tens of milliseconds.  The
 * "current power" field is used, integrated over the time between reads
 * by meter_read_uj(); the BMC's rolling average covers a statistics
 * period of its own choosing, often far longer than vpowerd's. */

#include <config.h>

#include "manager/drivers/meter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/util.h"

#if defined(__has_include)
#if __has_include(<linux/ipmi.h>)
#define HAVE_OPENIPMI_DEV 1
#endif
#endif

#ifdef HAVE_OPENIPMI_DEV
#include <poll.h>
#include <sys/ioctl.h>
#include <linux/ipmi.h>
#endif

#define IPMI_TIMEOUT_MS 1000
#define IPMI_RSP_LEN 19          /* Completion code .. reading state. */
#define IPMI_MODE_SYSTEM 0x01    /* System power statistics. */
#define IPMI_STATE_ACTIVE 0x40   /* Power measurement active. */

struct ipmi_meter {
    struct meter up;
    int fd;
    long msgid;                  /* Id of the last request sent. */
};

size_t
meter_ipmi_encode(uint8_t req[METER_IPMI_REQ_LEN])
{
    req[0] = METER_IPMI_GROUP;
    req[1] = IPMI_MODE_SYSTEM;
    req[2] = 0;                  /* Mode attributes. */
    req[3] = 0;                  /* Reserved. */
    return METER_IPMI_REQ_LEN;
}

static uint16_t
le16(const uint8_t *p)
{
    return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t
le32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16
           | (uint32_t) p[3] << 24;
}

int
meter_ipmi_decode(const uint8_t *rsp, size_t len,
                  struct meter_ipmi_reading *out, char *err, size_t errlen)
{
    if (len >= 1 && rsp[0] != 0) {
        snprintf(err, errlen, "DCMI Get Power Reading failed: completion "
                 "code 0x%02x%s", rsp[0],
                 rsp[0] == 0xc1 ? " (command not supported)" : "");
        return -EIO;
    }
    if (len < IPMI_RSP_LEN) {
        snprintf(err, errlen, "DCMI Get Power Reading: reply of %zu bytes, "
                 "expected %d", len, IPMI_RSP_LEN);
        return -EPROTO;
    }
    if (rsp[1] != METER_IPMI_GROUP) {
        snprintf(err, errlen, "DCMI Get Power Reading: group id 0x%02x, "
                 "expected 0x%02x", rsp[1], METER_IPMI_GROUP);
        return -EPROTO;
    }
    memset(out, 0, sizeof *out);
    out->current_w = le16(rsp + 2);
    out->min_w = le16(rsp + 4);
    out->max_w = le16(rsp + 6);
    out->avg_w = le16(rsp + 8);
    out->timestamp = le32(rsp + 10);
    out->period_ms = le32(rsp + 14);
    out->active = rsp[18] & IPMI_STATE_ACTIVE;
    if (!out->active) {
        snprintf(err, errlen, "DCMI Get Power Reading: the BMC says power "
                 "measurement is not active");
        return -ENODATA;
    }
    if (out->current_w == UINT16_MAX) {
        snprintf(err, errlen, "DCMI Get Power Reading: current power is "
                 "the all-ones value 65535: the BMC has no reading");
        return -ENODATA;
    }
    return 0;
}

#ifdef HAVE_OPENIPMI_DEV

/* Waits for the response to request 'msgid' on 'fd' into 'rsp'.
 * Responses to other ids (a stale one after a timeout) are dropped. */
static int
receive(int fd, long msgid, const char *dev, uint8_t *rsp, size_t *len,
        char *err, size_t errlen)
{
    for (int tries = 0; tries < 4; tries++) {
        struct ipmi_system_interface_addr addr;
        struct ipmi_recv recv;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int r = poll(&pfd, 1, IPMI_TIMEOUT_MS);

        if (r == 0) {
            snprintf(err, errlen, "%s: no reply from the BMC within %d ms",
                     dev, IPMI_TIMEOUT_MS);
            return -ETIMEDOUT;
        }
        if (r < 0) {
            r = -errno;
            snprintf(err, errlen, "%s: poll: %s", dev, strerror(-r));
            return r;
        }
        memset(&recv, 0, sizeof recv);
        recv.addr = (unsigned char *) &addr;
        recv.addr_len = sizeof addr;
        recv.msg.data = rsp;
        recv.msg.data_len = (unsigned short) *len;
        if (ioctl(fd, IPMICTL_RECEIVE_MSG_TRUNC, &recv) < 0
            && errno != EMSGSIZE) {
            r = -errno;
            snprintf(err, errlen, "%s: receive: %s", dev, strerror(-r));
            return r;
        }
        if (recv.recv_type == IPMI_RESPONSE_RECV_TYPE && recv.msgid == msgid
            && recv.msg.netfn == (METER_IPMI_NETFN | 1)
            && recv.msg.cmd == METER_IPMI_CMD) {
            *len = recv.msg.data_len;
            return 0;
        }
    }
    snprintf(err, errlen, "%s: no reply to DCMI Get Power Reading among "
             "the messages received", dev);
    return -EPROTO;
}

/* Sends one Get Power Reading on 'fd' and decodes the reply. */
static int
transact(int fd, long msgid, const char *dev,
         struct meter_ipmi_reading *out, char *err, size_t errlen)
{
    struct ipmi_system_interface_addr addr = {
        .addr_type = IPMI_SYSTEM_INTERFACE_ADDR_TYPE,
        .channel = IPMI_BMC_CHANNEL,
    };
    uint8_t data[METER_IPMI_REQ_LEN], rsp[64];
    size_t len = sizeof rsp;
    struct ipmi_req req;
    char why[METER_ERR_LEN];
    int r;

    memset(&req, 0, sizeof req);
    req.addr = (unsigned char *) &addr;
    req.addr_len = sizeof addr;
    req.msgid = msgid;
    req.msg.netfn = METER_IPMI_NETFN;
    req.msg.cmd = METER_IPMI_CMD;
    req.msg.data = data;
    req.msg.data_len = (unsigned short) meter_ipmi_encode(data);
    if (ioctl(fd, IPMICTL_SEND_COMMAND, &req) < 0) {
        r = -errno;
        snprintf(err, errlen, "%s: send: %s%s", dev, strerror(-r),
                 r == -ENOTTY ? " (not an IPMI device)" : "");
        return r;
    }
    r = receive(fd, msgid, dev, rsp, &len, err, errlen);
    if (r < 0) {
        return r;
    }
    r = meter_ipmi_decode(rsp, len, out, why, sizeof why);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s", dev, why);
    }
    return r;
}

static int
open_dev(const char *dev, char *err, size_t errlen)
{
    int fd = open(dev, O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        fd = -errno;
        snprintf(err, errlen, "%s: %s", dev, strerror(-fd));
    }
    return fd;
}

static void
ipmi_discover(const char *dev, struct meter_list *list)
{
    struct meter_info m = { .ops = &meter_ipmi_ops, .kind = METER_KIND_IPMI,
                            .scope = METER_SCOPE_PLATFORM, .package = -1,
                            .name = "ipmi-dcmi" };
    struct meter_ipmi_reading rd;
    char err[METER_ERR_LEN];
    int fd;

    dev = dev ? dev : METER_IPMI_DEV;
    if (access(dev, F_OK) < 0 && errno == ENOENT) {
        return;
    }
    fd = open_dev(dev, err, sizeof err);
    if (fd < 0) {
        meter_list_problem(list, "%s", err);
        return;
    }
    if (transact(fd, 1, dev, &rd, err, sizeof err) < 0) {
        meter_list_problem(list, "%s", err);
    } else {
        snprintf(m.path, sizeof m.path, "%s", dev);
        meter_list_add(list, &m);
    }
    close(fd);
}

static struct meter *
ipmi_open(const struct meter_info *info, char *err, size_t errlen)
{
    int fd = open_dev(info->path, err, errlen);
    struct ipmi_meter *im;

    if (fd < 0) {
        return NULL;
    }
    im = XNEW(struct ipmi_meter);
    im->up.ops = &meter_ipmi_ops;
    im->up.info = *info;
    im->fd = fd;
    return &im->up;
}

static int
ipmi_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
            size_t errlen)
{
    struct ipmi_meter *im = (struct ipmi_meter *) m;
    struct meter_ipmi_reading rd;
    int r;

    (void) now_ns;
    im->msgid = im->msgid % 0x7fffffff + 1;
    r = transact(im->fd, im->msgid, m->info.path, &rd, err, errlen);
    if (r == 0) {
        *raw = (uint64_t) rd.current_w * 1000000u;
    }
    return r;
}

static void
ipmi_close(struct meter *m)
{
    struct ipmi_meter *im = (struct ipmi_meter *) m;

    if (im) {
        close(im->fd);
        free(im);
    }
}

#else /* !HAVE_OPENIPMI_DEV */

static void
ipmi_discover(const char *dev, struct meter_list *list)
{
    dev = dev ? dev : METER_IPMI_DEV;
    if (access(dev, F_OK) == 0) {
        meter_list_problem(list, "%s: built without <linux/ipmi.h>, "
                           "cannot read DCMI power", dev);
    }
}

static struct meter *
ipmi_open(const struct meter_info *info, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: built without <linux/ipmi.h>", info->path);
    return NULL;
}

static int
ipmi_sample(struct meter *m, uint64_t now_ns, uint64_t *raw, char *err,
            size_t errlen)
{
    (void) now_ns;
    (void) raw;
    snprintf(err, errlen, "%s: built without <linux/ipmi.h>",
             m->info.path);
    return -ENOTSUP;
}

static void
ipmi_close(struct meter *m)
{
    free(m);
}

#endif /* HAVE_OPENIPMI_DEV */

const struct meter_ops meter_ipmi_ops = {
    .name = "ipmi",
    .discover = ipmi_discover,
    .open = ipmi_open,
    .sample = ipmi_sample,
    .close = ipmi_close,
};
