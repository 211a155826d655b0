"""fpgacomm osu: the OSU point-to-point, collective and one-sided tests from the command line, with OMB's flags."""

from __future__ import annotations

import sys

from ..benchmarks import collectives, onesided
from .options import EXIT_VALIDATION, add_device_options, add_output_options, device_options, print_and_save
from ..params import DATATYPES

# OSU Micro-Benchmarks for FPGAs' -d: the device API of device buffers.
ACCELERATORS = ("opencl", "sycl")
PT2PT_TESTS = ("latency", "bw", "bibw", "multi_lat", "mbw_mr")
# The tests that stream windows of -W messages, as OSU Micro-Benchmarks' -W applies.
WINDOWED_TESTS = ("bw", "bibw", "mbw_mr", "put_bw", "get_bw", "put_bibw")
TESTS = PT2PT_TESTS + collectives.TESTS + onesided.TESTS


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "osu", help="OSU point-to-point, collective and one-sided tests (run under mpirun)",
        description="OSU micro-benchmark tests with buffers in host or device memory. "
                    "SEND_KIND and RECV_KIND are H (host), H! (pinned host), D (device), B (HBM) or P "
                    "(PLRAM): the buffers of rank 0 and rank 1 (of the first and second half of the "
                    "ranks in multi_lat and mbw_mr). Collectives and one-sided tests take one kind "
                    "with --mem. Examples: mpirun -np 2 fpgacomm osu bw D D; "
                    "mpirun -np 4 fpgacomm osu allreduce --mem D -c; "
                    "mpirun -np 2 fpgacomm osu put_bw --mem D -s fence")
    parser.add_argument("test", choices=TESTS)
    parser.add_argument("kinds", nargs="*", metavar="KIND",
                        help="SEND_KIND RECV_KIND (default H H), before or after the options")
    # Memory kinds may follow the options, as OSU Micro-Benchmarks takes them (cli.parse_arguments).
    parser.set_defaults(trailing="kinds")
    add_common_options(parser)
    parser.add_argument("-W", "--window-size", type=int,
                        help="messages in flight per window (bandwidth tests; default 64)")
    parser.add_argument("--mem", metavar="KIND",
                        help="collectives and one-sided: the kind of every buffer (default H)")
    parser.add_argument("-d", "--accelerator", choices=ACCELERATORS,
                        help="device API, as OSU Micro-Benchmarks for FPGAs takes it: opencl puts the buffers "
                             "of collectives and one-sided tests in device memory (as --mem D); point-to-point "
                             "tests take their kinds as SEND_KIND RECV_KIND. sycl is not available")
    parser.add_argument("-T", "--type", dest="datatype", type=str.lower, choices=DATATYPES,
                        help="MPI datatype of the elements (default mpi_char, as OSU Micro-Benchmarks 7.4); "
                             "sizes smaller than one element are skipped; one-sided tests move MPI_CHAR only")
    parser.add_argument("--root", type=int, help="root rank of gather, scatter, bcast and reduce (default 0)")
    parser.add_argument("-w", "--win-options", choices=onesided.WINDOW_CREATION, default="allocate", type=str.lower,
                        help="one-sided: window creation, MPI_Win_allocate, MPI_Win_create or "
                             "MPI_Win_create_dynamic (default allocate)")
    parser.add_argument("-s", "--sync-option", choices=onesided.SYNC, type=str.lower,
                        help="one-sided: synchronisation (default flush; put_bibw takes pscw, its default, "
                             "or fence)")
    parser.add_argument("-c", "--validation", action="store_true",
                        help="check every received message (outside the timed region)")
    parser.add_argument("-f", "--full", action="store_true", help="print min, max, stdev and percentiles")
    parser.add_argument("-z", "--tail-lat", action="store_true", help="same as --full")
    add_output_options(parser)
    parser.add_argument("--timeline", metavar="FILE",
                        help="point-to-point tests with staging: write every staged chunk's timeline of the last "
                             "timed iteration (window or round trip) of each size as JSON (analyse with "
                             "fpgacomm timeline FILE)")
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
    from ..params import parse_size

    return {"sizes": args.message_size, "iterations": args.iterations, "warmup": args.warmup,
            "buffers": args.buffer_num, "touch": args.touch, "path": args.path,
            "chunk_bytes": parse_size(args.chunk) if args.chunk else None, "slots": args.slots,
            "device": device_options(args)}


def validation_error(result) -> str:
    from ..benchmarks.osu import failed_sizes

    failed = failed_sizes(result)
    if not failed:
        return ""
    return f"DATA VALIDATION ERROR: fpgacomm {result.params.get('test', result.benchmark)} exited with status 1 on message size {failed[0]}."


def run(args) -> int:
    from ..runtime import mpi

    comm = mpi.world()
    result = _run_test(args, comm)
    if comm.Get_rank() == 0:
        print_and_save(result, args, full=args.full or args.tail_lat)
        if args.timeline:
            result.timeline.write_json(args.timeline)
    message = validation_error(result)
    if message:
        if comm.Get_rank() == 0:
            print(message, file=sys.stderr)
        return EXIT_VALIDATION
    return 0


def _run_test(args, comm):
    """The test's library function with the options that apply to it; an
    option that does not apply is an error rather than silently ignored."""
    from ..benchmarks import osu

    parameters = common_parameters(args)
    if args.accelerator == "sycl":
        raise osu.usage_error("-d sycl needs a SYCL runtime, and fpgacomm drives devices through OpenCL only; "
                              "use -d opencl")
    if args.test in onesided.TESTS and args.datatype not in (None, "mpi_char"):
        raise osu.usage_error(f"osu {args.test} moves MPI_CHAR only, as OSU Micro-Benchmarks 7.4's one-sided "
                              f"tests do; drop -T {args.datatype}")
    datatype = {} if args.test in onesided.TESTS else {"datatype": args.datatype or "mpi_char"}
    if args.window_size is not None and args.test not in WINDOWED_TESTS:
        raise osu.usage_error(f"-W does not apply to osu {args.test}; it sets the window of bandwidth tests")
    if args.test in PT2PT_TESTS:
        if args.mem or args.root is not None or args.sync_option:
            raise osu.usage_error(f"--mem, --root and -s do not apply to osu {args.test}; "
                                  "give the kinds as SEND_KIND RECV_KIND")
        if len(args.kinds) not in (0, 2):
            raise osu.usage_error(f"give both memory kinds (SEND_KIND RECV_KIND) or none, got {' '.join(args.kinds)}")
        window = osu.DEFAULT_WINDOW if args.window_size is None else args.window_size
        return osu.run(args.test, comm, mem=tuple(args.kinds) or ("H", "H"), window=window,
                       validate=args.validation, timeline=bool(args.timeline), **datatype, **parameters)
    if args.kinds:
        raise osu.usage_error(f"osu {args.test} takes one memory kind as --mem KIND, not positional kinds "
                              f"({' '.join(args.kinds)})")
    if args.timeline:
        raise osu.usage_error(f"--timeline records the staged transfers of point-to-point tests, not of osu "
                              f"{args.test}, which stages device buffers whole; drop --timeline or run a "
                              "point-to-point test")
    staging_only = {key: parameters.pop(key) for key in ("buffers", "touch", "path", "chunk_bytes", "slots")}
    if staging_only != {"buffers": "single", "touch": False, "path": "auto", "chunk_bytes": None, "slots": 4}:
        raise osu.usage_error(f"-b, --touch, --path, --chunk and --slots apply to point-to-point tests only; "
                              f"osu {args.test} stages device buffers whole")
    mem = _one_kind(args)
    if args.test in collectives.TESTS:
        return collectives.run(args.test, comm, mem=mem, root=args.root, validate=args.validation, **datatype,
                               **parameters)
    if args.root is not None:
        raise osu.usage_error(f"osu {args.test} has no root; --root applies to collectives")
    window = onesided.DEFAULT_WINDOW if args.window_size is None else args.window_size
    return onesided.run(args.test, comm, mem=mem, window=window, window_creation=args.win_options,
                        sync=args.sync_option, validate=args.validation, **parameters)


def _one_kind(args) -> str:
    """The kind of every buffer of a collective or one-sided test: --mem,
    or device memory with -d opencl, else host memory."""
    from ..benchmarks import osu

    if args.accelerator == "opencl":
        if args.mem in ("H", "H!"):  # pageable and pinned host memory
            raise osu.usage_error(f"-d opencl puts the buffers in device memory, and --mem {args.mem} is host "
                                  "memory; drop -d opencl or --mem, or give a device kind (--mem D, B or P)")
        return args.mem or "D"
    return args.mem or "H"
