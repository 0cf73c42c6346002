#!/usr/bin/python3
"""fake-vpowerd.py -- a stand-in for vpowerd's control socket.

Serves the decided JSON-lines protocol (docs/control-protocol.md) on a
UNIX stream socket with made-up but self-consistent numbers: one decision
per --period seconds, energy integrating a fixed power, per-VM energy
summing (with the "_host" part) to the host total.  The exporter's tests
use it where no real vpowerd can run; 051-prometheus-guests.sh uses the
real daemon.  --delay makes every reply late (timeout tests).

Usage: fake-vpowerd.py --socket PATH [--vms N] [--period S] [--delay S]
"""

import argparse
import json
import os
import selectors
import socket
import sys
import time

START = time.monotonic()


def status(a):
    t = time.monotonic() - START
    decisions = int(t / a.period)
    power = 20.0
    energy = power * t
    return {
        "version": "0.1.0-fake", "uptime_seconds": t,
        "cpu_seconds": time.process_time(), "driver": "dummy",
        "connected": True, "dry_run": False, "override": "off",
        "period_seconds": a.period, "decisions_total": decisions,
        "power_watts": power, "energy_source": "model",
        "energy_joules": energy, "baseline_energy_joules": 1.5 * energy,
        "saved_joules": 0.5 * energy,
        "unattributed_energy_joules": energy * 0.1,
        "ready_source": "libvirt", "active_cpus": 1, "parked_cpus": 1,
        "offline_cpus": 0,
        "actions_total": {"online": 0, "pin_vcpu": decisions,
                          "pin_emulator": 1, "set_freq": 0,
                          "idle_limit": 0, "offline": 0},
        "errors_total": {"libvirt": 0, "sysfs": 0, "guest": 0,
                         "config": 0, "journal": 0},
        "cpus": [
            {"cpu": 0, "state": "active", "managed": True,
             "frequency_hertz": 2400000000, "nonidle_seconds": t * 0.4,
             "idle": [{"state": "POLL", "seconds": t * 0.1,
                       "disabled": False},
                      {"state": "haltpoll", "seconds": t * 0.5,
                       "disabled": False}]},
            {"cpu": 1, "state": "parked", "managed": True,
             "frequency_hertz": 2400000000, "nonidle_seconds": t * 0.01,
             "idle": [{"state": "POLL", "seconds": 0.0, "disabled": True},
                      {"state": "haltpoll", "seconds": t * 0.99,
                       "disabled": False}]},
        ],
        "freq_domains": [{"domain": 0, "cpus": "0-1",
                          "frequency_hertz": 2400000000,
                          "changes_total": 0}],
    }


def vms(a):
    t = time.monotonic() - START
    energy = 20.0 * t * 0.9
    out = []
    for i in range(a.vms):
        name = a.names[i] if i < len(a.names) else "fake-%d" % i
        out.append({
            "name": name, "uuid": "00000000-0000-4000-8000-%012d" % i,
            "id": i + 1, "policy": "balanced", "latency_us": 0,
            "min_freq_khz": 0, "never_offline": False, "share_smt": False,
            "policy_source": "default", "managed": True, "reason": "packed",
            "busy_seconds": t * 0.2, "ready_seconds": t * 0.01,
            "energy_joules": energy / a.vms, "load_pct": 20.0,
            "ready_pct": 1.0,
            "hints_total": {"latency_begin": 0, "latency_end": 0,
                            "batch": 0, "boost": 0, "idle": 0, "util": 0,
                            "rejected": 0},
            "last_hint": "",
            "vcpus": [{"vcpu": 0, "cpu": 0, "allowed": "0",
                       "allowed_count": 1, "busy_seconds": t * 0.2,
                       "ready_seconds": t * 0.01, "load_pct": 20.0}],
        })
    return {"vms": out}


def answer(a, line):
    try:
        req = json.loads(line)
        rid = req.get("id", 0)
        cmd = req["cmd"]
    except Exception:
        return {"version": 1, "id": 0, "ok": False,
                "error": {"code": "bad-request", "message": "not JSON"}}
    if cmd == "status":
        res = status(a)
    elif cmd == "list":
        res = vms(a)
    elif cmd == "version":
        res = {"version": "0.1.0-fake"}
    else:
        return {"version": 1, "id": rid, "ok": False,
                "error": {"code": "unknown-command",
                          "message": "unknown command '%s'" % cmd}}
    return {"version": 1, "id": rid, "ok": True, "result": res}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--vms", type=int, default=2)
    p.add_argument("--name", dest="names", action="append", default=[])
    p.add_argument("--period", type=float, default=1.0)
    p.add_argument("--delay", type=float, default=0.0)
    a = p.parse_args()
    try:
        os.unlink(a.socket)
    except FileNotFoundError:
        pass
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(a.socket)
    srv.listen(64)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ, None)
    bufs = {}
    pending = []   # (due, conn, bytes)
    while True:
        timeout = None
        if pending:
            timeout = max(0.0, min(d for d, _, _ in pending)
                          - time.monotonic())
        for key, _ in sel.select(timeout):
            if key.data is None:
                c, _ = srv.accept()
                c.setblocking(False)
                bufs[c] = b""
                sel.register(c, selectors.EVENT_READ, "c")
                continue
            c = key.fileobj
            try:
                data = c.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(c)
                bufs.pop(c, None)
                c.close()
                continue
            bufs[c] += data
            while b"\n" in bufs[c]:
                line, bufs[c] = bufs[c].split(b"\n", 1)
                out = (json.dumps(answer(a, line)) + "\n").encode()
                pending.append((time.monotonic() + a.delay, c, out))
        now = time.monotonic()
        for item in [x for x in pending if x[0] <= now]:
            pending.remove(item)
            _, c, out = item
            if c in bufs:
                try:
                    c.setblocking(True)
                    c.sendall(out)
                    c.setblocking(False)
                except OSError:
                    pass


if __name__ == "__main__":
    sys.exit(main())
