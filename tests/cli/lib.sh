# shellcheck shell=bash
# tests/cli/lib.sh -- helpers for the vpowerctl tests.
#
# Sourced by tests/cli/*.sh after T (test name) is set.  Gives a private
# temp dir ($CLI_TMP, mode 0755 so a temporary unprivileged user can
# reach the socket), `run` (captures vpowerctl's stdout, stderr and exit
# code), expectations that print what they saw, JSON schema checks, and
# a temporary system user for the permission tests.

CLI_SRCDIR=${VPOWER_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CLI_BUILDDIR=${VPOWER_BUILDDIR:-$PWD}
CTL=$CLI_BUILDDIR/manager/vpowerctl
SCHEMA=$CLI_SRCDIR/docs/schema
CHECK_SCHEMA="python3 $CLI_SRCDIR/tests/cli/check-schema.py"
CLI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/vpower-$T.XXXXXX")
chmod 755 "$CLI_TMP"
CLI_USER=
CLI_GROUP=
CLI_USER2=
CHECKS=0

fail() { echo "[$T] FAIL: $*" >&2; exit 1; }
log() { echo "[$T] $*" >&2; }
hard() { echo "[$T] ERROR: $*" >&2; exit 99; }

[ -x "$CTL" ] || hard "$CTL not built"
command -v python3 >/dev/null || hard "python3 is needed for the schema checks"

# run [--as USER] ARGS...: runs vpowerctl; sets RC, OUT, ERR.
run() {
    local pre=()
    if [ "${1:-}" = --as ]; then
        pre=(runuser -u "$2" --)
        shift 2
    fi
    set +e
    "${pre[@]}" "$CTL" "$@" > "$CLI_TMP/out" 2> "$CLI_TMP/err"
    RC=$?
    set -e
    OUT=$(cat "$CLI_TMP/out")
    ERR=$(cat "$CLI_TMP/err")
}

# expect RC PATTERN-IN-STDERR|"" ARGS...: exit code and message.
expect() {
    local want=$1 pat=$2
    shift 2
    run "$@"
    CHECKS=$((CHECKS + 1))
    [ "$RC" = "$want" ] ||
        fail "vpowerctl $* exited $RC, want $want; stdout: $OUT; stderr: $ERR"
    if [ -n "$pat" ]; then
        grep -qE -- "$pat" "$CLI_TMP/err" ||
            fail "vpowerctl $*: stderr lacks /$pat/: $ERR"
    fi
    if [ "$want" = 0 ]; then
        [ -z "$ERR" ] || fail "vpowerctl $*: unexpected stderr: $ERR"
    fi
}

# out_has PATTERN: the last run's stdout matches.
out_has() {
    CHECKS=$((CHECKS + 1))
    grep -qE -- "$1" "$CLI_TMP/out" || fail "stdout lacks /$1/: $OUT"
}

# schema NAME: the last run's stdout is valid against docs/schema/NAME.json.
schema() {
    CHECKS=$((CHECKS + 1))
    $CHECK_SCHEMA "$SCHEMA/$1.json" "$CLI_TMP/out" ||
        fail "--json output does not match $1.json: $OUT"
}

# jq_py EXPR: evaluates a python expression on the last stdout's JSON
# (bound to j) and prints it.
jq_py() {
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($1)" \
        "$CLI_TMP/out"
}

# make_user: a temporary system user (and CLI_GROUP + CLI_USER2, a second
# user in that group) for permission tests; 77 only if useradd cannot
# work here at all.
make_user() {
    command -v useradd >/dev/null && command -v runuser >/dev/null ||
        { log "SKIP: useradd/runuser not available"; exit 77; }
    [ "$(id -u)" = 0 ] || { log "SKIP: creating a test user needs root"; exit 77; }
    CLI_GROUP=vpwg$$
    groupadd -r "$CLI_GROUP" || { log "SKIP: groupadd failed"; exit 77; }
    CLI_USER=vpwu$$
    useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$CLI_USER" ||
        { log "SKIP: useradd failed"; exit 77; }
    CLI_USER2=vpwa$$
    useradd -r -M -d /nonexistent -s /usr/sbin/nologin -G "$CLI_GROUP" \
        "$CLI_USER2" || fail "useradd of a second user failed"
}

cli_cleanup() {
    [ -z "$CLI_USER" ] || userdel "$CLI_USER" 2>/dev/null || true
    [ -z "$CLI_USER2" ] || userdel "$CLI_USER2" 2>/dev/null || true
    [ -z "$CLI_GROUP" ] || groupdel "$CLI_GROUP" 2>/dev/null || true
    rm -rf "$CLI_TMP"
}

# wait_socket PATH PID: until PATH is a socket (10 s) while PID lives.
wait_socket() {
    local i
    for ((i = 0; i < 100; i++)); do
        [ -S "$1" ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
