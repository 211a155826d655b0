"""fpgacomm plot RESULT.json... -o FIG.png|pdf|svg: the standard figure of saved Results."""

from __future__ import annotations

import importlib
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
                        help="fit this model (fpgacomm fit's names) to each Result and draw it; repeatable")
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


def fit(name: str, result):
    """The registered model `name` fitted to result (contract: REGISTRY)."""
    from . import _core
    from .models import REGISTRY

    if name not in REGISTRY:
        raise _core.UsageError(f"unknown model '{name}'; choose {', '.join(sorted(REGISTRY))}")
    return importlib.import_module(REGISTRY[name]).fit(result)


def run(args) -> int:
    from . import plot

    plot.figure_format(args.output)  # before any work: a bad name is a usage error
    results = [read_result(path) for path in args.results]
    models = [fit(name, result) for name in args.model for result in results]
    plot.save(plot.figure_for(results, models=models), args.output)
    print(f"fpgacomm plot: {len(results)} Result(s) -> {args.output}")
    return 0
