"""Fidelity of the simulated gathers: gather.py's schedules on the
fabric presets at 4, 9 and 16 nodes over Table 6's sizes, against the model
with each schedule's own stages and eq. 7 as printed; the DCN/VCSN ratio;
Table 6's layout for eq. 7 against the simulated tree; and one large run
(default 1024 nodes on the 36-port fat tree) with its wall time. With
--fig20, only Fig. 20 of the VCSN paper by simulation (gather_sim.fig20):
DCN / VCSN at the given cluster and data sizes beside the paper's estimate.

    .venv/bin/python bench/gather_sim.py [--large 1024] [--large-sizes 64K,1M]
    .venv/bin/python bench/gather_sim.py --fig20 16,64,256,1024,4096,11664 --fig20-sizes 64K,256M
"""

from __future__ import annotations

import argparse
import time

from fpgacomm import gather_sim
from fpgacomm.models import vcsn
from fpgacomm.results.report import human_bytes

PAIRS = (("ring", "dcn_ring"), ("tree", "vcsn"), ("vlink", "vcsn"))
NODES = (4, 9, 16)
MiB = 1 << 20


def sizes_argument(text: str) -> list:
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return [int(item[:-1]) * scale[item[-1]] if item[-1] in scale else int(item) for item in text.split(",")]


def fidelity(results: dict) -> None:
    for (schedule, preset), result in results.items():
        print(
            f"\n{schedule} on {preset}: simulated time, and its error against the model with the "
            f"schedule's own stages / eq. 7 as printed (or the DCN counterpart)\n"
        )
        print("| data per node | " + " | ".join(f"{n} nodes: time [ms] | model | printed" for n in NODES) + " |")
        print("|---|" + "---|---|---|" * len(NODES))
        by_point = {(row["nodes"], row["size"]): row for row in result.rows}
        for size in sorted({row["size"] for row in result.rows}, reverse=True):
            cells = []
            for n in NODES:
                row = by_point[(n, size)]
                cells += [
                    f"{row['time'] * 1e3:.4f}",
                    f"{(row['time'] / row['model'] - 1) * 100:+.2f} %",
                    f"{(row['time'] / row['model_printed'] - 1) * 100:+.2f} %",
                ]
            print(f"| {human_bytes(size)} | " + " | ".join(cells) + " |")
        large = [abs(r["time"] / r["model"] - 1) for r in result.rows if r["size"] >= MiB]
        every = [abs(r["time"] / r["model"] - 1) for r in result.rows]
        print(
            f"\nlargest |error| against the model of its own stages: {max(large) * 100:.3f} % (>= 1 MiB), "
            f"{max(every) * 100:.3f} % (all sizes)"
        )


def ratio(results: dict) -> None:
    print("\nDCN ring / VCSN tree, simulated gather time\n")
    print("| data per node | " + " | ".join(f"{n} nodes" for n in NODES) + " |")
    print("|---|" + "---|" * len(NODES))
    dcn = {(r["nodes"], r["size"]): r["time"] for r in results[("ring", "dcn_ring")].rows}
    tree = {(r["nodes"], r["size"]): r["time"] for r in results[("tree", "vcsn")].rows}
    for size in sorted({size for _, size in dcn}, reverse=True):
        print(f"| {human_bytes(size)} | " + " | ".join(f"{dcn[(n, size)] / tree[(n, size)]:.3f}" for n in NODES) + " |")


def table6(result) -> None:
    print(
        "\nTable 6's layout: |eq. 7 - simulated tree| / simulated (eq. 7's own stages; original = eq. 6 "
        "as printed, corrected = with section 6.3's correction)\n"
    )
    table = vcsn.VcsnGather.from_paper().compare(result, stages="model")
    print("| data per node | " + " | ".join(c.replace("_", " ") for c in table.columns[1:]) + " |")
    print("|---|" + "---|" * (len(table.columns) - 1))
    for row in table.rows:
        cells = " | ".join(f"{row[c] * 100:.2f} %" for c in table.columns[1:])
        print(f"| {human_bytes(row['size'])} | {cells} |")


def large_run(nodes: int, sizes: list) -> None:
    print(f"\ntree on vcsn_fat_tree, {nodes} nodes\n")
    print(
        "| data per node | levels | stages | simulated [s] | model [s] | error | eq. 7 printed [s] | events "
        "| wall [s] |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        start = time.perf_counter()
        row = gather_sim.run("tree", "vcsn_fat_tree", nodes=[nodes], sizes=[size]).rows[0]
        wall = time.perf_counter() - start
        print(
            f"| {human_bytes(size)} | {row['levels']} | {row['stages']} | {row['time']:.6e} | {row['model']:.6e} | "
            f"{(row['time'] / row['model'] - 1) * 100:+.3f} % | {row['model_printed']:.6e} | {row['events']} | "
            f"{wall:.1f} |",
            flush=True,
        )


def fig20(nodes: list, sizes: list) -> None:
    print(
        "Fig. 20 by simulation: ring on dcn_ring (DCN), tree on vcsn_fat_tree (VCSN, 36-port switches), beside "
        "the paper's estimate (eq. 7 and its DCN counterpart)\n"
    )
    print(
        "| nodes | data per node | levels | DCN [s] | VCSN [s] | DCN / VCSN | model DCN / VCSN | events (full) | "
        "events simulated | wall [s] |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in nodes:
        for size in sizes:
            start = time.perf_counter()
            row = gather_sim.fig20([n], [size]).rows[0]
            wall = time.perf_counter() - start
            print(
                f"| {n} | {human_bytes(size)} | {row['levels']} | {row['dcn']:.6e} | {row['vcsn']:.6e} | "
                f"{row['ratio']:.3f} | {row['model_ratio']:.3f} | {row['events']:.3e} | "
                f"{row['events_simulated']:.3e} | {wall:.1f} |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=1024, help="node count of the large run (default 1024)")
    parser.add_argument(
        "--large-sizes",
        type=sizes_argument,
        default=[64 << 10, MiB],
        help="data per node of the large run (default 64K,1M)",
    )
    parser.add_argument(
        "--fig20",
        type=lambda text: [int(n) for n in text.split(",")],
        help="cluster sizes of Fig. 20 to simulate (only that)",
    )
    parser.add_argument("--fig20-sizes", type=sizes_argument, default=[64 << 10, 256 * MiB])
    args = parser.parse_args()
    if args.fig20:
        fig20(args.fig20, args.fig20_sizes)
        return
    start = time.perf_counter()
    results = {pair: gather_sim.run(*pair, nodes=NODES) for pair in PAIRS}
    print(f"4/9/16 nodes, Table 6's 13 sizes, 3 schedules: {time.perf_counter() - start:.1f} s wall")
    fidelity(results)
    ratio(results)
    table6(results[("tree", "vcsn")])
    large_run(args.large, args.large_sizes)


if __name__ == "__main__":
    main()
