"""The speed target of `fpgacomm compare`: two Results of 1000 rounds at
23 sizes compared in under a second (reading both files included).

    python bench/compare_speed.py [--rounds 1000] [--repeat 5]

Writes the two files (rounds in the layout --rounds writes, values drawn
from a log-normal spread of 3 %, one side 1 % slower) into a temporary
folder and times fpgacomm.compare on them; prints the median and the
fastest of --repeat runs and whether the target is met (exit 1 if not).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_SECONDS = 1.0
SIZES = [1 << k for k in range(23)]


def write(path: Path, scale: float, rounds: int, rng) -> str:
    rows = []
    for size in SIZES:
        values = (1e-6 + size * 1e-10) * scale * rng.lognormal(0.0, 0.03, rounds)
        rows.append({"size": size, "latency_avg": float(np.median(values)), "rounds": {"latency_avg": values.tolist()}})
    path.write_text(
        json.dumps(
            {
                "schema": "fpgacomm.result/1",
                "benchmark": "osu_latency",
                "params": {"rounds": rounds},
                "env": {"round_loads": [0.0] * rounds},
                "units": {"size": "B", "latency_avg": "s"},
                "rows": rows,
                "samples": None,
            }
        )
    )
    return str(path)


def main(argv=None) -> int:
    import fpgacomm

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        a = write(Path(folder) / "a.json", 1.0, args.rounds, rng)
        b = write(Path(folder) / "b.json", 1.01, args.rounds, rng)
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            result = fpgacomm.compare([a, b])
            seconds.append(time.perf_counter() - started)
    verdicts = sorted({row["verdict"] for row in result.rows})
    median = statistics.median(seconds)
    print(
        f"compare of two {args.rounds}-round Results of {len(SIZES)} sizes: median {median:.3f} s, fastest "
        f"{min(seconds):.3f} s over {args.repeat} runs (target < {TARGET_SECONDS:g} s: "
        f"{'met' if median < TARGET_SECONDS else 'missed'}); verdicts {', '.join(verdicts)}"
    )
    return 0 if median < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
