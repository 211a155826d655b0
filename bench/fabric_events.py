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
3. the 11664-node Fig. 20 points that the default limits admit, with fast-forward;
4. (--scale) the 100,000-node gathers (ring on dcn_ring, tree and vlink on
   vcsn_fat_tree, 64 KiB and 16 MiB), each in a fresh process for its peak
   RSS, and at 11664 nodes the groups carried from stage to stage against
   grouping every stage afresh (every figure must agree to the bit).

Wall and CPU time are both given: on a shared machine the CPU time of the
process is the steadier of the two.

    .venv/bin/python bench/fabric_events.py [--rounds 5] [--skip-fig20] [--scale]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
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
    print(
        "| engine [events/s] | heap at depth [ops/s] | engine / heap: medians, paired | heap at 1024 [ops/s] | "
        "engine / heap(1024): medians, paired |"
    )
    print("|---|---|---|---|---|")
    print(f"| {e:.3e} | {h:.3e} | {e / h:.2f}x, {paired:.2f}x | {h1024:.3e} | {e / h1024:.2f}x, {paired1024:.2f}x |")
    print(
        f"(rounds: engine {', '.join(f'{r:.3e}' for r in engine)}; heap {', '.join(f'{r:.3e}' for r in heap)})\n",
        flush=True,
    )


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def gather_point(schedule: str, preset: str, nodes: int, size: int, fast_forward: bool = True) -> dict:
    estimate = gather_sim.estimate(schedule, preset, nodes, size, fast_forward=fast_forward)
    fabric_resources.check(estimate)
    cpu = cpu_seconds()
    start = time.perf_counter()
    fab = gather_sim.sized(preset, nodes, 2, 2)
    plan = schedules.schedule(schedule, nodes, size, broadcast=False)
    parts = gather_sim.simulate(plan, fab, fast_forward=fast_forward)
    wall = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    return {
        "cpu": cpu,
        "levels": fab.describe()["levels"],
        "schedule": schedule,
        "preset": preset,
        "nodes": nodes,
        "size": size,
        "stages": len(plan.stages),
        "time": parts["time"],
        "events": parts["events"],
        "simulated": parts["events_simulated"],
        "groups": parts["groups"],
        "distinct": parts["distinct_groups"],
        "jumps": parts["fast_forwards"],
        "wall": wall,
        "estimate": estimate.events,
        "memory": peak_memory_bytes(),
        "mode": "fast-forward" if fast_forward else "stepped",
    }


def print_points(points) -> None:
    print(
        "| schedule | fabric | nodes | bytes per node | mode | stages | simulated gather [s] | events (full) | "
        "events simulated | estimated | groups | distinct | jumps | levels | wall [s] | CPU [s] | peak RSS [MiB] |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        print(
            f"| {p['schedule']} | {p['preset']} | {p['nodes']} | {p['size']} | {p['mode']} | {p['stages']} | "
            f"{p['time']:.6e} | {p['events']:.3e} | {p['simulated']:.3e} | {p['estimate']:.2e} | {p['groups']} | "
            f"{p['distinct']} | {p['jumps']} | {p['levels']} | {p['wall']:.2f} | {p['cpu']:.2f} | "
            f"{p['memory'] / 2**20:.0f} |",
            flush=True,
        )


SCALE = [
    (schedule, preset, 100_000, size)
    for schedule, preset in (("ring", "dcn_ring"), ("tree", "vcsn_fat_tree"), ("vlink", "vcsn_fat_tree"))
    for size in (64 << 10, 16 * MiB)
]


def scale() -> None:
    """The 100,000-node gathers, each in a fresh process (its own peak RSS),
    and the carried groups against grouping afresh at 11664 nodes."""
    points = []
    for point in SCALE:
        child = subprocess.run([sys.executable, __file__, "--point", json.dumps(point)], capture_output=True, text=True)
        if child.returncode:
            raise SystemExit(f"{point} failed:\n{child.stderr}")
        points.append(json.loads(child.stdout.splitlines()[-1]))
    print_points(points)
    for schedule, preset in (("ring", "dcn_ring"), ("tree", "vcsn_fat_tree")):
        fab = gather_sim.sized(preset, 11664, 2, 2)
        stages = gather_sim.fabric_stages(schedules.schedule(schedule, 11664, 64 << 10))
        walls = []
        results = []
        for details in (True, False):
            start = time.perf_counter()
            results.append(fabric.run_schedule(fab, stages, details=details))
            walls.append(time.perf_counter() - start)
        grouped, carried = results
        same = grouped.rows == carried.rows and all(
            grouped.params[key] == carried.params[key] for key in ("events", "events_simulated", "groups")
        )
        if not same:
            raise SystemExit(f"{schedule} at 11664 nodes: carried groups differ from grouping afresh")
        print(
            f"{schedule} on {preset}, 11664 x 64 KiB: every stage grouped afresh {walls[0]:.2f} s, groups carried "
            f"{walls[1]:.2f} s; {grouped.params['groups']} groups, every row equal to the bit",
            flush=True,
        )


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
        ratios.append(
            f"{nodes} nodes: fast-forward {f:.2f} s, stepped {s:.2f} s (medians of {rounds}), "
            f"{s / f:.1f}x; rounds {', '.join(f'{w:.2f}' for w in walls[True])} against "
            f"{', '.join(f'{w:.2f}' for w in walls[False])}"
        )
    print_points(
        [
            next(p for p in points if p["nodes"] == nodes and p["mode"] == mode)
            for nodes in (1024, 4096)
            for mode in ("fast-forward", "stepped")
        ]
    )
    print("\n".join(ratios) + "\n", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--skip-fig20", action="store_true")
    parser.add_argument("--scale", action="store_true", help="only the 100,000-node gathers and the carried groups")
    parser.add_argument("--point", help=argparse.SUPPRESS)  # one gather point, in a child process
    args = parser.parse_args()
    if args.point:
        print(json.dumps(gather_point(*json.loads(args.point))))
        return
    if args.scale:
        scale()
        return
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
