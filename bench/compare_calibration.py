"""How well `fpgacomm compare` decides on this machine: its false positives
and the launches it needs, from measured launches.

    python bench/compare_calibration.py [--latency-launches 100] [--bw-launches 40] [--out DIR] [--json FILE]

Launches `fpgacomm osu latency -m 1:4M` and `fpgacomm osu bw -m 8:4M` (two
ranks, short sweeps) many times, taking turns, through compare --run's
launcher (results/launches.py), then, from those measured launches:

- False positives: 20 comparisons of the latency command with itself, each
  10 launches against 10 others drawn at random from the pool (no launch on
  both sides), compared at 1 B to 4 KiB as `fpgacomm compare` does (Holm over
  the 13 sizes): the share of size rows flagged (the aim: at most 5 %). The
  comparisons share launches, so their rows are not independent; the share
  is still the expected one.
- Rounds needed: for 8 B and 4 MiB latency and bandwidth, a shift of 3, 5
  and 10 % is injected (one side's resampled values multiplied by 1.03 ...),
  and for n = 3 .. 200 launches a side the share of 400 resampled comparisons
  whose test decides (p < 0.05 at that one size, and p < 0.05 / 23, what
  Holm needs of a lone difference among 23 sizes) is counted; the table
  gives the least n that decides 80 % of the time.

Writes the table (Markdown) to stdout and everything to --json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402

SHIFTS = (0.03, 0.05, 0.10)
COUNTS = (3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 60, 80, 100, 150, 200)
POWER = 0.8
SIZES_OF_A_SWEEP = 23
CASES = (
    ("latency", "latency_avg", 8),
    ("latency", "latency_avg", 4 << 20),
    ("bw", "bandwidth", 8),
    ("bw", "bandwidth", 4 << 20),
)


def launch(args) -> dict:
    """The launch folders of the two commands (A: latency, B: bandwidth)."""
    from fpgacomm.results import launches

    os.environ.update(ENV)
    python = sys.executable
    latency = f"mpirun -np 2 --bind-to core {python} -m fpgacomm osu latency -m 1:4M -i 200 -x 20"
    bandwidth = f"mpirun -np 2 --bind-to core {python} -m fpgacomm osu bw -m 8:4M -i 20 -x 2 -W 16"
    rounds = max(args.latency_launches, args.bw_launches)
    # Both commands take turns as long as both run; the rest of the latency launches follow.
    first = launches.run([latency, bandwidth], args.bw_launches, args.out / "turns", log=print)
    rest = (
        launches.run([latency, latency], (rounds - args.bw_launches + 1) // 2, args.out / "more", log=print)
        if args.latency_launches > args.bw_launches
        else []
    )
    return {"latency": [first[0], *rest], "bw": [first[1]]}


def values(folders: list, column: str) -> dict:
    """{size: [value per launch]} over every launch of the folders."""
    from fpgacomm.results.compare import read_with_rounds
    from fpgacomm.results.inputs import files_of

    pooled = {}
    for folder in folders:
        for path in files_of(str(folder)):
            result, _ = read_with_rounds(path)
            for row in result.rows:
                pooled.setdefault(row["size"], []).append(row[column])
    return {size: np.array(found) for size, found in pooled.items()}


def false_positives(latency: dict, rng) -> dict:
    from fpgacomm.results.compare_stats import holm, shift

    sizes = [size for size in sorted(latency) if size <= 4096]
    launches = len(latency[sizes[0]])
    flagged = rows = 0
    for _ in range(20):
        chosen = rng.choice(launches, 20, replace=False)
        a, b = chosen[:10], chosen[10:]
        p = holm([shift(latency[size][a], latency[size][b]).p for size in sizes])
        flagged += int(np.sum(p < 0.05))
        rows += len(sizes)
    return {
        "comparisons": 20,
        "launches_a_side": 10,
        "sizes": len(sizes),
        "rows": rows,
        "flagged": flagged,
        "share": flagged / rows,
    }


def rounds_needed(pool: np.ndarray, lower_is_better: bool, rng) -> dict:
    """For each shift, the least n a side deciding it in POWER of the
    resampled comparisons, at alpha 0.05 and 0.05 / 23."""
    from fpgacomm.results.compare_stats import shift

    found = {}
    for size_of_shift in SHIFTS:
        factor = 1 + size_of_shift if lower_is_better else 1 - size_of_shift  # a worse side
        needed = {"0.05": None, f"0.05/{SIZES_OF_A_SWEEP}": None}
        for n in COUNTS:
            p = np.array([shift(rng.choice(pool, n), rng.choice(pool, n) * factor).p for _ in range(400)])
            for key, alpha in (("0.05", 0.05), (f"0.05/{SIZES_OF_A_SWEEP}", 0.05 / SIZES_OF_A_SWEEP)):
                if needed[key] is None and np.mean(p < alpha) >= POWER:
                    needed[key] = n
            if all(needed.values()):
                break
        found[f"{size_of_shift:.0%}"] = needed
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-launches", type=int, default=100)
    parser.add_argument("--bw-launches", type=int, default=40)
    parser.add_argument("--out", type=Path, help="new folder for the launches (default: a temporary one)")
    parser.add_argument(
        "--from",
        dest="reuse",
        type=Path,
        metavar="DIR",
        help="measure nothing: resample the launches an earlier run kept in DIR",
    )
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "compare_calibration-vm.json")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.reuse:
        folders = {
            "latency": sorted(args.reuse.glob("*/A")) + sorted(args.reuse.glob("more/B")),
            "bw": sorted(args.reuse.glob("turns/B")),
        }
    else:
        args.out = args.out or Path(tempfile.mkdtemp(prefix="compare_calibration-"))
        folders = launch(args)
    rng = np.random.default_rng(args.seed)
    latency, bandwidth = values(folders["latency"], "latency_avg"), values(folders["bw"], "bandwidth")
    report = {
        "launches": {"latency": len(latency[8]), "bw": len(bandwidth[8])},
        "folders": {key: [str(f) for f in value] for key, value in folders.items()},
        "false_positives": false_positives(latency, rng),
        "rounds_needed": {},
        "spread": {},
    }
    for test, _, size in CASES:
        pool = (latency if test == "latency" else bandwidth)[size]
        name = f"{test} {size} B"
        report["spread"][name] = {
            "median": float(np.median(pool)),
            "iqr_over_median": float(np.subtract(*np.percentile(pool, [75, 25])) / np.median(pool)),
        }
        report["rounds_needed"][name] = rounds_needed(pool, test == "latency", rng)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1))
    fp = report["false_positives"]
    print(
        f"false positives: {fp['flagged']} of {fp['rows']} size rows ({fp['share']:.1%}) in {fp['comparisons']} "
        f"comparisons of {fp['launches_a_side']} launches a side"
    )
    print("| case | spread (IQR / median) | 3 % | 5 % | 10 % |\n|---|---|---|---|---|")
    for name, needed in report["rounds_needed"].items():
        cells = [" / ".join("-" if n is None else str(n) for n in needed[shift].values()) for shift in needed]
        print(f"| {name} | {report['spread'][name]['iqr_over_median']:.1%} | " + " | ".join(cells) + " |")
    print(
        f"(least launches a side deciding 80 % of the time: at alpha 0.05 / at 0.05/{SIZES_OF_A_SWEEP}; "
        f"'-': not within {COUNTS[-1]})\nwrote {args.json}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
