"""fpgacomm suite OUTDIR: the main job (README's first command)."""

from __future__ import annotations

from .live import Progress
from .options import (
    EXIT_VALIDATION,
    add_device_options,
    add_iteration_options,
    add_rounds_options,
    add_size_option,
    add_transfer_options,
    device_options,
    rounds_parameters,
    transfer_parameters,
    validation_error,
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "suite",
        help="run the standard benchmarks and write every Result",
        description="Runs the quick set of the standard benchmarks (a few minutes on "
        "2 cores; --full: all of them) with validation, on "
        "the selected devices and writes NAME.json per benchmark, figures, "
        "fits and summary.txt into a new folder OUTDIR/<UTC date-time>/ "
        "with a marker file (fpgacomm-run.txt: complete or not, and its "
        "files); OUTDIR/latest links to the newest complete run, and "
        "nothing else in OUTDIR is touched. A run that stops keeps what it "
        "finished there, marked incomplete. Run under mpirun -np 2 (or srun "
        "--mpi=pmix -n 2). It says its set and expected time first. "
        "-m bounds every OSU test (the quick set's default: 1:1M): latency and bw sweep it; collectives and one-sided tests "
        "run those of 8 B, 64 KiB and 1 MiB within it (or its largest size). "
        "b_eff takes --beff-max-size; the gather and the simulated fabrics "
        "keep their own sizes.",
    )
    parser.add_argument("outdir", help="results folder (created if missing); each run gets a folder of its own in it")
    add_size_option(parser)
    add_iteration_options(parser)
    add_rounds_options(parser)
    add_transfer_options(parser)
    add_device_options(parser)
    parser.add_argument(
        "--beff-max-size", type=int, default=20, metavar="LOG2", help="largest b_eff message, 2^LOG2 bytes (default 20)"
    )
    parser.add_argument(
        "--beff-repetitions", type=int, metavar="N", help="b_eff -n (default 3; with --full 10 cpu, 3 kernel)"
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="every benchmark of the standard set: each OSU test with host and device buffers, "
        "b_eff between CPUs and between kernels (about 25 minutes on 2 cores)",
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    from .. import suite

    results = suite.run(
        args.outdir,
        beff_max_size=args.beff_max_size,
        beff_repetitions=args.beff_repetitions,
        on_progress=Progress("suite"),
        full=args.full,
        sizes=args.message_size,
        iterations=args.iterations,
        warmup=args.warmup,
        **transfer_parameters(args),
        device=device_options(args),
        **rounds_parameters(args),
    )
    failures = [validation_error(result) for result in results if validation_error(result)]
    return EXIT_VALIDATION if failures else 0
