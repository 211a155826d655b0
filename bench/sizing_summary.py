"""Medians and intervals of bench/gpu_sizing.sh's interleaved launches, and the targets of the staged engine's sizing.

    python bench/sizing_summary.py BEFORE_DIR AFTER_DIR

Each folder holds one Result JSON per launch, rNN-MEASURE.json (MEASURE:
latency_D_D, latency_H_D, latency_H_H, bw_D_D, bw_H_H). Per size it prints
each side's median over the launches and the ratio after / before of the
medians with a 95 % bootstrap interval over launches (NumPy; a rank-based
comparison of the stored folders can follow with a dedicated tool). Then the
after side's targets, each from the same rounds:

- no cliff: D-D latency never falls by more than 10 % from one size to the next;
- D-D latency up to 16 KiB at most 1.3 x (2 x H-D - H-H);
- D-D bandwidth at least 0.9 x H-H at 16 to 64 MiB (ratio per round, then its median).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

KiB, MiB = 1 << 10, 1 << 20
RNG = np.random.default_rng(30)


def load(folder: Path) -> dict:
    """{measure: {size: [headline per launch, in round order]}}."""
    table: dict = defaultdict(lambda: defaultdict(list))
    for path in sorted(folder.glob("r*-*.json")):
        measure = path.stem.split("-", 1)[1]
        try:
            result = json.loads(path.read_text())
        except ValueError:
            continue
        for row in result["rows"]:
            table[measure][row["size"]].append(row.get("latency_avg", row.get("bandwidth")))
    return table


def interval(before: list, after: list, draws: int = 2000) -> tuple[float, float, float]:
    """after / before of the medians, with a 95 % bootstrap interval over launches."""
    b, a = np.asarray(before, float), np.asarray(after, float)
    ratio = np.median(a) / np.median(b)
    boot = [np.median(RNG.choice(a, a.size)) / np.median(RNG.choice(b, b.size)) for _ in range(draws)]
    low, high = np.percentile(boot, [2.5, 97.5])
    return float(ratio), float(low), float(high)


def value(measure: str, x: float) -> str:
    return f"{x * 1e6:9.2f} us" if measure.startswith("latency") else f"{x / 1e9:8.2f} GB/s"


def size(n: int) -> str:
    for suffix, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def compare(before: dict, after: dict) -> None:
    for measure in sorted(set(before) | set(after)):
        print(f"\n{measure}: median before, median after, after/before [95 % interval], launches")
        for n in sorted(set(before.get(measure, {})) | set(after.get(measure, {}))):
            b, a = before.get(measure, {}).get(n, []), after.get(measure, {}).get(n, [])
            if not b or not a:
                print(
                    f"  {size(n):>5}  {'-' if not b else value(measure, np.median(b))}  "
                    f"{'-' if not a else value(measure, np.median(a))}"
                )
                continue
            ratio, low, high = interval(b, a)
            print(
                f"  {size(n):>5}  {value(measure, np.median(b))}  {value(measure, np.median(a))}  "
                f"{ratio:6.3f} [{low:.3f}, {high:.3f}]  {len(b)}/{len(a)}"
            )


def targets(side: str, table: dict) -> None:
    print(f"\ntargets, {side}:")
    dd = table.get("latency_D_D", {})
    if dd:
        sizes = sorted(dd)
        medians = [float(np.median(dd[n])) for n in sizes]
        falls = [(sizes[i + 1], 1 - medians[i + 1] / medians[i]) for i in range(len(sizes) - 1)]
        worst = max(falls, key=lambda f: f[1])
        print(
            f"  cliff: largest fall of D-D latency to the next size {worst[1]:.1%} (at {size(worst[0])}): "
            f"{'met' if worst[1] <= 0.10 else 'MISSED'} (at most 10 %)"
        )
    hd, hh = table.get("latency_H_D", {}), table.get("latency_H_H", {})
    if dd and hd and hh:
        worst_ratio, at = 0.0, 0
        for n in sorted(dd):
            if n > 16 * KiB or n not in hd or n not in hh:
                continue
            ideal = 2 * np.median(hd[n]) - np.median(hh[n])
            ratio = np.median(dd[n]) / ideal
            if ratio > worst_ratio:
                worst_ratio, at = ratio, n
        print(
            f"  D-D latency over 2 x H-D - H-H up to 16 KiB: at most {worst_ratio:.2f} (at {size(at)}): "
            f"{'met' if worst_ratio <= 1.3 else 'MISSED'} (at most 1.3)"
        )
    bd, bh = table.get("bw_D_D", {}), table.get("bw_H_H", {})
    for n in sorted(set(bd) & set(bh)):
        if n < 16 * MiB:
            continue
        rounds = min(len(bd[n]), len(bh[n]))
        ratios = np.asarray(bd[n][:rounds]) / np.asarray(bh[n][:rounds])
        print(
            f"  D-D / H-H bandwidth at {size(n)}: median {np.median(ratios):.3f} (rounds {ratios.min():.3f} to "
            f"{ratios.max():.3f}): {'met' if np.median(ratios) >= 0.9 else 'MISSED'} (at least 0.9)"
        )


def main(argv: list) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = load(Path(argv[0])), load(Path(argv[1]))
    compare(before, after)
    for side, table in (("before", before), ("after", after)):
        if table:
            targets(side, table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
