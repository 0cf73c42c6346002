#!/bin/sh
# tests/sim/record-dummy.sh VPOWERD OUT DIR [PHASE_S]
# Makes a recording with the real vpowerd and the dummy drivers (no
# libvirt, no sysfs: nothing on the machine is touched): 8 CPUs, 4 VMs
# with 4, 2, 2 and 1 vCPUs (db is performance); the load changes twice,
# every PHASE_S seconds (default 6); then SIGTERM.  DIR is scratch space.
# tests/sim/data/rec/dummy-4vm.rec was made with this script.
set -u
vpd=$1 out=$2 dir=$3 phase=${4:-6}
cat > "$dir/doms" <<EOD
web    4  80 30 10 5
db     2  60 40 kind=performance
batch  2  20 20
idle   1  1
EOD
cat > "$dir/vpowerd.conf" <<EOD
period_ms 200
max_period_ms 1000
pack_dwell_ms 600
journal $dir/journal
control_socket $dir/vpowerd.sock
EOD
"$vpd" --foreground --config "$dir/vpowerd.conf" --driver=dummy \
    --host-driver=dummy --sysfs-root "cpus=8,freqs=800000:1600000:2400000" \
    --dummy-domains "$dir/doms" --record "$out" > "$dir/vpowerd.log" 2>&1 &
pid=$!
sleep "$phase"
sed 's/^batch  2  20 20/batch  2  90 70/' "$dir/doms" > "$dir/doms.new" &&
    mv "$dir/doms.new" "$dir/doms"
sleep "$phase"
sed 's/^web    4  80 30 10 5/web    4  5 5 5 5/' "$dir/doms" > "$dir/doms.new" &&
    mv "$dir/doms.new" "$dir/doms"
sleep "$phase"
kill -TERM "$pid"
wait "$pid"
