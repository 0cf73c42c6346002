#!/bin/sh
# agent/guest-agent-test.sh -- installed as /bin/vpower-agent in the
# agent tests' guest image (tests/integration/03x-agent-*.sh).
#
# The harness's /init starts /bin/vpower-agent when the kernel command
# line has vpower.agent=1; this wrapper starts the real agent
# (/bin/vpower-agent-bin) and then runs the scenario named by
# vpower.agenttest= on the console:
#   bench     wait for the host, then `vpower-hint bench` (count from
#             vpower.bench_count=, default 1000)
#   phases    hold vpower.phase_s= seconds (default 20), latency-begin,
#             hold, latency-end, hold, then bench
# After a bench, if the guest has a port named org.vpower.echo.0 (whose
# host end only acknowledges), the same bench runs on it with --direct:
# the channel's own latency, in the same boot (VPOWER-AGENT-CHANNEL).
#   direct    no agent: vpower-hint without an agent must fail with exit
#             3, then `vpower-hint --direct` talks to the port itself
#   hostile   no agent: /bin/vpower-gch-hostile writes garbage, an
#             oversized header, an unknown type, a bad vCPU and a flood,
#             once the host writes "g" to the guest's echo port
#             (org.vpower.echo.0), or after vpower.hostile_delay=
#             seconds (default 0) if that comes first or there is no
#             such port
#   storm     once the host answers, latency-begin and latency-end back
#             to back for ever, each waiting up to 1 s for its ack; one
#             that fails (vpowerd killed or restarting) is followed by a
#             0.1 s pause (the crash test with guests,
#             tests/reliability/011-crash-kill-guests.sh)
# Markers (grep-able, one line each) start with VPOWER-AGENT-.

test=none
count=1000
phase_s=20
hostile_delay=0
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        vpower.agenttest=*) test=${arg#vpower.agenttest=} ;;
        vpower.bench_count=*) count=${arg#vpower.bench_count=} ;;
        vpower.phase_s=*) phase_s=${arg#vpower.phase_s=} ;;
        vpower.hostile_delay=*) hostile_delay=${arg#vpower.hostile_delay=} ;;
    esac
done

# Waits until the host writes "g" to the echo port or 'hostile_delay'
# seconds have passed.  A read returns at once, empty, while no host end
# is connected, so the port is read again every second.
wait_go() {
    go=/dev/virtio-ports/org.vpower.echo.0
    end=$(( $(date +%s) + hostile_delay ))
    while [ "$(date +%s)" -lt "$end" ]; do
        if [ -e "$go" ]; then
            left=$(( end - $(date +%s) ))
            [ "$left" -gt 0 ] || break
            c=$(timeout "$left" head -c 1 "$go" 2>/dev/null)
            if [ "$c" = g ]; then
                echo "VPOWER-AGENT-HOSTILE-GO"
                return
            fi
        fi
        sleep 1
    done
}

if [ "$test" = hostile ]; then
    wait_go
    echo "VPOWER-AGENT-HOSTILE-START"
    /bin/vpower-gch-hostile
    echo "VPOWER-AGENT-HOSTILE-DONE rc=$?"
    exit 0
fi

if [ "$test" = direct ]; then
    out=$(/bin/vpower-hint boost --ms 100 2>&1)
    echo "VPOWER-AGENT-NOAGENT rc=$? $out"
    i=0
    while [ $i -lt 120 ]; do
        out=$(/bin/vpower-hint --direct boost --ms 100 2>&1) && break
        sleep 0.5
        i=$((i + 1))
    done
    out=$(/bin/vpower-hint --direct latency-begin --latency-us 500 2>&1)
    echo "VPOWER-AGENT-DIRECT rc=$? tries=$i $out"
    exit 0
fi

/bin/vpower-agent-bin -v &
[ "$test" = none ] && exit 0

# Wait until the host answers (vpower-hint exits 0 once an ack arrives).
i=0
while [ $i -lt 240 ]; do
    if /bin/vpower-hint -t 1000 latency-end >/dev/null 2>&1; then
        break
    fi
    sleep 0.5
    i=$((i + 1))
done
echo "VPOWER-AGENT-READY tries=$i"

if [ "$test" = storm ]; then
    echo "VPOWER-AGENT-STORM"
    while :; do
        /bin/vpower-hint -t 1000 latency-begin --latency-us 200 \
            >/dev/null 2>&1 || sleep 0.1
        /bin/vpower-hint -t 1000 latency-end >/dev/null 2>&1 || sleep 0.1
    done
fi

if [ "$test" = phases ]; then
    sleep "$phase_s"
    out=$(/bin/vpower-hint latency-begin --latency-us 200 2>&1)
    echo "VPOWER-AGENT-LATENCY-BEGIN rc=$? $out"
    sleep "$phase_s"
    out=$(/bin/vpower-hint latency-end 2>&1)
    echo "VPOWER-AGENT-LATENCY-END rc=$? $out"
    sleep "$phase_s"
fi
/bin/vpower-hint bench --count "$count"
echo "VPOWER-AGENT-BENCH-DONE rc=$?"

echo_port=
for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = org.vpower.echo.0 ] &&
        echo_port=/dev/${p##*/}
done
if [ -n "$echo_port" ]; then
    out=$(/bin/vpower-hint --direct --port "$echo_port" bench \
          --count "$count" 2>&1)
    echo "VPOWER-AGENT-CHANNEL rc=$? $out" | tr '\n' ' '
    echo
fi
