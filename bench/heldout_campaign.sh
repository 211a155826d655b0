#!/usr/bin/env bash
# The held-out benchmark of docs/PREDICTION.md: calibration launches at K
# ranks (fpgacomm calibrate run: its gathers and b_eff at 2, 4 and K ranks) and,
# in separate launches interleaved with them, the held-out points: the four
# gather schedules and b_eff's ring at each held-out rank count, one launch per
# point and round, each started once the load average has settled. Launches
# stop being started past the deadline, so what is measured always comes back;
# each launch's wall time goes to the log.
#
#   bench/heldout_campaign.sh OUT_DIR [ROUNDS] [DEADLINE_S] [FIRST_ROUND]
# Environment: CAL_RANKS (default 8), HELDOUT_RANKS (default "16 32"), BEFF_RANKS (b_eff's
# held-out rank counts, default HELDOUT_RANKS: b_eff is cheap where a 64-rank gather is not),
# SIZES (held-out gathers, bytes per node, MIN:MAX doubling: default 64K:16M), CAL_SIZES (the
# calibration's gathers, default 64K,256K,1M,4M,16M), BEFF_M (b_eff's largest log2,
# default 20), FPGACOMM (the command, default .venv/bin/fpgacomm), BIND (mpirun's --bind-to, default core:
# unbound ranks share cores until the scheduler spreads them, and b_eff's first size took 0.7-5.3 ms an
# exchange so where bound ranks took 1 us, bench/RESULTS.md; campaigns up to blind 16 ran with none).
set -u
out=${1:?give the output folder}
rounds=${2:-3}
deadline=${3:-480}
first_round=${4:-1}
cal_ranks=${CAL_RANKS:-8}
heldout_ranks=${HELDOUT_RANKS:-"16 32"}
beff_ranks=${BEFF_RANKS:-$heldout_ranks}
sizes=${SIZES:-64K:16M}
cal_sizes=${CAL_SIZES:-64K,256K,1M,4M,16M}
beff_m=${BEFF_M:-20}
fpgacomm=${FPGACOMM:-.venv/bin/fpgacomm}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out/calibration" "$out/heldout"
log="$out/campaign.log"
start=$SECONDS
{ date -u; uname -a; nproc; lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA|L3' ; free -g; uptime; } > "$out/machine.txt"

# validate refuses launches that started with the 1-minute load average above the
# cores, and that average still holds the launch just before (a 64-rank b_eff left
# 115 on 64 cores): wait, at most 90 s, until it is below half the cores.
cores=$(nproc)
settle() {
    local waited=0
    while (( waited < 90 )) && awk -v c="$cores" '{exit !($1 >= c / 2)}' /proc/loadavg; do
        sleep 5; waited=$((waited + 5))
    done
    (( waited == 0 )) || echo "waited $waited s for the load average to fall below $((cores / 2))" >> "$log"
}

declare -A took  # the last wall time of each kind of launch (its name up to the first dash, and np)
launch() {  # NAME NP ARGS...: one launch, unless it would end past the deadline
    local name=$1 np=$2; shift 2
    local kind="${name%%-*}-$np"
    settle
    if (( SECONDS - start + ${took[$kind]:-0} > deadline )); then
        echo "skipped $name: it would end past the deadline of ${deadline} s" >> "$log"; return
    fi
    local t0=$SECONDS
    mpirun --oversubscribe --bind-to "${BIND:-core}" -np "$np" "$fpgacomm" "$@" > "$out/heldout/$name.txt" 2>&1
    local rc=$?
    took[$kind]=$((SECONDS - t0))
    echo "$name np=$np rc=$rc wall=${took[$kind]} s load=$(cut -d' ' -f1 /proc/loadavg)" >> "$log"
}

for round in $(seq "$first_round" $((first_round + rounds - 1))); do
    launch "calibrate-r$round" "$cal_ranks" calibrate run "$out/calibration" --sizes "$cal_sizes"
    for n in $heldout_ranks; do
        for schedule in ring tree vlink mpi; do
            launch "gather-$schedule-n$n-r$round" "$n" gather --schedule "$schedule" --mem H --sizes "$sizes" \
                --json "$out/heldout/gather-$schedule-n$n-r$round.json"
        done
    done
    for n in $beff_ranks; do
        launch "beff-n$n-r$round" "$n" beff -m "$beff_m" -n 2 --loop-rule adaptive --target-time 0.02 --json "$out/heldout/beff-n$n-r$round.json"
    done
done
echo "done after $((SECONDS - start)) s" >> "$log"
