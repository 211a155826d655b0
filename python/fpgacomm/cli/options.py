"""What every command shares: the argument parser that reports usage errors
once, the exit statuses, the MPI, device and output options, and the sweep
and transfer options of the OSU tests and the suite."""

from __future__ import annotations

import argparse
import os
import sys

from ..params import DEFAULT_SIZES, parse_size, usage_error
from ..runtime.launched import launch_rank
from . import habits

EXIT_USAGE = 2
EXIT_VALIDATION = 1
EXIT_TIMEOUT = 124


class Parser(argparse.ArgumentParser):
    """argparse, printing usage errors once rather than once per rank.
    error_prog: the command that error lines name where it is not prog: the
    parser of each osu test reports as `fpgacomm osu`, the command the
    user's arguments went to."""

    def __init__(self, *args, error_prog: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.error_prog = error_prog or self.prog
        # Choices of a subcommand that a mistyped word may have meant, with
        # what to type for each (habits.did_you_mean).
        self.choices_below = {}
        # Every type=int option (and its argument groups') takes the core's
        # int, checked here: a value past it is a usage error, not a failed call.
        self.register("type", int, core_int)
        # The types an options class's field names (benchmarks.schema), whose
        # parsing and its messages are the command line's.
        self.register("type", "size", size_argument)
        self.register("type", "root_rank", root_rank)

    def error(self, message):
        if launch_rank() == 0:
            self.print_usage(sys.stderr)
            print(f"{self.error_prog}: error: {habits.did_you_mean(message, self.choices_below)}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


INT_MAX = 2**31 - 1  # the core's int (iterations, windows, counts, ranks)


def core_int(text: str) -> int:
    """An integer the core's int holds, as argparse's type for type=int."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value > INT_MAX:
        raise argparse.ArgumentTypeError(f"{text} is too large; the largest value accepted is {INT_MAX}")
    if value < -INT_MAX - 1:
        raise argparse.ArgumentTypeError(f"{text} is too small; the smallest value accepted is {-INT_MAX - 1}")
    return value


def size_argument(text: str) -> int:
    """Bytes with K/M/G suffixes, as argparse's type: errors become usage errors."""
    from .. import _core

    try:
        return parse_size(text)
    except _core.UsageError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def root_rank(text: str) -> int:
    """--root N, or OMB's -k fixed:N; OMB's -k rotate is refused with the reason."""
    word, _, number = text.partition(":")
    if word.lower() == "rotate":
        raise argparse.ArgumentTypeError(
            "-k rotate (OSU Micro-Benchmarks' new root every iteration) is not "
            "implemented; give a fixed root: -k fixed:N or --root N"
        )
    rank = number if word.lower() == "fixed" else text
    if not rank.strip().lstrip("+-").isdigit():
        raise argparse.ArgumentTypeError(f"give the root rank as N or fixed:N, got {text!r}")
    return core_int(rank)


def add_memory_option(parser: argparse.ArgumentParser) -> None:
    """--max-memory: the host memory a run may take, measured or simulated
    (one limit, checked against the core's estimate before anything is
    allocated; docs/METHODS.md, "Host memory of a run")."""
    parser.add_argument(
        "--max-memory",
        type=memory_limit,
        default=None,
        metavar="SIZE",
        help="host memory the run may take, K/M/G, above 0: all ranks on one host together for "
        "measured runs (default 3/4 of the host's MemAvailable), the simulator for simulated "
        "ones (default 8G)",
    )


def memory_limit(text: str) -> int:
    """--max-memory's SIZE: bytes above 0 (0 would mean the default to one
    part of fpgacomm and nothing to another, so it means neither)."""
    size = size_argument(text)
    if size == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a size above 0, or leave --max-memory out for the default")
    return size


def apply_memory_limit(args) -> None:
    """--max-memory as the measured runs' limit (the core's, for this
    process); without it the default, also after an earlier command in
    the same process gave one."""
    from .. import _core

    if hasattr(args, "max_memory"):
        _core.set_host_memory_limit(0 if args.max_memory is None else args.max_memory)


def add_mpi_options(parser: argparse.ArgumentParser) -> None:
    """Options of every command that starts MPI."""
    from ..runtime.mpi import THREAD_LEVELS

    group = parser.add_argument_group("MPI")
    group.add_argument(
        "--thread-level",
        choices=THREAD_LEVELS,
        default=None,
        help="MPI thread level to ask for (default single, what MPI_Init gives, as OSU "
        "Micro-Benchmarks runs; higher levels cost time per call in some MPI libraries)",
    )
    add_memory_option(group)


def add_device_options(parser: argparse.ArgumentParser) -> None:
    """Device selection, and MPI's options: every command that opens devices runs on MPI ranks."""
    add_mpi_options(parser)
    group = parser.add_argument_group("devices")
    group.add_argument("--platform", default="", help="OpenCL platform: index or name substring")
    group.add_argument("--device", default="", help="device: index among the matches or name substring")
    group.add_argument(
        "--device-type",
        default="auto",
        choices=("auto", "fpga", "gpu", "cpu", "all"),
        help="auto (default): the accelerators when there are any, else every device",
    )
    group.add_argument(
        "--device-map",
        default=None,
        metavar="I:J:...",
        help="device index per node-local rank (overrides FPGA_MAPPING)",
    )
    group.add_argument(
        "--binary", default="", metavar="FILE", help="vendor device binary (.aocx, .xclbin) holding the kernels"
    )
    group.add_argument("--bank", type=int, default=0, help="memory bank for kinds B and P")


def size_text(size: int) -> str:
    """Bytes as the command line writes them: 4194304 -> "4M"."""
    for suffix, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{suffix}"
    return str(size)


def add_option(parser: argparse.ArgumentParser, field, default=None, shown=None, **values) -> None:
    """One option of a family's schema (benchmarks.schema: a field of its
    options class) as the flags it declares, with its help and argparse's
    keywords; its value lands in args under the field's name. default: the
    parser's, when not the schema's command-line default; shown: the
    default its help names, when not the parser's; values: its help's
    other placeholders."""
    from ..benchmarks import schema

    keywords = dict(field.metadata["argparse"])
    keywords["default"] = schema.cli_default(field) if default is None else default
    keywords["help"] = schema.help_text(field, keywords["default"] if shown is None else shown, **values)
    parser.add_argument(*field.metadata["flags"], dest=field.name, **keywords)
    if field.metadata.get("negative"):
        flag, text = field.metadata["negative"]
        parser.add_argument(flag, dest=field.name, action="store_false", help=text)


def add_size_option(parser: argparse.ArgumentParser, default: tuple = DEFAULT_SIZES) -> None:
    """-m, OSU Micro-Benchmarks' message sizes; default: (smallest, largest) bytes."""
    parser.add_argument(
        "-m",
        "--message-size",
        metavar="[MIN:]MAX",
        help=f"message sizes in bytes, K/M/G suffixes (default {size_text(default[0])}:" f"{size_text(default[1])})",
    )


def add_iteration_options(parser: argparse.ArgumentParser) -> None:
    """-i and -x, OSU Micro-Benchmarks' timed and warm-up iterations."""
    parser.add_argument("-i", "--iterations", type=int, help="timed iterations for every size")
    parser.add_argument("-x", "--warmup", type=int, help="untimed warm-up iterations for every size")


def rounds_argument(text: str) -> int:
    """--rounds' value, as argparse's type: a whole number, 1 or more (sweeps in one job, or launches of
    compare --run)."""
    try:
        rounds = int(text)
    except ValueError:
        rounds = 0
    if rounds < 1:
        raise argparse.ArgumentTypeError(f"--rounds takes a whole number, 1 or more, got {text!r}; e.g. --rounds 7")
    return rounds


def seed_argument(text: str) -> int:
    """--round-seed's value, as argparse's type: a whole number 0 .. 2^64 - 1."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if not 0 <= seed < 1 << 64:
        raise argparse.ArgumentTypeError(f"--round-seed takes a whole number from 0 to 2^64 - 1, got {text!r}")
    return seed


def add_rounds_options(parser: argparse.ArgumentParser) -> None:
    """--rounds and --round-seed: complete sweeps in one job, each in its own shuffled order of the sizes."""
    parser.add_argument(
        "--rounds",
        type=rounds_argument,
        default=1,
        metavar="N",
        help="complete sweeps in this job, each visiting the sizes in its own shuffled order; with "
        "N > 1 the text shows the median over rounds, its 95%% confidence interval and the "
        "spread between rounds, and --json/--csv keep every round (default 1)",
    )
    parser.add_argument(
        "--round-seed",
        type=seed_argument,
        default=None,
        metavar="SEED",
        help="seed of the rounds' size orders (default: drawn, and recorded in the Result)",
    )


def rounds_parameters(args) -> dict:
    """add_rounds_options' values, as the benchmark functions take them."""
    return {"rounds": args.rounds, "round_seed": args.round_seed}


def add_transfer_options(parser: argparse.ArgumentParser) -> None:
    """The point-to-point transfer engine's options: buffer reuse, the
    placeholder kernel, and how device memory reaches MPI."""
    parser.add_argument(
        "-b",
        "--buffer-num",
        choices=("single", "multiple"),
        default="single",
        help="one buffer per side, or fresh buffers per size and window slot",
    )
    parser.add_argument(
        "--touch",
        action="store_true",
        help="launch the placeholder kernel on device buffers before each measured operation",
    )
    parser.add_argument(
        "--path",
        choices=("auto", "staged", "mapped"),
        default="auto",
        help="how device memory reaches MPI (auto: mapped where the device shares host memory)",
    )
    parser.add_argument(
        "--chunk",
        metavar="SIZE|auto",
        default="auto",
        help="pipelining chunk of staged transfers (default auto: measured on accelerators and "
        "cached, see fpgacomm tune; 1M on CPU devices and emulators)",
    )
    parser.add_argument(
        "--slots",
        metavar="N|auto",
        default="auto",
        help="staging buffers per direction (default auto: measured on accelerators, 4 on CPU "
        "devices and emulators)",
    )


def transfer_parameters(args) -> dict:
    """add_transfer_options' values, as the point-to-point functions take them."""
    return {"buffers": args.buffer_num, "touch": args.touch, "path": args.path, **staging_sizes(args)}


def staging_sizes(args, chunk: str = "chunk", slots: str = "slots") -> dict:
    """--chunk and --slots (in args under the names given) as the library takes them: None for auto."""
    chunk_text, slots_text = getattr(args, chunk), getattr(args, slots)
    return {
        "chunk_bytes": None if chunk_text == "auto" else parse_size(chunk_text),
        "slots": None if slots_text == "auto" else parse_slots(slots_text),
    }


def parse_slots(text: str) -> int:
    """--slots N: a whole number (the core checks its range)."""
    try:
        return int(text)
    except ValueError:
        raise usage_error(f"--slots takes a whole number or auto, got '{text}'") from None


def validation_error(result) -> str:
    """OSU Micro-Benchmarks' line for a Result whose validation failed at some size, else ""."""
    from ..benchmarks.osu import failed_sizes

    failed = failed_sizes(result)
    if not failed:
        return ""
    return f"DATA VALIDATION ERROR: fpgacomm {result.params.get('test', result.benchmark)} exited with status 1 on message size {failed[0]}."


def add_output_options(parser: argparse.ArgumentParser, contents: str = "the Result") -> None:
    """--json and --csv, the files print_and_save writes."""
    from ..results.launches import JSON_VARIABLE

    # How compare --run gives each launch its file, leaving the command line as the user wrote it.
    parser.add_argument(
        "--json",
        metavar="FILE",
        default=os.environ.get(JSON_VARIABLE) or None,
        help=f"write {contents} as JSON (default: {JSON_VARIABLE}'s file, where it is set)",
    )
    parser.add_argument("--csv", metavar="FILE", help="write the Result's table as CSV")


def print_and_save(result, args, live=None, **text) -> None:
    """Rank 0's output: the Result's table (format_text's options) on
    stdout, then the Result in every file --json and --csv asked for.
    live: the LiveText that printed the rows so far, which prints the rest."""
    from ..benchmarks.sweep import measured_whole
    from ..results.report import format_text
    from ..runtime import interrupts
    from .live import SCREEN

    paths = [path for path in (args.json, args.csv) if path]
    try:
        if live is not None:
            live.finish(result)
        else:
            SCREEN.hide()  # the run is over: its progress line goes before the text
            print(format_text(result, **text), flush=True)
        if paths:
            # In a process of its own: mpirun, interrupted once the other ranks have ended, kills this rank
            # without a SIGTERM first, and seconds of writing millions of samples must not end with it.
            interrupts.outliving(lambda: [result.write(path) for path in paths], wait=None)
    except interrupts.Interrupted as stop:
        if "writing" not in stop.__dict__:  # else the files' own process writes on (the command's ending says so)
            # Everything was measured: the command's ending saves the Result (in a process of its own) all the same.
            result.incomplete = result.incomplete or f"{stop}: {measured_whole(result.params.get('rounds') or 1)}"
            stop.result = result
        raise


def device_options(args):
    from ..runtime.devices import DeviceOptions

    return DeviceOptions(
        platform=args.platform,
        device=args.device,
        type=args.device_type,
        device_map=args.device_map,
        binary=args.binary,
        bank=args.bank,
    )
