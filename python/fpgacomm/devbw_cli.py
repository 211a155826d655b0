"""fpgacomm devbw: host-device copy bandwidth and latency per size, the reference for the device limit."""

from __future__ import annotations

from .cli import add_device_options, device_options

_ARROWS = {("h2d", "H"): "H->D", ("h2d", "H!"): "H!->D", ("d2h", "H"): "D->H", ("d2h", "H!"): "D->H!"}
_SIZE_WIDTH, _FIELD_WIDTH = 12, 14


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devbw", help="host-to-device and device-to-host copy bandwidth and latency (the device limit)",
        description="Times one blocking copy per iteration between host memory (H pageable, H! pinned) and "
                    "device memory, by the host clock and by OpenCL profiling events. Every rank measures "
                    "its own device, one rank at a time; rank 0 prints its table, --json keeps every rank. "
                    "Example: mpirun -np 2 fpgacomm devbw -m 1:64M --json devbw.json")
    parser.add_argument("kinds", nargs="*", metavar="HOST_KIND", help="host memory kinds, H and/or H! (default both)")
    parser.add_argument("-m", "--message-size", metavar="[MIN:]MAX",
                        help="copy sizes in bytes, K/M/G suffixes (default 1:256M, or what the device can allocate)")
    parser.add_argument("-i", "--iterations", type=int, help="timed copies for every size")
    parser.add_argument("-x", "--warmup", type=int, help="untimed copies for every size")
    parser.add_argument("--direction", choices=("h2d", "d2h", "both"), default="both")
    parser.add_argument("--concurrent", action="store_true",
                        help="all ranks copy at once (default: one rank at a time)")
    parser.add_argument("-f", "--full", action="store_true",
                        help="also print the device-side (profiling event) times")
    parser.add_argument("--json", metavar="FILE", help="write the Result (every rank's rows) as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the Result as CSV")
    add_device_options(parser)
    parser.set_defaults(run=run)


def format_devbw(result, full: bool = False, rank: int = 0) -> str:
    """OMB-style text of one rank: bandwidth (MB/s, 10^6) and time per copy (us) per direction and host kind."""
    rows = [row for row in result.rows if row["rank"] == rank]
    series = [key for key in _ARROWS if any((r["direction"], r["host_kind"]) == key for r in rows)]
    cell = {(r["size"], r["direction"], r["host_kind"]): r for r in rows}
    sizes = sorted({r["size"] for r in rows})
    columns = [(f"{_ARROWS[key]}(MB/s)", key, "bandwidth", 1e-6) for key in series]
    columns += [(f"{_ARROWS[key]}(us)", key, "time_avg", 1e6) for key in series]
    if full:
        columns += [(f"{_ARROWS[key]} dev(us)", key, "device_time_avg", 1e6) for key in series]
    device = result.env.get("rank_devices", [""] * (rank + 1))[rank]
    lines = [f"# fpgacomm Device Copy Bandwidth Test v{result.env.get('fpgacomm_version', 'unknown')}",
             f"# Rank {rank}: {device}",
             "# One blocking copy per iteration; MB/s = 10^6 B/s over the average host time"
             + ("; dev = profiling-event time" if full else "")]
    lines.append(f"{'# Size':<{_SIZE_WIDTH}}" + "".join(f"{header:>{_FIELD_WIDTH}}" for header, *_ in columns))
    for size in sizes:
        cells = [cell[(size, *key)][column] * factor for _, key, column, factor in columns]
        lines.append(f"{size:<{_SIZE_WIDTH}d}" + "".join(f"{value:{_FIELD_WIDTH}.2f}" for value in cells))
    return "\n".join(lines)


def run(args) -> int:
    from . import devbw, mpi

    comm = mpi.world()
    directions = devbw.DIRECTIONS if args.direction == "both" else (args.direction,)
    result = devbw.run(comm, sizes=args.message_size, device=device_options(args), iterations=args.iterations,
                       warmup=args.warmup, directions=directions, host_kinds=tuple(args.kinds) or devbw.HOST_KINDS,
                       concurrent=args.concurrent)
    if comm.Get_rank() == 0:
        print(format_devbw(result, full=args.full), flush=True)
        for path in (args.json, args.csv):
            if path:
                result.write(path)
    return 0
