"""fpgacomm osu: the OSU point-to-point tests from the command line, with OMB's flags."""

from __future__ import annotations

import sys

from .cli import EXIT_VALIDATION, add_device_options, device_options

TESTS = ("latency", "bw", "bibw", "multi_lat", "mbw_mr")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "osu", help="OSU point-to-point tests (run under mpirun)",
        description="OSU micro-benchmark point-to-point tests with buffers in host or device memory. "
                    "SEND_KIND and RECV_KIND are H (host), H! (pinned host), D (device), B (HBM) or P "
                    "(PLRAM): the buffers of rank 0 and rank 1 (of the first and second half of the "
                    "ranks in multi_lat and mbw_mr). Example: mpirun -np 2 fpgacomm osu bw D D")
    parser.add_argument("test", choices=TESTS)
    parser.add_argument("kinds", nargs="*", metavar="KIND", help="SEND_KIND RECV_KIND (default H H)")
    add_common_options(parser)
    parser.add_argument("-W", "--window-size", type=int, default=64, help="messages in flight per window")
    parser.add_argument("-c", "--validation", action="store_true",
                        help="check every received message (outside the timed region)")
    parser.add_argument("-f", "--full", action="store_true", help="print min, max, stdev and percentiles")
    parser.add_argument("-z", "--tail-lat", action="store_true", help="same as --full")
    parser.add_argument("--json", metavar="FILE", help="write the Result as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the Result as CSV")
    parser.set_defaults(run=run)


def add_common_options(parser) -> None:
    """Options the suite shares with osu."""
    parser.add_argument("-m", "--message-size", metavar="[MIN:]MAX",
                        help="message sizes in bytes, K/M/G suffixes (default 1:4M)")
    parser.add_argument("-i", "--iterations", type=int, help="timed iterations for every size")
    parser.add_argument("-x", "--warmup", type=int, help="untimed warm-up iterations for every size")
    parser.add_argument("-b", "--buffer-num", choices=("single", "multiple"), default="single",
                        help="one buffer per side, or fresh buffers per size and window slot")
    parser.add_argument("--touch", action="store_true",
                        help="launch the placeholder kernel on device buffers before each measured operation")
    parser.add_argument("--path", choices=("auto", "staged", "mapped"), default="auto",
                        help="how device memory reaches MPI (auto: mapped where the device shares host memory)")
    parser.add_argument("--chunk", metavar="SIZE", help="pipelining chunk of staged transfers (default 1M on CPU devices, 4M on accelerators)")
    parser.add_argument("--slots", type=int, default=4, help="staging buffers per direction")
    add_device_options(parser)


def common_parameters(args) -> dict:
    from .osu import parse_size

    return {"sizes": args.message_size, "iterations": args.iterations, "warmup": args.warmup,
            "buffers": args.buffer_num, "touch": args.touch, "path": args.path,
            "chunk_bytes": parse_size(args.chunk) if args.chunk else None, "slots": args.slots,
            "device": device_options(args)}


def validation_error(result) -> str:
    from .osu import failed_sizes

    failed = failed_sizes(result)
    if not failed:
        return ""
    return f"DATA VALIDATION ERROR: fpgacomm {result.params.get('test', result.benchmark)} exited with status 1 on message size {failed[0]}."


def run(args) -> int:
    from . import mpi, osu
    from .report import format_text

    if len(args.kinds) not in (0, 2):
        raise osu.usage_error(f"give both memory kinds (SEND_KIND RECV_KIND) or none, got {' '.join(args.kinds)}")
    kinds = tuple(args.kinds) or ("H", "H")
    comm = mpi.world()
    result = osu.run(args.test, comm, mem=kinds, window=args.window_size, validate=args.validation,
                     **common_parameters(args))
    if comm.Get_rank() == 0:
        print(format_text(result, full=args.full or args.tail_lat), flush=True)
        for path in (args.json, args.csv):
            if path:
                result.write(path)
    message = validation_error(result)
    if message:
        if comm.Get_rank() == 0:
            print(message, file=sys.stderr)
        return EXIT_VALIDATION
    return 0
