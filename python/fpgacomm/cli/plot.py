"""fpgacomm plot RESULT.json... -o FIG.png|pdf|svg: the standard figure of saved Results."""

from __future__ import annotations

import os
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="draw the standard figure of saved Results",
        description="Draws the standard figure of the Results (JSON or CSV files written by fpgacomm): "
        "latency or bandwidth against message size (several Results: one line each, e.g. one "
        "per memory kind; latency and bandwidth together: side by side), b_eff per size with "
        "the channel model, gather time and throughput per node count, or a model against "
        "its measurement (a fit_MODEL Result), or a comparison's ratios per size (fpgacomm "
        "compare --json). Lines are named by what tells the Results apart (their kinds or "
        "parameters, else their file names) or by --label. Example: fpgacomm plot lat_HH.json "
        "lat_DD.json -o latency.pdf --model hockney",
    )
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="Result files (.json or .csv) or a peer's text (OMB, nccl-tests, IMB-MPI1, b_eff), "
        "globs or folders (a compare --run folder: its launches)",
    )
    parser.add_argument("-o", "--output", required=True, metavar="FIG", help="figure file: .png, .pdf or .svg")
    parser.add_argument(
        "--label",
        action="append",
        metavar="NAME",
        help="the legend's name of each Result, in the order of the files; repeat once per file",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME",
        help="fit this model (fpgacomm fit's names) to each Result it can use and draw it in "
        "the colour of the Result's kinds; repeatable",
    )
    parser.set_defaults(run=run)


def read_result(path: str):
    """A Result from a .json or .csv file or a peer's text (OMB, nccl-tests,
    IMB-MPI1, b_eff), or a UsageError naming the file."""
    from ..params import usage_error
    from ..results.result import Result
    from ..runtime.files import ResultError

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


def _file_names(files: list) -> list:
    """Each file's name, with its folder where two files share a name (the
    launches of two compare --run folders: A/01.json, B/01.json)."""
    names = [os.path.basename(path) for path in files]
    return [os.path.relpath(path) if names.count(name) > 1 else name for path, name in zip(files, names)]


def run(args) -> int:
    from ..figures import plot
    from ..models import load
    from ..results.inputs import expand

    plot.figure_format(args.output)  # before any work: a bad name is a usage error
    modules = {name: load(name) for name in args.model}
    files = expand(args.results)
    results = [read_result(path) for path in files]
    labels = args.label
    if labels is None and plot.drawable(results[0]) in ("latency", "bandwidth", "beff"):  # lines per Result
        labels = plot.legend_labels(results, fallback=_file_names(files))
    plot.save(plot.figure_for(results, models=fits(modules, results), labels=labels), args.output)
    print(f"fpgacomm plot: {len(results)} Result(s) -> {args.output}")
    return 0
