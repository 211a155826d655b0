#!/usr/bin/env bash
# One call on a lent host (the run tool): whether b_eff's first sizes (1-2 B)
# take milliseconds an exchange only when the ranks are not bound to cores.
# The held-out campaign launched with --bind-to none up to blind 16 (host_copy
# widens rank 0 to every core anyway), and b_eff at 1 B took 44 us-8 ms an
# exchange there where 4 B took 1 us; it binds to cores since. ROUNDS launches a side of b_eff at 1-16 B
# with RANKS ranks (default: the host's cores, then 8), --bind-to none and
# --bind-to core taking turns; each launch's Result in $OUT/beff-RANKS-MODE-I.json.
#   bench/beff_binding_probe.sh [ROUNDS]
set -u
rounds=${1:-6}
source bench/lent_build.sh
for ranks in ${RANKS:-$(nproc) 8}; do
  for i in $(seq 1 "$rounds"); do
    for mode in none core; do
      mpirun --oversubscribe --bind-to "$mode" -np "$ranks" "$FPGACOMM" beff -m 4 -n 2 --loop-rule adaptive \
        --target-time 0.02 --json "$out/beff-$ranks-$mode-$i.json" > "$out/beff-$ranks-$mode-$i.txt" 2>&1
    done
  done
done
"$FPGACOMM_PYTHON" - "$out" <<'PYTHON'
import glob, sys
import fpgacomm
for path in sorted(glob.glob(f"{sys.argv[1]}/beff-*.json")):
    rows = fpgacomm.load(path).rows
    print(path.rsplit("/", 1)[1], " ".join(f"{r['size']}B:{r['time'] / r['loop_length'] * 1e6:.2f}us" for r in rows))
PYTHON
