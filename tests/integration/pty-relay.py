#!/usr/bin/env python3
"""tests/integration/pty-relay.py -- a virtio-serial port without a guest.

Stands in for QEMU's chardev: makes a raw pseudo-terminal (the "port"
the guest side opens, whose path it prints on the first line of
stdout), listens on the UNIX socket SOCKET (the host end a host program
connects to) and relays bytes both ways until either side closes.

    pty-relay.py SOCKET
"""

import os
import pty
import select
import socket
import sys
import tty


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: pty-relay.py SOCKET")
    master, slave = pty.openpty()
    tty.setraw(slave)
    path = sys.argv[1]
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    print(os.ttyname(slave), flush=True)
    conn, _ = listener.accept()
    while True:
        ready, _, _ = select.select([master, conn], [], [])
        if master in ready:
            data = os.read(master, 65536)
            if not data:
                break
            conn.sendall(data)
        if conn in ready:
            data = conn.recv(65536)
            if not data:
                break
            os.write(master, data)


if __name__ == "__main__":
    main()
