#!/usr/bin/env bash
# One call on a lent host (the run tool): whether b_eff's two modes at 256 KiB-1 MiB (an exchange of 1 MiB
# took 550-610 us in some launches and 850-935 us in others on one 16-core host, bound ranks, blind 18 and 19)
# follow the pages its buffers get. fpgacomm's host buffers come from aligned_alloc (4 KiB pages unless the
# kernel's transparent huge pages reach them); glibc.malloc.hugetlb=1 asks for huge pages on every
# allocation. ROUNDS launches a side with RANKS ranks (default: the host's cores, then 8), bound to cores,
# the two taking turns; each launch's Result as beff-RANKS-MODE-I.json in $OUT/beff.tar.gz (the run tool
# brings back eight files of $OUT), the times in $OUT/summary.txt, the kernel's settings in $OUT/thp.txt.
#   bench/beff_mode_probe.sh [ROUNDS]
set -u
rounds=${1:-6}
source bench/lent_build.sh
grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
  /sys/kernel/mm/transparent_hugepage/shmem_enabled > "$out/thp.txt" 2>&1
ldd --version | head -1 >> "$out/thp.txt"
work=$(mktemp -d)
for ranks in ${RANKS:-$(nproc) 8}; do
  for i in $(seq 1 "$rounds"); do
    for mode in default hugetlb; do
      tunables=$([[ $mode == hugetlb ]] && echo glibc.malloc.hugetlb=1)
      mpirun --bind-to core -np "$ranks" -x GLIBC_TUNABLES="$tunables" "$FPGACOMM" beff -m 20 -n 2 \
        --loop-rule adaptive --target-time 0.02 --json "$work/beff-$ranks-$mode-$i.json" \
        > "$work/beff-$ranks-$mode-$i.txt" 2>&1
    done
  done
done
tar czf "$out/beff.tar.gz" -C "$work" .
"$FPGACOMM_PYTHON" - "$work" <<'PYTHON' | tee "$out/summary.txt"
import glob, sys
import fpgacomm
for path in sorted(glob.glob(f"{sys.argv[1]}/beff-*.json")):
    rows = fpgacomm.load(path).rows
    print(path.rsplit("/", 1)[1], " ".join(
        f"{r['size'] >> 10}K:{r['time'] / r['loop_length'] * 1e6:.0f}us" for r in rows if r["size"] >= 65536))
PYTHON
