#!/usr/bin/env bash
# The device measurement campaign on a lent NVIDIA machine, in one command:
# builds, runs the test suite, measures, and leaves logs and JSON under $OUT
# (campaign.log, steps.tsv, targets-*.txt and campaign-PARTS.tar.gz with the rest).
#
#   OUT=/some/dir OCL_ICD_FILENAMES=libnvidia-opencl.so.1 FPGACOMM_PYTHON=/opt/torch/.venv/bin/python \
#       bench/gpu_campaign.sh [PART ...]
#
# Parts, in the order given (default: build tests measure):
#   build     scripts/setup.sh into $FPGACOMM_PYTHON
#   tests     tests/test_gpu.py, then the rest of the suite
#   tests-gpu tests/test_gpu.py alone
#   shared    two ranks sharing GPU 0 (FPGA_MAPPING=0:0): osu latency|bw|bibw
#             H-H, H-D, D-D (-c), bw H-H with fresh buffers (-b multiple),
#             devbw, the chunk sweep of bw D D, beff pcie|kernel, gather
#             --mem D, then the targets
#   per-rank  the same with one GPU per rank (FPGA_MAPPING=0:1), if 2 GPUs
#   timeline  where the staged pipeline loses time on GPU 0 shared by both ranks
#             (TIMELINE_MAPPING, default 0:0): osu latency and bw with
#             --timeline and fpgacomm timeline's analysis of each, chunk and
#             slot variants, the pinned slots as plain MPI buffers (bw H! H!),
#             single against fresh buffers per window slot (-b), the commands
#             that move small data (bench/copy_commands.cpp), the staged
#             wire pattern in plain MPI (bench/mpi_window.py), and devbw of
#             small copies in turns against both ranks at once
#   cpu-gather  gather --mem H (ring, tree, vlink, mpi) with 4, 8, 16 ranks
#   cpu-beff  b_eff cpu with 16 ranks
#   cpu       cpu-gather cpu-beff
#   measure   shared per-rank cpu
#
# Every step runs under `timeout`, prints UTC timestamps and is recorded in
# steps.tsv; a failed or timed-out step is reported and the campaign
# goes on. Steps that would start after CAMPAIGN_DEADLINE seconds (default
# 540, so one 10-minute device command returns cleanly) are skipped and
# listed as such. On the H100 machine build takes 25 to 35 s, tests-gpu 10 s,
# the whole suite 3 to 6 min (it ran out of a 240 s step once), shared about
# 6 min, timeline about 5 min, cpu-beff 20 s: run it as several commands, e.g.
# `build tests`, `build shared`, `build per-rank cpu`, `build timeline`.
#
# CAMPAIGN_PLATFORM (default NVIDIA) selects the OpenCL platform;
# CAMPAIGN_PLATFORM=Portable runs the same campaign on PoCL (a rehearsal).
# CAMPAIGN_QUICK=1 shrinks sizes, iterations and rank counts to a rehearsal
# of a few minutes on a small machine. The targets (bench/gpu_targets.py)
# are printed for each GPU mapping.
set -uo pipefail
cd "$(dirname "$0")/.."

: "${OUT:?set OUT to the directory that receives logs and JSON}"
PY=${FPGACOMM_PYTHON:-.venv/bin/python}
PLATFORM=${CAMPAIGN_PLATFORM:-NVIDIA}
DEADLINE=${CAMPAIGN_DEADLINE:-540}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FPGACOMM_PYTHON=$PY
# Open MPI forwards a colon-separated OCL_ICD_FILENAMES cut at the first
# colon (bench/RESULTS.md, H100): keep the one ICD of the chosen platform.
if [[ "${OCL_ICD_FILENAMES:-}" == *:* && "$PLATFORM" == NVIDIA ]]; then
  for icd in ${OCL_ICD_FILENAMES//:/ }; do [[ "$icd" == *nvidia* ]] && export OCL_ICD_FILENAMES=$icd; done
fi
# Sizes and iterations, bounded so that one command fits in about 9 minutes.
LATENCY=(-m 1:1M -i 500 -x 50)
BANDWIDTH=(-m 1:64M -i 10 -x 2 -W 16)
DEVBW=(-m 1:256M)
CHUNKS=(256K 1M 2M 4M 8M 16M)
CHUNK_SWEEP=(-m 16M:64M -i 10 -x 2 -W 16)
BEFF=(-n 2 --target-time 0.05)
# Device gathers stop at 64 MiB per rank, host ones (4 to 16 ranks) at 16 MiB:
# the full 64K:256M sweep of one schedule took a minute on the H100.
GATHER_SIZES_D=64K:64M
GATHER_SIZES_H=64K:16M
CPU_RANKS=(4 8 16)
TIMELINE_LATENCY=(-m 1:64K -i 200 -x 20)
TIMELINE_BANDWIDTH=(-m 16M:64M -i 10 -x 2 -W 16)
SMALL_COPIES=(-m 1:64K -i 200 -x 20)
BUFFERS_SWEEP=(-m 16M:64M -i 4 -x 1 -W 16)
WINDOW=(--chunk 4M --slots 4 --bytes 64M --reps 20)
if [[ -n "${CAMPAIGN_QUICK:-}" ]]; then
  LATENCY=(-m 1:1K -i 20 -x 2)
  BANDWIDTH=(-m 1:16M -i 2 -x 1 -W 4)
  DEVBW=(-m 1:16M -i 5 -x 1)
  CHUNKS=(1M 4M)
  CHUNK_SWEEP=(-m 16M:16M -i 2 -x 1 -W 4)
  BEFF=(-m 10 -n 1 --target-time 0.01)
  GATHER_SIZES_D=64K:1M
  GATHER_SIZES_H=64K:1M
  CPU_RANKS=(4)
  TIMELINE_LATENCY=(-m 1:64K -i 10 -x 1)
  TIMELINE_BANDWIDTH=(-m 16M:16M -i 2 -x 1 -W 4)
  SMALL_COPIES=(-m 1:64K -i 10 -x 1)
  BUFFERS_SWEEP=(-m 16M:16M -i 1 -x 1 -W 4)
  WINDOW=(--chunk 1M --slots 4 --bytes 16M --reps 3)
fi
# The device tool brings back at most 8 files from $OUT: everything is
# written under $WORK and packed into $OUT/campaign-PARTS.tar.gz at the end.
WORK=${CAMPAIGN_WORK:-/tmp/fpgacomm-campaign}
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
exec > >(tee "$OUT/campaign.log") 2>&1
START=$(date +%s)
FAILED=()
printf 'step\tstatus\tseconds\n' > "$WORK/steps.tsv"

stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - START ))s] $*"; }

# step NAME LIMIT_S LOG COMMAND...: runs COMMAND with its output in LOG.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$(( DEADLINE - ($(date +%s) - START) ))
  if (( left < 10 )); then
    stamp "SKIPPED $name: the campaign's ${DEADLINE}s are spent"
    printf '%s\tskipped\t0\n' "$name" >> "$WORK/steps.tsv"
    FAILED+=("$name (skipped)")
    return 1
  fi
  (( limit > left )) && limit=$left
  stamp "start $name (limit ${limit}s)"
  local t0=$(date +%s)
  timeout -k 10 "$limit" "$@" > "$log" 2>&1
  local status=$? seconds=$(( $(date +%s) - t0 ))
  if (( status == 0 )); then
    stamp "done $name (${seconds}s)"
    printf '%s\tok\t%d\n' "$name" "$seconds" >> "$WORK/steps.tsv"
  else
    local why="exit $status"
    (( status == 124 || status == 137 )) && why="timed out after ${limit}s"
    stamp "FAILED $name: $why; see $log; going on"
    tail -n 5 "$log" | sed 's/^/    /'
    printf '%s\tfailed (%s)\t%d\n' "$name" "$why" "$seconds" >> "$WORK/steps.tsv"
    FAILED+=("$name")
  fi
  return $status
}

# Commands as arrays, not functions, so that `timeout` can run them.
FPGACOMM=("$PY" -m fpgacomm)
MPIRUN=(mpirun --oversubscribe -np)
DEVICE=(--platform "$PLATFORM")

build() {
  step build 300 "$WORK/build.log" scripts/setup.sh
}

tests_gpu() {
  step tests-gpu 120 "$WORK/tests-gpu.log" "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_gpu.py
  grep -hE "^(FAILED|ERROR|SKIPPED)|[0-9]+ (passed|failed)" "$WORK/tests-gpu.log" | head -20
}

tests() {
  # The GPU checks first and alone, so the suite's time limit cannot hide them.
  tests_gpu
  step tests 420 "$WORK/tests.log" "$PY" -m pytest -q -rs -p no:cacheprovider --durations=15 \
    --ignore=tests/test_gpu.py tests
  grep -hE "^(FAILED|ERROR|SKIPPED)|[0-9]+ (passed|failed)" "$WORK/tests-gpu.log" "$WORK/tests.log" | head -40
}

# One GPU mapping of two ranks: point-to-point, devbw, chunk sweep, b_eff, gather.
two_ranks() {
  local label=$1 mapping=$2 dir="$WORK/$1"
  mkdir -p "$dir"
  export FPGA_MAPPING=$mapping
  stamp "mapping $label: FPGA_MAPPING=$mapping"
  local two=("${MPIRUN[@]}" 2 "${FPGACOMM[@]}") test kinds
  for test in latency bw bibw; do
    for kinds in "H H" "H D" "D D"; do
      local name="osu_${test}_${kinds// /_}" options=("${BANDWIDTH[@]}")
      [[ $test == latency ]] && options=("${LATENCY[@]}")
      step "$label/$name" 60 "$dir/$name.txt" "${two[@]}" osu "$test" $kinds "${options[@]}" -c \
        "${DEVICE[@]}" --json "$dir/$name.json"
    done
  done
  # Context for the bandwidth target: H-H with fresh buffers per message, none of them in the host's caches
  # (validating 16 buffers per size is slow, hence fewer sizes and iterations).
  step "$label/osu_bw_H_H_multiple" 150 "$dir/osu_bw_H_H_multiple.txt" "${two[@]}" osu bw H H "${BUFFERS_SWEEP[@]}" \
    -b multiple -c "${DEVICE[@]}" --json "$dir/osu_bw_H_H_multiple.json"
  step "$label/devbw" 90 "$dir/devbw.txt" "${two[@]}" devbw "${DEVBW[@]}" -f "${DEVICE[@]}" \
    --json "$dir/devbw.json"
  local chunk
  for chunk in "${CHUNKS[@]}"; do
    local name="osu_bw_D_D_chunk$chunk"
    step "$label/chunk_$chunk" 45 "$dir/$name.txt" "${two[@]}" osu bw D D "${CHUNK_SWEEP[@]}" -c --chunk "$chunk" \
      "${DEVICE[@]}" --json "$dir/$name.json"
  done
  local type
  for type in pcie kernel; do
    step "$label/beff_$type" 90 "$dir/beff_$type.txt" "${two[@]}" beff --comm-type "$type" "${BEFF[@]}" \
      "${DEVICE[@]}" --json "$dir/beff_$type.json"
  done
  gather 2 D "$dir" "$label" ring tree vlink mpi
  unset FPGA_MAPPING
  step "$label/targets" 30 "$dir/targets.txt" "$PY" bench/gpu_targets.py "$dir" && cat "$dir/targets.txt"
}

# gather RANKS MEM DIR LABEL SCHEDULE...: one guarded gather run per schedule.
gather() {
  local n=$1 mem=$2 dir=$3 label=$4 schedule
  shift 4
  if ! "${FPGACOMM[@]}" gather --help > /dev/null 2>&1; then
    stamp "SKIPPED $label/gather: this fpgacomm has no gather command"
    printf '%s\tskipped (no gather command)\t0\n' "$label/gather" >> "$WORK/steps.tsv"
    return
  fi
  local device=() sizes=$GATHER_SIZES_H
  [[ $mem != H ]] && device=("${DEVICE[@]}") && sizes=$GATHER_SIZES_D
  for schedule in "$@"; do
    local name="gather_${schedule}_${mem}_np$n"
    step "$label/$name" 60 "$dir/$name.txt" "${MPIRUN[@]}" "$n" "${FPGACOMM[@]}" gather --schedule "$schedule" \
      --mem "$mem" --sizes "$sizes" "${device[@]}" --json "$dir/$name.json"
  done
}

# nvidia-smi, the topology and the device list, once per command.
GPUS=""
probe() {
  [[ -n $GPUS ]] && return
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi -q > "$WORK/nvidia-smi-q.txt" 2>&1
    nvidia-smi topo -m > "$WORK/nvidia-smi-topo.txt" 2>&1
  else
    stamp "no nvidia-smi here"
  fi
  step devices 60 "$WORK/devices.txt" "${FPGACOMM[@]}" devices --json "$WORK/devices.json"
  GPUS=$("$PY" -c "import json, sys
print(sum(sys.argv[2].lower() in row['platform'].lower() for row in json.load(open(sys.argv[1]))))" \
         "$WORK/devices.json" "$PLATFORM" 2>/dev/null || echo 0)
  stamp "$GPUS device(s) on platform '$PLATFORM'"
}

shared() {
  probe
  two_ranks shared-gpu0 0:0
}

per_rank() {
  probe
  if (( GPUS >= 2 )); then
    two_ranks gpu-per-rank 0:1
  else
    stamp "per-rank: one device only; skipped"
  fi
}

# timeline_osu LIMIT NAME OSU_ARGS...: one validated osu run, its output and JSON in the timeline directory.
timeline_osu() {
  local limit=$1 name=$2 dir="$WORK/timeline"
  shift 2
  step "timeline/$name" "$limit" "$dir/$name.txt" "${MPIRUN[@]}" 2 "${FPGACOMM[@]}" osu "$@" -c "${DEVICE[@]}" \
    --json "$dir/$name.json"
}

# traced NAME OSU_ARGS...: one staged osu run with its timeline, then the timeline's analysis.
traced() {
  local name=$1 dir="$WORK/timeline"
  shift
  timeline_osu 60 "$name" "$@" --path staged --timeline "$dir/$name.timeline.json" &&
    step "timeline/$name-analysis" 30 "$dir/$name.analysis.txt" "${FPGACOMM[@]}" timeline "$dir/$name.timeline.json"
}

timeline() {
  local dir="$WORK/timeline" kinds
  mkdir -p "$dir"
  export FPGA_MAPPING=${TIMELINE_MAPPING:-0:0}
  stamp "timeline: FPGA_MAPPING=$FPGA_MAPPING"
  for kinds in "D D" "H D" "D H"; do
    traced "latency_${kinds// /_}" latency $kinds "${TIMELINE_LATENCY[@]}"
    traced "bw_${kinds// /_}" bw $kinds "${TIMELINE_BANDWIDTH[@]}"
  done
  traced bibw_D_D bibw D D "${TIMELINE_BANDWIDTH[@]}"
  traced bw_D_D_chunk1M bw D D "${TIMELINE_BANDWIDTH[@]}" --chunk 1M
  traced bw_D_D_chunk16M bw D D "${TIMELINE_BANDWIDTH[@]}" --chunk 16M
  traced bw_D_D_slots2 bw D D "${TIMELINE_BANDWIDTH[@]}" --slots 2
  traced bw_D_D_slots8 bw D D "${TIMELINE_BANDWIDTH[@]}" --slots 8
  # MPI straight from and into pinned memory, the kind the staging slots are.
  for kinds in "H H" "H! H!" "H H!" "H! H"; do
    local name="bw_${kinds// /_}" && name=${name//!/p}
    timeline_osu 60 "$name" bw $kinds "${TIMELINE_BANDWIDTH[@]}"
  done
  # OMB's single buffers stay in the host's caches; fresh buffers per window slot do not (validation of
  # 16 buffers per size is slow, hence fewer iterations).
  local buffers
  for kinds in "H H" "D D"; do
    for buffers in single multiple; do
      timeline_osu 120 "bw_${kinds// /_}_$buffers" bw $kinds "${BUFFERS_SWEEP[@]}" -b $buffers
    done
  done
  # The staged wire pattern in plain MPI (no devices): the MPI stage's own ceiling on this host.
  step timeline/mpi_window 60 "$dir/mpi_window.txt" "${MPIRUN[@]}" 2 "$PY" bench/mpi_window.py "${WINDOW[@]}"
  # Which command moves small data to the device fastest, in one process and in two at once.
  if g++ -O2 -std=c++17 bench/copy_commands.cpp -lOpenCL -o "$dir/copy_commands" > "$dir/copy_commands.build.txt" 2>&1
  then
    step timeline/copy_commands 60 "$dir/copy_commands.txt" "$dir/copy_commands" "$PLATFORM"
    step timeline/copy_commands_two 60 "$dir/copy_commands_two.txt" bash -c \
      "'$dir/copy_commands' '$PLATFORM' > '$dir/copy_commands_second.txt' & '$dir/copy_commands' '$PLATFORM'; wait \$!"
  else
    stamp "FAILED timeline/copy_commands: it does not compile; see $dir/copy_commands.build.txt"
  fi
  # Small copies of each rank alone, then of both ranks at once.
  step timeline/devbw_turns 60 "$dir/devbw_turns.txt" "${MPIRUN[@]}" 2 "${FPGACOMM[@]}" devbw H! \
    "${SMALL_COPIES[@]}" -f "${DEVICE[@]}" --json "$dir/devbw_turns.json"
  step timeline/devbw_concurrent 60 "$dir/devbw_concurrent.txt" "${MPIRUN[@]}" 2 "${FPGACOMM[@]}" devbw H! \
    "${SMALL_COPIES[@]}" --concurrent -f "${DEVICE[@]}" --json "$dir/devbw_concurrent.json"
  unset FPGA_MAPPING
}

cpu_gather() {
  local dir="$WORK/cpu" n
  mkdir -p "$dir"
  for n in "${CPU_RANKS[@]}"; do
    gather "$n" H "$dir" cpu ring tree vlink mpi
  done
}

cpu_beff() {
  local dir="$WORK/cpu" n=${CPU_RANKS[-1]}
  mkdir -p "$dir"
  step "cpu/beff_cpu_np$n" 150 "$dir/beff_cpu_np$n.txt" "${MPIRUN[@]}" "$n" "${FPGACOMM[@]}" beff --comm-type cpu \
    "${BEFF[@]}" --json "$dir/beff_cpu_np$n.json"
}

cpu() {
  cpu_gather
  cpu_beff
}

measure() {
  shared
  per_rank
  cpu
}

parts=("$@")
(( ${#parts[@]} )) || parts=(build tests measure)
stamp "campaign: ${parts[*]}; python $PY; platform $PLATFORM; OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-}; OUT=$OUT"
for part in "${parts[@]}"; do
  case $part in
    build|tests|shared|timeline|cpu|measure) $part ;;
    per-rank|tests-gpu|cpu-gather|cpu-beff) ${part//-/_} ;;
    *) echo "unknown part '$part'; choose build, tests, tests-gpu, shared, per-rank, timeline, cpu-gather, cpu-beff, cpu" \
         "or measure" >&2; exit 2 ;;
  esac
done
# $OUT: campaign.log, steps.tsv, the targets and the archive (in parts
# of 15 MiB if larger, as one returned file may hold 16 MiB).
cp "$WORK/steps.tsv" "$OUT/"
for targets in "$WORK"/*/targets.txt; do
  [[ -f $targets ]] && cp "$targets" "$OUT/targets-$(basename "$(dirname "$targets")").txt"
done
archive="$OUT/campaign-$(IFS=-; echo "${parts[*]}").tar.gz"
tar -C "$WORK" -czf "$archive" .
if (( $(stat -c %s "$archive") > 15 * 1024 * 1024 )); then
  split -b 15M -d "$archive" "$archive.part" && rm "$archive"
  stamp "archive split: cat $(basename "$archive").part* | tar -xz"
fi
stamp "finished; results in $OUT: $(cd "$OUT" && echo *)"
if (( ${#FAILED[@]} )); then
  echo "failed or skipped steps (${#FAILED[@]}): ${FAILED[*]}"
  exit 1
fi
