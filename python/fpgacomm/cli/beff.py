"""fpgacomm beff: ring b_eff with HPCC FPGA's flags (sizes as log2 exponents)."""

from __future__ import annotations

import dataclasses
import sys

from ..benchmarks import schema
from ..benchmarks.beff import BeffOptions
from .fabric import add_limit_options, limits_of
from .live import Progress
from .options import (
    EXIT_VALIDATION,
    add_device_options,
    add_option,
    add_output_options,
    add_rounds_options,
    device_options,
    print_and_save,
    rounds_parameters,
    staging_sizes,
)

_FLAGGED = schema.flagged(BeffOptions)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "beff",
        help="ring effective bandwidth, HPCC FPGA's b_eff (run under mpirun)",
        description="HPCC FPGA's b_eff: every rank exchanges messages of 2^m bytes with both ring neighbours, "
        "LL(m) times per measurement. Sizes are log2 exponents, as in HPCC FPGA (-m 20: up to "
        "1 MiB). Example: mpirun -np 4 fpgacomm beff --comm-type kernel -m 16",
    )
    # The flags of beff.BeffOptions' fields, in their order, the rounds' after -n.
    for field in dataclasses.fields(BeffOptions):
        if field.name in _FLAGGED:
            add_option(parser, field)
        elif field.name == "rounds":
            add_rounds_options(parser)
    add_limit_options(parser, memory=False)
    add_output_options(parser, "the Result (every rank's timings)")
    add_device_options(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..benchmarks import beff
    from ..params import usage_error
    from ..runtime import mpi

    if args.comm_type != "sim" and args.max_events is not None:
        raise usage_error("beff: --max-events limits the simulated ring (--comm-type sim); leave it out on a real run")
    comm = mpi.world()
    given = {name: getattr(args, name) for name in _FLAGGED}
    options = BeffOptions(
        **{**given, **staging_sizes(args, chunk="chunk_bytes", slots="slots")},
        device=device_options(args),
        limits=limits_of(args) if args.comm_type == "sim" else None,
        **rounds_parameters(args),
    )
    result = beff.run(comm, options, on_progress=Progress("beff"))
    if comm.Get_rank() == 0:
        print_and_save(result, args)
    failed = beff.failed_sizes(result)
    if failed:
        if comm.Get_rank() == 0:
            print(
                f"VALIDATION FAILED: fpgacomm beff exited with status 1; received messages were wrong at "
                f"{len(failed)} sizes, first 2^{failed[0].bit_length() - 1} bytes",
                file=sys.stderr,
            )
        return EXIT_VALIDATION
    return 0
