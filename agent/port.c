/* agent/port.c -- Finding the vpower virtio-serial port (see port.h).
 *
 * Used by vpower-agent and by libvpowerhint's direct mode. */

#include <config.h>

#include "agent/port.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/gchproto.h"

int
port_find(const char *sysroot, char *path, size_t len)
{
    char dir[256], file[640], name[128];
    struct dirent *de;
    int found = -ENOENT;
    DIR *d;

    snprintf(dir, sizeof dir, "%s/sys/class/virtio-ports",
             sysroot ? sysroot : "");
    d = opendir(dir);
    if (!d) {
        return -errno;
    }
    while ((de = readdir(d)) != NULL) {
        FILE *f;

        if (de->d_name[0] == '.') {
            continue;
        }
        snprintf(file, sizeof file, "%s/%s/name", dir, de->d_name);
        f = fopen(file, "r");
        if (!f) {
            continue;
        }
        if (fgets(name, sizeof name, f)) {
            name[strcspn(name, "\n")] = '\0';
            if (!strcmp(name, GCH_PORT_NAME)) {
                snprintf(path, len, "/dev/%s", de->d_name);
                found = 0;
            }
        }
        fclose(f);
        if (!found) {
            break;
        }
    }
    closedir(d);
    return found;
}
