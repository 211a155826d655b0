"""fpgacomm predict --fabric PLATFORM ...: predicted times with their 95 %
intervals at any rank count (docs/PREDICTION.md)."""

from __future__ import annotations

import sys

from .options import size_argument


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="predict times at any rank count from a platform file, with 95 %% intervals",
        description="Simulates the experiment on the platform (a platform file from calibrate fit, or a preset) at "
        "each rank count and size, and gives each point a 95 % interval from the platform's parameter "
        "draws, the calibration's scatter between launches and its model-form term (cross-validation over rank "
        "counts). Every point's cost is estimated before anything runs. Example: fpgacomm predict "
        "--fabric platform.json --schedule tree --nodes 16,32,1024 --sizes 64K,1M,16M --json pred.json",
    )
    parser.add_argument("--fabric", required=True, metavar="PLATFORM", help="a platform file or a preset's name")
    parser.add_argument(
        "--experiment",
        choices=("gather", "beff", "mbw_mr"),
        default="gather",
        help="gather (the gather schedules), beff (b_eff's ring: time per message and neighbour), "
        "mbw_mr (osu mbw_mr with nodes/2 pairs: time per message and pair); default gather",
    )
    parser.add_argument(
        "--schedule",
        choices=("ring", "tree", "vlink", "mpi"),
        default="tree",
        help="the gather schedule (default tree)",
    )
    parser.add_argument("--collective", choices=("gather", "scatter", "allgather"), default="gather")
    parser.add_argument("--nodes", required=True, type=_nodes, metavar="N,N,...", help="rank counts")
    parser.add_argument(
        "--sizes",
        required=True,
        type=_sizes,
        metavar="SIZES",
        help="bytes per node, K/M/G suffixes: a list (64K,1M,16M) or MIN:MAX doubling",
    )
    parser.add_argument("--draws", type=int, default=200, help="parameter draws behind the interval (default 200)")
    parser.add_argument("--json", metavar="FILE", help="write the prediction Result as JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the prediction Result as CSV")
    parser.set_defaults(run=run)


def _nodes(text: str) -> list:
    import argparse

    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give rank counts as whole numbers, e.g. 16,32,1024") from None


def _sizes(text: str):
    return text if ":" in text else [size_argument(part) for part in text.split(",")]


def run(args) -> int:
    from ..calibration import predict

    result = predict.predict(
        args.fabric,
        args.experiment,
        args.schedule,
        args.nodes,
        args.sizes,
        collective=args.collective,
        draws=args.draws,
        say=lambda line: print(line, file=sys.stderr, flush=True),
    )
    print(
        result.table(
            f"# predicted {args.experiment} on {args.fabric}: time with its 95 % interval (low, high); "
            f"simulated: before the discrepancy factors (median {result.params['factor']:.3g}), which scale a "
            f"rank's own terms per size as at the largest calibrated rank count; a rank's own terms also slow with "
            f"the cores its host keeps busy (docs/PREDICTION.md, A core's speed)"
        ),
        flush=True,
    )
    for path, write in ((args.json, result.write_json), (args.csv, result.write_csv)):
        if path:
            write(path)
    return 0
