"""fpgacomm gather: the VCSN paper's gather schedules on real ranks (under mpirun) or,
with --fabric, on the simulated fabric (fpgacomm.gather_sim, no mpirun)."""

from __future__ import annotations

import dataclasses
import sys

from ..benchmarks import schema
from ..benchmarks.gather import GatherOptions
from ..params import usage_error
from .fabric import add_limit_options, limits_of
from .live import LiveText, Progress
from .options import (
    EXIT_VALIDATION,
    INT_MAX,
    add_device_options,
    add_option,
    add_output_options,
    add_rounds_options,
    device_options,
    print_and_save,
    rounds_parameters,
)

_FLAGGED = schema.flagged(GatherOptions)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gather",
        help="gather, scatter and allgather schedules of the VCSN paper (real ranks or --fabric)",
        description="The VCSN paper's gather schedules: ring (DCN), tree (VCSN virtual tree), vlink (virtual links "
        "reconfigured every stage) and mpi (MPI_Gather). Real runs hold one node's blocks per rank "
        "in a buffer of kind --mem and end every stage in an MPI_Barrier (--control barrier). "
        "Examples: mpirun -np 9 fpgacomm gather --schedule tree --mem D --sizes 64K:16M; "
        "fpgacomm gather --fabric vcsn --nodes 4,9,16",
    )
    # The flags of gather.GatherOptions' fields, in their order, the rounds' after -c.
    for field in dataclasses.fields(GatherOptions):
        if field.name in _FLAGGED:
            add_option(parser, field)
        elif field.name == "rounds":
            add_rounds_options(parser)
    add_limit_options(parser, memory=False)
    add_output_options(parser)
    add_device_options(parser)
    parser.set_defaults(run=run)


def _node_counts(text: str) -> tuple[int, ...]:
    """--nodes' text as whole numbers (their range is GatherOptions' to check)."""
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        counts = ()
    if not counts or max(counts) > INT_MAX:
        raise usage_error(
            f"gather: --nodes {text!r}; give node counts of 2 or more (at most {INT_MAX}) separated by "
            "commas, e.g. 4,9,16"
        )
    return counts


def run(args) -> int:
    from ..benchmarks import gather

    given = {name: getattr(args, name) for name in _FLAGGED}
    # An empty --fabric or --nodes is none given.
    given.update(fabric=args.fabric or None, nodes=_node_counts(args.nodes) if args.nodes else None)
    live = None
    if given["fabric"]:
        options = GatherOptions(**given, limits=limits_of(args), **rounds_parameters(args))
        result, rank = gather.simulate(options, on_progress=Progress(f"gather --fabric {args.fabric}")), 0
        if result.params["reuse_note"]:
            print(f"gather: {result.params['reuse_note']}", file=sys.stderr)
    else:
        options = GatherOptions(**given, device=device_options(args), **rounds_parameters(args))
        from ..runtime import mpi

        comm = mpi.world()
        rank = comm.Get_rank()
        live = LiveText("gather")
        result = gather.run(comm, options, on_row=live)
    if rank == 0:
        print_and_save(result, args, live=live)
    failed = gather.failed_sizes(result) if "validation" in result.columns else []
    if failed:
        if rank == 0:
            print(
                f"VALIDATION FAILED: fpgacomm gather exited with status 1; blocks arrived wrong at "
                f"{len(failed)} sizes, first {failed[0]} bytes per node",
                file=sys.stderr,
            )
        return EXIT_VALIDATION
    return 0
