"""fpgacomm osu TEST: the OSU point-to-point, collective and one-sided tests from the command line, with OMB's flags.

Every test has a parser of its own, built from its entry in the benchmark
registry: the options of its family and test, and no others, so that
`osu TEST --help` lists what applies and argparse refuses the rest. The
options OSU Micro-Benchmarks 7.4 gives a test and fpgacomm does not take
(REFUSED) are refused by name, with the reason, rather than as unknown.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import warnings

from .. import _core
from ..benchmarks import collectives, onesided, osu, registry, schema
from ..params import HOST_KINDS, usage_error
from .live import LiveText
from .options import (
    EXIT_VALIDATION,
    add_device_options,
    add_iteration_options,
    add_option,
    add_output_options,
    add_rounds_options,
    add_size_option,
    add_transfer_options,
    device_options,
    launch_rank,
    print_and_save,
    rounds_parameters,
    size_text,
    transfer_parameters,
    validation_error,
)

# OSU Micro-Benchmarks for FPGAs' -d: the device API of device buffers.
ACCELERATORS = ("opencl", "sycl")
# What -d means, per way of naming the buffers' kinds.
_ACCELERATOR_HELP = {
    "kinds": "device API, as OSU Micro-Benchmarks for FPGAs takes it; the kinds SEND_KIND RECV_KIND say which "
    "buffers are in device memory (sycl: H and D only)",
    "mem": "device API, as OSU Micro-Benchmarks for FPGAs takes it: every buffer in device memory (as --mem D); "
    "sycl has no one-sided tests",
}


# OSU Micro-Benchmarks 7.4's options that fpgacomm refuses, with the reason:
# option -> (long name, the families whose tests OMB gives it, why). The
# rest of OMB's options of each test fpgacomm takes (docs/METHODS.md, "OSU
# Micro-Benchmarks' command line").
REFUSED = {
    "-P": (
        "--papi",
        ("pt2pt", "collective", "onesided"),
        "PAPI hardware counters: fpgacomm is not built with PAPI, and its timed loops read no counters",
    ),
    "-I": (
        "--session",
        ("pt2pt", "collective", "onesided"),
        "MPI sessions (MPI 4): fpgacomm runs on the world communicator that mpi4py's MPI_Init gives",
    ),
    "-D": (
        "--ddt",
        ("pt2pt", "collective"),
        "derived datatypes (vector, indexed): fpgacomm moves contiguous elements of -T's type only",
    ),
    "-a": (
        "--array-size",
        ("collective",),
        "the device array of OSU Micro-Benchmarks' CUDA dummy compute, which fpgacomm's blocking collectives "
        "do not run",
    ),
    "-r": ("--cuda-target", ("collective",), "the CUDA kernel target of OSU Micro-Benchmarks' dummy compute"),
    "-l": (
        "--in-place",
        ("collective",),
        "MPI_IN_PLACE: fpgacomm's collectives use separate send and receive "
        "buffers, as OSU Micro-Benchmarks does without -l",
    ),
    "-t": (
        "--num-test-calls",
        ("pt2pt",),
        "MPI_Test calls of non-blocking collectives and threads of the "
        "multi-threaded latency test; OSU Micro-Benchmarks' bw and bibw parse it "
        "and ignore it",
    ),
}
# OMB's options of a test that moves no data (the barrier), which OMB parses
# and which change nothing there.
NO_DATA_REFUSED = {
    "-m": ("--message-size", "message sizes, and the barrier moves no data"),
    "-M": ("--mem-limit", "a memory limit on messages, and the barrier moves none"),
    "-u": ("--validation-warmup", "validated runs (-c), and the barrier has no data to validate"),
    "-d": ("--accelerator", "device buffers, and the barrier moves no data"),
}
# Which of them a test has (OMB's option strings of osu_util_options.h):
# those of its family but its catalog entry's omb_lacks (a collective's: the
# core's table), and -t is bw's and bibw's.
_TEST_CALLS = ("bw", "bibw")
# OMB's -G output formats fpgacomm writes (Matplotlib); tty is gnuplot's terminal plot.
GRAPH_FORMATS = ("png", "pdf")


def _refused(benchmark: registry.Benchmark) -> dict:
    """REFUSED's options that OSU Micro-Benchmarks gives this test."""
    test = benchmark.test
    refused = {}
    for flag, (name, families, why) in REFUSED.items():
        if benchmark.family not in families:
            continue
        if flag in benchmark.omb_lacks or (flag == "-t" and test not in _TEST_CALLS):
            continue
        refused[flag] = (name, why)
    if not benchmark.messages:
        refused.update(NO_DATA_REFUSED)
    return refused


class _Refuse(argparse.Action):
    """An OSU Micro-Benchmarks option fpgacomm does not take: a usage error
    naming it and why (reason). It takes OMB's argument, if any, so the
    error names the option rather than a stray word; --help leaves it out
    of the options and lists it in the epilogue."""

    def __init__(self, option_strings, dest, reason: str = "", **kwargs):
        super().__init__(option_strings, dest, nargs="?", help=argparse.SUPPRESS, **kwargs)
        self.reason = reason

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(
            f"{'/'.join(self.option_strings)} is OSU Micro-Benchmarks' option for {self.reason}; "
            "fpgacomm does not take it"
        )


class _Version(argparse.Action):
    """OMB's -v: the test's title line and version, once (rank 0), then exit 0."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        if launch_rank() == 0:
            print(parser.version_line, flush=True)
        parser.exit(0)


class _OneAccelerator(argparse.Action):
    """-d, given once: a second -d naming another API is a contradiction, not an override."""

    def __call__(self, parser, namespace, value, option_string=None):
        given = getattr(namespace, self.dest, None)
        if given is not None and given != value:
            parser.error(f"-d {given} and -d {value} contradict each other: choose one device API")
        setattr(namespace, self.dest, value)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "osu",
        help="OSU point-to-point, collective and one-sided tests (run under mpirun)",
        description="OSU micro-benchmark tests with buffers in host or device memory. "
        "SEND_KIND and RECV_KIND are H (host), H! (pinned host), D (device), B (HBM) or P "
        "(PLRAM): the buffers of rank 0 and rank 1 (of the first and second half of the "
        "ranks in multi_lat and mbw_mr). Collectives and one-sided tests take one kind "
        "with --mem. fpgacomm osu TEST --help lists the options of TEST. "
        "Examples: mpirun -np 2 fpgacomm osu bw D D; "
        "mpirun -np 4 fpgacomm osu allreduce --mem D -c; "
        "mpirun -np 2 fpgacomm osu put_bw --mem D -s fence",
    )
    tests = parser.add_subparsers(dest="test", metavar="test")
    tests.required = True
    for benchmark in registry.osu_tests().values():
        _add_test(tests, benchmark)


def _add_test(tests, benchmark: registry.Benchmark) -> None:
    """The parser of one test, holding exactly the options its registry entry names."""
    options, fields = benchmark.options, _FLAGS[benchmark.family]
    summary = benchmark.function.__doc__.strip().split("\n\n")[0]
    parser = tests.add_parser(
        benchmark.test,
        help=summary,
        error_prog="fpgacomm osu",
        description=f"{summary} The OSU MPI{benchmark.call} {benchmark.title} of OSU " "Micro-Benchmarks 7.4.",
    )
    parser.version_line = (
        f"# OSU MPI{benchmark.call} {benchmark.title} v{_core.__version__} (fpgacomm, "
        "the method of OSU Micro-Benchmarks 7.4)"
    )
    parser.add_argument("-v", "--version", action=_Version, help="print the test's title and version, and exit")
    if "kinds" in options:
        parser.add_argument(
            "kinds",
            nargs="*",
            metavar="KIND",
            help="SEND_KIND RECV_KIND, each H, H!, D, B or P (default H H), before or after the options",
        )
        # Memory kinds may follow the options, as OSU Micro-Benchmarks takes them (cli.parse_arguments).
        parser.set_defaults(trailing="kinds")
    if "sizes" in options:
        add_size_option(parser, benchmark.sizes)
    add_iteration_options(parser)
    add_rounds_options(parser)
    if "transfer" in options:
        add_transfer_options(parser)
    add_device_options(parser)
    if "window" in options:
        # None: the test's window, which -V (vary the window) would contradict.
        add_option(parser, fields["window"], default=argparse.SUPPRESS, shown=benchmark.window)
    if "mem" in options:
        parser.add_argument(
            "--mem", metavar="KIND", help="the kind of every buffer: H, H!, D, B or P (default H, or D with -d)"
        )
    if "accelerator" in options:
        parser.add_argument(
            "-d",
            "--accelerator",
            choices=ACCELERATORS,
            action=_OneAccelerator,
            help=_ACCELERATOR_HELP["kinds" if "kinds" in options else "mem"],
        )
    if "datatype" in options:
        add_option(parser, fields["datatype"])
    if "root" in options:
        add_option(parser, fields["root"])
    if "window_creation" in options:
        add_option(parser, fields["window_creation"])
    if "sync" in options:
        takes = onesided.SYNC_CHOICES[benchmark.test]
        add_option(parser, fields["sync"], shown=takes[0], takes=", ".join(takes))
    for name in ("pairs", "vary_window", "print_rate"):
        if name in options:
            add_option(parser, fields[name])
    if "mem_limit" in options:
        add_option(parser, fields["mem_limit"], shown=size_text(collectives.MEM_LIMIT))
    add_option(parser, fields["validate"])
    if "validation_warmup" in options:
        add_option(parser, fields["validation_warmup"])
    parser.add_argument(
        "-G",
        "--graph",
        metavar="png,pdf",
        help="figures of each size's per-iteration values: osu_TEST-SIZE.png per size, "
        "osu_TEST.pdf with a page per size, in the current directory",
    )
    refused = _refused(benchmark)
    for flag, (name, why) in refused.items():
        parser.add_argument(flag, name, action=_Refuse, reason=why)
    if refused:
        parser.epilog = (
            "Not taken, of OSU Micro-Benchmarks 7.4's options for this test: "
            f"{', '.join(f'{flag}/{name}' for flag, (name, _) in refused.items())} (each says why when given)."
        )
    parser.add_argument("-f", "--full", action="store_true", help="print min, max, stdev and percentiles")
    parser.add_argument("-z", "--tail-lat", action="store_true", help="same as --full")
    add_output_options(parser)
    if "timeline" in options:
        parser.add_argument(
            "--timeline",
            metavar="FILE",
            help="write every staged chunk's timeline of the last timed iteration (window or round "
            "trip) of each size as JSON (analyse with fpgacomm timeline FILE); device buffers are "
            "then staged unless --path mapped says otherwise",
        )
    parser.set_defaults(run=run, benchmark=benchmark)


def run(args) -> int:
    from ..runtime import mpi

    graph = _graph_formats(args.graph)
    keywords = _keywords(args)
    comm = mpi.world()
    live = LiveText(f"osu {args.test}", full=args.full or args.tail_lat)
    with warnings.catch_warnings():
        # OMB's -M warning, once (rank 0 gives it), as one line of ours.
        warnings.simplefilter("always", collectives.MemLimitWarning)
        result = args.benchmark.function(comm, **keywords, on_row=live)
    if comm.Get_rank() == 0:
        if graph:
            result.params["omb_differences"].append(GRAPH_DIFFERENCE)
        print_and_save(result, args, live=live)
        if getattr(args, "timeline", None):
            result.timeline.write_json(args.timeline)
        if graph:
            from ..figures import iterations

            iterations.write(result, graph)
    message = validation_error(result)
    if message:
        if comm.Get_rank() == 0:
            print(message, file=sys.stderr)
        return EXIT_VALIDATION
    return 0


GRAPH_DIFFERENCE = (
    "-G draws each size's per-iteration values with Matplotlib, one figure per size (PNG files, "
    "or a PDF page each); OSU Micro-Benchmarks draws them with gnuplot and adds 3D overviews"
)


def _graph_formats(text: str | None) -> tuple:
    """-G's comma-separated formats, as OMB takes them (png, pdf; tty refused)."""
    if text is None:
        return ()
    formats = tuple(dict.fromkeys(word.strip().lower() for word in text.split(",")))
    if "tty" in formats:
        raise usage_error(
            "-G tty is OSU Micro-Benchmarks' terminal plot through gnuplot, which fpgacomm does not "
            "draw; use -G png or -G pdf (files in the current directory)"
        )
    unknown = [word for word in formats if word not in GRAPH_FORMATS]
    if unknown or not formats:
        raise usage_error(f"-G takes png and/or pdf, comma-separated (as OSU Micro-Benchmarks), got {text!r}")
    return formats


# The options whose flags each family's schema declares (osu.OsuOptions,
# collectives.CollectiveOptions, onesided.OneSidedOptions), each parsed into
# args under its name, by family.
_FLAGS = {
    family: schema.flagged(facts.schema) for family, facts in registry.FAMILIES.items() if facts.schema is not None
}
# The test function's keywords of the other options that take the parsed
# value as it is: the registry's option name -> the parser's attribute.
_AS_PARSED = {"sizes": "message_size"}


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
    keywords.update(
        {keyword: getattr(args, attribute) for keyword, attribute in _AS_PARSED.items() if keyword in options}
    )
    # -W's absence leaves no attribute: the test's window then.
    flags = _FLAGS[args.benchmark.family]
    keywords.update({name: getattr(args, name) for name in flags if name in options and hasattr(args, name)})
    if "window" in options:
        keywords.setdefault("window", args.benchmark.window)
    if "timeline" in options:
        keywords["timeline"] = bool(args.timeline)
    if "vary_window" in options and args.vary_window and hasattr(args, "window"):
        raise usage_error(
            f"-V runs every window of {', '.join(map(str, osu.VARIED_WINDOWS))} in turn, and -W "
            "sets one; give one of them (as OSU Micro-Benchmarks: -V cannot be used with -W)"
        )
    if "print_rate" in options:
        keywords["print_rate"] = bool(args.print_rate)
    device = device_options(args)
    if "accelerator" in options and args.accelerator == "sycl":
        device = dataclasses.replace(device, api="sycl")
    return {
        **keywords,
        "iterations": args.iterations,
        "warmup": args.warmup,
        "validate": args.validate,
        "device": device,
        **rounds_parameters(args),
    }


def _one_kind(args) -> str:
    """The kind of every buffer of a collective or one-sided test: --mem,
    or device memory with -d, else host memory."""
    if args.accelerator:
        if args.mem in HOST_KINDS:
            kinds = "--mem D" if args.accelerator == "sycl" else "--mem D, B or P"
            raise usage_error(
                f"-d {args.accelerator} puts the buffers in device memory, and --mem {args.mem} is "
                f"host memory; drop -d {args.accelerator} or --mem, or give a device kind ({kinds})"
            )
        return args.mem or "D"
    return args.mem or "H"
