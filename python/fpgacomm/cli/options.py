"""What every command shares: the argument parser that reports usage errors
once, the exit statuses, and the MPI, device and output options."""

from __future__ import annotations

import argparse
import os
import sys

EXIT_USAGE = 2
EXIT_VALIDATION = 1
EXIT_TIMEOUT = 124


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
    from ..runtime.mpi import THREAD_LEVELS

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
    from ..results.report import format_text

    print(format_text(result, **text), flush=True)
    for path in (args.json, args.csv):
        if path:
            result.write(path)


def device_options(args):
    from ..runtime.devices import DeviceOptions

    return DeviceOptions(platform=args.platform, device=args.device, type=args.device_type,
                         device_map=args.device_map, binary=args.binary, bank=args.bank)
