"""fpgacomm plot RESULT.json... -o FIG.png|pdf|svg: the standard figure of saved Results."""

from __future__ import annotations

import os


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot", help="draw the standard figure of saved Results",
        description="Draws the standard figure of the Results (JSON or CSV files written by fpgacomm): "
                    "latency or bandwidth against message size (several Results: one line each, e.g. one "
                    "per memory kind; latency and bandwidth together: side by side), b_eff per size with "
                    "the channel model, gather time and throughput per node count, or a model against "
                    "its measurement (a compare Result). Example: fpgacomm plot lat_HH.json lat_DD.json "
                    "-o latency.pdf --model hockney")
    parser.add_argument("results", nargs="+", metavar="RESULT", help="Result files (.json or .csv)")
    parser.add_argument("-o", "--output", required=True, metavar="FIG",
                        help="figure file: .png, .pdf or .svg")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="fit this model (fpgacomm fit's names) to each Result and draw it in the Result's "
                             "colour; repeatable")
    parser.set_defaults(run=run)


def read_result(path: str):
    """A Result from a .json or .csv file, or a UsageError naming the file."""
    from . import _core
    from .result import Result

    if not os.path.isfile(path):
        raise _core.UsageError(f"{path}: no such file")
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".json", ".csv"):
        raise _core.UsageError(f"{path}: a Result file is .json or .csv")
    try:
        return Result.read_json(path) if suffix == ".json" else Result.read_csv(path)
    except (ValueError, KeyError, TypeError) as error:
        raise _core.UsageError(f"{path}: not an fpgacomm Result: {error}") from None


def run(args) -> int:
    from . import plot
    from .models import load

    plot.figure_format(args.output)  # before any work: a bad name is a usage error
    modules = [load(name) for name in args.model]
    results = [read_result(path) for path in args.results]
    models = {result: [module.fit(result) for module in modules] for result in results} if modules else ()
    plot.save(plot.figure_for(results, models=models), args.output)
    print(f"fpgacomm plot: {len(results)} Result(s) -> {args.output}")
    return 0
