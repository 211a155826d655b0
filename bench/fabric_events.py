"""Speed of the fabric simulator (issue 4, Speed): a VCSN fat-tree gather of
1 MiB per node at 1024 and 4096 nodes (gather.py's vlink schedule: every
block straight to node 0, two per stage). Reports the event count, wall time,
peak memory and events per second against a bare binary-heap push-and-pop
loop of the same event size measured in the same run.

    .venv/bin/python bench/fabric_events.py [--nodes 1024 4096] [--size 1M]
"""

from __future__ import annotations

import argparse
import platform
import resource
import time

from fpgacomm import fabric, gather, gather_sim

HEAP_OPERATIONS = 20_000_000


def peak_memory_bytes() -> int:
    # ru_maxrss is in KiB on Linux: the process's peak so far.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def simulated_gather(nodes: int, size: int) -> dict:
    fab = fabric.vcsn_fat_tree(nodes)
    stages = gather_sim.fabric_stages(gather.schedule("vlink", nodes, size))
    start = time.perf_counter()
    result = fabric.run_schedule(fab, stages)
    wall = time.perf_counter() - start
    events = result.params["events"]
    return {"nodes": nodes, "levels": fabric._sim.describe(fab.spec)["levels"], "stages": len(stages),
            "simulated": result.rows[-1]["end"], "events": events, "wall": wall, "rate": events / wall,
            "peak_memory": peak_memory_bytes()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes per node (default 1 MiB)")
    args = parser.parse_args()
    heap_rate = fabric._sim.heap_baseline_rate(HEAP_OPERATIONS, 1024)
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print(f"bare heap push+pop: {heap_rate:.3e} operations/s ({HEAP_OPERATIONS} operations, 1024 pending)")
    print("| nodes | fat-tree levels | stages | simulated gather [s] | events | wall [s] | events/s "
          "| vs heap | peak memory [MiB] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for nodes in args.nodes:
        r = simulated_gather(nodes, args.size)
        print(f"| {nodes} | {r['levels']} | {r['stages']} | {r['simulated']:.6e} | {r['events']} | "
              f"{r['wall']:.2f} | {r['rate']:.3e} | {r['rate'] / heap_rate:.2f}x | "
              f"{r['peak_memory'] / 2**20:.0f} |", flush=True)


if __name__ == "__main__":
    main()
