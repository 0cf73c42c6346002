#!/usr/bin/env python3
# tests/cli/proto-client.py -- raw-socket checks of vpowerd's control
# socket that vpowerctl cannot make (it only sends good requests).
#
# Usage: proto-client.py SOCKET CHECK; exit 0 pass, 1 fail.  Checks:
#   garbage    a non-JSON line gets bad-request and the connection closes
#   longline   a line over 64 KiB gets bad-request and the connection closes
#   keepalive  unknown-command / unknown-vm keep the connection usable
#   pipeline   20 requests written at once get 20 replies, ids in order
#   clients    with 64 clients connected, one more gets "busy"
#   noeol      a last request without a newline is still answered
#   pipeline100  100 requests in one write get 100 replies, with and
#              without a half-close (lines already buffered need no new
#              socket event)
#   loginject  a command name holding a newline and ESC is refused (the
#              caller checks the server's log shows it escaped)
#   badutf8    invalid UTF-8 gets bad-request naming the field; the reply
#              is valid UTF-8
#   deadline   half a request gets bad-request and the connection closes
#              after the request deadline (5 s), not before 4 s
#   admins N   (run as root) N connections at once all get answers
#   hold N S [GO]  (run as an unprivileged user; once GO exists if given)
#              opens N connections, each
#              with half a request; prints "held H busy B"; within S
#              seconds every held one must be closed by the deadline or
#              given up to a client of another user
import json
import os
import socket
import sys
import time

HALF = b'{"version":1,'


def conn(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


def lines(s, n):
    buf = b""
    out = []
    while len(out) < n:
        d = s.recv(65536)
        if not d:
            break
        buf += d
        while b"\n" in buf and len(out) < n:
            l, buf = buf.split(b"\n", 1)
            out.append(json.loads(l))
    return out


def closed(s):
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True         # Closed with our unread bytes: also closed.
    except socket.timeout:
        return False


def req(i, cmd, args=None):
    return (json.dumps({"version": 1, "id": i, "cmd": cmd, "args": args or {}})
            + "\n").encode()


def fail(msg):
    print("proto-client: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    path, check = sys.argv[1], sys.argv[2]
    if check == "garbage":
        s = conn(path)
        s.sendall(b"this is not json\n")
        r = lines(s, 1)
        if not r or r[0]["ok"] or r[0]["error"]["code"] != "bad-request":
            fail("garbage: %r" % r)
        if r[0]["id"] is not None:
            fail("garbage: id should be null: %r" % r)
        if not closed(s):
            fail("garbage: connection left open")
    elif check == "longline":
        s = conn(path)
        try:
            s.sendall(b"{" + b" " * 70000 + b"}\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        r = lines(s, 1)
        if not r or r[0]["error"]["code"] != "bad-request" \
                or "longer than 65536" not in r[0]["error"]["message"]:
            fail("longline: %r" % r)
        if not closed(s):
            fail("longline: connection left open")
    elif check == "keepalive":
        s = conn(path)
        s.sendall(req(1, "reboot") + req(2, "get-policy", {"vm": "no-such"})
                  + b'{"version":1,"id":3,"cmd":"explain","args":{"vm":7}}\n'
                  + b'{"version":9,"id":4,"cmd":"status"}\n'
                  + req(5, "version"))
        r = lines(s, 5)
        codes = [x.get("error", {}).get("code") for x in r]
        if codes != ["unknown-command", "unknown-vm", "bad-argument",
                     "bad-version", None] or [x["id"] for x in r] != [1, 2, 3, 4, 5]:
            fail("keepalive: %r" % r)
    elif check == "pipeline":
        s = conn(path)
        s.sendall(b"".join(req(100 + i, "status") for i in range(20)))
        r = lines(s, 20)
        if [x["id"] for x in r] != [100 + i for i in range(20)] \
                or not all(x["ok"] for x in r):
            fail("pipeline: got ids %r" % [x["id"] for x in r])
    elif check == "noeol":
        s = conn(path)
        s.sendall(req(9, "version").rstrip(b"\n"))
        s.shutdown(socket.SHUT_WR)
        r = lines(s, 1)
        if not r or r[0]["id"] != 9 or not r[0]["ok"]:
            fail("noeol: %r" % r)
    elif check == "clients":
        held = []
        for i in range(64):
            s = conn(path)
            s.sendall(req(i, "version"))
            if not lines(s, 1):
                fail("clients: client %d got no reply" % i)
            held.append(s)
        s = conn(path)
        r = lines(s, 1)
        if not r or r[0]["error"]["code"] != "busy":
            fail("clients: 65th client got %r" % r)
        held.pop().close()
        time.sleep(0.3)
        s = conn(path)
        s.sendall(req(1, "version"))
        r = lines(s, 1)
        if not r or not r[0]["ok"]:
            fail("clients: no service after one client left: %r" % r)
    elif check == "pipeline100":
        for half_close in (False, True):
            s = conn(path)
            s.sendall(b"".join(req(i, "version") for i in range(1, 101)))
            if half_close:
                s.shutdown(socket.SHUT_WR)
            try:
                r = lines(s, 100)
            except socket.timeout:
                r = []
            if [x["id"] for x in r] != list(range(1, 101)):
                fail("pipeline100 (half-close %s): %d replies"
                     % (half_close, len(r)))
            if half_close and not closed(s):
                fail("pipeline100: connection left open after the replies")
    elif check == "loginject":
        s = conn(path)
        s.sendall(b'{"version":1,"id":77,"cmd":"x\\nctl-server: info: '
                  b'forged\\u001b[31m"}\n')
        r = lines(s, 1)
        if not r or r[0]["id"] != 77 or r[0]["error"]["code"] != "unknown-command":
            fail("loginject: %r" % r)
    elif check == "badutf8":
        s = conn(path)
        s.sendall(b'{"version":1,"id":8,"cmd":"get-policy",'
                  b'"args":{"vm":"w\xffeb"}}\n')
        raw = s.recv(65536)
        try:
            r = json.loads(raw.decode("utf-8", errors="strict"))
        except ValueError as e:
            fail("badutf8: reply is not UTF-8 JSON (%s): %r" % (e, raw))
        if r["id"] != 8 or r["error"]["code"] != "bad-request" \
                or "field 'args.vm' is not valid UTF-8" not in r["error"]["message"]:
            fail("badutf8: %r" % r)
    elif check == "deadline":
        s = conn(path)
        s.sendall(HALF)
        t0 = time.monotonic()
        s.settimeout(10)
        r = lines(s, 1)
        dt = time.monotonic() - t0
        if not r or r[0]["error"]["code"] != "bad-request" \
                or "no complete request line within" not in r[0]["error"]["message"]:
            fail("deadline: %r" % r)
        if dt < 4 or dt > 8:
            fail("deadline: closed after %.1f s" % dt)
        if not closed(s):
            fail("deadline: connection left open")
    elif check == "admins":
        n = int(sys.argv[3])
        held = []
        for i in range(n):
            s = conn(path)
            s.sendall(req(i, "version"))
            r = lines(s, 1)
            if not r or not r[0]["ok"]:
                fail("admins: connection %d got %r" % (i, r))
            held.append(s)
    elif check == "hold":
        n, wait_s = int(sys.argv[3]), float(sys.argv[4])
        socks, held, busy = [], [], 0
        if len(sys.argv) > 5:
            # Start together with the other holders: python starts slowly
            # on a loaded machine, the request deadline does not wait.
            print("ready", flush=True)
            while not os.path.exists(sys.argv[5]):
                time.sleep(0.02)
        for i in range(n):
            s = conn(path)
            try:
                s.sendall(HALF)
            except (BrokenPipeError, ConnectionResetError):
                pass
            socks.append(s)
        # Refusals come at once; then only the held ones have no data.
        time.sleep(0.5)
        for i, s in enumerate(socks):
            s.setblocking(False)
            try:
                d = s.recv(65536)
            except BlockingIOError:
                d = None
            except ConnectionResetError:
                d = b""
            if d is None:
                held.append(s)
            elif b'"busy"' in d:
                busy += 1
            else:
                fail("hold: connection %d got %r" % (i, d))
        print("held %d busy %d" % (len(held), busy), flush=True)
        t0 = time.monotonic()
        for s in held:
            s.setblocking(True)
            s.settimeout(max(0.1, wait_s - (time.monotonic() - t0)))
            r = lines(s, 1)
            if not r or ("no complete request line" not in r[0]["error"]["message"]
                         and "for a client of another user" not in r[0]["error"]["message"]):
                fail("hold: a held connection was not closed by the deadline: %r" % r)
    else:
        fail("unknown check " + check)


main()
