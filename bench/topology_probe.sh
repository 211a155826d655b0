#!/usr/bin/env bash
# One call on a lent host (the run tool): is the host's set of cores uniform?
# Build, record what the kernel says of the cores (sysfs), then rank 0's
# latency and bandwidth with every other core (bench/core_pairs.py), then
# b_eff and the mpi gather at 16 ranks on three placements (the first 16
# cores, every other core, the last 16) beside the campaign's unbound ranks,
# interleaved, 2 launches each. Results under $OUT (the launches' in
# placement.tar.gz: the run tool returns a few files only).
#   bench/topology_probe.sh
set -u
source bench/lent_build.sh
cores=$(nproc)
{
    lscpu; lscpu -e
    for cpu in /sys/devices/system/cpu/cpu[0-9]*; do
        echo "$(basename "$cpu") package=$(cat "$cpu/topology/physical_package_id") core=$(cat "$cpu/topology/core_id")" \
            "siblings=$(cat "$cpu/topology/thread_siblings_list")" \
            "l2=$(cat "$cpu/cache/index2/shared_cpu_list" 2>/dev/null) l3=$(cat "$cpu/cache/index3/shared_cpu_list" 2>/dev/null)"
    done
    numactl -H 2>&1
} > "$out/topology.txt"
timeout 200 mpirun -np "$cores" --bind-to core --map-by core "$FPGACOMM_PYTHON" bench/core_pairs.py > "$out/core_pairs.jsonl" 2> "$out/core_pairs.err"
echo "core pairs: rc $? after $SECONDS s"
first=$(seq -s, 0 15)
every=$(seq -s, 0 $((cores / 16)) $((cores - 1)) | cut -d, -f1-16)
last=$(seq -s, $((cores - 16)) $((cores - 1)))
saved=/tmp/placement
mkdir -p "$saved"
for round in 1 2; do
    for placement in first every last unbound; do
        case $placement in
            unbound) where=(--bind-to none) ;;
            first) where=(--cpu-set "$first" --bind-to core) ;;
            every) where=(--cpu-set "$every" --bind-to core) ;;
            last) where=(--cpu-set "$last" --bind-to core) ;;
        esac
        timeout 60 mpirun --oversubscribe -np 16 "${where[@]}" "$FPGACOMM" beff -m 20 -n 2 --loop-rule adaptive \
            --target-time 0.02 --json "$saved/beff-$placement-r$round.json" > /dev/null 2>&1
        echo "beff $placement r$round rc $?"
        timeout 60 mpirun --oversubscribe -np 16 "${where[@]}" "$FPGACOMM" gather --schedule mpi --mem H --sizes 256K:4M \
            --json "$saved/gather-$placement-r$round.json" > /dev/null 2>&1
        echo "gather $placement r$round rc $?"
    done
done
tar czf "$out/placement.tar.gz" -C "$saved" .
echo "done after $SECONDS s"
