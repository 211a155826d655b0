"""fpgacomm tune: measures the staged engine's sizes again, caches them and shows what it chose and why."""

from __future__ import annotations

import json

from .options import add_device_options, device_options


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "tune",
        help="measure the staging chunk, slots and smallest fast copies again and cache them",
        description="Calibrates the staged transfers of device memory as --chunk auto and --slots auto use them: "
        "the ranks take turns copying 1 B to 256 KiB to and from their devices (the smallest fast "
        "copy in each direction, to which shorter staged copies are widened inside the run's own "
        "buffers), then copies and the wire between ranks 0 and 1 per chunk candidate (the chunk), "
        "and windows of messages in flight (the slots). Start it as the benchmarks run, ranks "
        "sharing devices alike. Entries are cached per host, device, driver and ranks sharing the "
        "device, in $XDG_CACHE_HOME/fpgacomm/calibration (default ~/.cache). "
        "Example: mpirun -np 2 fpgacomm tune",
    )
    parser.add_argument("--json", metavar="FILE", help="also write every rank's report as JSON")
    add_device_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..results.result import atomic_write
    from ..runtime import calibration, mpi

    comm = mpi.world()
    reports = calibration.tune(comm, device_options(args))
    if comm.Get_rank() == 0:
        print(calibration.format_report(reports))
        if args.json:
            atomic_write(args.json, lambda f: json.dump(reports, f, indent=2), newline=None)
    return 0
