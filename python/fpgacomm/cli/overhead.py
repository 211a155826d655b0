"""fpgacomm overhead: LogGP's send and receive overheads (run under mpirun -np 2)."""

from __future__ import annotations

from .options import add_iteration_options, add_memory_option, add_rounds_options, add_size_option, rounds_parameters


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "overhead",
        help="send and receive overheads of MPI calls, for LogGP (run under mpirun -np 2)",
        description="Times MPI_Isend on rank 0 and MPI_Irecv + MPI_Wait on rank 1 for a message that has "
        "already arrived: LogGP's o_s and o_r, which a ping-pong cannot separate from L. Example: "
        "mpirun -np 2 fpgacomm overhead -m 1:1M --json over.json; then fpgacomm fit lat.json "
        "bw.json over.json --model loggp",
    )
    add_size_option(parser)
    add_iteration_options(parser)
    add_rounds_options(parser)
    parser.add_argument("--json", metavar="FILE", help="write the Result as JSON")
    add_memory_option(parser)
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..benchmarks import overhead
    from ..results.report import format_text
    from ..runtime import mpi

    comm = mpi.world()
    result = overhead.run(
        comm, sizes=args.message_size, iterations=args.iterations, warmup=args.warmup, **rounds_parameters(args)
    )
    if comm.Get_rank() == 0:
        print(format_text(result), flush=True)
        if args.json:
            result.write(args.json)
    return 0
