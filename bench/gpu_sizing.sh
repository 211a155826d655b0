#!/usr/bin/env bash
# The staged engine's sizing on one GPU shared by two ranks, before and
# after, in one device command: builds the engine of a git archive
# (BEFORE_TAR, the "before") beside this tree's (the "after"), calibrates,
# checks every kind with validation, then takes interleaved launches of
# both, one JSON per launch, so a comparison tool can read the folders:
#
#   $OUT/sizing-PARTS.tar.gz: before/rNN-TEST.json, after/rNN-TEST.json,
#   tune.txt, validation logs, the D-D bandwidth timeline and its analysis,
#   the single-copy (CMA) probe, OMB side by side (part omb), summary.txt.
#
#   git archive BASE -o .dev/before.tar && cp ../shared/peers/omb-7.4.tar.gz .dev/
#   OUT=DIR OCL_ICD_FILENAMES=libnvidia-opencl.so.1 FPGACOMM_PYTHON=/opt/torch/.venv/bin/python \
#       bench/gpu_sizing.sh [PART ...]     # parts: build (build-after: this tree only) check rounds
#                                          # timeline cma omb (default: build check rounds timeline cma)
#
# SIZING_MAPPING (default 0:0) is FPGA_MAPPING; SIZING_ROUNDS (default 5) rounds of before/after launches, the first of
# each pair alternating; OMB_ROUNDS (default 15); SIZING_DEADLINE seconds
# (default 540) after which no launch starts. bench/sizing_summary.py
# prints the medians and the ratios' intervals from the folders.
set -uo pipefail
cd "$(dirname "$0")/.."

: "${OUT:?set OUT to the directory that receives the results}"
PY=${FPGACOMM_PYTHON:-.venv/bin/python}
PLATFORM=${SIZING_PLATFORM:-NVIDIA}
ROUNDS=${SIZING_ROUNDS:-5}
OMB_ROUNDS=${OMB_ROUNDS:-15}
DEADLINE=${SIZING_DEADLINE:-540}
BEFORE_TAR=${BEFORE_TAR:-.dev/before.tar}
OMB_TAR=${OMB_TAR:-.dev/omb-7.4.tar.gz}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FPGACOMM_PYTHON=$PY PYTHONUNBUFFERED=1
export FPGA_MAPPING=${SIZING_MAPPING:-0:0}  # default: both ranks on GPU 0; 0:1 gives each rank its own GPU
export XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/fpgacomm-sizing-cache}
WORK=${SIZING_WORK:-/tmp/fpgacomm-sizing}
BEFORE_SITE=/tmp/fpgacomm-before-site
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK/before" "$WORK/after"
exec > >(tee "$OUT/sizing.log") 2>&1
START=$(date +%s)
stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - START ))s] $*"; }
left() { echo $(( DEADLINE - ($(date +%s) - START) )); }

# launch LIMIT LOG COMMAND...: one guarded command, skipped past the deadline.
launch() {
  local limit=$1 log=$2
  shift 2
  if (( $(left) < 15 )); then
    stamp "SKIPPED (deadline) $log"
    return 1
  fi
  (( limit > $(left) )) && limit=$(left)
  timeout -k 5 "$limit" "$@" > "$log" 2>&1
  local status=$?
  (( status == 0 )) || { stamp "FAILED ($status) $log"; tail -n 4 "$log" | sed 's/^/    /'; }
  return $status
}

# The before and after engines on two ranks, as arrays so that `timeout` can run them.
before=(env PYTHONPATH=$BEFORE_SITE mpirun -x PYTHONPATH -np 2 --bind-to core "$PY" -m fpgacomm)
after=(mpirun -np 2 --bind-to core "$PY" -m fpgacomm)

build_after() {
  stamp "build after"
  launch 240 "$WORK/build-after.log" scripts/setup.sh
}

build() {
  build_after || return 1
  stamp "build before from $BEFORE_TAR"
  rm -rf /tmp/fpgacomm-before-src "$BEFORE_SITE" && mkdir -p /tmp/fpgacomm-before-src
  tar -xf "$BEFORE_TAR" -C /tmp/fpgacomm-before-src
  launch 240 "$WORK/build-before.log" "$PY" -m pip install -q --no-build-isolation --no-deps \
    --config-settings=build-dir=/tmp/fpgacomm-before-build --target "$BEFORE_SITE" /tmp/fpgacomm-before-src
  stamp "built: after $("$PY" -c 'import fpgacomm, sys; print(fpgacomm.__file__)'), before" \
    "$(PYTHONPATH=$BEFORE_SITE "$PY" -c 'import fpgacomm; print(fpgacomm.__file__)')"
}

check() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$WORK/gpu.txt" 2>&1
  cat "$WORK/gpu.txt"
  launch 90 "$WORK/tests-gpu.log" "$PY" -m pytest -q -p no:cacheprovider tests/test_gpu.py
  tail -n 2 "$WORK/tests-gpu.log"
  stamp "tune"
  launch 120 "$WORK/tune.txt" "${after[@]}" tune --platform "$PLATFORM" --json "$WORK/tune.json"
  grep -E "^rank|chose|smallest|<- " "$WORK/tune.txt"
  # Every staged kind validated (-c) with the calibrated sizes, small and large messages.
  local kinds
  for kinds in "D D" "H D" "D H"; do
    launch 90 "$WORK/validate-latency-${kinds// /_}.txt" "${after[@]}" osu latency $kinds -m 1:1M -i 20 -x 2 -c \
      --platform "$PLATFORM" && grep -c Pass "$WORK/validate-latency-${kinds// /_}.txt"
  done
  launch 90 "$WORK/validate-bw-D_D.txt" "${after[@]}" osu bw D D -m 1:64M -i 3 -x 1 -W 16 -c \
    --platform "$PLATFORM" && grep -c Pass "$WORK/validate-bw-D_D.txt"
  launch 90 "$WORK/validate-bibw-D_D.txt" "${after[@]}" osu bibw D D -m 1:16M -i 3 -x 1 -W 16 -c \
    --platform "$PLATFORM" && grep -c Pass "$WORK/validate-bibw-D_D.txt"
  launch 90 "$WORK/validate-bw-D_D-multiple.txt" "${after[@]}" osu bw D D -m 1:1M -i 3 -x 1 -W 4 -b multiple -c \
    --platform "$PLATFORM" && grep -c Pass "$WORK/validate-bw-D_D-multiple.txt"
}

# The record: latency D-D, H-D, H-H 1 B to 1 MiB; bandwidth D-D and H-H 4 to 64 MiB, fresh buffers on both.
MEASURES=("latency_D_D osu latency D D -m 1:1M -i 200 -x 20"
          "latency_H_D osu latency H D -m 1:1M -i 200 -x 20"
          "latency_H_H osu latency H H -m 1:1M -i 200 -x 20"
          "bw_D_D osu bw D D -m 4M:64M -i 10 -x 2 -W 16 -b multiple"
          "bw_H_H osu bw H H -m 4M:64M -i 10 -x 2 -W 16 -b multiple")

if [[ -n "${SIZING_QUICK:-}" ]]; then  # a rehearsal of minutes on a small machine
  MEASURES=("latency_D_D osu latency D D -m 1:64K -i 10 -x 1" "latency_H_D osu latency H D -m 1:64K -i 10 -x 1"
            "latency_H_H osu latency H H -m 1:64K -i 10 -x 1" "bw_D_D osu bw D D -m 4M:16M -i 2 -x 1 -W 4 -b multiple"
            "bw_H_H osu bw H H -m 4M:16M -i 2 -x 1 -W 4 -b multiple")
fi

rounds() {
  local round measure version
  for (( round = 1; round <= ROUNDS; round++ )); do
    local order=(before after)
    (( round % 2 == 0 )) && order=(after before)
    stamp "round $round: ${order[*]} first"
    for measure in "${MEASURES[@]}"; do
      local name=${measure%% *} args=(${measure#* })
      for version in "${order[@]}"; do
        local file
        file=$(printf '%s/%s/r%02d-%s' "$WORK" "$version" "$round" "$name")
        local engine=("${after[@]}")
        [[ $version == before ]] && engine=("${before[@]}")
        launch 90 "$file.txt" "${engine[@]}" "${args[@]}" --platform "$PLATFORM" --json "$file.json"
      done
    done
  done
}

timeline() {
  mkdir -p "$WORK/timeline"
  stamp "timeline of D-D bandwidth, and H-H over MPI alone"
  launch 90 "$WORK/timeline/bw_D_D.txt" "${after[@]}" osu bw D D -m 16M:64M -i 4 -x 1 -W 16 -b multiple \
    --path staged --platform "$PLATFORM" --timeline "$WORK/timeline/bw_D_D.timeline.json" &&
    launch 60 "$WORK/timeline/bw_D_D.analysis.txt" "$PY" -m fpgacomm timeline "$WORK/timeline/bw_D_D.timeline.json"
  grep -iE "busy|limit" "$WORK/timeline/bw_D_D.analysis.txt" | head -12
}

cma() {
  mkdir -p "$WORK/cma"
  stamp "single-copy MPI (CMA) against none, interleaved, if this container allows it"
  { grep -i cap /proc/self/status; cat /proc/sys/kernel/yama/ptrace_scope 2>&1
    env | grep -i single_copy; ompi_info --param btl vader --level 9 | grep -i single_copy; } > "$WORK/cma/probe.txt" 2>&1
  cat "$WORK/cma/probe.txt"
  local round mechanism kinds
  for (( round = 1; round <= 3; round++ )); do
    for mechanism in none cma; do
      for kinds in "H H" "D D"; do
        local file
        file=$(printf '%s/cma/r%02d-bw_%s-%s' "$WORK" "$round" "${kinds// /_}" "$mechanism")
        launch 90 "$file.txt" mpirun --mca btl_vader_single_copy_mechanism "$mechanism" -np 2 --bind-to core \
          "$PY" -m fpgacomm osu bw $kinds -m 4M:64M -i 10 -x 2 -W 16 -b multiple --platform "$PLATFORM" \
          --json "$file.json"
      done
    done
  done
  grep -h -iE "cma|process_vm|error|warn" "$WORK"/cma/r*.txt | sort | uniq -c | head
  "$PY" - "$WORK/cma" <<'PYTHON'
import json, sys, statistics
from pathlib import Path
rows = {}
for path in Path(sys.argv[1]).glob("r*-bw_*.json"):
    name = path.stem.split("-", 1)[1]
    for row in json.loads(path.read_text())["rows"]:
        rows.setdefault((name, row["size"]), []).append(row["bandwidth"])
for (name, size), values in sorted(rows.items()):
    print(f"{name:14} {size >> 20:3d} MiB  median {statistics.median(values) / 1e9:6.2f} GB/s  "
          f"({', '.join(f'{v / 1e9:.2f}' for v in values)})")
PYTHON
}

omb() {
  mkdir -p "$WORK/omb"
  stamp "OMB 7.4 side by side: latency and bibw, $OMB_ROUNDS rounds"
  launch $(( $(left) - 10 )) "$WORK/omb/omb_side.txt" "$PY" bench/omb_side.py --omb-tarball "$OMB_TAR" \
    --python "$PY" --tests latency,bibw --rounds "$OMB_ROUNDS" --deadline $(( $(left) - 30 )) --results '' \
    --json "$WORK/omb/omb_side.json" --section 'one-GPU machine, 16 cores'
  tail -n 20 "$WORK/omb/omb_side.txt"
}

parts=("$@")
(( ${#parts[@]} )) || parts=(build check rounds timeline cma)
stamp "sizing: ${parts[*]}; python $PY; platform $PLATFORM; rounds $ROUNDS; deadline ${DEADLINE}s"
for part in "${parts[@]}"; do
  case $part in
    build|check|rounds|timeline|cma|omb) $part ;;
    build-after) build_after ;;
    *) echo "unknown part '$part'; choose build, build-after, check, rounds, timeline, cma or omb" >&2; exit 2 ;;
  esac
done
"$PY" bench/sizing_summary.py "$WORK/before" "$WORK/after" > "$WORK/summary.txt" 2>&1
cat "$WORK/summary.txt"
cp "$WORK/summary.txt" "$OUT/" 2>/dev/null
tar -C "$WORK" -czf "$OUT/sizing-$(IFS=-; echo "${parts[*]}").tar.gz" .
stamp "finished; $(ls "$OUT")"
