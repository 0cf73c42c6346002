#!/usr/bin/python3
"""prom-flood.py -- hold many HTTP connections open to one address.

Usage: prom-flood.py HOST PORT N HOLD_SECONDS

Opens N TCP connections; half send an unfinished request header (a
slowloris), half send nothing.  After HOLD_SECONDS it prints
"opened=A alive=B": A connections were accepted by the kernel, B were
still open (not closed or reset by the server) at the end.  Used by
tests/integration/05x-prometheus*.sh to show that held connections
neither stall other scrapers nor exceed the exporter's limits.
"""

import select
import socket
import sys
import time


def main():
    host, port, n, hold = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                           float(sys.argv[4]))
    socks = []
    for i in range(n):
        try:
            s = socket.create_connection((host, port), timeout=2)
        except OSError:
            continue
        try:
            if i % 2:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass
        s.setblocking(False)
        socks.append(s)
    opened = len(socks)
    end = time.monotonic() + hold
    alive = set(socks)
    while time.monotonic() < end and alive:
        r, _, _ = select.select(list(alive), [], [],
                                max(0.0, min(0.5, end - time.monotonic())))
        for s in r:
            try:
                if not s.recv(65536):
                    alive.discard(s)
            except BlockingIOError:
                pass
            except OSError:
                alive.discard(s)
    print("opened=%d alive=%d" % (opened, len(alive)))
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
