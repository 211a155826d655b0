"""Point-to-point speed benchmark: fpgacomm's host route against OSU
Micro-Benchmarks 7.4 itself, its device routes against the serial staging
bound and the host route, and its memory, measured in one invocation.

    python bench/pt2pt.py [--rounds 5] [--out bench/results/pt2pt-HOST.json]

The host-route yardstick is OMB 7.4's osu_latency and osu_bw, built and run
by bench/omb_side.py's functions (see its --help for --omb-tarball and
--omb-build): each round starts two ranks that measure fpgacomm, then runs
OMB with the same sizes, iterations and window, one mpirun per figure. Then
the peak memory of sweeps up to 1 GiB messages is measured in fresh ranks.
Each figure is the best of --rounds rounds, because a 2-core machine is
noisy; the ratios are what bench/RESULTS.md records.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import omb_side  # noqa: E402
from harness import ENV, write_part  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
WINDOW = 64
OMB_TIMEOUT = 300.0

# (name, kind pair, path, benchmark) sweeps whose peak memory is measured.
MEMORY_CASES = [
    ("bw H H", ("H", "H"), "auto", "bw"),
    ("bw D D staged", ("D", "D"), "staged", "bw"),
    ("bw D D mapped", ("D", "D"), "mapped", "bw"),
    ("latency D D staged", ("D", "D"), "staged", "latency"),
]
MEMORY_SIZES = "256M:1G"
# (test, size, timed iterations, warm-up) of the host-route figures, the
# same in fpgacomm and in OMB; "chunk" is the pipelining chunk, known once
# the ranks have opened their device.
HOST_LATENCY = ("latency", 8, 20000, 1000)
HOST_BW = ("bw", 4 * MiB, 10, 2)
HOST_BW_CHUNK = ("bw", "chunk", 20, 2)


def measure_ranks(platform_name: str) -> dict:
    """Runs inside both ranks: one round of fpgacomm's figures, on rank 0."""
    from fpgacomm import _core, mpi, osu
    from fpgacomm.runtime.devices import DeviceOptions, open_device

    comm = mpi.world()
    # The host route first, before a device (and a CPU device's worker
    # threads) exists in the process, as in OMB's processes.
    _, size, iterations, warmup = HOST_LATENCY
    figures = {
        "latency_8B_fpgacomm": osu.latency(comm, sizes=[size], iterations=iterations, warmup=warmup).rows[0][
            "latency_avg"
        ]
    }
    _, size, iterations, warmup = HOST_BW
    figures["bw_4MiB_fpgacomm_HH"] = osu.bw(
        comm, sizes=[size], window=WINDOW, iterations=iterations, warmup=warmup
    ).rows[0]["bandwidth"]
    options = DeviceOptions(platform=platform_name)
    device = open_device(comm, options)
    chunk = _core.default_chunk_bytes(device)
    figures["chunk_bytes"] = chunk

    def bandwidth(size, mem, path="auto", window=WINDOW, iterations=10, chunk_bytes=chunk):
        result = osu.bw(
            comm,
            sizes=[size],
            mem=mem,
            path=path,
            window=window,
            iterations=iterations,
            warmup=2,
            chunk_bytes=chunk_bytes,
            device=options,
        )
        return result.rows[0]["bandwidth"]

    def copy_bandwidth(direction, size, rank):
        seconds = _core.copy_time(device, direction, "H!", size, chunk, 3) if comm.Get_rank() == rank else 0.0
        comm.Barrier()
        return size / comm.bcast(seconds, root=rank)

    figures["bw_4MiB_fpgacomm_DD_mapped"] = bandwidth(4 * MiB, ("D", "D"), "mapped")
    for size, window in ((4 * MiB, 64), (16 * MiB, 16), (64 * MiB, 8)):
        tag = f"{size // MiB}MiB"
        figures[f"bw_{tag}_fpgacomm_DD_staged"] = bandwidth(size, ("D", "D"), "staged", window, 5)
        # The serial staging bound, each part at the same chunk size:
        # device-to-host on the sender, MPI of chunk-sized messages, host-to-device on the receiver.
        figures[f"d2h_{tag}"] = copy_bandwidth("d2h", size, 0)
        figures[f"h2d_{tag}"] = copy_bandwidth("h2d", size, 1)
    for sweep_chunk in (64 * 1024, 256 * 1024, MiB, 2 * MiB, 4 * MiB, 8 * MiB):
        figures[f"chunk_{sweep_chunk}_bw_16MiB_DD_staged"] = bandwidth(
            16 * MiB, ("D", "D"), "staged", 16, 5, chunk_bytes=sweep_chunk
        )
    return figures


def measure_omb(programs: dict, chunk: int) -> dict:
    """One round of OMB's host-route figures, one mpirun each."""
    figures = {}
    for name, (test, size, iterations, warmup) in (
        ("latency_8B_omb", HOST_LATENCY),
        ("bw_4MiB_omb", HOST_BW),
        ("hh_chunk_omb", HOST_BW_CHUNK),
    ):
        size = chunk if size == "chunk" else size
        flags = ["-m", f"{size}:{size}", "-i", str(iterations), "-x", str(warmup)]
        flags += ["-W", str(WINDOW)] if test == "bw" else []
        rows = omb_side.run_omb(programs[test], flags, 2, [], OMB_TIMEOUT).rows
        figures[name] = rows[-1]["latency_avg" if test == "latency" else "bandwidth"]
    return figures


def keep_best(best: dict, figures: dict) -> None:
    """Each figure's best so far: the least latency, the most bandwidth."""
    for name, value in figures.items():
        old = best.get(name)
        lower = name.startswith("latency")
        best[name] = value if old is None else (min(old, value) if lower else max(old, value))


def measure_memory(case: str, platform_name: str) -> dict:
    """Runs inside both ranks: one sweep up to 1 GiB, then each rank's peak RSS."""
    from fpgacomm import mpi, osu
    from fpgacomm.runtime.devices import DeviceOptions

    name, mem, path, test = next(c for c in MEMORY_CASES if c[0] == case)
    comm = mpi.world()
    osu.run(
        test,
        comm,
        sizes=MEMORY_SIZES,
        mem=mem,
        path=path,
        iterations=1,
        warmup=1,
        device=DeviceOptions(platform=platform_name),
        **({"window": 2} if test != "latency" else {}),
    )
    peaks = comm.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, root=0)
    return {"case": name, "largest_message": GiB, "peak_rss_per_rank": peaks}


def launch(platform_name: str, *arguments: str) -> dict:
    output = ROOT / "build" / "bench" / "part.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    command = omb_side.mpirun_command(2, []) + [
        sys.executable,
        __file__,
        "--platform",
        platform_name,
        "--part",
        *arguments,
        "--part-output",
        str(output),
    ]
    subprocess.run(command, check=True, env=ENV, timeout=1800)
    return json.loads(output.read_text())


def ratios(m: dict) -> list[tuple[str, float, str, bool]]:
    """(what, ratio, target, met) for every point-to-point speed target (bench/RESULTS.md)."""
    rows = [
        (
            "osu latency H H 8 B / OMB 7.4",
            m["latency_8B_fpgacomm"] / m["latency_8B_omb"],
            "<= 1.10",
            m["latency_8B_fpgacomm"] / m["latency_8B_omb"] <= 1.10,
        ),
        (
            "osu bw H H 4 MiB / OMB 7.4",
            m["bw_4MiB_fpgacomm_HH"] / m["bw_4MiB_omb"],
            ">= 0.95",
            m["bw_4MiB_fpgacomm_HH"] / m["bw_4MiB_omb"] >= 0.95,
        ),
    ]
    for tag in ("4MiB", "16MiB", "64MiB"):
        bound = 1.0 / (1.0 / m[f"d2h_{tag}"] + 1.0 / m["hh_chunk_omb"] + 1.0 / m[f"h2d_{tag}"])
        ratio = m[f"bw_{tag}_fpgacomm_DD_staged"] / bound
        rows.append((f"osu bw D D staged {tag} / serial staging bound", ratio, ">= 1.2", ratio >= 1.2))
    mapped = m["bw_4MiB_fpgacomm_DD_mapped"] / m["bw_4MiB_fpgacomm_HH"]
    rows.append(("osu bw D D mapped 4 MiB / osu bw H H", mapped, ">= 0.9", mapped >= 0.9))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--platform", default="", help="OpenCL platform (index or name substring)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / f"pt2pt-{platform.node()}.json"))
    omb_side.add_omb_options(parser)
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--part-output", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.part:  # inside mpirun
        figures = (
            measure_ranks(args.platform) if args.part[0] == "ranks" else measure_memory(args.part[1], args.platform)
        )
        write_part(args.part_output, figures)
        return 0

    try:
        programs = omb_side.omb_from_options(args, ("latency", "bw"))
    except omb_side.UsageError as error:
        print(f"pt2pt: error: {error}", file=sys.stderr)
        return omb_side.EXIT_USAGE
    figures: dict[str, float] = {}
    for _ in range(args.rounds):
        keep_best(figures, launch(args.platform, "ranks"))
        keep_best(figures, measure_omb(programs, int(figures["chunk_bytes"])))
    memory = [launch(args.platform, "memory", case[0]) for case in MEMORY_CASES]
    table = ratios(figures)
    for case in memory:
        worst = max(case["peak_rss_per_rank"]) / case["largest_message"]
        table.append(
            (f"peak memory per rank / largest message, {case['case']} sweep {MEMORY_SIZES}", worst, "< 3", worst < 3)
        )
    print(f"{'what':<72}{'ratio':>8}  target")
    for what, ratio, target, met in table:
        print(f"{what:<72}{ratio:8.3f}  {target}{'' if met else '   MISSED'}")
    print("\nfigures (s, B/s):")
    for name, value in sorted(figures.items()):
        print(f"  {name:<40} {value:.6g}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "host": platform.node(),
                "platform": args.platform,
                "figures": figures,
                "memory": memory,
                "ratios": [dict(what=w, ratio=r, target=t, met=m) for w, r, t, m in table],
            },
            indent=1,
        )
    )
    return 0 if all(met for *_, met in table) else 1


if __name__ == "__main__":
    sys.exit(main())
