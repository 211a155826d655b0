"""fpgacomm fit RESULT.json... --model NAME: a model fitted to measurements."""

from __future__ import annotations


def register(subparsers) -> None:
    from ..models import REGISTRY

    parser = subparsers.add_parser(
        "fit",
        help="fit a performance model to Result JSON files",
        description="Fits a model to measured Results and prints its parameters with standard errors, R^2, and "
        "measured against predicted per point. Files of different memory kinds (or b_eff types, "
        "datatypes, fabrics) are fitted apart, one fit per group; within a group, files of one "
        "benchmark over different points are stacked, of different benchmarks joined on size; a file "
        "the model does not read is refused. Example: fpgacomm fit lat_HH.json lat_DD.json "
        "--model hockney",
    )
    parser.add_argument(
        "results", nargs="+", metavar="RESULT", help="Result files written with --json, globs or folders of them"
    )
    parser.add_argument("--model", required=True, metavar="NAME", help=", ".join(REGISTRY))
    parser.add_argument(
        "--json", metavar="OUT", help="write the fit (and the model against the measurement) as a Result JSON"
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..models import fit
    from ..params import usage_error
    from ..results.inputs import expand

    files = expand(args.results)
    groups = fit.fit_groups(files, args.model)
    if args.json and len(groups) > 1:
        raise usage_error(
            f"fit: --json holds one fit, and these files make {len(groups)} groups "
            f"({'; '.join(group.label for group in groups)}); fit each group alone"
        )
    texts = [
        ("\n" if number else "")
        + f"# {args.model} fit to {group.label}: {', '.join(group.files)}\n{group.fit}\n"
        + group.against.table(
            f"# measured {group.against.params['y_column']} against the fitted "
            f"{args.model} model's prediction; {group.against.params['error']}"
        )
        for number, group in enumerate(groups)
    ]
    try:  # the file first, so that it holds the fit whatever happens to the terminal
        if args.json:
            fit.to_result(groups[0].fit, groups[0].against, files).write(args.json)
    finally:  # and the fit printed, also where the file could not be written
        for text in texts:
            print(text)
    return 0
