#!/bin/bash
# 052-exporter-slowloris.sh -- scrapes answer within 1 s during a slowloris.
#
# vpowerd is the real daemon with the dummy hypervisor and host drivers
# (in-memory: nothing on this machine is touched).  From 127.0.0.1, the
# scrapers' own address, 520 connections (more than --per-ip-limit 512)
# each send a request line and then one header line every 4 s, never
# ending the header, and 20 more send a whole header announcing a body
# and then trickle the body the same way; a connection the exporter
# closes is opened again a second later.  For 20 s:
#  - curl scrapes every 0.5 s from the same address must answer 200 with
#    vpower_up 1 within 1 s each (printed as RESULT lines);
#  - no attacking connection may stay open longer than --header-timeout
#    (2 s here) plus 2 s (the default, 5 s, would be too long);
#  - the per-address limit must have been reached (and made room);
#  - a real Prometheus server scraping every second with a 0.9 s timeout
#    must miss no scrape (when it is installed).
# Then a second exporter allowing 16 connections in all, with 40 held
# open, must still answer a scrape within 1 s.  Also: a domain name with
# a quote, a backslash and bytes that are not UTF-8 gives a scrape that
# is valid UTF-8 and passes `promtool check metrics`; --listen on an
# address this host does not have fails naming the address and the
# system's error.  All traffic is on 127.0.0.1.
set -eu

PL_NAME=052-exporter-slowloris
: "${VPOWER_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${VPOWER_BUILDDIR:=$PWD}"
export VPOWER_SRCDIR VPOWER_BUILDDIR
. "$VPOWER_SRCDIR/tests/integration/prom-lib.sh"

command -v curl >/dev/null || pl_skip "curl not installed"
command -v python3 >/dev/null || pl_skip "python3 not installed"
PL_EXPORTER=$VPOWER_BUILDDIR/manager/vpower-exporter
[ -x "$PL_EXPORTER" ] || pl_error "$PL_EXPORTER not built"
[ -x "$VPOWER_BUILDDIR/manager/vpowerd" ] || pl_error "vpowerd not built"
PL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-052.XXXXXX")
trap 'pl_stop; rm -rf "$PL_TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

CONNS=520
BODY_CONNS=20
LINE_EVERY=4
ATTACK_S=20
HEADER_TIMEOUT=2

# --listen on TEST-NET-1 (RFC 5737), which no host has.
set +e
"$PL_EXPORTER" --socket "$PL_TMP/none.sock" --listen 192.0.2.1:9877 \
    >"$PL_TMP/listen.out" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || pl_fail "--listen 192.0.2.1:9877 exited $rc, want 1: $(cat "$PL_TMP/listen.out")"
grep -q '192\.0\.2\.1:9877.*Cannot assign requested address' "$PL_TMP/listen.out" ||
    pl_fail "--listen 192.0.2.1:9877: no message naming the address and the error: $(cat "$PL_TMP/listen.out")"
if grep -q 'port 0' "$PL_TMP/listen.out"; then
    pl_fail "--listen 192.0.2.1:9877 mentions port 0: $(cat "$PL_TMP/listen.out")"
fi
pl_log "--listen on a foreign address: $(grep 192.0.2.1 "$PL_TMP/listen.out")"

# The daemon, with a hostile domain name: 0xff and an overlong '/' are
# not UTF-8.
SOCK=$PL_TMP/vpowerd.sock
printf 'web 2 60 10\nbad"n\\a\377m\300\257e 1 30\n' >"$PL_TMP/domains"
printf 'control_socket %s\njournal %s\nperiod_ms 500\nmax_period_ms 500\n' \
    "$SOCK" "$PL_TMP/journal" >"$PL_TMP/vpowerd.conf"
"$VPOWER_BUILDDIR/manager/vpowerd" -d -c "$PL_TMP/vpowerd.conf" \
    --driver=dummy --host-driver=dummy --dummy-domains "$PL_TMP/domains" \
    --journal "$PL_TMP/journal" >"$PL_TMP/vpowerd.log" 2>&1 &
PL_PIDS+=($!)

EPORT=$(pl_free_port)
pl_start_exporter "$SOCK" "$EPORT" --header-timeout "$HEADER_TIMEOUT"
EXP=http://127.0.0.1:$EPORT/metrics
for _ in $(seq 50); do
    [ "$(pl_value "$EXP" vpower_up)" = 1 ] && break
    sleep 0.1
done
[ "$(pl_value "$EXP" vpower_up)" = 1 ] ||
    pl_fail "exporter reports vpower_up != 1: $(tail -3 "$PL_TMP/vpowerd.log")"

# Labels: valid UTF-8, parseable, the hostile name escaped.
curl -sf --max-time 5 "$EXP" >"$PL_TMP/scrape.txt" || pl_fail "scrape failed"
python3 - "$PL_TMP/scrape.txt" <<'EOPY' || pl_fail "hostile domain name: bad exposition"
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")   # Raises if not.
want = 'domain="bad\\"n\\\\a\ufffdm\ufffd\ufffde"'
if want not in text:
    sys.exit("no label %s in the scrape" % want)
EOPY
if command -v promtool >/dev/null; then
    out=$(promtool check metrics <"$PL_TMP/scrape.txt" 2>&1) ||
        pl_fail "promtool check metrics: $out"
fi
pl_log "hostile domain name: scrape is UTF-8, label escaped, promtool check metrics clean"

PROM=
if [ -x /usr/bin/prometheus ] && command -v promtool >/dev/null; then
    pl_start_prometheus "$EPORT"
    PROM=yes
    sleep 3
else
    pl_log "no Prometheus installed: the scrapes by curl only"
fi

python3 "$VPOWER_SRCDIR/tests/integration/prom-slowloris.py" 127.0.0.1 \
    "$EPORT" "$CONNS" "$LINE_EVERY" "$ATTACK_S" "$BODY_CONNS" \
    >"$PL_TMP/attack.out" 2>&1 &
ATTACK=$!
PL_PIDS+=($ATTACK)
sleep 1
T0=$(date +%s)
worst=0 n=0 bad=
while [ $(($(date +%s) - T0)) -lt $((ATTACK_S - 3)) ]; do
    r=$(curl -s -o "$PL_TMP/during.txt" -w '%{http_code} %{time_total}' \
        --max-time 5 "$EXP") || true
    n=$((n + 1))
    echo "RESULT scrape=$n during_attack code=${r% *} seconds=${r#* }"
    if [ "${r% *}" != 200 ] || ! grep -qx 'vpower_up 1' "$PL_TMP/during.txt" ||
        ! pl_ge 1 "${r#* }"; then
        bad="$bad $n:${r// /:}"
    fi
    worst=$(awk -v a="$worst" -v b="${r#* }" 'BEGIN { print (b > a) ? b : a }')
    sleep 0.5
done
T1=$(date +%s)
wait "$ATTACK" || pl_fail "slowloris script failed: $(cat "$PL_TMP/attack.out")"
res=$(cat "$PL_TMP/attack.out")
echo "RESULT attack $res"
echo "RESULT scrapes=$n worst_seconds=$worst"
[ -z "$bad" ] || pl_fail "scrapes failed or took over 1 s during the attack:$bad"
pl_ge "$n" 10 || pl_fail "only $n scrapes during the attack"
maxo=${res##*max_open=}
pl_ge "$((HEADER_TIMEOUT + 2))" "$maxo" ||
    pl_fail "an attacking connection stayed open $maxo s (--header-timeout $HEADER_TIMEOUT): $res"
# 520 > 512: the limit was reached and made room rather than refused.
grep -q 'per-address connection limit (512) reached' "$PL_TMP/exporter-$EPORT.log" ||
    pl_fail "the per-address limit was never reached: $(tail -3 "$PL_TMP/exporter-$EPORT.log")"
if [ -n "$PROM" ]; then
    win=$((T1 - T0))
    got=$(pl_scalar "count_over_time(up{job=\"vpower\"}[${win}s])")
    up=$(pl_scalar "min_over_time(up{job=\"vpower\"}[${win}s])")
    slow=$(pl_scalar "max_over_time(scrape_duration_seconds{job=\"vpower\"}[${win}s])")
    echo "RESULT prometheus scrapes=${got:-0} min_up=${up:-none} max_seconds=${slow:-none}"
    pl_ge "${got:-0}" $((win - 3)) || pl_fail "Prometheus stored ${got:-0} scrapes in $win s"
    [ "$up" = 1 ] || pl_fail "a Prometheus scrape failed during the attack (min up $up)"
    pl_ge 1 "$slow" || pl_fail "a Prometheus scrape took $slow s during the attack"
fi

# The total limit makes room the same way: a second exporter allowing 16
# connections in all, 40 held open, and a scrape still gets in.
P2=$(pl_free_port)
pl_start_exporter "$SOCK" "$P2" --max-connections 16 --per-ip-limit 1000 \
    --header-timeout 30
python3 "$VPOWER_SRCDIR/tests/integration/prom-flood.py" 127.0.0.1 "$P2" 40 3 \
    >"$PL_TMP/flood2.out" 2>&1 &
FLOOD=$!
PL_PIDS+=($FLOOD)
sleep 1.5
r=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 \
    "http://127.0.0.1:$P2/metrics") || true
echo "RESULT max_connections=16 held=40 scrape code=${r% *} seconds=${r#* }"
wait "$FLOOD" || true
res2=$(cat "$PL_TMP/flood2.out")
[ "${r% *}" = 200 ] && pl_ge 1 "${r#* }" ||
    pl_fail "--max-connections 16 with 40 held: scrape gave '$r'"
alive=${res2##*alive=}
pl_ge 16 "$alive" || pl_fail "--max-connections 16 but $alive stayed open ($res2)"
pl_log "--max-connections 16, 40 held: scrape answered in ${r#* } s, $res2"
pl_log "PASS: $n scrapes during a $CONNS+$BODY_CONNS-connection slowloris, worst $worst s; $res"
exit 0
