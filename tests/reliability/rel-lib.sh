# shellcheck shell=bash
# tests/reliability/rel-lib.sh -- helpers of the reliability tests.
#
# Sourced by tests/reliability/0*.sh after `set -u`.  Creates a private
# temp dir $REL_TMP and installs an EXIT trap that kills the vpowerd this
# test started (by its pid only), runs the test's own rel_on_exit hook if
# it defined one, prints the tail of vpowerd's log on failure and removes
# the temp dir (REL_KEEP=1 keeps it).  vpowerd start/stop come from the
# daemon tests' tests/integration/vpowerd-lib.sh (sourced, not copied).
#
# Every test prints one "[name] RESULT: ..." line with its numbers;
# docs/reliability.md quotes them.  Exit codes: 0 pass, 1 fail, 77 skip,
# 99 hard error.

REL_T=$(basename "$0" .sh)
REL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REL_SRCDIR=${VPOWER_SRCDIR:-$(cd "$REL_DIR/../.." && pwd)}
REL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$REL_T.XXXXXX") || exit 99
VPD_TMP=$REL_TMP
REL_LOG=$REL_TMP/vpowerd.log
# shellcheck source=../integration/vpowerd-lib.sh
. "$REL_SRCDIR/tests/integration/vpowerd-lib.sh"
VPD_CTL=$VPD_BUILDDIR/manager/vpowerctl

rel_log() { echo "[$REL_T] $*" >&2; }
rel_fail() { echo "[$REL_T] FAIL: $*" >&2; exit 1; }
rel_skip() { echo "[$REL_T] SKIP: $*" >&2; exit 77; }
rel_error() { echo "[$REL_T] ERROR: $*" >&2; exit 99; }

rel_cleanup() {
    local rc=$?
    trap - EXIT
    set +e
    if declare -F rel_on_exit >/dev/null; then
        rel_on_exit
    fi
    if [ -n "$VPD_PID" ]; then
        kill -KILL "$VPD_PID" 2>/dev/null
        wait "$VPD_PID" 2>/dev/null
    fi
    if [ "$rc" != 0 ] && [ -f "$REL_LOG" ]; then
        echo "----- last lines of $REL_LOG -----" >&2
        tail -n 40 "$REL_LOG" >&2
    fi
    if [ "${REL_KEEP:-0}" = 1 ]; then
        echo "[$REL_T] keeping $REL_TMP" >&2
    else
        rm -rf "$REL_TMP"
    fi
    if declare -F rel_chain_exit >/dev/null; then
        (exit "$rc")
        rel_chain_exit      # lib.sh's vp_cleanup: destroys the guests
    fi
    exit "$rc"
}
trap rel_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ -x "$VPD_BIN" ] || rel_error "vpowerd not built: $VPD_BIN"

# rel_seed: the test's random seed (RELIABILITY_SEED or from the clock),
# printed so a failing run can be repeated exactly.
rel_seed() {
    REL_SEED=${RELIABILITY_SEED:-$(( $(date +%s%N) % 1000000007 ))}
    RANDOM=$REL_SEED
    rel_log "seed $REL_SEED (repeat with RELIABILITY_SEED=$REL_SEED)"
}

# rel_put FILE: stdin to FILE in one rename, as a hypervisor's domain
# list changes at once.  A rewrite in place (truncate, then write) can
# be read half-done by a vpowerd starting up, which then rightly refuses
# the torn file: a race in the test, not a finding.
rel_put() { cat > "$1.new" && mv -f "$1.new" "$1"; }

# rel_rand N: a random integer in [0, N).
rel_rand() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

# rel_fixture DIR NCPUS: a sysfs tree from tests/fixtures/mksysfs.sh.
rel_fixture() {
    sh "$REL_SRCDIR/tests/fixtures/mksysfs.sh" "$1" --cpus "$2" \
        --freqs "2400000 2000000 1600000 1200000 800000" >/dev/null ||
        rel_error "mksysfs.sh $1 failed"
}

# rel_snapshot DIR: the FULL state of a fixture tree: every directory,
# every file with its mode and content (a changed, created or removed
# file shows up in a diff), and each file's checksum, so that a lost
# trailing newline shows too.
rel_snapshot() {
    (cd "$1" && find . -printf '%y %m %p\n' | LC_ALL=C sort &&
     find . -type f -print0 | LC_ALL=C sort -z |
     while IFS= read -r -d '' f; do
         printf '%s=%s\n' "$f" "$(cat "$f" 2>&1)"
     done &&
     find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
}

# rel_hash DIR: a quick fingerprint of the tree's contents.
rel_hash() {
    (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z |
     xargs -0 cat 2>/dev/null | md5sum | cut -c1-32)
}

# rel_started LOG: true once vpowerd finished starting (journal replayed,
# domains discovered, first cycle armed).
rel_started() { grep -q "managing cpus" "$1" 2>/dev/null; }

# rel_wait_started LOG SECONDS
rel_wait_started() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        rel_started "$1" && return 0
        [ -z "$VPD_PID" ] || kill -0 "$VPD_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# rel_errors_total: errors_total of `vpowerctl status --json` as
# "libvirt=N sysfs=N ..." if the control socket answers, else "".
rel_errors_total() {
    [ -x "$VPD_CTL" ] && [ -n "${REL_SOCK:-}" ] && [ -S "$REL_SOCK" ] || return 0
    "$VPD_CTL" --socket "$REL_SOCK" status --json 2>/dev/null |
        python3 -c 'import json,sys
e=json.load(sys.stdin).get("errors_total",{})
print(" ".join("%s=%s" % (k, e[k]) for k in sorted(e)))' 2>/dev/null
}

# rel_fds PID / rel_rss_kb PID
rel_fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# The fds a process keeps: the least of 10 counts 50 ms apart.  A busy
# daemon has a file open for a moment now and then (vpowerd re-reads
# sysfs and its load file every 100 ms here); a leaked fd is in every
# count.
rel_fds_kept() {
    local i n min=
    for ((i = 0; i < 10; i++)); do
        n=$(rel_fds "$1")
        [ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
        sleep 0.05
    done
    echo "${min:-0}"
}
rel_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
