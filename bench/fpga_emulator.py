"""Intel's FPGA emulator beside PoCL: the same fpgacomm commands on both
OpenCL platforms of one machine, in alternating rounds, best of the rounds.

    OCL_ICD_VENDORS=... python bench/fpga_emulator.py [--rounds 2] [--out bench/results/fpga_emulator-HOST.json]

Both must be registered (scripts/setup.sh). The figures are emulation: the
emulator runs kernels and copies on the host's cores, and what it shows is
its own cost per command, not an FPGA's performance (bench/RESULTS.md).
beff --comm-type iec runs on the emulator only (PoCL has no Intel channels).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402

PLATFORMS = {"pocl": "cpu", "emulator": "fpga"}
# name: (ranks, fpgacomm arguments, figures taken from the Result)
RUNS = {
    "latency D D": (2, ["osu", "latency", "D", "D", "-m", "1:64K", "-i", "200", "-x", "20"], "latency"),
    "bw D D": (2, ["osu", "bw", "D", "D", "-m", "64K:16M", "-i", "10", "-x", "2", "-W", "16"], "bandwidth"),
    "beff pcie": (2, ["beff", "--comm-type", "pcie", "-m", "12", "-n", "3", "--target-time", "0.05"], "beff"),
    "beff kernel": (2, ["beff", "--comm-type", "kernel", "-m", "12", "-n", "3", "--target-time", "0.05"], "beff"),
    "beff iec 2 ranks": (2, ["beff", "--comm-type", "iec", "-m", "12", "-n", "3", "--target-time", "0.05"], "beff"),
    "beff iec 3 ranks": (3, ["beff", "--comm-type", "iec", "-m", "12", "-n", "3", "--target-time", "0.05"], "beff"),
    "gather ring D 3 ranks": (3, ["gather", "--mem", "D", "--schedule", "ring", "--sizes", "64K:1M"], "gather"),
}
LATENCY_SIZES, BANDWIDTH_SIZES, GATHER_SIZES = (1, 4096, 65536), (65536, 1 << 20, 1 << 24), (65536, 1 << 20)


def figures(kind: str, result: dict) -> dict:
    rows = result["rows"]
    if kind == "latency":
        return {
            f"latency {size} B (us)": row["latency_avg"] * 1e6
            for row in rows
            for size in LATENCY_SIZES
            if row["size"] == size
        }
    if kind == "bandwidth":
        return {
            f"bw {size} B (MB/s)": row["bandwidth"] / 1e6
            for row in rows
            for size in BANDWIDTH_SIZES
            if row["size"] == size
        }
    if kind == "beff":
        one = next(row for row in rows if row["size"] == 1)
        return {
            "b_eff (B/s)": result["params"]["b_eff"],
            "time per iteration at 1 B (us)": one["time"] / one["loop_length"] * 1e6,
        }
    return {f"gather {size} B (us)": row["time"] * 1e6 for row in rows for size in GATHER_SIZES if row["size"] == size}


def better(name: str, old: float | None, new: float) -> float:
    if old is None:
        return new
    return max(old, new) if name.startswith(("bw", "b_eff")) else min(old, new)


def run(rounds: int) -> dict:
    best: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(rounds):
            for name, (ranks, arguments, kind) in RUNS.items():
                for label, device_type in PLATFORMS.items():
                    if "iec" in name and label == "pocl":
                        continue
                    out = Path(folder) / "result.json"
                    command = [
                        "mpirun",
                        "-np",
                        str(ranks),
                        "--oversubscribe",
                        sys.executable,
                        "-m",
                        "fpgacomm",
                        *arguments,
                        "--device-type",
                        device_type,
                        "--json",
                        str(out),
                    ]
                    start = time.monotonic()
                    subprocess.run(command, check=True, env=ENV, capture_output=True, text=True)
                    wall = time.monotonic() - start
                    result = json.loads(out.read_text())
                    entry = best.setdefault(name, {}).setdefault(label, {"device": result["env"]["rank_devices"][0]})
                    for figure, value in {**figures(kind, result), "wall (s)": wall}.items():
                        entry[figure] = better(figure, entry.get(figure), value)
    return best


def table(best: dict) -> str:
    lines = ["| run | figure | PoCL | FPGA emulator (emulation) |", "|---|---|---|---|"]
    for name, per_platform in best.items():
        emulator = per_platform["emulator"]
        pocl = per_platform.get("pocl", {})
        for figure, value in emulator.items():
            if figure == "device":
                continue
            other = f"{pocl[figure]:.4g}" if figure in pocl else "-"
            lines.append(f"| {name} | {figure} | {other} | {value:.4g} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"fpga_emulator-{platform.node()}.json"))
    args = parser.parse_args()
    load = os.getloadavg()[0]
    best = run(args.rounds)
    Path(args.out).write_text(json.dumps({"rounds": args.rounds, "load_at_start": load, "runs": best}, indent=1))
    print(f"load average at start {load:.1f}, best of {args.rounds} alternating rounds; raw: {args.out}")
    print(table(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
