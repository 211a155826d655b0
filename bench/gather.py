"""Gather on real ranks: the runner's own control cost per stage,
and the 4/9/16-rank table of ring, tree and mpi with device buffers.

    python bench/gather.py [--stages 2000] [--nodes 4,9,16] [--sizes 64K,1M,4M]
                           [--out bench/results/gather-HOST.json]

Control cost: two ranks run a 2-node ring gather of zero-byte blocks (one
stage: posting, an empty message, the closing MPI_Barrier) --stages times,
then time as many bare MPI_Barriers, in the same gather.run call. The cost
is the median stage minus the median barrier, each the slowest rank's; the
target is at most 5 us. Then one mpirun per node count runs every schedule
at every size (device buffers, validation on) and the table is printed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV, write_part  # noqa: E402

TARGET_US = 5.0
SCHEDULES = ("ring", "tree", "mpi")


def control_cost(stages: int) -> dict:
    """Inside two ranks: the medians (s) of zero-byte stages and bare barriers."""
    from fpgacomm import gather

    result = gather.run(schedule="ring", mem="D", sizes=[0], iterations=stages, warmup=100, barrier_reference=stages)
    stage = statistics.median(result.samples["2/0/stage"])
    barrier = statistics.median(result.samples["barrier_reference"])
    return {
        "stages": len(result.samples["2/0/stage"]),
        "barriers": len(result.samples["barrier_reference"]),
        "median_stage": stage,
        "median_barrier": barrier,
        "control_cost": stage - barrier,
        "route": result.params["route"],
    }


def table(sizes: list[int], iterations: int) -> list[dict]:
    """Inside N ranks: every schedule at every size, rows as the Result has them."""
    from fpgacomm import gather

    rows = []
    for name in SCHEDULES:
        result = gather.run(schedule=name, mem="D", sizes=sizes, iterations=iterations, warmup=1)
        rows += [dict(row, route=result.params["route"]) for row in result.rows]
    return rows


def mpirun(ranks: int, *arguments: str, part: Path) -> object:
    subprocess.run(
        [
            "mpirun",
            "-np",
            str(ranks),
            "--oversubscribe",
            sys.executable,
            __file__,
            *arguments,
            "--part-output",
            str(part),
        ],
        check=True,
        env=ENV,
        timeout=3600,
    )
    return json.loads(part.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, default=2000, help="zero-byte stages and bare barriers (at least 1000)")
    parser.add_argument("--nodes", default="4,9,16", help="rank counts of the table ('' for none)")
    parser.add_argument("--sizes", default="64K,1M,4M", help="bytes per node of the table")
    parser.add_argument("--iterations", type=int, default=5, help="timed iterations per table point")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"gather-{platform.node()}.json"))
    parser.add_argument("--part", choices=("control", "table"), help=argparse.SUPPRESS)
    parser.add_argument("--part-output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from fpgacomm.params import parse_size

    sizes = [parse_size(text) for text in args.sizes.split(",")]
    if args.part == "control":
        write_part(args.part_output, control_cost(args.stages))
        return 0
    if args.part == "table":
        write_part(args.part_output, table(sizes, args.iterations))
        return 0
    if args.stages < 1000:
        parser.error("--stages must be at least 1000")

    part = ROOT / "build" / "bench" / "gather-part.json"
    part.parent.mkdir(parents=True, exist_ok=True)
    cost = mpirun(2, "--part", "control", "--stages", str(args.stages), part=part)
    met = cost["control_cost"] * 1e6 <= TARGET_US
    print(
        f"control cost per stage (2 ranks, {cost['stages']} zero-byte stages, {cost['barriers']} bare barriers, "
        f"route {cost['route']}):"
    )
    print(
        f"  median stage {cost['median_stage'] * 1e6:.2f} us - median barrier {cost['median_barrier'] * 1e6:.2f} us"
        f" = {cost['control_cost'] * 1e6:.2f} us  (target <= {TARGET_US} us){'' if met else '   MISSED'}"
    )
    rows = []
    for ranks in [int(n) for n in args.nodes.split(",") if n]:
        rows += mpirun(ranks, "--part", "table", "--sizes", args.sizes, "--iterations", str(args.iterations), part=part)
    if rows:
        print("\n| nodes | size | schedule | stages | time | throughput | set-up | transfer | barrier | validation |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for row in sorted(rows, key=lambda r: (r["nodes"], r["size"], SCHEDULES.index(r["schedule"]))):
            print(
                f"| {row['nodes']} | {row['size'] >> 10} KiB | {row['schedule']} | {row['stages']} | "
                f"{row['time'] * 1e3:.2f} ms | {row['throughput'] / 1e6:.0f} MB/s | {row['setup'] * 1e3:.3f} ms | "
                f"{row['transfer'] * 1e3:.2f} ms | {row['barrier'] * 1e3:.2f} ms | {row['validation']} |"
            )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {"host": platform.node(), "control": cost, "table": rows, "target_us": TARGET_US, "met": met}, indent=1
        )
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
