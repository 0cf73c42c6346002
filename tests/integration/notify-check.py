#!/usr/bin/python3
"""notify-check.py -- plays systemd's side of sd_notify for vpowerd.

Binds an AF_UNIX datagram socket, starts vpowerd with NOTIFY_SOCKET
pointing at it, WATCHDOG_USEC set and WATCHDOG_PID set to vpowerd's own
pid (a shell wrapper exports $$ and then execs vpowerd, as systemd sets
it for the main process), and checks what a Type=notify service with
WatchdogSec= must send:

  1. READY=1 within --ready-timeout seconds, with a STATUS= line;
  2. a STATUS= line matching --status-re before --status-timeout
     (the daemon's state reaches the status: mode, VMs, active CPUs);
  3. WATCHDOG=1 keep-alives at about two per watchdog interval, no gap
     longer than the interval (what systemd would punish);
  4. after SIGSTOP none for three intervals: the keep-alives come from
     the daemon's loop, not from anything that runs on its own;
  5. after SIGCONT they resume within one interval;
  6. SIGUSR1 (override) changes STATUS= to match --override-re at once;
  7. SIGTERM: STOPPING=1, then exit status 0.

With --foreign-watchdog, WATCHDOG_PID names another process (pid 1): the
watchdog is not vpowerd's, so READY=1 must come but no WATCHDOG=1 in
three intervals; then SIGTERM as in 7.

Prints RESULT lines with the measured numbers; exits 1 on the first
failed check (naming it), 0 when all pass.  vpowerd is always killed
before this script exits.

Usage: notify-check.py --socket PATH --watchdog-usec N
                       (--status-re RE --override-re RE | --foreign-watchdog)
                       [--log FILE] -- VPOWERD ARGS...
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import time


class Fail(Exception):
    pass


class Receiver:
    """Collects (monotonic time, field) for every line of every datagram."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.fields = []

    def pump(self, until):
        """Receives until monotonic time 'until'."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                return
            now = time.monotonic()
            for line in data.decode("utf-8", "replace").split("\n"):
                if line:
                    self.fields.append((now, line))

    def wait_for(self, pred, timeout, since=0.0):
        """First field after 'since' satisfying pred, waiting up to
        'timeout' seconds; None if none came."""
        end = time.monotonic() + timeout
        while True:
            for t, f in self.fields:
                if t >= since and pred(f):
                    return t, f
            if time.monotonic() >= end:
                return None
            self.pump(min(end, time.monotonic() + 0.05))

    def times(self, field, start, end):
        return [t for t, f in self.fields if f == field and start <= t < end]


def check(cond, what):
    if not cond:
        raise Fail(what)


def stop(rx, proc):
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    got = rx.wait_for(lambda f: f == "STOPPING=1", 5.0, t0)
    check(got, "no STOPPING=1 within 5 s of SIGTERM")
    rc = proc.wait(timeout=10)
    check(rc == 0, "vpowerd exited %d after SIGTERM" % rc)
    late = rx.times("WATCHDOG=1", got[0], time.monotonic() + 1)
    check(not late, "keep-alives after STOPPING=1")
    print("RESULT stopping_after_ms=%.0f exit=%d"
          % ((got[0] - t0) * 1e3, rc))


def run_foreign(a, rx, proc):
    interval = a.watchdog_usec / 1e6
    got = rx.wait_for(lambda f: f == "READY=1", a.ready_timeout)
    check(got, "no READY=1 within %g s" % a.ready_timeout)
    rx.pump(time.monotonic() + 3 * interval)
    ka = rx.times("WATCHDOG=1", 0, time.monotonic())
    print("RESULT foreign_watchdog_pid keepalives=%d in_s=%.2f"
          % (len(ka), time.monotonic() - got[0]))
    check(not ka, "%d keep-alives for a watchdog meant for pid 1"
          % len(ka))
    stop(rx, proc)


def run(a, rx, proc):
    interval = a.watchdog_usec / 1e6
    t0 = time.monotonic()
    got = rx.wait_for(lambda f: f == "READY=1", a.ready_timeout)
    check(got, "no READY=1 within %g s" % a.ready_timeout)
    print("RESULT ready_after_s=%.2f" % (got[0] - t0))
    st = rx.wait_for(lambda f: f.startswith("STATUS="), 0.5, got[0])
    check(st, "READY=1 came without a STATUS= line")
    print("RESULT first_status=%r" % st[1])
    st = rx.wait_for(lambda f: f.startswith("STATUS=")
                     and re.search(a.status_re, f[7:]), a.status_timeout)
    check(st, "no STATUS= matching %r within %g s (last: %r)"
          % (a.status_re, a.status_timeout,
             [f for _, f in rx.fields if f.startswith("STATUS=")][-1:]))
    print("RESULT status=%r" % st[1])

    # Keep-alive rate over a window of several intervals.
    w0 = time.monotonic()
    rx.pump(w0 + a.window)
    w1 = time.monotonic()
    ka = rx.times("WATCHDOG=1", w0, w1)
    rate = len(ka) / ((w1 - w0) / interval)
    gaps = [b - a_ for a_, b in zip([w0] + ka, ka + [w1])]
    print("RESULT keepalives=%d window_s=%.2f per_interval=%.2f "
          "max_gap_ms=%.0f interval_ms=%.0f"
          % (len(ka), w1 - w0, rate, max(gaps) * 1e3, interval * 1e3))
    check(1.5 <= rate <= 3.0,
          "keep-alive rate %.2f per interval, want about 2" % rate)
    check(max(gaps) < interval,
          "a %.0f ms gap between keep-alives: systemd would kill at %.0f"
          % (max(gaps) * 1e3, interval * 1e3))

    # A stopped loop sends nothing.
    os.kill(proc.pid, signal.SIGSTOP)
    s0 = time.monotonic()
    rx.pump(s0 + 0.05)             # One already on its way may arrive.
    s1 = time.monotonic()
    rx.pump(s1 + 3 * interval)
    s2 = time.monotonic()
    stopped = rx.times("WATCHDOG=1", s1, s2)
    print("RESULT stopped_s=%.2f keepalives_while_stopped=%d"
          % (s2 - s1, len(stopped)))
    check(not stopped, "%d keep-alives while the process was stopped"
          % len(stopped))
    os.kill(proc.pid, signal.SIGCONT)
    c0 = time.monotonic()
    got = rx.wait_for(lambda f: f == "WATCHDOG=1", 2 * interval, c0)
    check(got, "no keep-alive within %.0f ms of SIGCONT" % (2e3 * interval))
    print("RESULT resumed_after_ms=%.0f" % ((got[0] - c0) * 1e3))
    check(got[0] - c0 < interval,
          "keep-alives resumed only %.0f ms after SIGCONT"
          % ((got[0] - c0) * 1e3))

    # The override shows in the status at once, not at the next tick.
    u0 = time.monotonic()
    os.kill(proc.pid, signal.SIGUSR1)
    st = rx.wait_for(lambda f: f.startswith("STATUS=")
                     and re.search(a.override_re, f[7:]), 1.0, u0)
    check(st, "no STATUS= matching %r within 1 s of SIGUSR1"
          % a.override_re)
    print("RESULT override_status=%r after_ms=%.0f"
          % (st[1], (st[0] - u0) * 1e3))

    stop(rx, proc)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--socket", required=True)
    p.add_argument("--watchdog-usec", type=int, required=True)
    p.add_argument("--status-re")
    p.add_argument("--override-re")
    p.add_argument("--foreign-watchdog", action="store_true")
    p.add_argument("--ready-timeout", type=float, default=10.0)
    p.add_argument("--status-timeout", type=float, default=10.0)
    p.add_argument("--window", type=float, default=2.0)
    p.add_argument("--log", default=os.devnull)
    p.add_argument("cmd", nargs="+")
    a = p.parse_args()
    if not a.foreign_watchdog and not (a.status_re and a.override_re):
        p.error("--status-re and --override-re are required")

    rx = Receiver(a.socket)
    env = dict(os.environ, NOTIFY_SOCKET=a.socket,
               WATCHDOG_USEC=str(a.watchdog_usec))
    env.pop("WATCHDOG_PID", None)
    # systemd sets WATCHDOG_PID to the main process: the wrapper's $$ is
    # vpowerd's pid after exec.
    pid = "1" if a.foreign_watchdog else "$$"
    wrapper = ['/bin/sh', '-c', 'WATCHDOG_PID=%s; export WATCHDOG_PID; '
               'exec "$@"' % pid, 'sh'] + a.cmd
    with open(a.log, "w") as log:
        proc = subprocess.Popen(wrapper, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
    try:
        (run_foreign if a.foreign_watchdog else run)(a, rx, proc)
    except Fail as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
