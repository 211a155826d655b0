"""OMB-FPGA's two interfaces on Intel's FPGA emulator: the same OSU tests
with -d opencl and -d sycl, launched alternately (interleaved rounds), every
launch's Result kept, medians printed.

    python bench/sycl_opencl.py [--rounds 3] [--out bench/results/sycl_opencl-HOST.json]

Both need the emulator (scripts/setup.sh registers it and caches the SYCL
runtime). The figures are emulation: the emulator copies on the host's
cores, so they compare the two runtimes' cost per command, not FPGAs
(bench/RESULTS.md). The output keeps each launch's whole Result, so a tool
that compares Results can read it later.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV  # noqa: E402

# -d opencl takes the emulator with --device-type fpga; -d sycl takes it by default.
# The emulator reports host-unified memory, so OpenCL maps device buffers
# by default (--path auto) where SYCL stages them: "opencl staged" is the
# like-for-like route, on the point-to-point tests (collectives always stage).
INTERFACES = {
    "opencl": ["-d", "opencl", "--device-type", "fpga"],
    "opencl staged": ["-d", "opencl", "--device-type", "fpga", "--path", "staged"],
    "sycl": ["-d", "sycl"],
}
POINT_TO_POINT_ONLY = ("opencl staged",)
POINT_TO_POINT = ("latency", "bw", "bibw", "multi_lat", "mbw_mr")
# name: (ranks, fpgacomm osu arguments, column, sizes reported)
RUNS = {
    "latency D D": (2, ["latency", "D", "D", "-m", "1:64K", "-i", "100", "-x", "10"], "latency_avg", (1, 4096, 65536)),
    "bw D D": (
        2,
        ["bw", "D", "D", "-m", "64K:16M", "-i", "10", "-x", "2", "-W", "16"],
        "bandwidth",
        (65536, 1 << 20, 1 << 24),
    ),
    "allreduce D, 3 ranks": (3, ["allreduce", "-m", "4:1M", "-i", "20", "-x", "2"], "latency_avg", (4, 65536, 1 << 20)),
}


def run(rounds: int) -> list[dict]:
    """Every launch, in launch order: round, run, interface and the Result."""
    launches = []
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        for round_index in range(rounds):
            for name, (ranks, arguments, _, _) in RUNS.items():
                for interface, flags in INTERFACES.items():
                    if interface in POINT_TO_POINT_ONLY and arguments[0] not in POINT_TO_POINT:
                        continue
                    command = [
                        "mpirun",
                        "-np",
                        str(ranks),
                        "--oversubscribe",
                        sys.executable,
                        "-m",
                        "fpgacomm",
                        "osu",
                        *arguments,
                        *flags,
                        "--json",
                        str(out),
                    ]
                    subprocess.run(command, check=True, env=ENV, capture_output=True, text=True)
                    launches.append(
                        {
                            "round": round_index,
                            "run": name,
                            "interface": interface,
                            "command": " ".join(command[5:]),
                            "result": json.loads(out.read_text()),
                        }
                    )
    return launches


def medians(launches: list[dict]) -> dict:
    """run -> figure -> interface -> median over the rounds."""
    table: dict = {}
    for name, (_, _, column, sizes) in RUNS.items():
        for interface in INTERFACES:
            values: dict = {}
            for launch in launches:
                if launch["run"] == name and launch["interface"] == interface:
                    for row in launch["result"]["rows"]:
                        if row["size"] in sizes:
                            values.setdefault(row["size"], []).append(row[column])
            for size, samples in values.items():
                unit = "us" if column == "latency_avg" else "MB/s"
                value = statistics.median(samples) * (1e6 if unit == "us" else 1e-6)
                table.setdefault(name, {}).setdefault(f"{size} B ({unit})", {})[interface] = value
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"sycl_opencl-{platform.node()}.json"))
    args = parser.parse_args()
    load = os.getloadavg()[0]
    launches = run(args.rounds)
    table = medians(launches)
    Path(args.out).write_text(
        json.dumps(
            {"rounds": args.rounds, "load_at_start": load, "medians": table, "launches": launches},
            separators=(",", ":"),
        )
        + "\n"
    )
    print(f"load average at start {load:.1f}, medians of {args.rounds} interleaved rounds; raw: {args.out}")
    print("| run | figure | " + " | ".join(f"-d {name} (emulation)" for name in INTERFACES) + " |")
    print("|---|---|" + "---|" * len(INTERFACES))
    for name, figures in table.items():
        for figure, per in figures.items():
            cells = [f"{per[interface]:.4g}" if interface in per else "-" for interface in INTERFACES]
            print(f"| {name} | {figure} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
