/* agent/port.h -- Finding the vpower virtio-serial port in the guest.
 *
 * Without udev there is no /dev/virtio-ports/NAME link, so the agent and
 * libvpowerhint look the port up the way udev would: the file
 * /sys/class/virtio-ports/vportNpM/name holds the name QEMU gave it. */

#ifndef VPOWER_AGENT_PORT_H
#define VPOWER_AGENT_PORT_H 1

#include <stddef.h>

/* Writes "/dev/vportNpM" of the port named GCH_PORT_NAME (or 'sysroot'
 * prefixed class dir when 'sysroot' is not NULL, for tests) into 'path'.
 * Returns 0, -ENOENT when no such port exists, or -errno. */
int port_find(const char *sysroot, char *path, size_t len);

#endif /* agent/port.h */
