#!/bin/sh
# tests/sim/test-sim-input.sh -- vpower-sim's answers to bad input: every
# message names the file and what is wrong, quotes input with control
# bytes and non-UTF-8 escaped (\xNN), never waits on a FIFO, and a host
# with more vCPUs than a vpower decision handles is refused up front.
set -u
src=${VPOWER_SRCDIR:-.}
. "$src/tests/sim/sim-lib.sh"
model=$src/config/models/xeon-r640-2s.model
fails=0

# Writes a valid 288-line PlanetLab trace to $1.
pl_file() {
    i=0
    while [ $i -lt 288 ]; do echo 5; i=$((i + 1)); done > "$1"
}

# Runs vpower-sim with "$@" (at most 20 s: a FIFO must not block it) and
# checks exit status 1 and that stderr holds the fixed string $want.
expect() {
    want=$1; shift
    timeout 20 "$sim" --model "$model" --threads 1 "$@" \
        > "$tmp/out" 2> "$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -qF -- "$want" "$tmp/err"; then
        echo "FAIL: $* -> exit $rc, stderr:"; cat "$tmp/err"
        echo "  want: $want"
        fails=1
    fi
    # Nothing but printable text and the newline reaches the terminal.
    if LC_ALL=C grep -q '[[:cntrl:]]' "$tmp/err" \
       || LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp/err"; then
        echo "FAIL: $* -> raw control or non-ASCII bytes on stderr:"
        od -c "$tmp/err" | head -5
        fails=1
    fi
}

# A bad trace line with terminal escapes, a bell and a non-UTF-8 byte.
mkdir "$tmp/esc"
pl_file "$tmp/esc/a"
printf '5\n\033]0;owned\007\377\n' > "$tmp/esc/b"
expect "esc/b:2: not an integer percent: '\\x1b]0;owned\\x07\\xff'" \
    --trace "$tmp/esc"
# A file name with control bytes is escaped in the message as well.
rm "$tmp/esc/b"
printf '5\n\033[2J\n' > "$tmp/esc/$(printf 'b\033[31m')"
expect "esc/b\\x1b[31m:2: not an integer percent: '\\x1b[2J'" \
    --trace "$tmp/esc"

# Entries of a trace directory that are not regular files.
mkdir "$tmp/dir"
pl_file "$tmp/dir/a"
mkfifo "$tmp/dir/b fifo"
expect "dir/b fifo: a FIFO, not a regular file" --trace "$tmp/dir"
rm "$tmp/dir/b fifo"
mkdir "$tmp/dir/b_sub"
expect "dir/b_sub: a directory, not a regular file" --trace "$tmp/dir"
rmdir "$tmp/dir/b_sub"
ln -s nowhere "$tmp/dir/b_link"
expect "dir/b_link: a dangling symbolic link to 'nowhere'" \
    --trace "$tmp/dir"
rm "$tmp/dir/b_link"

# A FIFO as the model or the recording is refused, not waited on.
mkfifo "$tmp/fifo"
expect "fifo: a FIFO, not a regular file" --trace "$tmp/dir" \
    --model "$tmp/fifo"
expect "fifo: a FIFO, not a regular file" --trace "$tmp/fifo" \
    --trace-format record

# 5 VMs x 820 = 4100 single-vCPU VMs on one host: more than a vpower
# decision takes (4096); two hosts hold them.
mkdir "$tmp/big"
for v in 1 2 3 4 5; do pl_file "$tmp/big/$v"; done
expect "host 0 of 1 gets 4100 vCPUs; one host holds at most 4096" \
    --trace "$tmp/big" --repeat 820 --hours 0.1 --policy performance
# --repeat beyond its VM limit names the limit (a usage error, 2).
mkdir "$tmp/many"
i=0
while [ $i -lt 1049 ]; do ln "$tmp/big/1" "$tmp/many/$i"; i=$((i + 1)); done
"$sim" --model "$model" --trace "$tmp/many" --repeat 1000 > "$tmp/out" \
    2> "$tmp/err"
rc=$?
if [ $rc -ne 2 ] || ! grep -qF -- "--repeat 1000: 1049 x 1000 VMs, more than \
1048576" "$tmp/err"; then
    echo "FAIL: --repeat limit -> exit $rc:"; cat "$tmp/err"; fails=1
fi
timeout 60 "$sim" --model "$model" --threads 1 --trace "$tmp/big" \
    --repeat 820 --hosts 2 --hours 0.1 --policy performance \
    > "$tmp/out" 2>&1 || { cat "$tmp/out"; echo "FAIL: 2 hosts"; fails=1; }
# File and directory names reach the per-VM table, the JSON and the
# gnuplot title escaped: a newline in the trace directory's name would
# end the title's command and start one of the name's choosing.
d="$tmp/$(printf 'n\nsystem("true")\033')"
mkdir "$d"
pl_file "$d/$(printf 'v\033[31m\377')"
for fmt in --per-vm "--json --per-vm"; do
    "$sim" --model "$model" --threads 1 --trace "$d" --hours 1 $fmt \
        --plot "$tmp/p" > "$tmp/out" 2>&1 || {
        cat "$tmp/out"; echo "FAIL: $fmt on odd names"; fails=1; }
    if LC_ALL=C grep -q '[[:cntrl:]]' "$tmp/out" \
       || LC_ALL=C grep -q "$(printf '[\200-\377]')" "$tmp/out"; then
        echo "FAIL: $fmt prints raw control or non-UTF-8 bytes"; fails=1
    fi
    grep -qF 'v\x1b[31m\xff' "$tmp/out" \
        || grep -qF 'v\\x1b[31m\\xff' "$tmp/out" \
        || { echo "FAIL: $fmt: VM name not shown escaped"; fails=1; }
    if grep -q '^system' "$tmp/p"; then
        echo "FAIL: a trace name starts a gnuplot command"; fails=1
    fi
done
# A recording's model source is shown escaped, and its JSON stays JSON
# (a quote in it was written unescaped).
sed '3s/^MODEL dummy:/MODEL '"$(printf '\033')"']0;x"dummy:/' \
    "$src/tests/sim/data/rec/dummy-4vm.rec" > "$tmp/r.rec"
for fmt in "" --json; do
    "$sim" --trace "$tmp/r.rec" --trace-format record $fmt \
        > "$tmp/out" 2>&1 || {
        cat "$tmp/out"; echo "FAIL: recording $fmt"; fails=1; }
    if LC_ALL=C grep -q '[[:cntrl:]]' "$tmp/out"; then
        echo "FAIL: recording $fmt prints raw control bytes"; fails=1
    fi
done
grep -qF '"model_source":"\\x1b]0;x\"dummy:' "$tmp/out" \
    || { cat "$tmp/out"; echo "FAIL: model source not escaped"; fails=1; }
exit $fails
