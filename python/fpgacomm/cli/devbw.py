"""fpgacomm devbw: host-device copy bandwidth and latency per size, the reference for the device limit."""

from __future__ import annotations

from .live import Progress
from .options import (
    add_device_options,
    add_output_options,
    add_rounds_options,
    device_options,
    print_and_save,
    rounds_parameters,
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devbw",
        help="host-to-device and device-to-host copy bandwidth and latency (the device limit)",
        description="Times one blocking copy per iteration between host memory (H pageable, H! pinned) and "
        "device memory, by the host clock and by OpenCL profiling events. Every rank measures "
        "its own device, one rank at a time; rank 0 prints every rank's table, each under its device. "
        "Example: mpirun -np 2 fpgacomm devbw -m 1:64M --json devbw.json",
    )
    parser.add_argument("kinds", nargs="*", metavar="HOST_KIND", help="host memory kinds, H and/or H! (default both)")
    parser.add_argument(
        "-m",
        "--message-size",
        metavar="[MIN:]MAX",
        help="copy sizes in bytes, K/M/G suffixes (default 1:256M, or what the device can allocate)",
    )
    parser.add_argument("-i", "--iterations", type=int, help="timed copies for every size")
    parser.add_argument("-x", "--warmup", type=int, help="untimed copies for every size")
    add_rounds_options(parser)
    parser.add_argument("--direction", choices=("h2d", "d2h", "both"), default="both")
    parser.add_argument(
        "--concurrent", action="store_true", help="all ranks copy at once (default: one rank at a time)"
    )
    parser.add_argument("-f", "--full", action="store_true", help="also print the device-side (profiling event) times")
    add_output_options(parser, "the Result (every rank's rows)")
    add_device_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..benchmarks import devbw
    from ..params import HOST_KINDS
    from ..runtime import mpi

    comm = mpi.world()
    directions = devbw.DIRECTIONS if args.direction == "both" else (args.direction,)
    result = devbw.run(
        comm,
        sizes=args.message_size,
        device=device_options(args),
        iterations=args.iterations,
        warmup=args.warmup,
        directions=directions,
        host_kinds=tuple(args.kinds) or HOST_KINDS,
        concurrent=args.concurrent,
        on_progress=Progress("devbw"),
        **rounds_parameters(args),
    )
    if comm.Get_rank() == 0:
        print_and_save(result, args, full=args.full)
    return 0
