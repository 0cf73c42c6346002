#!/bin/bash
# 070-calibrate-fixture.sh -- vpower-calibrate on this machine's real
# CPUs, with a fixture sysfs tree and a fixture powercap tree.
#
# The busy loops, their pinning, the frequency and idle limits (written
# into the fixture through the sysfs driver, journalled) and the restore
# all really run; only the meter is fake: a helper advances the fixture
# RAPL counter (wrapping every 5 J) from the calibrate process's real
# CPU time (/proc/PID/stat): 2 W + 10 W per busy CPU.  The machine is
# shared, so the powers are not checked, only that every point was
# measured, limits were set while it ran and are back afterwards.
# Checks: the time bound is printed up front and kept; the loop threads
# were pinned to single CPUs; the written model labels every number;
# --dry-run lists the points and changes nothing; the assumption
# options reach the file and bad values are refused; SIGINT restores
# and exits 1; a SIGKILLed run's limits are restored by --restore from
# the journal; it refuses while something answers on the vpowerd
# socket unless --force.
set -eu

T=$(basename "$0" .sh)
BIN=${VPOWER_BUILDDIR:-.}/manager/vpower-calibrate
SRC=${VPOWER_SRCDIR:-.}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
fail() { echo "[$T] FAIL: $*" >&2; exit 1; }
log() { echo "[$T] $*" >&2; }
pids=()
cleanup() {
    local rc=$? p
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    if [ "$rc" != 0 ]; then
        for f in "$TMP"/*.err; do [ -f "$f" ] && { echo "== $f"; tail -20 "$f"; } >&2; done
    fi
    [ -z "${KEEP:-}" ] && rm -rf "$TMP"
}
trap cleanup EXIT
[ -x "$BIN" ] || { echo "[$T] ERROR: $BIN not built" >&2; exit 99; }

# The fixture has CPUs 0 and 1, and the loops pin to them for real.
allowed=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
has_cpu() {
    awk -v c="$1" -v l="$allowed" 'BEGIN {
        n = split(l, r, ","); for (i = 1; i <= n; i++) {
            split(r[i], b, "-"); if (b[2] == "") b[2] = b[1];
            if (c >= b[1] + 0 && c <= b[2] + 0) exit 0 }
        exit 1 }'
}
has_cpu 0 && has_cpu 1 ||
    { echo "[$T] SKIP: needs CPUs 0 and 1, may use $allowed" >&2; exit 77; }
sys=$TMP/sys
sh "$SRC/tests/fixtures/mksysfs.sh" "$sys" --cpus 2 \
    --freqs "1600000 800000" --idle "POLL:0:0 C1:2:2 C6:133:600"
snapshot() {
    (cd "$sys" && find . -type f \( -name 'scaling_m*_freq' -o -name disable \) \
        -print0 | sort -z | xargs -0 grep -H '')
}
snapshot > "$TMP/before"
zone=$TMP/powercap/intel-rapl:0
mkdir -p "$zone"
echo package-0 > "$zone/name"
echo 5000000 > "$zone/max_energy_range_uj"
echo 0 > "$zone/energy_uj"
mkdir -p "$TMP/run"
chmod 700 "$TMP/run"
common=(--sysfs-root "$sys" --powercap-root "$TMP/powercap" --hwmon-root ''
        --ipmi-dev '' --journal "$TMP/run/journal"
        --vpowerd-socket "$TMP/vpowerd.sock")

# meter_helper PID: until PID exits, energy_uj = 2 W x wall time + 10 W x
# PID's CPU time, modulo the 5 J range; also records the limits and the
# threads' allowed CPUs it sees.  Shell builtins only (but mv and sleep),
# so that it keeps up on a loaded machine.
meter_helper() {
    local pid=$1 hz t0 now e tid st v k rest
    hz=$(getconf CLK_TCK)
    t0=${EPOCHREALTIME/./}
    while [ -d "/proc/$pid/task" ]; do
        read -r -a st < "/proc/$pid/stat" 2>/dev/null || break
        now=${EPOCHREALTIME/./}
        e=$(( ( 2 * (now - t0) + 10000000 * (st[13] + st[14]) / hz )
              % 5000001 ))
        echo "$e" > "$zone/energy_uj.tmp"
        mv "$zone/energy_uj.tmp" "$zone/energy_uj"
        # The driver writes values without a newline: read then fails
        # at end of file but has set v.
        read -r v < "$sys/cpu0/cpufreq/scaling_min_freq" || true
        read -r k < "$sys/cpu0/cpufreq/scaling_max_freq" || true
        echo "freq $v $k"
        for tid in "$sys"/cpu*/cpuidle/state*/disable; do
            read -r v < "$tid" || true
            echo "disable $v"
        done
        for tid in /proc/"$pid"/task/*; do
            { while read -r k rest; do
                [ "$k" != Cpus_allowed_list: ] || echo "pin $rest"
            done < "$tid/status"; } 2>/dev/null || true
        done
        sleep 0.02
    done >> "$TMP/seen"
}

# --dry-run lists the points and the time and changes nothing.
"$BIN" "${common[@]}" --dry-run -s 3 > "$TMP/dry.out" 2> "$TMP/dry.err" ||
    fail "--dry-run failed"
grep -qx "meter package-0 (package); 10 points x 3.00 s = 30 s" \
    "$TMP/dry.out" || fail "--dry-run: no time bound"
[ "$(grep -c '^\[[0-9]*/10\] ' "$TMP/dry.out")" = 10 ] ||
    fail "--dry-run: not 10 points"
grep -qx "\[4/10\] 1 core busy at 800000 kHz" "$TMP/dry.out" ||
    fail "--dry-run: point 4 is not 1 core at 800000 kHz"
[ ! -e "$TMP/run/journal" ] || fail "--dry-run wrote a journal"
snapshot | diff "$TMP/before" - || fail "--dry-run changed a limit"

# Something answering on the vpowerd socket: refused without --force.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
time.sleep(120)' "$TMP/vpowerd.sock" &
pids+=($!)
disown
for _ in $(seq 50); do [ -S "$TMP/vpowerd.sock" ] && break; sleep 0.1; done
if "$BIN" "${common[@]}" -s 0.2 -o "$TMP/model" 2> "$TMP/refuse.err"; then
    fail "ran while the vpowerd socket answered"
fi
grep -q "vpowerd answers on $TMP/vpowerd.sock" "$TMP/refuse.err" ||
    fail "no refusal message"
[ ! -e "$TMP/model" ] || fail "wrote a model while refusing"

# The real run (--force: the socket still answers).
"$BIN" "${common[@]}" --force -s 0.2 -o "$TMP/model" --name fx \
    2> "$TMP/run.err" &
cal=$!
pids+=($cal)
meter_helper "$cal"
wait "$cal" || fail "vpower-calibrate failed"
log "$(grep -E 'points x|took|loops used' "$TMP/run.err" | tr '\n' ' ')"
grep -q "meter package-0 (package); 10 points x 0.20 s = 2 s" "$TMP/run.err" ||
    fail "time bound not printed up front"
took=$(sed -n 's/.*took \([0-9.]*\) s (bound 2 s).*/\1/p' "$TMP/run.err")
# Generous: the machine is shared; a run that forgot to count setting
# up each point against it would take about twice the bound and more.
awk -v t="$took" 'BEGIN { exit !(t > 0 && t <= 6) }' ||
    fail "took ${took:-?} s for a 2 s bound"
[ "$(grep -c '^\[[0-9]*/10\]' "$TMP/run.err")" = 10 ] ||
    fail "not every point reported progress"
cpu=$(sed -n 's/.*loops used \([0-9.]*\) s of CPU.*/\1/p' "$TMP/run.err")
awk -v c="$cpu" 'BEGIN { exit !(c > 0) }' ||
    fail "busy loops used only ${cpu:-?} s of CPU"
# 8 of the 10 points change a limit; the helper samples every ~20 ms
# (slower on a loaded machine), so it sees some of them.
grep -v -x -e "freq 800000 1600000" -e "disable 0" -e "pin .*" "$TMP/seen" |
    grep -q . || fail "no frequency or idle limit seen set while it ran"
grep -qx "pin 0" "$TMP/seen" && grep -qx "pin 1" "$TMP/seen" ||
    fail "no thread pinned to cpu0 and to cpu1: $(sort -u "$TMP/seen" | tr '\n' ' ')"
snapshot | diff "$TMP/before" - || fail "limits not restored"
[ ! -e "$TMP/run/journal" ] || fail "journal left after a clean run"
[ "$(grep -c '^#  *[0-9]* ' "$TMP/model")" = 10 ] ||
    fail "model does not list the 10 points"
[ "$(grep -c '^    opp .*# measured, error <= ' "$TMP/model")" = 2 ] ||
    fail "opp lines not marked measured"
[ "$(grep -c '^    idle .*# \(measured\|assumed\)' "$TMP/model")" = 3 ] ||
    fail "idle lines not marked"
grep -q '^name fx$' "$TMP/model" || fail "--name not used"

# The assumed numbers are written as given; bad values are refused
# before anything changes.
"$BIN" "${common[@]}" --force -s 0.2 --deepest-idle-mw 70 \
    --package-idle-mw 300 -o "$TMP/model3" 2> "$TMP/assume.err" &
cal=$!
pids+=($cal)
meter_helper "$cal"
wait "$cal" || fail "run with assumptions failed"
grep -q '^    idle C6 133 600 70 .*# assumed' "$TMP/model3" ||
    fail "--deepest-idle-mw not written"
grep -q '^package 0 0-1 [0-9]* 300$' "$TMP/model3" ||
    fail "--package-idle-mw not written"
for bad in "-s 0.01" "-s x" "--deepest-idle-mw -1" "--name a/b c"; do
    rc=0
    # shellcheck disable=SC2086
    "$BIN" "${common[@]}" $bad 2> "$TMP/bad.err" || rc=$?
    [ "$rc" = 2 ] || fail "'$bad' exited $rc, not 2"
    grep -q -e "--seconds-per-point\|--deepest-idle-mw\|--name\|unexpected" \
        "$TMP/bad.err" || fail "'$bad': no message naming the option"
done
snapshot | diff "$TMP/before" - || fail "limits not restored"

# SIGINT mid-run: the point stops, every limit is restored, exit 1.
"$BIN" "${common[@]}" --force -s 1 -o "$TMP/model4" 2> "$TMP/int.err" &
cal=$!
pids+=($cal)
for _ in $(seq 100); do
    snapshot | cmp -s "$TMP/before" - || break
    sleep 0.05
done
kill -INT "$cal"
rc=0
wait "$cal" || rc=$?
[ "$rc" = 1 ] || fail "SIGINT: exit $rc, not 1"
grep -q "interrupted" "$TMP/int.err" || fail "SIGINT: no 'interrupted'"
snapshot | diff "$TMP/before" - || fail "SIGINT: limits not restored"
[ ! -e "$TMP/run/journal" ] || fail "SIGINT: journal left"
[ ! -e "$TMP/model4" ] || fail "SIGINT: wrote a model"

# A run killed mid-way leaves its limits; --restore puts them back.
"$BIN" "${common[@]}" --force -s 1 -o "$TMP/model2" 2> "$TMP/kill.err" &
cal=$!
pids+=($cal)
for _ in $(seq 100); do
    snapshot | cmp -s "$TMP/before" - || break
    sleep 0.05
done
sleep 0.3
kill -KILL "$cal"
wait "$cal" 2>/dev/null || true
snapshot | cmp -s "$TMP/before" - && fail "no limit changed before the kill"
[ -s "$TMP/run/journal" ] || fail "no journal after the kill"
"$BIN" "${common[@]}" --restore 2> "$TMP/restore.err" || fail "--restore failed"
grep -q "restored .* limits an interrupted run left" "$TMP/restore.err" ||
    fail "no restore message"
snapshot | diff "$TMP/before" - || fail "--restore did not restore"
[ ! -e "$TMP/run/journal" ] || fail "journal left after --restore"
log "ok"
