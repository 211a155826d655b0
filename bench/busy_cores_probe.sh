#!/usr/bin/env bash
# One call on a lent host (the run tool): do busy cores slow the ranks of a
# fixed set of cores? 2 ranks (osu bw, cores 0-1) and 8 ranks (the mpi
# gather and b_eff, cores 0-7), each while K other cores (8 .. 8+K-1) spin, K
# from 0 to all the rest, interleaved, 2 rounds. If a rank's copies slow as
# more of the host's cores are busy, a calibration at 8 ranks cannot see what
# 32 ranks will meet. Results in $OUT/busy.tar.gz.
#   bench/busy_cores_probe.sh
set -u
source bench/lent_build.sh
cores=$(nproc)
work=/tmp/busy
mkdir -p "$work"
rest=$((cores - 8))
for round in 1 2; do
    for busy in 0 $((rest / 3)) $((2 * rest / 3)) $rest; do
        spinners=()
        for ((c = 8; c < 8 + busy; c++)); do
            taskset -c "$c" sh -c 'while :; do :; done' & spinners+=($!)
        done
        sleep 1
        timeout 60 mpirun -np 2 --cpu-set 0,1 --bind-to core "$FPGACOMM" osu bw H H -m 64K:4M \
            --json "$work/bw-busy$busy-r$round.json" > /dev/null 2>&1; echo "bw busy $busy r$round rc $?"
        timeout 60 mpirun -np 8 --cpu-set 0-7 --bind-to core "$FPGACOMM" gather --schedule mpi --mem H --sizes 256K:4M \
            --json "$work/gather-busy$busy-r$round.json" > /dev/null 2>&1; echo "gather busy $busy r$round rc $?"
        timeout 60 mpirun -np 8 --cpu-set 0-7 --bind-to core "$FPGACOMM" beff -m 20 -n 2 --loop-rule adaptive \
            --target-time 0.02 --json "$work/beff-busy$busy-r$round.json" > /dev/null 2>&1; echo "beff busy $busy r$round rc $?"
        ((${#spinners[@]})) && kill "${spinners[@]}"
        wait 2> /dev/null
    done
done
tar czf "$out/busy.tar.gz" -C "$work" .
echo "done after $SECONDS s"
