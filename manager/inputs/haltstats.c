/* manager/inputs/haltstats.c -- KVM halt statistics from libvirt stats fields
 * or
 * KVM debugfs, and the busy-time correction for halt polling.
 *
 * Pure parsing and arithmetic; no libvirt dependency (the libvirt driver
 * hands over name/value pairs), so libvpowermgr.a stays libvirt-free. */

#include <config.h>

#include "manager/inputs/haltstats.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/drivers/sysfs.h"

int
halt_stats_field(struct halt_stats *per_vcpu, unsigned max,
                 const char *name, uint64_t value)
{
    if (strncmp(name, "vcpu.", 5) != 0) {
        return 0;
    }
    const char *p = name + 5;
    if (!isdigit((unsigned char) *p)) {
        /* vcpu.current, vcpu.maximum. */
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long v = strtoul(p, &end, 10);
    if (errno || *end != '.') {
        return -EINVAL;
    }
    const char *f = end + 1;
    uint64_t *dst;
    struct halt_stats *h = v < max ? &per_vcpu[v] : NULL;
    struct halt_stats dummy;
    if (!h) {
        h = &dummy;
    }
    if (!strcmp(f, "halt_wait_ns.sum")) {
        dst = &h->wait_ns;
    } else if (!strcmp(f, "halt_poll_success_ns.sum")) {
        dst = &h->poll_success_ns;
    } else if (!strcmp(f, "halt_poll_fail_ns.sum")) {
        dst = &h->poll_fail_ns;
    } else {
        return 0;
    }
    if (v >= max) {
        return -ENOSPC;
    }
    *dst = value;
    h->valid = true;
    return 1;
}

int
halt_debugfs_find(const char *debugfs_kvm, pid_t qemu_pid, char *dir,
                  size_t len)
{
    const char *root = debugfs_kvm ? debugfs_kvm : "/sys/kernel/debug/kvm";
    DIR *d = opendir(root);
    if (!d) {
        return -errno;
    }
    char prefix[32];
    int pl = snprintf(prefix, sizeof prefix, "%d-", (int) qemu_pid);
    int r = -ENOENT;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t) pl) != 0
            || !isdigit((unsigned char) e->d_name[pl])) {
            continue;
        }
        if ((size_t) snprintf(dir, len, "%s/%s", root, e->d_name) >= len) {
            r = -ENAMETOOLONG;
        } else {
            r = 0;
        }
        break;
    }
    closedir(d);
    return r;
}

static int
read_u64(const char *dir, const char *name, uint64_t *out)
{
    char path[600], buf[32];
    int r;

    if (snprintf(path, sizeof path, "%s/%s", dir, name)
        >= (int) sizeof path) {
        return -ENAMETOOLONG;
    }
    r = sysfs_read_file(path, buf, sizeof buf);
    return r < 0 ? r : sysfs_parse_u64(buf, out);
}

int
halt_debugfs_read(const char *dir, struct halt_stats *out)
{
    struct halt_stats h = { 0, 0, 0, false };
    int r = read_u64(dir, "halt_wait_ns", &h.wait_ns);
    if (r == 0) {
        r = read_u64(dir, "halt_poll_success_ns", &h.poll_success_ns);
    }
    if (r == 0) {
        r = read_u64(dir, "halt_poll_fail_ns", &h.poll_fail_ns);
    }
    if (r < 0) {
        return r;
    }
    h.valid = true;
    *out = h;
    return 0;
}
