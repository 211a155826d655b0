"""fpgacomm validate PREDICTION.json MEASURED...: a prediction against
held-out launches, or why no accuracy can be claimed from them."""

from __future__ import annotations

import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a prediction against held-out measurements, or say why it cannot",
        description="Compares a prediction (fpgacomm predict --json) with measured launches at its points: per "
        "point the measured median over launches with its interval, the prediction with its 95 % "
        "interval, the signed error (predicted - measured) / measured and whether the interval "
        "covered it; per rank count and size class the median and largest |error|, the coverage and "
        "the mean half-width. Each measured file is one launch (fpgacomm gather, fpgacomm beff or "
        "fpgacomm calibrate run with --json); give 3 launches a point or more. No accuracy is claimed, "
        "and the reason is printed, where the launches ran more ranks on a host than it has cores, "
        "started under load, or spread more than the error would be. Example: fpgacomm validate "
        "pred.json heldout/",
    )
    parser.add_argument("prediction", nargs="?", metavar="PREDICTION.json", help="the file of fpgacomm predict --json")
    parser.add_argument(
        "measured",
        nargs="*",
        metavar="MEASURED",
        help="Result files of the held-out launches, folders of them, or globs; further prediction "
        "files among them (one per schedule) join the first",
    )
    parser.add_argument(
        "--cv",
        metavar="DIR",
        help="instead: cross-validate a calibration campaign (fpgacomm calibrate run DIR): fit the "
        "platform on its smaller rank counts, predict its largest, validate against its own "
        "launches there",
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=None,
        metavar="N",
        help="with --cv: parameter draws behind each predicted interval (default: predict's)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the validation as a Result JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the per-point table as a Result CSV")
    parser.add_argument(
        "-o",
        "--figure",
        metavar="FIG",
        help="draw the prediction with its band against the measured points: .png, .pdf or .svg",
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..figures import plot
    from ..results import validation

    if args.figure:
        plot.figure_format(args.figure)  # before any work: a bad name is a usage error
    result = _cross_validation(args) if args.cv else validation.validate(*_files(args))
    for path in (args.json, args.csv):
        if path:
            result.write(path)
    print(validation.format_validation(result))
    if args.figure:
        plot.save(plot.figure_for(result), args.figure)
    return 0


def _files(args) -> tuple:
    """(prediction, measured) as given, or a usage error naming what is missing."""
    from ..params import usage_error

    if args.draws is not None:
        raise usage_error("validate: --draws applies to --cv's predictions; a prediction file has its draws")
    if args.prediction is None or not args.measured:
        raise usage_error(
            "validate: give a prediction and the measured launches (fpgacomm validate PREDICTION.json "
            "MEASURED...), or a calibration campaign to cross-validate (fpgacomm validate --cv DIR)"
        )
    return args.prediction, args.measured


def _cross_validation(args):
    from ..calibration import cross_validation, predict
    from ..params import usage_error

    if args.prediction is not None:
        raise usage_error(
            f"validate: --cv makes its own prediction from {args.cv}; give no prediction or measured "
            f"files with it (got {' '.join([args.prediction, *args.measured])})"
        )
    draws = predict.DRAWS if args.draws is None else args.draws
    # Notes on stderr, as predict's: stdout holds the validation's text alone.
    return cross_validation.cross_validate(
        args.cv, draws=draws, say=lambda line: print(line, file=sys.stderr, flush=True)
    )
