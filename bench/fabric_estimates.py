"""The resource estimates (fpgacomm.fabric_resources) against measured runs.

Every simulated command is admitted or refused by its estimate of events and
memory, worked out before anything is built; a wrong estimate lets a run
take hours or all the memory. Each case here runs in a fresh process (its
peak RSS is its own): the events the simulation stepped against
`events_estimated`, and the memory it took (peak RSS less the RSS after
importing fpgacomm) against the memory estimate. Gathers of every schedule
and collective on their presets, latency, bandwidth, random traffic and the
b_eff ring, across sizes. It prints one table and the worst ratio either way
(target: within 2x).

    .venv/bin/python bench/fabric_estimates.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time

KiB, MiB = 1 << 10, 1 << 20

GATHERS = [
    # (schedule, preset, collective, nodes, size, reuse)
    *[("ring", "dcn_ring", "gather", n, d, True) for n in (16, 256, 4096) for d in (64 * KiB, 16 * MiB)],
    ("ring", "dcn_ring", "gather", 64, MiB, False),
    *[("tree", "vcsn", "gather", 16, d, True) for d in (64 * KiB, 16 * MiB)],
    *[("tree", "vcsn_fat_tree", "gather", n, d, True) for n in (64, 1024, 11664) for d in (64 * KiB, 16 * MiB)],
    ("tree", "vcsn_fat_tree", "gather", 64, MiB, False),
    ("ring", "dcn_ring", "gather", 11664, 256 * MiB, True),
    ("tree", "vcsn_fat_tree", "gather", 11664, 256 * MiB, True),
    ("tree", "vcsn_fat_tree", "gather", 100_000, 16 * MiB, True),
    ("tree", "vcsn_fat_tree", "scatter", 256, MiB, True),
    *[("vlink", "vcsn_fat_tree", "gather", n, d, True) for n in (64, 1024) for d in (64 * KiB, 16 * MiB)],
    *[("mpi", "host_path", "gather", n, d, True) for n in (16, 81) for d in (64 * KiB, MiB)],
    ("ring", "dcn_ring", "allgather", 64, MiB, True),
    ("tree", "vcsn_fat_tree", "allgather", 64, MiB, True),
    *[("mpi", "host_path", "allgather", n, MiB, True) for n in (16, 41)],
]
MEASURES = [
    # (measurement, preset, nodes, keyword arguments)
    ("latency", "dcn_ring", 1000, {"hops": 500, "size": [0, MiB]}),
    ("latency", "vcsn_fat_tree", 1024, {"hops": 6, "size": 64 * KiB, "iterations": 100}),
    ("bandwidth", "vcsn", 16, {"size": 64 * MiB}),
    ("bandwidth", "host_path", 8, {"size": 64 * MiB, "hops": 4}),
    ("bandwidth", "dcn_ring", 1_000_000, {"size": MiB}),
    ("traffic", "cuscomnet_torus", 900, {"rate": 1e5, "packets": 20}),
    ("traffic", "cuscomnet_torus", 10_000, {"rate": 1e5, "packets": 2}),
    ("traffic", "dcn_ring", 256, {"rate": 1e5, "packets": 20}),
    ("traffic", "vcsn_fat_tree", 4096, {"rate": 1e5, "packets": 5}),
    ("beff_ring", "beff_520n", 64, {"sizes": [1 << m for m in range(0, 21, 4)]}),
]
QUICK = {"gathers": 12, "measures": 6}


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        import os

        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def one_case(case: list) -> dict:
    """Runs one case in this process: its events and memory, measured and estimated."""
    from fpgacomm import fabric, fabric_resources, gather_sim

    kind, rest = case[0], case[1:]
    before = rss_bytes()
    start = time.perf_counter()
    if kind == "gather":
        schedule, preset, collective, nodes, size, reuse = rest
        estimate = gather_sim.estimate(schedule, preset, nodes, size, collective=collective, reuse=reuse)
        row = gather_sim.run(
            schedule,
            preset,
            [nodes],
            [size],
            collective=collective,
            reuse=reuse,
            limits=fabric_resources.Limits(events=1e12, memory=1e12, transfers=1e12),
        ).rows[0]
        events, estimated = row["events_simulated"], row["events_estimated"]
        label = f"{schedule} {collective} on {preset}, {nodes} x {size} B{'' if reuse else ', no reuse'}"
    else:
        measure, preset, nodes, options = rest
        result = getattr(fabric, measure)(preset, nodes=nodes, **options)
        events = sum(row["events"] for row in result.rows) if "events" in result.columns else result.params["events"]
        estimated = result.params["events_estimated"]
        estimate = fabric_resources.Estimate("", estimated, result.params["memory_estimated"], 0)
        label = f"{measure} on {preset}, {nodes} nodes, {options}"
    wall = time.perf_counter() - start
    return {
        "label": label,
        "events": events,
        "events_estimated": estimated,
        "memory": peak_bytes() - before,
        "memory_estimated": estimate.memory,
        "wall": wall,
    }


def ratio(measured: float, estimated: float) -> float:
    """How far apart, as a factor of 1 or more (estimate over or under)."""
    if measured <= 0 or estimated <= 0:
        return float("inf") if measured != estimated else 1.0
    return max(measured / estimated, estimated / measured)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few cases of each kind")
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a child process
    args = parser.parse_args()
    if args.case:
        print(json.dumps(one_case(json.loads(args.case))))
        return
    cases = [["gather", *g] for g in GATHERS] + [["measure", *m] for m in MEASURES]
    if args.quick:
        cases = cases[: QUICK["gathers"] : 3] + cases[len(GATHERS) : len(GATHERS) + QUICK["measures"]]
    print(f"# Estimates against measured runs ({platform.node()}, Python {platform.python_version()})\n")
    print("| case | events stepped | estimated | ratio | memory [MiB] | estimated | ratio | wall [s] |")
    print("|---|---|---|---|---|---|---|---|")
    worst_events = worst_memory = (1.0, "")
    for case in cases:
        child = subprocess.run([sys.executable, __file__, "--case", json.dumps(case)], capture_output=True, text=True)
        if child.returncode:
            raise SystemExit(f"{case} failed:\n{child.stderr}")
        r = json.loads(child.stdout.splitlines()[-1])
        events_ratio = ratio(r["events"], r["events_estimated"])
        memory_ratio = ratio(r["memory"], r["memory_estimated"])
        worst_events = max(worst_events, (events_ratio, r["label"]))
        worst_memory = max(worst_memory, (memory_ratio, r["label"]))
        print(
            f"| {r['label']} | {r['events']:.3g} | {r['events_estimated']:.3g} | {events_ratio:.2f} | "
            f"{r['memory'] / MiB:.1f} | {r['memory_estimated'] / MiB:.1f} | {memory_ratio:.2f} | {r['wall']:.2f} |",
            flush=True,
        )
    print(f"\nworst events ratio: {worst_events[0]:.2f} ({worst_events[1]})")
    print(f"worst memory ratio: {worst_memory[0]:.2f} ({worst_memory[1]})")


if __name__ == "__main__":
    main()
