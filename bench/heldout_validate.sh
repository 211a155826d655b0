#!/usr/bin/env bash
# The held-out table of docs/PREDICTION.md: fit the platform to a campaign's
# calibration launches, predict the held-out points (the four gather schedules
# at 16 and 32 ranks, 64 KiB to 16 MiB; b_eff's ring), validate each against
# the held-out launches.
#   bench/heldout_validate.sh RESULTS_DIR [FPGACOMM]
# Environment: NODES (the gathers' held-out rank counts, default 16,32), BEFF_NODES (b_eff's, default NODES).
set -eu
dir=${1:?give the folder of bench/heldout_campaign.sh}
fpgacomm=${2:-.venv/bin/fpgacomm}
out=$dir/validation
nodes=${NODES:-16,32}
beff_nodes=${BEFF_NODES:-$nodes}
mkdir -p "$out"
"$fpgacomm" calibrate fit "$dir/calibration" -o "$out/platform.json" > "$out/fit.txt"
for schedule in ring tree vlink mpi; do
    "$fpgacomm" predict --fabric "$out/platform.json" --schedule "$schedule" --nodes "$nodes" --sizes 64K:16M \
        --json "$out/predict-$schedule.json" > "$out/predict-$schedule.txt"
    "$fpgacomm" validate "$out/predict-$schedule.json" "$dir"/heldout/gather-"$schedule"-n*.json \
        --json "$out/validate-$schedule.json" > "$out/validate-$schedule.txt" || true
done
"$fpgacomm" predict --fabric "$out/platform.json" --experiment beff --nodes "$beff_nodes" --sizes 1:1M \
    --json "$out/predict-beff.json" > "$out/predict-beff.txt"
"$fpgacomm" validate "$out/predict-beff.json" "$dir"/heldout/beff-n*.json --json "$out/validate-beff.json" \
    > "$out/validate-beff.txt" || true
