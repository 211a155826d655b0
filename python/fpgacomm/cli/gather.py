"""fpgacomm gather: the VCSN paper's gather schedules on real ranks (under mpirun) or,
with --fabric, on the simulated fabric (fpgacomm.gather_sim, no mpirun)."""

from __future__ import annotations

import sys

from ..benchmarks.gather import COLLECTIVES, CONTROLS, DEFAULT_SIZES, NAMES, PORTS, VIRTUAL_PORTS
from ..params import byte_sizes, usage_error
from .fabric import add_limit_options, limits_of
from .live import LiveText, Progress
from .options import (
    EXIT_VALIDATION,
    INT_MAX,
    add_device_options,
    add_output_options,
    add_rounds_options,
    device_options,
    print_and_save,
    rounds_parameters,
)


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
    parser.add_argument(
        "--schedule", choices=NAMES, help="default: ring on real ranks, the simulator's own with --fabric"
    )
    parser.add_argument(
        "--mem", metavar="KIND", help="kind of every rank's buffer: H, H!, D, B, P (real runs; default D)"
    )
    parser.add_argument(
        "--sizes",
        metavar="[MIN:]MAX",
        help=f"bytes per node, K/M/G suffixes, doubling (default {DEFAULT_SIZES}, stopping at what "
        f"fits the device)",
    )
    parser.add_argument("--ports", type=int, choices=PORTS, default=2, help="physical ports per node")
    parser.add_argument(
        "--virtual-ports", type=int, choices=VIRTUAL_PORTS, default=2, help="virtual ports per physical port (VCSN)"
    )
    parser.add_argument(
        "--control",
        choices=CONTROLS,
        default="barrier",
        help="barrier: an MPI_Barrier closes every stage (the seed's); local: none (section 6.4)",
    )
    parser.add_argument("--collective", choices=COLLECTIVES, default="gather")
    parser.add_argument("--root", type=int, default=0, help="the root node (real runs)")
    parser.add_argument("-i", "--iterations", type=int, help="timed iterations per size (default 20, 5 above 1 MiB)")
    parser.add_argument(
        "-c",
        "--validation",
        action="store_true",
        default=True,
        help="check every block at the end of every iteration (the default)",
    )
    parser.add_argument("--no-validation", dest="validation", action="store_false", help="do not check the blocks")
    add_rounds_options(parser)
    parser.add_argument(
        "--fabric",
        metavar="PLATFORM",
        help="simulate on this fabric preset or platform file (PLATFORM.json) instead (no mpirun); "
        "a schedule the platform cannot run is refused with the pairs that can",
    )
    parser.add_argument("--nodes", metavar="N,N,...", help="simulated node counts (with --fabric; default 4,9,16)")
    parser.add_argument(
        "--no-reuse",
        dest="reuse",
        action="store_false",
        default=True,
        help="with --fabric: simulate every stage in full instead of each distinct group of "
        "independent transfers once (the same times, bit for bit; slower)",
    )
    add_limit_options(parser, memory=False)
    add_output_options(parser)
    add_device_options(parser)
    parser.set_defaults(run=run)


def _node_counts(text: str) -> tuple[int, ...]:
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        counts = ()
    if not counts or min(counts) < 2 or max(counts) > INT_MAX:
        raise usage_error(
            f"gather: --nodes {text!r}; give node counts of 2 or more (at most {INT_MAX}) separated by "
            "commas, e.g. 4,9,16"
        )
    return counts


def simulate(args):
    """The schedule on a fabric preset: fpgacomm.gather_sim, imported only here."""
    if args.mem is not None:
        raise usage_error("gather: --mem applies to real runs; leave it out with --fabric")
    if args.root != 0:
        raise usage_error(
            "gather: --root applies to real runs (the simulated schedules gather into node 0); leave "
            "it out with --fabric"
        )
    options = {
        "fabric": args.fabric,
        "ports": args.ports,
        "virtual_ports": args.virtual_ports,
        "control": args.control,
        "collective": args.collective,
        "reuse": args.reuse,
        "limits": limits_of(args),
        "on_progress": Progress(f"gather --fabric {args.fabric}"),
    }
    if args.schedule:
        options["schedule"] = args.schedule
    if args.nodes:
        options["nodes"] = _node_counts(args.nodes)
    if args.sizes:
        options["sizes"] = byte_sizes(args.sizes, "gather: size per node", smallest=1)
    from ..simulation import gather as gather_sim

    result = gather_sim.run(**options)
    if result.params["reuse_note"]:
        print(f"gather: {result.params['reuse_note']}", file=sys.stderr)
    return result


def run(args) -> int:
    from ..benchmarks import gather

    live = None
    if args.fabric:
        if args.rounds != 1:
            raise usage_error(
                f"gather: --rounds repeats measurements on real ranks, and the simulated fabric "
                f"(--fabric) gives the same figures every time; leave --rounds out, got {args.rounds}"
            )
        result, rank = simulate(args), 0
    else:
        if args.nodes:
            raise usage_error(
                "gather: --nodes sets simulated node counts; give --fabric, or set the real node count "
                "with mpirun -np"
            )
        if not args.reuse:
            raise usage_error("gather: --no-reuse applies to simulated runs; give --fabric, or leave it out")
        from ..runtime import mpi

        comm = mpi.world()
        rank = comm.Get_rank()
        live = LiveText("gather")
        result = gather.run(
            comm,
            schedule=args.schedule or "ring",
            mem=args.mem or "D",
            sizes=args.sizes or DEFAULT_SIZES,
            ports=args.ports,
            virtual_ports=args.virtual_ports,
            control=args.control,
            collective=args.collective,
            iterations=args.iterations,
            device=device_options(args),
            validate=args.validation,
            root=args.root,
            on_row=live,
            **rounds_parameters(args),
        )
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
