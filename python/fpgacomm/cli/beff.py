"""fpgacomm beff: ring b_eff with HPCC FPGA's flags (sizes as log2 exponents)."""

from __future__ import annotations

import sys

from ..benchmarks.beff import COMM_TYPES, DECREASE, LOOP_RULES, LOWER, MODELS, OFFSET, REDUCTIONS, UPPER
from .fabric import add_limit_options, limits_of
from .live import Progress
from .options import (
    EXIT_VALIDATION,
    add_device_options,
    add_output_options,
    add_rounds_options,
    device_options,
    print_and_save,
    rounds_parameters,
    staging_sizes,
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "beff",
        help="ring effective bandwidth, HPCC FPGA's b_eff (run under mpirun)",
        description="HPCC FPGA's b_eff: every rank exchanges messages of 2^m bytes with both ring neighbours, "
        "LL(m) times per measurement. Sizes are log2 exponents, as in HPCC FPGA (-m 20: up to "
        "1 MiB). Example: mpirun -np 4 fpgacomm beff --comm-type kernel -m 16",
    )
    parser.add_argument(
        "--comm-type",
        choices=COMM_TYPES,
        default="cpu",
        help="cpu: host buffers; pcie: device buffers staged through the host; kernel: as pcie, "
        "messages written and checked by device kernels; iec: HPCC FPGA's IEC mode, kernels "
        "streaming over Intel external channels (an Intel FPGA with --binary, or Intel's FPGA "
        "emulator with --device-type fpga, ranks on one host); sim: simulated 520N links",
    )
    parser.add_argument("--min-size", type=int, default=0, metavar="LOG2", help="smallest message 2^LOG2 bytes")
    parser.add_argument(
        "-m", type=int, default=20, metavar="LOG2", dest="max_size", help="largest message 2^LOG2 bytes (default 20)"
    )
    parser.add_argument("--step-size", type=int, default=1, metavar="LOG2", help="step between sizes in log2")
    parser.add_argument(
        "--loop-rule",
        choices=LOOP_RULES,
        help="loop length per size: hpcc (HPCC FPGA v1.3, default for cpu), documented "
        "(HPCC FPGA's documented formula) or adaptive (default for pcie, kernel and iec)",
    )
    parser.add_argument("-u", "--upper", type=int, default=UPPER, help="largest loop length")
    parser.add_argument("-l", "--lower", type=int, default=LOWER, help="smallest loop length")
    parser.add_argument(
        "-o", "--offset", type=int, default=OFFSET, help="log2 size where the loop length starts to fall"
    )
    parser.add_argument("-d", "--decrease", type=int, default=DECREASE, help="log2 steps from upper to lower")
    parser.add_argument("--channel-width", type=int, default=32, help="bytes per channel (documented rule)")
    parser.add_argument("--target-time", type=float, default=0.2, help="seconds per measurement (adaptive rule)")
    parser.add_argument("-n", "--repetitions", type=int, default=10, help="measurements per size; the best counts")
    add_rounds_options(parser)
    parser.add_argument("--ring", choices=("random", "natural"), default="random", help="ring positions")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random ring positions")
    parser.add_argument(
        "--reduction",
        choices=REDUCTIONS,
        default="hpcc",
        help="hpcc: mean of B(m) on one ring; rabenseifner: logavg over ring and random rings",
    )
    parser.add_argument("--random-rings", type=int, default=3, help="random rings of the rabenseifner reduction")
    parser.add_argument(
        "--validation-iterations",
        type=int,
        default=4,
        help="untimed exchanges per size whose every message is checked whole",
    )
    parser.add_argument(
        "--chunk",
        metavar="SIZE|auto",
        default="auto",
        help="pipelining chunk of staged transfers (default auto: measured on accelerators, see " "fpgacomm tune)",
    )
    parser.add_argument(
        "--slots",
        metavar="N|auto",
        default="auto",
        help="staging buffers per direction (default auto: measured on accelerators)",
    )
    parser.add_argument("--nodes", type=int, help="simulated FPGAs (sim; default: the rank count, at least 3)")
    parser.add_argument("--model", choices=MODELS, help="print the channel model's bandwidth beside each row")
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
    result = beff.run(
        comm,
        comm_type=args.comm_type,
        min_size=args.min_size,
        max_size=args.max_size,
        step_size=args.step_size,
        loop_rule=args.loop_rule,
        upper=args.upper,
        lower=args.lower,
        offset=args.offset,
        decrease=args.decrease,
        channel_width=args.channel_width,
        target_time=args.target_time,
        repetitions=args.repetitions,
        ring_order=args.ring,
        seed=args.seed,
        reduction=args.reduction,
        random_rings=args.random_rings,
        validation_iterations=args.validation_iterations,
        **staging_sizes(args),
        device=device_options(args),
        nodes=args.nodes,
        model=args.model,
        limits=limits_of(args) if args.comm_type == "sim" else None,
        on_progress=Progress("beff"),
        **rounds_parameters(args),
    )
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
