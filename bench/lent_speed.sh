#!/usr/bin/env bash
# Issue 39's decisions on a lent GPU host, each with `fpgacomm compare --run`
# (interleaved launches, one mpirun each, two ranks bound to cores, host
# buffers unless said):
#
#   omb        OMB 7.4 (built from its release tarball) against fpgacomm, 1 B
#              to 4 MiB: osu latency, bw, bibw, mbw_mr (2 pairs) and multi_lat
#              (2 pairs), OMB's default iterations on both sides; each alone as
#              omb_latency, omb_bw, omb_bibw, omb_mbw_mr, omb_multi_lat; omb_bw_from_16: osu_bw's
#              sweep from 16 to 32 B only; omb_bw_small: 1-64 B, OMB, fpgacomm and OMB again;
#              omb_bw_fbox: 16-32 B with a window of 32, and with fast boxes of 8 KiB;
#              omb_bw_native: 1-64 B, OMB, fpgacomm and fpgacomm's loop in a C++ process;
#              omb_bw_aslr: 16-32 B, OMB and fpgacomm with and without address-space randomization;
#              omb_mbw_mr_small: mbw_mr at 1-128 B, OMB, fpgacomm and OMB again;
#              omb_perf: perf's counters on each rank of osu_bw at 16-32 B, launch by launch
#   before     this tree against BEFORE_TAR (a git archive of the base): D D bw,
#              allreduce H, put_bw H: no size may be "slower"
#   hhdd       H-H against D-D bandwidth on the GPU, 4 to 64 MiB
#   aa         OMB against itself (osu_latency, osu_bw): the verdicts that
#              launch-to-launch noise alone gives, beside which omb's are read
#
#   git archive main -o .dev/before.tar && cp ../shared/peers/omb-7.4.tar.gz .dev/
#   OUT=DIR OCL_ICD_FILENAMES=libnvidia-opencl.so.1 FPGACOMM_PYTHON=/opt/torch/.venv/bin/python \
#       bench/lent_speed.sh [build|builds] [aa] [omb] [before] [hhdd]     # builds: this tree and the base at once
#
# LAUNCHES (default 10) launches a side; BEFORE_LAUNCHES (default LAUNCHES) for
# before and hhdd; DEADLINE (default 560) seconds after which no comparison starts. Writes $OUT/speed.log (every step),
# and $OUT/compare.tar.gz: per comparison its text (NAME.txt), JSON (NAME.json)
# and campaign folder (every launch's output).
set -uo pipefail
cd "$(dirname "$0")/.."

: "${OUT:?set OUT to the directory that receives the results}"
PY=${FPGACOMM_PYTHON:-.venv/bin/python}
LAUNCHES=${LAUNCHES:-10}
BEFORE_LAUNCHES=${BEFORE_LAUNCHES:-$LAUNCHES}  # before/after and H-H against D-D
DEADLINE=${DEADLINE:-560}  # seconds after the start past which no comparison starts
OMB_TAR=${OMB_TAR:-.dev/omb-7.4.tar.gz}
BEFORE_TAR=${BEFORE_TAR:-.dev/before.tar}
WORK=/tmp/fpgacomm-speed
BEFORE_SITE=/tmp/fpgacomm-speed-before
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FPGACOMM_PYTHON=$PY PYTHONUNBUFFERED=1
# A fresh campaign folder each time: a warm machine keeps the last call's (compare --out takes new folders only).
rm -rf "$WORK/compare"
mkdir -p "$OUT" "$WORK/compare"
exec > >(tee -a "$OUT/speed.log") 2>&1
START=$(date +%s)
stamp() { echo "[$(date -u +%H:%M:%S) +$(( $(date +%s) - START ))s] $*"; }

OMB=$WORK/omb/src/c/mpi/pt2pt/standard

build() {
  stamp "build this tree"
  scripts/setup.sh > "$WORK/build.log" 2>&1 || { tail -n 20 "$WORK/build.log"; return 1; }
  stamp "build OMB 7.4 from $OMB_TAR"
  "$PY" - "$OMB_TAR" "$WORK/omb" <<'PYTHON' || return 1
import sys
from pathlib import Path
sys.path.insert(0, "bench")
from omb_side import build_omb, PT2PT
build_omb(Path(sys.argv[1]).resolve(), Path(sys.argv[2]), 16, PT2PT)
PYTHON
}

build_before() {
  stamp "build the base from $BEFORE_TAR"
  rm -rf "$WORK/before-src" "$BEFORE_SITE" && mkdir -p "$WORK/before-src"
  tar -xf "$BEFORE_TAR" -C "$WORK/before-src"
  "$PY" -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir="$WORK/before-build" \
    --target "$BEFORE_SITE" "$WORK/before-src" > "$WORK/build-before.log" 2>&1 ||
    { tail -n 20 "$WORK/build-before.log"; return 1; }
}

# compare NAME THRESHOLD COMMAND_A COMMAND_B [COMMAND_C ...]: A is the reference; ROUNDS (default LAUNCHES)
# launches of each, taking turns.
compare() {
  local name=$1 threshold=$2 launches=${ROUNDS:-$LAUNCHES}
  shift 2
  local runs=()
  for command in "$@"; do runs+=(--run "$command"); done
  local left=$(( DEADLINE - ($(date +%s) - START) ))
  if (( left < 30 )); then
    stamp "SKIPPED (deadline) $name"
    return 0
  fi
  stamp "compare $name: $launches launches a side"
  timeout -k 5 "$left" "$PY" -m fpgacomm --timeout 0 compare "${runs[@]}" --rounds "$launches" \
    --out "$WORK/compare/$name" --threshold "$threshold" --json "$WORK/compare/$name.json" \
    > "$WORK/compare/$name.txt" 2>&1
  local status=$?
  (( status == 0 )) || stamp "FAILED ($status) $name"
  cat "$WORK/compare/$name.txt"
}

# fc NP ARGS...: an fpgacomm command line of NP ranks bound to cores (SITE: another build's site folder).
fc() {
  local np=$1
  shift
  if [[ -n "${SITE:-}" ]]; then
    echo "env PYTHONPATH=$SITE mpirun -x PYTHONPATH -np $np --bind-to core $PY -m fpgacomm $*"
  else
    echo "mpirun -np $np --bind-to core $PY -m fpgacomm $*"
  fi
}

omb_latency() {
  compare latency 3% "mpirun -np 2 --bind-to core $OMB/osu_latency -m 1:4194304" "$(fc 2 osu latency H H -m 1:4M)"
}
omb_bw() {
  compare bw 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:4194304" "$(fc 2 osu bw H H -m 1:4M)"
}
omb_bibw() {
  compare bibw 3% "mpirun -np 2 --bind-to core $OMB/osu_bibw -m 1:4194304" "$(fc 2 osu bibw H H -m 1:4M)"
}
omb_mbw_mr() {
  compare mbw_mr 3% "mpirun -np 4 --bind-to core $OMB/osu_mbw_mr -m 1:4194304" "$(fc 4 osu mbw_mr H H -m 1:4M)"
}
omb_multi_lat() {
  compare multi_lat 3% "mpirun -np 4 --bind-to core $OMB/osu_multi_lat -m 1:4194304" \
    "$(fc 4 osu multi_lat H H -m 1:4M)"
}
omb() { omb_latency && omb_bw && omb_bibw && omb_mbw_mr && omb_multi_lat; }
# osu mbw_mr at 1-128 B, A OMB, B fpgacomm, C OMB again, taking turns: 10 launches a side left fpgacomm's
# ratio at 0.87-0.996 there with intervals of +-20 %, and OMB against itself shows the noise beside it.
omb_mbw_mr_small() {
  compare mbw_mr_small 3% "mpirun -np 4 --bind-to core $OMB/osu_mbw_mr -m 1:128" "$(fc 4 osu mbw_mr H H -m 1:128)" \
    "mpirun -np 4 --bind-to core $OMB/osu_mbw_mr -m 1:128"
}
# osu_bw's sweep started at 16 B on both sides: on the 32- and 64-core hosts OMB ran 16 and 32 B in one of
# two modes and fpgacomm only in the slower; whether the mode follows the messages the pair exchanged
# before (fpgacomm adds two MPI_Allreduce per size) shows when nothing comes before.
omb_bw_from_16() {
  compare bw_from_16 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 16:32" "$(fc 2 osu bw H H -m 16:32)"
}

# osu_bw at 1-64 B, A OMB, B fpgacomm, C OMB again, taking turns: fpgacomm's ratio and OMB's against itself
# from the same campaign (on the 32-core hosts OMB against itself was 0.85-0.87 and undecided there).
omb_bw_small() {
  compare bw_small 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:64" "$(fc 2 osu bw H H -m 1:64)" \
    "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:64"
}

# Where the slower mode at 16 and 32 B comes from: a window of 64 such messages needs about as many 64-byte
# slots as Open MPI's shared-memory fast box of a peer holds (4 KiB), so whether the receiver drains it while
# the window is still being sent decides. Half the window (-W 32), or fast boxes of 8 KiB, remove that race.
omb_bw_fbox() {
  compare bw_w32 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 16:32 -W 32" "$(fc 2 osu bw H H -m 16:32 -W 32)"
  OMPI_MCA_btl_vader_fbox_size=8192 compare bw_fbox8k 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 16:32" \
    "$(fc 2 osu bw H H -m 16:32)"
}

# The same at 1-64 B with fpgacomm's loop also in a plain C++ process (bench/pt2pt_native.cpp): A OMB, B
# fpgacomm, C the native loop. Whether a difference lies in the loop or in the Python process around it.
omb_bw_native() {
  local native=$WORK/pt2pt_native
  mpicxx -O2 -std=c++17 -Isrc -DCL_TARGET_OPENCL_VERSION=300 -DOMPI_SKIP_MPICXX=1 bench/pt2pt_native.cpp \
    build/*/libfpgacomm_core.a -lOpenCL -lpthread -o "$native" || return 1
  stamp "transparent huge pages: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
  compare bw_native 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:64" "$(fc 2 osu bw H H -m 1:64)" \
    "mpirun -np 2 --bind-to core $native 1 64"
}

# Whether address-space randomization puts OMB's launches in the fast mode at 16 and 32 B: A OMB, B OMB
# with it off for the whole job (setarch -R: mpirun's children inherit it), C fpgacomm with it off, D fpgacomm.
# If the mode follows the launch's addresses, B's launches all fall in one mode, and C's show whether
# fpgacomm's loop reaches the fast one at some addresses.
omb_bw_aslr() {
  compare bw_aslr 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 16:32" \
    "setarch -R mpirun -np 2 --bind-to core $OMB/osu_bw -m 16:32" \
    "setarch -R $(fc 2 osu bw H H -m 16:32)" "$(fc 2 osu bw H H -m 16:32)"
}

# perf's counters on each rank of OMB's osu_bw at 16-32 B, launch by launch (PERF_LAUNCHES, default 40): what
# differs between its launches in the fast mode and in the slow one. Each launch's output and both ranks'
# counters go to compare/perf/.
omb_perf() {
  local dir=$WORK/compare/perf events=cycles,instructions,cache-misses,LLC-load-misses,dTLB-load-misses
  events+=,context-switches,cpu-migrations,page-faults
  mkdir -p "$dir"
  perf stat -e cycles true > "$dir/check.txt" 2>&1 || { stamp "perf does not work here"; cat "$dir/check.txt"; return 1; }
  stamp "perf: ${PERF_LAUNCHES:-40} launches of osu_bw -m 16:32"
  for i in $(seq 1 "${PERF_LAUNCHES:-40}"); do
    mpirun -np 2 --bind-to core sh -c "perf stat -x, -e $events -o $dir/$i.rank\$OMPI_COMM_WORLD_RANK.csv \
      $OMB/osu_bw -m 16:32" > "$dir/$i.txt" 2>&1
  done
}

aa() {
  compare aa_latency 3% "mpirun -np 2 --bind-to core $OMB/osu_latency -m 1:4194304" \
    "mpirun -np 2 --bind-to core $OMB/osu_latency -m 1:4194304"
  compare aa_bw 3% "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:4194304" \
    "mpirun -np 2 --bind-to core $OMB/osu_bw -m 1:4194304"
}

# Both builds at once, before anything is timed.
builds() {
  build_before &
  local base=$!
  build || return 1
  wait "$base"
}

before() {
  [[ -d $BEFORE_SITE/fpgacomm ]] || build_before || return 1
  local gpu="--platform NVIDIA"
  local ROUNDS=$BEFORE_LAUNCHES
  compare before_bw_D_D 3% "$(SITE=$BEFORE_SITE fc 2 osu bw D D -m 1:4M $gpu)" "$(fc 2 osu bw D D -m 1:4M $gpu)"
  compare before_allreduce_H 3% "$(SITE=$BEFORE_SITE fc 2 osu allreduce --mem H -m 1:4M)" \
    "$(fc 2 osu allreduce --mem H -m 1:4M)"
  compare before_put_bw_H 3% "$(SITE=$BEFORE_SITE fc 2 osu put_bw --mem H -m 1:4M)" \
    "$(fc 2 osu put_bw --mem H -m 1:4M)"
}

hhdd() {
  local sweep="-m 4M:64M -i 10 -x 2 -W 16 -b multiple"
  local ROUNDS=$BEFORE_LAUNCHES
  compare hh_dd 3% "$(fc 2 osu bw H H $sweep)" "$(fc 2 osu bw D D $sweep --platform NVIDIA)"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -2
nproc; mpirun --version | head -1
for part in "${@:-build omb}"; do
  for step in $part; do
    "$step" || { stamp "$step failed"; break 2; }
  done
done
tar -czf "$OUT/compare.tar.gz" -C "$WORK" compare
stamp "done"
