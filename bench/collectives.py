"""Collective and one-sided speed benchmark: fpgacomm against a plain-C MPI
reference timing the same MPI call, in the same two ranks, in one invocation.

    python bench/collectives.py [--rounds 5] [--out bench/results/collectives-HOST.json]

The driver builds bench/reference/omb_reference.c with mpicc and starts two
ranks that load it beside fpgacomm, so both run at the MPI thread level
fpgacomm asked for. Host buffers, validation off. Each figure is the best of
--rounds alternating repetitions (a 2-core machine is noisy); the targets
are fpgacomm / reference <= 1.10 for allreduce, gather and bcast at 8 B and
1 MiB, and for put_latency likewise.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV, build_reference, write_part  # noqa: E402

REFERENCE_LIBRARY = ROOT / "build" / "bench" / "omb_reference.so"
MiB = 1 << 20
# The reference's operation codes.
OPS = {"allreduce": 0, "gather": 1, "bcast": 2}
SIZES = (8, MiB)
TARGET = 1.10


def iterations(size: int) -> tuple[int, int]:
    """(timed, warm-up): enough for a stable mean in a few seconds."""
    return (5000, 500) if size <= 8192 else (1000, 50)


def measure_ranks(rounds: int) -> dict:
    """Runs inside both ranks; returns the best mean latencies (s) on rank 0."""
    from fpgacomm import collectives, mpi, onesided

    comm = mpi.world()
    fint = comm.py2f()
    reference = ctypes.CDLL(str(REFERENCE_LIBRARY))
    reference.reference_collective.restype = ctypes.c_double
    reference.reference_collective.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_int,
                                               ctypes.c_int]
    reference.reference_put_latency.restype = ctypes.c_double
    reference.reference_put_latency.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    best: dict[str, float] = {}

    def keep(name, seconds):
        if seconds <= 0 and comm.Get_rank() == 0:
            raise RuntimeError(f"{name}: the measurement failed")
        best[name] = min(best.get(name, seconds), seconds)

    for _ in range(rounds):
        for size in SIZES:
            timed, warmup = iterations(size)
            for op, code in OPS.items():
                keep(f"{op}_{size}_reference", reference.reference_collective(fint, code, size, timed, warmup))
                result = collectives.run(op, comm, sizes=[size], iterations=timed, warmup=warmup)
                keep(f"{op}_{size}_fpgacomm", result.rows[0]["latency_avg"])
            keep(f"put_latency_{size}_reference", reference.reference_put_latency(fint, size, timed, warmup))
            result = onesided.put_latency(comm, sizes=[size], iterations=timed, warmup=warmup)
            keep(f"put_latency_{size}_fpgacomm", result.rows[0]["latency_avg"])
    return best


def ratios(figures: dict) -> list[tuple[str, float, bool]]:
    rows = []
    for test in (*OPS, "put_latency"):
        for size in SIZES:
            ratio = figures[f"{test}_{size}_fpgacomm"] / figures[f"{test}_{size}_reference"]
            rows.append((f"osu {test} H {size} B / C reference", ratio, ratio <= TARGET))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"collectives-{platform.node()}.json"))
    parser.add_argument("--part-output", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.part_output:  # inside mpirun
        write_part(args.part_output, measure_ranks(args.rounds))
        return 0

    build_reference("omb_reference")
    part = ROOT / "build" / "bench" / "collectives-part.json"
    subprocess.run(["mpirun", "-np", "2", sys.executable, __file__, "--rounds", str(args.rounds),
                    "--part-output", str(part)], check=True, env=ENV, timeout=1800)
    figures = json.loads(part.read_text())
    table = ratios(figures)
    print(f"{'what':<48}{'ratio':>8}  target")
    for what, ratio, met in table:
        print(f"{what:<48}{ratio:8.3f}  <= {TARGET}{'' if met else '   MISSED'}")
    print("\nfigures (s, best mean latency):")
    for name, value in sorted(figures.items()):
        print(f"  {name:<36} {value:.6g}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"host": platform.node(), "figures": figures,
                                          "ratios": [dict(what=w, ratio=r, target=f"<= {TARGET}", met=m)
                                                     for w, r, m in table]}, indent=1))
    return 0 if all(met for *_, met in table) else 1


if __name__ == "__main__":
    sys.exit(main())
