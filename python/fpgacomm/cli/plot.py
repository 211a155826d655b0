"""fpgacomm plot RESULT.json... -o FIG.png|pdf|svg: the standard figure of saved Results."""

from __future__ import annotations

import os
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot", help="draw the standard figure of saved Results",
        description="Draws the standard figure of the Results (JSON or CSV files written by fpgacomm): "
                    "latency or bandwidth against message size (several Results: one line each, e.g. one "
                    "per memory kind; latency and bandwidth together: side by side), b_eff per size with "
                    "the channel model, gather time and throughput per node count, or a model against "
                    "its measurement (a fit_MODEL Result), or a comparison's ratios per size (fpgacomm "
                    "compare --json). Example: fpgacomm plot lat_HH.json lat_DD.json "
                    "-o latency.pdf --model hockney")
    parser.add_argument("results", nargs="+", metavar="RESULT",
                        help="Result files (.json or .csv) or a peer's text (OMB, nccl-tests, IMB-MPI1, b_eff)")
    parser.add_argument("-o", "--output", required=True, metavar="FIG",
                        help="figure file: .png, .pdf or .svg")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="fit this model (fpgacomm fit's names) to each Result it can use and draw it in "
                             "the colour of the Result's kinds; repeatable")
    parser.set_defaults(run=run)


def read_result(path: str):
    """A Result from a .json or .csv file or a peer's text (OMB, nccl-tests,
    IMB-MPI1, b_eff), or a UsageError naming the file."""
    from ..params import usage_error
    from ..results.result import Result
    from ..runtime.files import ResultError

    if os.path.isdir(path):
        raise usage_error(f"{path}: a directory, not a Result file; give a .json or .csv file in it")
    try:
        return Result.read(path)  # JSON, CSV, or a peer's text
    except ResultError as error:  # runtime/files.py's boundary: names the path and what is wrong
        raise usage_error(str(error)) from None
    except (ValueError, KeyError, TypeError) as error:
        raise usage_error(f"{path}: not an fpgacomm Result: {error}") from None


def fits(modules: dict, results: list) -> dict:
    """{Result: [Fit]}: each model fitted to every Result it can use (a
    latency model's fit is drawn beside the bandwidth of the same kinds
    too); a Result it cannot use is said on stderr, a model that can use
    none is an error."""
    from .. import _core

    fitted = {}
    for name, module in modules.items():
        refusals = []
        for result in results:
            try:
                fitted.setdefault(result, []).append(module.fit(result))
            except _core.UsageError as error:
                refusals.append(error)
        if len(refusals) == len(results):
            raise refusals[0]
        for error in refusals:
            print(f"fpgacomm plot: {name} not fitted: {error}", file=sys.stderr)
    return fitted


def run(args) -> int:
    from ..figures import plot
    from ..models import load

    plot.figure_format(args.output)  # before any work: a bad name is a usage error
    modules = {name: load(name) for name in args.model}
    results = [read_result(path) for path in args.results]
    plot.save(plot.figure_for(results, models=fits(modules, results)), args.output)
    print(f"fpgacomm plot: {len(results)} Result(s) -> {args.output}")
    return 0
