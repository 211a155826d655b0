"""fpgacomm fit RESULT.json... --model NAME: a model fitted to measurements."""

from __future__ import annotations

import os


def register(subparsers) -> None:
    from ..models import REGISTRY

    parser = subparsers.add_parser(
        "fit", help="fit a performance model to Result JSON files",
        description="Fits a model to measured Results and prints its parameters with standard errors, R^2, and "
                    "measured against predicted per point. Several files of one benchmark are stacked; of "
                    "different benchmarks, joined on size. Example: fpgacomm fit lat.json --model hockney")
    parser.add_argument("results", nargs="+", metavar="RESULT.json", help="Result files written with --json")
    parser.add_argument("--model", required=True, metavar="NAME", help=", ".join(REGISTRY))
    parser.add_argument("--json", metavar="OUT", help="write the fit (and the comparison) as a Result JSON")
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..models import fit
    from ..params import usage_error
    from ..results.report import format_table

    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        raise usage_error(f"fit: --json {args.json}: its directory does not exist; create it or give another path")
    fitted, comparison = fit.fit(args.results, args.model)
    print(fitted)
    print(format_table(comparison))
    if args.json:
        fit.to_result(fitted, comparison, args.results).write(args.json)
    return 0
