"""fpgacomm osu TEST: the OSU point-to-point, collective and one-sided tests from the command line, with OMB's flags.

Every test has a parser of its own, built from its entry in the benchmark
registry: the options of its family and test, and no others, so that
`osu TEST --help` lists what applies and argparse refuses the rest.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from ..benchmarks import onesided, registry
from ..params import DATATYPES, HOST_KINDS, usage_error
from .live import LiveText
from .options import (EXIT_VALIDATION, add_device_options, add_iteration_options, add_output_options,
                      add_size_option, add_transfer_options, device_options, print_and_save, transfer_parameters,
                      validation_error)

# OSU Micro-Benchmarks for FPGAs' -d: the device API of device buffers.
ACCELERATORS = ("opencl", "sycl")
# What -d means, per way of naming the buffers' kinds.
_ACCELERATOR_HELP = {
    "kinds": "device API, as OSU Micro-Benchmarks for FPGAs takes it; the kinds SEND_KIND RECV_KIND say which "
             "buffers are in device memory (sycl: H and D only)",
    "mem": "device API, as OSU Micro-Benchmarks for FPGAs takes it: every buffer in device memory (as --mem D); "
           "sycl has no one-sided tests",
}


class _OneAccelerator(argparse.Action):
    """-d, given once: a second -d naming another API is a contradiction, not an override."""

    def __call__(self, parser, namespace, value, option_string=None):
        given = getattr(namespace, self.dest, None)
        if given is not None and given != value:
            parser.error(f"-d {given} and -d {value} contradict each other: choose one device API")
        setattr(namespace, self.dest, value)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "osu", help="OSU point-to-point, collective and one-sided tests (run under mpirun)",
        description="OSU micro-benchmark tests with buffers in host or device memory. "
                    "SEND_KIND and RECV_KIND are H (host), H! (pinned host), D (device), B (HBM) or P "
                    "(PLRAM): the buffers of rank 0 and rank 1 (of the first and second half of the "
                    "ranks in multi_lat and mbw_mr). Collectives and one-sided tests take one kind "
                    "with --mem. fpgacomm osu TEST --help lists the options of TEST. "
                    "Examples: mpirun -np 2 fpgacomm osu bw D D; "
                    "mpirun -np 4 fpgacomm osu allreduce --mem D -c; "
                    "mpirun -np 2 fpgacomm osu put_bw --mem D -s fence")
    tests = parser.add_subparsers(dest="test", metavar="test")
    tests.required = True
    for benchmark in registry.osu_tests().values():
        _add_test(tests, benchmark)


def _add_test(tests, benchmark: registry.Benchmark) -> None:
    """The parser of one test, holding exactly the options its registry entry names."""
    options = benchmark.options
    summary = benchmark.function.__doc__.strip().split("\n\n")[0]
    parser = tests.add_parser(benchmark.test, help=summary, error_prog="fpgacomm osu",
                              description=f"{summary} The OSU MPI{benchmark.call} {benchmark.title} of OSU "
                                          "Micro-Benchmarks 7.4.")
    if "kinds" in options:
        parser.add_argument("kinds", nargs="*", metavar="KIND",
                            help="SEND_KIND RECV_KIND, each H, H!, D, B or P (default H H), before or after the options")
        # Memory kinds may follow the options, as OSU Micro-Benchmarks takes them (cli.parse_arguments).
        parser.set_defaults(trailing="kinds")
    if "sizes" in options:
        add_size_option(parser, benchmark.sizes)
    add_iteration_options(parser)
    if "transfer" in options:
        add_transfer_options(parser)
    add_device_options(parser)
    if "window" in options:
        parser.add_argument("-W", "--window-size", type=int, default=benchmark.window,
                            help=f"messages in flight per window (default {benchmark.window})")
    if "mem" in options:
        parser.add_argument("--mem", metavar="KIND",
                            help="the kind of every buffer: H, H!, D, B or P (default H, or D with -d)")
    if "accelerator" in options:
        parser.add_argument("-d", "--accelerator", choices=ACCELERATORS, action=_OneAccelerator,
                            help=_ACCELERATOR_HELP["kinds" if "kinds" in options else "mem"])
    if "datatype" in options:
        parser.add_argument("-T", "--type", dest="datatype", type=str.lower, choices=DATATYPES, default=DATATYPES[0],
                            help=f"MPI datatype of the elements (default {DATATYPES[0]}, as OSU Micro-Benchmarks "
                                 "7.4); sizes smaller than one element are skipped")
    if "root" in options:
        parser.add_argument("--root", type=int, help="root rank (default 0)")
    if "window_creation" in options:
        parser.add_argument("-w", "--win-options", choices=onesided.WINDOW_CREATION, default="allocate",
                            type=str.lower, help="window creation, MPI_Win_allocate, MPI_Win_create or "
                                                 "MPI_Win_create_dynamic (default allocate)")
    if "sync" in options:
        takes = onesided.SYNC_CHOICES[benchmark.test]
        parser.add_argument("-s", "--sync-option", choices=onesided.SYNC, type=str.lower,
                            help=f"synchronisation: {', '.join(takes)} (default {takes[0]})")
    parser.add_argument("-c", "--validation", action="store_true",
                        help="check every received message (outside the timed region)")
    parser.add_argument("-f", "--full", action="store_true", help="print min, max, stdev and percentiles")
    parser.add_argument("-z", "--tail-lat", action="store_true", help="same as --full")
    add_output_options(parser)
    if "timeline" in options:
        parser.add_argument("--timeline", metavar="FILE",
                            help="with staging: write every staged chunk's timeline of the last timed iteration "
                                 "(window or round trip) of each size as JSON (analyse with fpgacomm timeline FILE)")
    parser.set_defaults(run=run, benchmark=benchmark)


def run(args) -> int:
    from ..runtime import mpi

    comm = mpi.world()
    live = LiveText(f"osu {args.test}", full=args.full or args.tail_lat)
    result = args.benchmark.function(comm, **_keywords(args), on_row=live)
    if comm.Get_rank() == 0:
        print_and_save(result, args, live=live)
        if getattr(args, "timeline", None):
            result.timeline.write_json(args.timeline)
    message = validation_error(result)
    if message:
        if comm.Get_rank() == 0:
            print(message, file=sys.stderr)
        return EXIT_VALIDATION
    return 0


def _keywords(args) -> dict:
    """The test function's keyword arguments from the options its parser has."""
    options = args.benchmark.options
    keywords = transfer_parameters(args) if "transfer" in options else {}
    if "kinds" in options:
        if len(args.kinds) not in (0, 2):
            raise usage_error(f"give both memory kinds (SEND_KIND RECV_KIND) or none, got {' '.join(args.kinds)}")
        keywords["mem"] = tuple(args.kinds) or ("H", "H")
    if "mem" in options:
        keywords["mem"] = _one_kind(args)
    if "sizes" in options:
        keywords["sizes"] = args.message_size
    if "datatype" in options:
        keywords["datatype"] = args.datatype
    if "timeline" in options:
        keywords["timeline"] = bool(args.timeline)
    if "window" in options:
        keywords["window"] = args.window_size
    if "root" in options:
        keywords["root"] = args.root
    if "window_creation" in options:
        keywords["window_creation"] = args.win_options
    if "sync" in options:
        keywords["sync"] = args.sync_option
    device = device_options(args)
    if "accelerator" in options and args.accelerator == "sycl":
        device = dataclasses.replace(device, api="sycl")
    return {**keywords, "iterations": args.iterations, "warmup": args.warmup, "validate": args.validation,
            "device": device}


def _one_kind(args) -> str:
    """The kind of every buffer of a collective or one-sided test: --mem,
    or device memory with -d, else host memory."""
    if args.accelerator:
        if args.mem in HOST_KINDS:
            kinds = "--mem D" if args.accelerator == "sycl" else "--mem D, B or P"
            raise usage_error(f"-d {args.accelerator} puts the buffers in device memory, and --mem {args.mem} is "
                              f"host memory; drop -d {args.accelerator} or --mem, or give a device kind ({kinds})")
        return args.mem or "D"
    return args.mem or "H"
