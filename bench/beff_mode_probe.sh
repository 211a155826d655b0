#!/usr/bin/env bash
# One call on a lent host (the run tool): what decides b_eff's two modes at 256 KiB-1 MiB (an exchange of 1 MiB
# took 550-610 us in some launches and 850-935 us in others on 16-core hosts, bound ranks, blind 18-26).
# VARIANTS (default "default hugetlb") names the ways of launching compared, taking turns, ROUNDS launches
# each, at RANKS ranks (default: the host's cores, then 8), bound to cores:
#   default     as bench/heldout_campaign.sh launches b_eff
#   hugetlb     glibc.malloc.hugetlb=1: huge pages for every allocation (fpgacomm's host buffers come from
#               aligned_alloc, 4 KiB pages unless transparent huge pages reach them)
#   cma         Open MPI's shared memory with its single copy by cross-memory attach (the lent hosts' Open MPI
#               chose none: every message copied into shared fragments and out)
#   tmp-backing Open MPI's shared-memory segment in /tmp rather than /dev/shm
#   big-frags   shared-memory fragments of 128 KiB rather than 32 KiB (btl_vader_max_send_size)
# Each launch's Result as beff-RANKS-VARIANT-I.json in $OUT/beff.tar.gz, the times in $OUT/summary.txt with
# the steal time the hypervisor took from the host's CPUs during the launch (from /proc/stat), the kernel's
# and Open MPI's settings in $OUT/settings.txt.
#   bench/beff_mode_probe.sh [ROUNDS]
set -u
rounds=${1:-6}
source bench/lent_build.sh
{
  grep -H . /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
    /sys/kernel/mm/transparent_hugepage/shmem_enabled /proc/sys/kernel/yama/ptrace_scope
  ldd --version | head -1
  ompi_info --param btl vader --level 9 | grep -E "single_copy|backing|max_send_size|eager_limit"
} > "$out/settings.txt" 2>&1
options() {
  case $1 in
    default) ;;
    hugetlb) echo -x GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ;;
    cma) echo --mca btl_vader_single_copy_mechanism cma ;;
    tmp-backing) echo --mca btl_vader_backing_directory /tmp ;;
    big-frags) echo --mca btl_vader_max_send_size 131072 ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
}
steal() { awk '/^cpu /{print $9}' /proc/stat; }  # in USER_HZ ticks, all CPUs together
work=$(mktemp -d)
for ranks in ${RANKS:-$(nproc) 8}; do
  for i in $(seq 1 "$rounds"); do
    for variant in ${VARIANTS:-default hugetlb}; do
      name=beff-$ranks-$variant-$i
      before=$(steal)
      # shellcheck disable=SC2046: the variant's options are words
      mpirun --bind-to core -np "$ranks" $(options "$variant") "$FPGACOMM" beff -m 20 -n 2 \
        --loop-rule adaptive --target-time 0.02 --json "$work/$name.json" > "$work/$name.txt" 2>&1
      echo "$(( $(steal) - before ))" > "$work/$name.steal"
    done
  done
done
tar czf "$out/beff.tar.gz" -C "$work" .
"$FPGACOMM_PYTHON" - "$work" <<'PYTHON' | tee "$out/summary.txt"
import glob, os, sys
import fpgacomm
for path in sorted(glob.glob(f"{sys.argv[1]}/beff-*.txt")):
    stem = path[:-4]
    steal = open(f"{stem}.steal").read().strip()
    if not os.path.exists(f"{stem}.json"):
        print(os.path.basename(stem), "failed:", open(path).read().strip().splitlines()[-1:])
        continue
    rows = fpgacomm.load(f"{stem}.json").rows
    print(os.path.basename(stem), f"steal {steal} ticks", " ".join(
        f"{r['size'] >> 10}K:{r['time'] / r['loop_length'] * 1e6:.0f}us" for r in rows if r["size"] >= 65536))
PYTHON
