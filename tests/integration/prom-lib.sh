# shellcheck shell=bash
# prom-lib.sh -- helpers for the Prometheus tests (05x-prometheus*.sh).
#
# Source after setting PL_TMP (a private temp dir the caller removes) and
# PL_NAME (test name for messages).  Every process started here is
# recorded in PL_PIDS and killed by pl_stop (by PID, never by name).  All
# traffic stays on 127.0.0.1.  Exit codes: 0 pass, 1 fail, 77 skip,
# 99 harness error.

PL_PIDS=()

pl_log() { echo "[$PL_NAME] $*" >&2; }
pl_fail() { echo "[$PL_NAME] FAIL: $*" >&2; exit 1; }
pl_skip() { echo "[$PL_NAME] SKIP: $*" >&2; exit 77; }
pl_error() { echo "[$PL_NAME] ERROR: $*" >&2; exit 99; }

pl_stop() {
    local p
    for p in "${PL_PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${PL_PIDS[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    PL_PIDS=()
}

pl_require() {
    [ -x /usr/bin/prometheus ] ||
        pl_skip "/usr/bin/prometheus not installed (apt-get install prometheus)"
    command -v promtool >/dev/null ||
        pl_skip "promtool not installed (part of the prometheus package)"
    command -v curl >/dev/null || pl_skip "curl not installed"
    command -v python3 >/dev/null || pl_skip "python3 not installed"
    PL_EXPORTER=$VPOWER_BUILDDIR/manager/vpower-exporter
    [ -x "$PL_EXPORTER" ] || pl_error "$PL_EXPORTER not built"
}

# pl_free_port: prints a free TCP port on 127.0.0.1.
pl_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# pl_wait_http URL SECONDS: waits until URL answers 200.
pl_wait_http() {
    local i
    for ((i = 0; i < $2 * 10; i++)); do
        curl -sf -o /dev/null --max-time 1 "$1" && return 0
        sleep 0.1
    done
    return 1
}

# pl_start_exporter SOCKET PORT [OPTIONS...]: starts vpower-exporter.
pl_start_exporter() {
    local sock=$1 port=$2
    shift 2
    "$PL_EXPORTER" --socket "$sock" --listen "127.0.0.1:$port" "$@" \
        >>"$PL_TMP/exporter-$port.log" 2>&1 &
    PL_PIDS+=($!)
    pl_wait_http "http://127.0.0.1:$port/" 10 ||
        pl_error "exporter on port $port did not start: $(cat "$PL_TMP/exporter-$port.log")"
}

# pl_start_prometheus TARGET_PORT: a real Prometheus scraping the exporter
# every second; sets PL_PROM to its base URL.
pl_start_prometheus() {
    local pport
    pport=$(pl_free_port)
    mkdir -p "$PL_TMP/tsdb"
    cat >"$PL_TMP/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: vpower
    static_configs:
      - targets: ['127.0.0.1:$1']
EOC
    promtool check config "$PL_TMP/prometheus.yml" >/dev/null 2>&1 ||
        pl_error "promtool rejects the generated prometheus.yml"
    /usr/bin/prometheus --config.file="$PL_TMP/prometheus.yml" \
        --storage.tsdb.path="$PL_TMP/tsdb" \
        --web.listen-address="127.0.0.1:$pport" \
        --log.level=warn >"$PL_TMP/prometheus.log" 2>&1 &
    PL_PIDS+=($!)
    PL_PROM=http://127.0.0.1:$pport
    pl_wait_http "$PL_PROM/-/ready" 30 ||
        pl_error "prometheus did not become ready: $(tail -5 "$PL_TMP/prometheus.log")"
}

# pl_query EXPR: prints Prometheus' instant query result as JSON lines
# "labels-json<TAB>value".
pl_query() {
    curl -sf --max-time 5 -G "$PL_PROM/api/v1/query" \
        --data-urlencode "query=$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
if d.get("status") != "success":
    sys.exit("query failed: %s" % d)
for r in d["data"]["result"]:
    print(json.dumps(r["metric"], sort_keys=True) + "\t" + r["value"][1])
'
}

# pl_scalar EXPR: the value of a one-series query ("" if none).
pl_scalar() { pl_query "$1" | head -1 | cut -f2; }

# pl_value URL METRIC: a sample's value from an exporter scrape.
pl_value() {
    curl -sf --max-time 5 "$1" | awk -v m="$2" '$1 == m { print $2; exit }'
}

pl_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# pl_check_http PORT: bad requests get errors, good ones answer.
pl_check_http() {
    local u=http://127.0.0.1:$1 code big bigcode
    code=$(curl -s -o /dev/null -w '%{http_code}' "$u/nope")
    [ "$code" = 404 ] || pl_fail "GET /nope gave $code, want 404"
    code=$(curl -s -o /dev/null -w '%{http_code}' "$u/metrics/../etc")
    [ "$code" = 404 ] || pl_fail "GET /metrics/../etc gave $code, want 404"
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 "$u/metrics")
    [ "$code" = 405 ] || pl_fail "POST /metrics gave $code, want 405"
    curl -s -D - -o /dev/null -X PUT "$u/metrics" | grep -qi '^Allow: GET, HEAD' ||
        pl_fail "405 reply lacks 'Allow: GET, HEAD'"
    big=$(head -c 100000 /dev/zero | tr '\0' a)
    bigcode=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$u/metrics")
    case $bigcode in
        4*) ;;
        *) pl_fail "100 kB request header gave $bigcode, want a 4xx refusal" ;;
    esac
    code=$(curl -s -o "$PL_TMP/head.out" -w '%{http_code}' -I "$u/metrics")
    [ "$code" = 200 ] || pl_fail "HEAD /metrics gave $code"
    curl -s -D - -o /dev/null "$u/metrics" |
        grep -qi '^Content-Type: text/plain; version=0.0.4' ||
        pl_fail "/metrics lacks Content-Type text/plain; version=0.0.4"
    code=$(curl -s -o "$PL_TMP/index.html" -w '%{http_code}' "$u/")
    [ "$code" = 200 ] && grep -q 'href="/metrics"' "$PL_TMP/index.html" ||
        pl_fail "GET / gave $code without a link to /metrics"
    pl_log "HTTP: 404 wrong path, 405 wrong method, $bigcode for a 100 kB header, HEAD ok"
}

# pl_promtool PORT: `promtool check metrics` prints no problems.
pl_promtool() {
    local out
    curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" >"$PL_TMP/scrape.txt" ||
        pl_fail "scrape of /metrics failed"
    out=$(promtool check metrics <"$PL_TMP/scrape.txt" 2>&1) ||
        pl_fail "promtool check metrics failed: $out"
    [ -z "$out" ] || pl_fail "promtool check metrics reports: $out"
    pl_log "promtool check metrics: no problems ($(grep -vc '^#' "$PL_TMP/scrape.txt") samples)"
}

# pl_flood PORT N HOLD: holds N connections while a normal scrape must
# answer with vpower_up 1 and the daemon's decision rate must hold (at
# least half the rate of the same-length window before).
pl_flood() {
    local port=$1 n=$2 hold=$3 u=http://127.0.0.1:$1/metrics
    local d0 d1 d2 t0 t1 t2 res code before during
    d0=$(pl_value "$u" vpower_decisions_total); t0=$(date +%s.%N)
    sleep "$hold"
    d1=$(pl_value "$u" vpower_decisions_total); t1=$(date +%s.%N)
    python3 "$VPOWER_SRCDIR/tests/integration/prom-flood.py" 127.0.0.1 \
        "$port" "$n" "$hold" >"$PL_TMP/flood.out" 2>&1 &
    local fp=$!
    sleep 1
    # A normal scrape while the connections are held.
    code=$(curl -s -o "$PL_TMP/during.txt" -w '%{http_code} %{time_total}' \
        --max-time 5 "$u") || true
    case $code in
        200\ *) ;;
        *) kill "$fp" 2>/dev/null; pl_fail "scrape during $n held connections: '$code'" ;;
    esac
    grep -qx 'vpower_up 1' "$PL_TMP/during.txt" ||
        { kill "$fp" 2>/dev/null; pl_fail "scrape during flood has no 'vpower_up 1'"; }
    wait "$fp" || true
    d2=$(pl_value "$u" vpower_decisions_total); t2=$(date +%s.%N)
    res=$(cat "$PL_TMP/flood.out")
    before=$(awk -v a="$d0" -v b="$d1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.3f", (b - a) / (e - s) }')
    during=$(awk -v a="$d1" -v b="$d2" -v s="$t1" -v e="$t2" 'BEGIN { printf "%.3f", (b - a) / (e - s) }')
    pl_log "flood of $n connections ($res): scrape answered (${code#* }s); decisions/s before $before, during $during"
    pl_ge "$before" 0.05 || pl_fail "decisions_total did not increase before the flood ($d0 -> $d1)"
    pl_ge "$during" "$(awk -v b="$before" 'BEGIN { print b / 2 }')" ||
        pl_fail "decision rate fell from $before/s to $during/s during the flood"
    case $res in
        opened=$n\ *) ;;
        *) pl_fail "exporter did not accept all $n connections: $res" ;;
    esac
}

# pl_limits SOCKET: a second exporter with small limits refuses the excess.
pl_limits() {
    local port res alive
    port=$(pl_free_port)
    pl_start_exporter "$1" "$port" --threads 2 --max-connections 16 --per-ip-limit 8 \
        --connection-timeout 3
    res=$(python3 "$VPOWER_SRCDIR/tests/integration/prom-flood.py" 127.0.0.1 "$port" 50 2)
    alive=${res#*alive=}
    [ "$alive" -le 8 ] || pl_fail "per-IP limit 8 but $alive of 50 connections stayed open ($res)"
    pl_log "limits: --per-ip-limit 8 kept $alive of 50 connections ($res)"
    # Held connections are gone after the idle timeout: scrapes work again.
    sleep 1
    curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/metrics" ||
        pl_fail "exporter with small limits does not answer after the flood"
}
