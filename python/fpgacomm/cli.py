"""The fpgacomm command: parses arguments and calls the library functions.

Errors: a bad parameter or device problem that every rank agrees on is
printed once (by rank 0) and exits with status 2 on every rank; a failure of
one rank alone is printed by that rank, which then aborts the job so that no
rank waits forever. A watchdog (--timeout) ends any run that hangs.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import traceback

from . import _core

EXIT_USAGE = 2
EXIT_VALIDATION = 1
EXIT_TIMEOUT = 124
DEFAULT_TIMEOUT = 1800.0


def launch_rank() -> int:
    """This process's rank as the MPI launcher says, without starting MPI."""
    for variable in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"):
        if variable in os.environ:
            return int(os.environ[variable])
    return 0


class Parser(argparse.ArgumentParser):
    """argparse, printing usage errors once rather than once per rank."""

    def error(self, message):
        if launch_rank() == 0:
            self.print_usage(sys.stderr)
            print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def add_mpi_options(parser: argparse.ArgumentParser) -> None:
    """Options of every command that starts MPI."""
    from .mpi import THREAD_LEVELS

    group = parser.add_argument_group("MPI")
    group.add_argument("--thread-level", choices=THREAD_LEVELS, default=None,
                       help="MPI thread level to ask for (default single, what MPI_Init gives, as OSU "
                            "Micro-Benchmarks runs; higher levels cost time per call in some MPI libraries)")


def add_device_options(parser: argparse.ArgumentParser) -> None:
    """Device selection, and MPI's options: every command that opens devices runs on MPI ranks."""
    add_mpi_options(parser)
    group = parser.add_argument_group("devices")
    group.add_argument("--platform", default="", help="OpenCL platform: index or name substring")
    group.add_argument("--device", default="", help="device: index among the matches or name substring")
    group.add_argument("--device-type", default="auto", choices=("auto", "fpga", "gpu", "cpu", "all"),
                       help="auto (default): the accelerators when there are any, else every device")
    group.add_argument("--device-map", default=None, metavar="I:J:...",
                       help="device index per node-local rank (overrides FPGA_MAPPING)")
    group.add_argument("--binary", default="", metavar="FILE",
                       help="vendor device binary (.aocx, .xclbin) holding the kernels")
    group.add_argument("--bank", type=int, default=0, help="memory bank for kinds B and P")


def add_output_options(parser: argparse.ArgumentParser, contents: str = "the Result") -> None:
    """--json and --csv, the files print_and_save writes."""
    parser.add_argument("--json", metavar="FILE", help=f"write {contents} as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the Result's table as CSV")


def print_and_save(result, args, **text) -> None:
    """Rank 0's output: the Result's table (format_text's options) on
    stdout, then the Result in every file --json and --csv asked for."""
    from .report import format_text

    print(format_text(result, **text), flush=True)
    for path in (args.json, args.csv):
        if path:
            result.write(path)


def device_options(args):
    from .devices import DeviceOptions

    return DeviceOptions(platform=args.platform, device=args.device, type=args.device_type,
                         device_map=args.device_map, binary=args.binary, bank=args.bank)


def build_parser() -> argparse.ArgumentParser:
    from . import (beff_cli, devbw_cli, devices_cli, fabric_cli, fit_cli, gather_cli, model_cli, osu_cli, overhead_cli,
                   plot_cli, suite_cli)

    parser = Parser(prog="fpgacomm", description="Measure and model communication between accelerators.")
    parser.add_argument("--version", action="version", version=f"fpgacomm {_core.__version__}")
    parser.add_argument("--timeout", type=float, default=float(os.environ.get("FPGACOMM_TIMEOUT", DEFAULT_TIMEOUT)),
                        help="abort the whole run after this many seconds (0: never; default %(default)s, "
                             "or FPGACOMM_TIMEOUT)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    subparsers.required = True
    for module in (devices_cli, devbw_cli, osu_cli, beff_cli, suite_cli, fabric_cli, gather_cli, fit_cli, model_cli,
                   overhead_cli, plot_cli):
        module.register(subparsers)
    return parser


def start_watchdog(seconds: float) -> None:
    """Ends the process if the run outlives `seconds`; mpirun then ends the other ranks."""
    if seconds <= 0:
        return

    def expire():
        print(f"fpgacomm: rank {launch_rank()}: time limit of {seconds:g} s exceeded (--timeout); aborting",
              file=sys.stderr, flush=True)
        os._exit(EXIT_TIMEOUT)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()


def _abort(status: int) -> None:
    """Ends every rank of the job when MPI is running, else this process."""
    if "mpi4py.MPI" in sys.modules:
        from mpi4py import MPI

        if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            sys.stderr.flush()
            MPI.COMM_WORLD.Abort(status)
    sys.exit(status)


def parse_arguments(argv=None) -> argparse.Namespace:
    """Parses the command line. A command that takes trailing positional
    words (osu's memory kinds, set as `trailing`) gets them wherever they
    stand, before or after the options, as OSU Micro-Benchmarks takes them."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    trailing = getattr(args, "trailing", None)
    if trailing:
        unknown = [word for word in extra if word.startswith("-")]
        setattr(args, trailing, getattr(args, trailing) + [word for word in extra if not word.startswith("-")])
    else:
        unknown = extra
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv=None) -> int:
    args = parse_arguments(argv)
    start_watchdog(args.timeout)
    try:
        if getattr(args, "thread_level", None) is not None:
            from . import mpi

            mpi.init(thread_level=args.thread_level)
        return args.run(args)
    except _core.Error as error:
        if getattr(error, "agreed", False):
            if launch_rank() == 0:
                print(f"fpgacomm: error: {error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"fpgacomm: error on rank {launch_rank()}: {error}", file=sys.stderr)
        _abort(EXIT_USAGE if isinstance(error, _core.UsageError) else 1)
    except KeyboardInterrupt:
        _abort(130)
    except Exception as error:  # a bug of ours: say so, with the traceback only on request
        print(f"fpgacomm: internal error on rank {launch_rank()}: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("FPGACOMM_DEBUG"):
            traceback.print_exc()
        _abort(1)
    return 1
