"""Speed of the fabric simulator at cluster scale, in one run:

1. the engine against a bare binary-heap loop (std::push_heap/pop_heap, as
   std::priority_queue) of events of the same size, at the workload's own
   mean queue depth: a tree gather of 256 x 1 MiB on vcsn_fat_tree simulated
   in full (no reuse), alternating engine and heap rounds; the ratio of the
   medians, and the median of each round's ratio;
2. tree gathers on vcsn_fat_tree, 1024 x 16 MiB and 4096 x 16 MiB, with exact
   reuse (schedule built, grouped and simulated: the whole gather_sim.simulate),
   with fast-forward and, alternating with it, stepping every frame
   (fast_forward=False): both times must be equal to the bit;
3. the 11664-node Fig. 20 points that the default limits admit, with fast-forward.

    .venv/bin/python bench/fabric_events.py [--rounds 5] [--skip-fig20]
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import time

from fpgacomm import fabric, fabric_resources, gather_sim, schedules

MiB = 1 << 20


def peak_memory_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def engine_round(stages, fab) -> tuple:
    start = time.perf_counter()
    result = fabric.run_schedule(fab, stages, reuse=False, details=False)
    wall = time.perf_counter() - start
    return result.params["events"] / wall, result.params["mean_depth"], result.params["events"]


def engine_against_heap(rounds: int) -> None:
    fab = fabric.vcsn_fat_tree(256)
    stages = gather_sim.fabric_stages(schedules.schedule("tree", 256, MiB))
    engine, heap, heap1024 = [], [], []
    for _ in range(rounds):
        rate, depth, events = engine_round(stages, fab)
        engine.append(rate)
        heap.append(fabric._sim.heap_baseline_rate(events, max(1, round(depth))))
        heap1024.append(fabric._sim.heap_baseline_rate(events, 1024))
    e, h, h1024 = statistics.median(engine), statistics.median(heap), statistics.median(heap1024)
    # The load of a shared machine drifts between rounds: each round's
    # engine is divided by the heap measured right after it, then the median.
    paired = statistics.median(a / b for a, b in zip(engine, heap))
    paired1024 = statistics.median(a / b for a, b in zip(engine, heap1024))
    print(f"engine: tree 256 x 1 MiB on vcsn_fat_tree in full, {events} events, mean queue depth {depth:.0f}")
    print("| engine [events/s] | heap at depth [ops/s] | engine / heap: medians, paired | heap at 1024 [ops/s] | "
          "engine / heap(1024): medians, paired |")
    print("|---|---|---|---|---|")
    print(f"| {e:.3e} | {h:.3e} | {e / h:.2f}x, {paired:.2f}x | {h1024:.3e} | {e / h1024:.2f}x, {paired1024:.2f}x |")
    print(f"(rounds: engine {', '.join(f'{r:.3e}' for r in engine)}; heap {', '.join(f'{r:.3e}' for r in heap)})\n",
          flush=True)


def gather_point(schedule: str, preset: str, nodes: int, size: int, fast_forward: bool = True) -> dict:
    estimate = gather_sim.estimate(schedule, preset, nodes, size, fast_forward=fast_forward)
    fabric_resources.check(estimate)
    start = time.perf_counter()
    fab = gather_sim._preset(preset, nodes, 2, 2)
    plan = schedules.schedule(schedule, nodes, size, broadcast=False)
    parts = gather_sim.simulate(plan, fab, fast_forward=fast_forward)
    wall = time.perf_counter() - start
    return {"schedule": schedule, "preset": preset, "nodes": nodes, "size": size, "stages": len(plan.stages),
            "time": parts["time"], "events": parts["events"], "simulated": parts["events_simulated"],
            "groups": parts["groups"], "distinct": parts["distinct_groups"], "jumps": parts["fast_forwards"],
            "wall": wall, "estimate": estimate.events, "memory": peak_memory_bytes(),
            "mode": "fast-forward" if fast_forward else "stepped"}


def print_points(points) -> None:
    print("| schedule | fabric | nodes | bytes per node | mode | stages | simulated gather [s] | events (full) | "
          "events simulated | estimated | groups | distinct | jumps | wall [s] | peak RSS [MiB] |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        print(f"| {p['schedule']} | {p['preset']} | {p['nodes']} | {p['size']} | {p['mode']} | {p['stages']} | "
              f"{p['time']:.6e} | {p['events']:.3e} | {p['simulated']:.3e} | {p['estimate']:.2e} | {p['groups']} | "
              f"{p['distinct']} | {p['jumps']} | {p['wall']:.2f} | {p['memory'] / 2**20:.0f} |", flush=True)


def targets_against_stepping(rounds: int) -> None:
    """The two 16 MiB targets, fast-forward and stepping alternating, `rounds`
    times each; the simulated times and event counts must agree exactly."""
    points, ratios = [], []
    for nodes in (1024, 4096):
        walls = {True: [], False: []}
        for _ in range(rounds):
            for fast_forward in (True, False):
                point = gather_point("tree", "vcsn_fat_tree", nodes, 16 * MiB, fast_forward)
                walls[fast_forward].append(point["wall"])
                points.append(point)
        forwarded = [p for p in points if p["nodes"] == nodes and p["mode"] == "fast-forward"]
        stepped = [p for p in points if p["nodes"] == nodes and p["mode"] == "stepped"]
        for a in forwarded + stepped:
            if (a["time"], a["events"]) != (stepped[0]["time"], stepped[0]["events"]):
                raise SystemExit(f"fast-forward differs from stepping at {nodes} nodes: {a} against {stepped[0]}")
        f, s = statistics.median(walls[True]), statistics.median(walls[False])
        ratios.append(f"{nodes} nodes: fast-forward {f:.2f} s, stepped {s:.2f} s (medians of {rounds}), "
                      f"{s / f:.1f}x; rounds {', '.join(f'{w:.2f}' for w in walls[True])} against "
                      f"{', '.join(f'{w:.2f}' for w in walls[False])}")
    print_points([next(p for p in points if p["nodes"] == nodes and p["mode"] == mode)
                  for nodes in (1024, 4096) for mode in ("fast-forward", "stepped")])
    print("\n".join(ratios) + "\n", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-fig20", action="store_true")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}\n")
    engine_against_heap(args.rounds)
    targets_against_stepping(args.rounds)
    if args.skip_fig20:
        return
    print()
    points = []
    for schedule, preset in (("ring", "dcn_ring"), ("tree", "vcsn_fat_tree")):
        for size in gather_sim.FIG20_SIZES:
            try:
                points.append(gather_point(schedule, preset, 11664, size))
            except fabric.UsageError as refused:
                print(f"refused: {refused}")
    print_points(points)


if __name__ == "__main__":
    main()
