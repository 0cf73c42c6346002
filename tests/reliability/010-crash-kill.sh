#!/bin/bash
# 010-crash-kill.sh -- SIGKILL vpowerd at random points while it changes
# the host, and prove every restart puts the host back exactly as found.
#
# vpowerd runs on the dummy hypervisor (fast, no guests) against a sysfs
# fixture tree (tests/fixtures/mksysfs.sh: 4 CPUs with cpufreq, cpuidle
# and hotplug files) with a 100 ms period, no pack dwell and
# offline_cores yes, so it is always writing frequency limits, idle
# disables and online states.  A full snapshot of the tree (every file,
# mode and content) is taken first.  Each round:
#   1. start vpowerd (it must replay the journal the last kill left);
#   2. while it runs, keep it busy: rewrite the domains' loads (busy vs
#      idle, so it packs and spreads) and toggle the host-wide override
#      (SIGUSR1 once it is up; through the control socket if wired);
#   3. SIGKILL it after a random delay (0-1.5 s); sometimes kill the
#      next start again within 0-60 ms, i.e. during its journal replay;
#   4. start it again, wait until it is up, SIGTERM it: exit 0, no
#      journal (nor journal.tmp) left, and the snapshot of the tree must
#      equal the first one byte for byte.
# Seeded: RELIABILITY_SEED repeats a run; RELIABILITY_KILLS (default 100)
# sets the number of rounds.
set -u
. "$(dirname "$0")/rel-lib.sh"
rel_seed
kills=${RELIABILITY_KILLS:-100}
[ -z "${RELIABILITY_LONG:-}" ] || kills=${RELIABILITY_KILLS:-300}

fx=$REL_TMP/sys
rel_fixture "$fx" 4
rel_snapshot "$fx" > "$REL_TMP/before"
clean_hash=$(rel_hash "$fx")
doms=$REL_TMP/doms
load_a() { printf 'web 2 70 60\nbatch 2 30\nidle 1 2\ndb 1 90 kind=performance\n' | rel_put "$doms"; }
load_b() { printf 'web 2 3 2\nbatch 2 1\nidle 1 1\ndb 1 2 kind=powersave\n' | rel_put "$doms"; }
load_a
cat > "$REL_TMP/vpowerd.conf" <<EOD
period_ms 100
max_period_ms 200
pack_dwell_ms 0
offline_cores yes
journal $REL_TMP/journal
control_socket $REL_TMP/vpowerd.sock
EOD
export VPOWER_DUMMY_STATE=$REL_TMP/pins
args=(--config "$REL_TMP/vpowerd.conf" --driver=dummy --dummy-domains "$doms"
      --sysfs-root "$fx")

survived=0 changed_at_kill=0 replays=0 double=0 usr1=0 t0=$SECONDS
for ((k = 1; k <= kills; k++)); do
    : > "$REL_LOG"
    vpd_start "$REL_LOG" "${args[@]}"
    # 2. Busy changes for a random time, then SIGKILL.
    delay=$(rel_rand 1500)
    end=$(( $(date +%s%N) / 1000000 + delay ))
    while [ $(( $(date +%s%N) / 1000000 )) -lt "$end" ]; do
        case $(rel_rand 4) in
        0) load_a ;;
        1) load_b ;;
        2) if rel_started "$REL_LOG"; then
               kill -USR1 "$VPD_PID" 2>/dev/null && usr1=$((usr1 + 1))
           fi ;;
        esac
        sleep "0.0$(rel_rand 9)"
    done
    kill -0 "$VPD_PID" 2>/dev/null ||
        rel_fail "round $k: vpowerd died before the kill (seed $REL_SEED)"
    kill -KILL "$VPD_PID"
    wait "$VPD_PID" 2>/dev/null
    VPD_PID=
    [ "$(rel_hash "$fx")" = "$clean_hash" ] || changed_at_kill=$((changed_at_kill + 1))
    [ -e "$REL_TMP/journal" ] && jnl_left=1 || jnl_left=0
    # 3b. Sometimes crash the restart too, while it replays the journal.
    if [ "$(rel_rand 4)" = 0 ]; then
        vpd_start "$REL_TMP/replay-crash.log" "${args[@]}"
        sleep "0.0$(rel_rand 6)"
        kill -KILL "$VPD_PID" 2>/dev/null
        wait "$VPD_PID" 2>/dev/null
        VPD_PID=
        double=$((double + 1))
    fi
    # 4. Restart: replay first; then a clean stop must restore it all.
    : > "$REL_LOG"
    vpd_start "$REL_LOG" "${args[@]}"
    rel_wait_started "$REL_LOG" 20 ||
        rel_fail "round $k: restart did not come up (seed $REL_SEED)"
    if [ -e "$REL_TMP/journal" ] || [ "$jnl_left" = 1 ]; then
        grep -q "crashed run: restoring" "$REL_LOG" && replays=$((replays + 1))
    fi
    vpd_stop
    [ "$VPD_RC" = 0 ] || rel_fail "round $k: vpowerd exited $VPD_RC on SIGTERM (seed $REL_SEED)"
    if ! rel_snapshot "$fx" | diff -u "$REL_TMP/before" - > "$REL_TMP/diff"; then
        head -n 40 "$REL_TMP/diff" >&2
        rel_fail "round $k (kill after $delay ms): host state differs after restart + SIGTERM (seed $REL_SEED)"
    fi
    for f in "$REL_TMP/journal" "$REL_TMP/journal.tmp"; do
        [ ! -e "$f" ] || rel_fail "round $k: $f left after a clean stop"
    done
    survived=$((survived + 1))
    [ $((k % 10)) != 0 ] ||
        rel_log "$k kills survived ($changed_at_kill hit a changed host, $replays journal replays, $double kills during replay) in $((SECONDS - t0)) s"
done
[ "$changed_at_kill" -ge $((kills / 4)) ] ||
    rel_fail "only $changed_at_kill of $kills kills hit a changed host: the test proves too little"
[ "$replays" -ge 1 ] || rel_fail "no restart ever replayed a journal"
rel_log "RESULT: $survived/$kills SIGKILLs survived (dummy hypervisor, sysfs fixture): $changed_at_kill kills hit a host vpowerd had changed, $replays restarts replayed a journal, $double kills during a replay, $usr1 override toggles; fixture byte-identical after every restart + SIGTERM; $((SECONDS - t0)) s, seed $REL_SEED"
exit 0
