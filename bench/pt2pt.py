"""Point-to-point speed benchmark: fpgacomm against a plain-C MPI reference
and against the serial staging bound, measured in one invocation.

    python bench/pt2pt.py [--rounds 5] [--out bench/results/pt2pt-HOST.json]

The driver builds bench/reference/omb_reference.c with mpicc, starts two
ranks that load it beside fpgacomm (same MPI, same thread level), and then
measures the peak memory of sweeps up to 1 GiB messages in fresh ranks.
Each figure is the best of --rounds alternating repetitions, because a
2-core machine is noisy; the ratios are what bench/RESULTS.md records.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import ENV, build_reference, write_part  # noqa: E402

REFERENCE_LIBRARY = ROOT / "build" / "bench" / "omb_reference.so"
MiB = 1 << 20
GiB = 1 << 30

# (name, kind pair, path, benchmark) sweeps whose peak memory is measured.
MEMORY_CASES = [("bw H H", ("H", "H"), "auto", "bw"), ("bw D D staged", ("D", "D"), "staged", "bw"),
                ("bw D D mapped", ("D", "D"), "mapped", "bw"), ("latency D D staged", ("D", "D"), "staged", "latency")]
MEMORY_SIZES = "256M:1G"


def load_reference():
    library = ctypes.CDLL(str(REFERENCE_LIBRARY))
    library.reference_latency.restype = ctypes.c_double
    library.reference_latency.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    library.reference_bandwidth.restype = ctypes.c_double
    library.reference_bandwidth.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return library


def measure_ranks(rounds: int, platform_name: str) -> dict:
    """Runs inside both ranks; returns the figures on rank 0."""
    from fpgacomm import _core, mpi, osu
    from fpgacomm.devices import DeviceOptions, open_device

    comm = mpi.world()
    fint = comm.py2f()
    reference = load_reference()
    options = DeviceOptions(platform=platform_name)
    device = open_device(comm, options)
    chunk = _core.default_chunk_bytes(device)
    best: dict[str, float] = {}

    def keep(name, value, larger_is_better):
        old = best.get(name)
        best[name] = value if old is None else (max(old, value) if larger_is_better else min(old, value))

    def bandwidth(size, mem, path="auto", window=64, iterations=10, chunk_bytes=chunk):
        result = osu.bw(comm, sizes=[size], mem=mem, path=path, window=window, iterations=iterations, warmup=2,
                        chunk_bytes=chunk_bytes, device=options)
        return result.rows[0]["bandwidth"]

    def copy_bandwidth(direction, size, rank):
        seconds = _core.copy_time(device, direction, "H!", size, chunk, 3) if comm.Get_rank() == rank else 0.0
        comm.Barrier()
        return size / comm.bcast(seconds, root=rank)

    for _ in range(rounds):
        keep("latency_8B_reference", reference.reference_latency(fint, 8, 20000, 1000), False)
        keep("latency_8B_fpgacomm", osu.latency(comm, sizes=[8], iterations=20000, warmup=1000).rows[0]["latency_avg"], False)
        keep("bw_4MiB_reference", reference.reference_bandwidth(fint, 4 * MiB, 64, 10, 2), True)
        keep("bw_4MiB_fpgacomm_HH", bandwidth(4 * MiB, ("H", "H")), True)
        keep("bw_4MiB_fpgacomm_DD_mapped", bandwidth(4 * MiB, ("D", "D"), "mapped"), True)
        for size, window in ((4 * MiB, 64), (16 * MiB, 16), (64 * MiB, 8)):
            tag = f"{size // MiB}MiB"
            keep(f"bw_{tag}_fpgacomm_DD_staged", bandwidth(size, ("D", "D"), "staged", window, 5), True)
            # The serial staging bound, each part at the same chunk size:
            # device-to-host on the sender, MPI of chunk-sized messages, host-to-device on the receiver.
            keep(f"d2h_{tag}", copy_bandwidth("d2h", size, 0), True)
            keep(f"h2d_{tag}", copy_bandwidth("h2d", size, 1), True)
        keep("hh_chunk_reference", reference.reference_bandwidth(fint, chunk, 64, 20, 2), True)
        for sweep_chunk in (64 * 1024, 256 * 1024, MiB, 2 * MiB, 4 * MiB, 8 * MiB):
            keep(f"chunk_{sweep_chunk}_bw_16MiB_DD_staged",
                 bandwidth(16 * MiB, ("D", "D"), "staged", 16, 5, chunk_bytes=sweep_chunk), True)
    best["chunk_bytes"] = chunk
    return best


def measure_memory(case: str, platform_name: str) -> dict:
    """Runs inside both ranks: one sweep up to 1 GiB, then each rank's peak RSS."""
    from fpgacomm import mpi, osu
    from fpgacomm.devices import DeviceOptions

    name, mem, path, test = next(c for c in MEMORY_CASES if c[0] == case)
    comm = mpi.world()
    osu.run(test, comm, sizes=MEMORY_SIZES, mem=mem, path=path, iterations=1, warmup=1,
            device=DeviceOptions(platform=platform_name), **({"window": 2} if test != "latency" else {}))
    peaks = comm.gather(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, root=0)
    return {"case": name, "largest_message": GiB, "peak_rss_per_rank": peaks}


def launch(platform_name: str, *arguments: str) -> dict:
    output = ROOT / "build" / "bench" / "part.json"
    command = ["mpirun", "-np", "2", sys.executable, __file__, "--platform", platform_name, "--part", *arguments,
               "--part-output", str(output)]
    subprocess.run(command, check=True, env=ENV, timeout=1800)
    return json.loads(output.read_text())


def ratios(m: dict) -> list[tuple[str, float, str, bool]]:
    """(what, ratio, target, met) for every speed target of issue 2."""
    rows = [("osu latency H H 8 B / C reference", m["latency_8B_fpgacomm"] / m["latency_8B_reference"], "<= 1.10",
             m["latency_8B_fpgacomm"] / m["latency_8B_reference"] <= 1.10),
            ("osu bw H H 4 MiB / C reference", m["bw_4MiB_fpgacomm_HH"] / m["bw_4MiB_reference"], ">= 0.95",
             m["bw_4MiB_fpgacomm_HH"] / m["bw_4MiB_reference"] >= 0.95)]
    for tag in ("4MiB", "16MiB", "64MiB"):
        bound = 1.0 / (1.0 / m[f"d2h_{tag}"] + 1.0 / m["hh_chunk_reference"] + 1.0 / m[f"h2d_{tag}"])
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
    parser.add_argument("--part", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--part-output", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.part:  # inside mpirun
        figures = (measure_ranks(int(args.part[1]), args.platform) if args.part[0] == "ranks"
                   else measure_memory(args.part[1], args.platform))
        write_part(args.part_output, figures)
        return 0

    build_reference("omb_reference")
    figures = launch(args.platform, "ranks", str(args.rounds))
    memory = [launch(args.platform, "memory", case[0]) for case in MEMORY_CASES]
    table = ratios(figures)
    for case in memory:
        worst = max(case["peak_rss_per_rank"]) / case["largest_message"]
        table.append((f"peak memory per rank / largest message, {case['case']} sweep {MEMORY_SIZES}", worst, "< 3",
                      worst < 3))
    print(f"{'what':<72}{'ratio':>8}  target")
    for what, ratio, target, met in table:
        print(f"{what:<72}{ratio:8.3f}  {target}{'' if met else '   MISSED'}")
    print("\nfigures (s, B/s):")
    for name, value in sorted(figures.items()):
        print(f"  {name:<40} {value:.6g}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"host": platform.node(), "platform": args.platform, "figures": figures,
                                          "memory": memory,
                                          "ratios": [dict(what=w, ratio=r, target=t, met=m) for w, r, t, m in table]},
                                         indent=1))
    return 0 if all(met for *_, met in table) else 1


if __name__ == "__main__":
    sys.exit(main())
