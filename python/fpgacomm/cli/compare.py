"""fpgacomm compare A B [C ...] | --run 'CMD A' --run 'CMD B' --rounds N:
each input against the first, size by size, with intervals and tests."""

from __future__ import annotations

import argparse

from .options import rounds_argument


def register(subparsers) -> None:
    from ..results.compare import DEFAULT_ROUNDS

    parser = subparsers.add_parser(
        "compare", help="compare runs size by size: ratios with 95 %% intervals, tests and verdicts",
        description="Compares each input with the first, size by size: the ratio of their values (latency, or "
                    "bandwidth) with its 95 % interval (Hodges-Lehmann), the Mann-Whitney U test corrected "
                    "over the sizes (Holm) and a verdict: faster, slower, no difference, or undecided (an interval "
                    "beside 1 that the corrected test cannot yet back: more rounds decide). An input is a Result "
                    "file (JSON, CSV, or the text of OSU Micro-Benchmarks 7.x, nccl-tests, IMB-MPI1 or HPCC "
                    "FPGA b_eff), a glob or a folder; its values of a size are pooled over its files, each "
                    "giving its rounds or its one value. --run launches commands instead, taking turns, and "
                    "compares their launches. Examples: fpgacomm compare before.json after.json ; fpgacomm compare "
                    "--run 'mpirun -np 2 osu_latency' --run 'mpirun -np 2 fpgacomm osu latency' --rounds 7")
    parser.add_argument("inputs", nargs="*", metavar="INPUT", help="Result files, globs or folders; the first is "
                                                                   "the reference")
    parser.add_argument("--run", action="append", default=[], metavar="CMD", dest="commands",
                        help="a shell command to launch --rounds times (an fpgacomm command, which gets a --json "
                             "of each launch, or a program printing OMB 7.x text); repeat for each side")
    parser.add_argument("--rounds", type=rounds_argument, default=DEFAULT_ROUNDS, metavar="N",
                        help="with --run: launches of each command, taking turns A B A B (default %(default)s); "
                             "the whole campaign runs under fpgacomm's --timeout (give --timeout 0 for none)")
    parser.add_argument("--out", metavar="DIR", help="with --run: the new folder that keeps every launch's output "
                                                     "(default: compare-DATE-TIME here)")
    parser.add_argument("--threshold", type=percent_argument, default=0.0, metavar="PERCENT",
                        help="count differences smaller than this (e.g. 5%%) as no difference")
    parser.add_argument("--level", type=level_argument, default=0.95, metavar="PERCENT",
                        help="confidence of the intervals, and 1 - the chance of flagging any size of a "
                             "comparison where none differs (default 95%%)")
    parser.add_argument("--fail-on-regression", action="store_true",
                        help="exit with status 1 when an input is significantly worse than the first at any size "
                             "(beyond --threshold): for CI scripts")
    parser.add_argument("--json", metavar="FILE", help="write the comparison as a Result JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the comparison as a Result CSV")
    parser.add_argument("-o", "--figure", metavar="FIG",
                        help="draw the ratio per size with its interval as a band: .png, .pdf or .svg")
    parser.set_defaults(run=run)


def percent_argument(text: str) -> float:
    """--threshold: "5%" or "5" (percent), as a fraction."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = -1.0
    if not 0 <= value < 100:
        raise argparse.ArgumentTypeError(f"--threshold takes a percentage from 0 to below 100 such as 5%; got {text!r}")
    return value / 100


def level_argument(text: str) -> float:
    """--level: "99%" or "99" (percent), as a fraction."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = 0.0
    if not 50 <= value < 100:
        raise argparse.ArgumentTypeError(f"--level takes a percentage from 50 to below 100 such as 99%; got {text!r}")
    return value / 100


def run(args) -> int:
    from ..figures import plot
    from ..params import usage_error
    from ..results import compare

    if args.figure:
        plot.figure_format(args.figure)  # before any work: a bad name is a usage error
    if args.commands and args.inputs:
        raise usage_error(f"compare takes Result files or --run commands, not both (got {', '.join(args.inputs)} "
                          "and --run)")
    result = compare.compare(args.inputs, run=args.commands, rounds=args.rounds, out=args.out,
                             threshold=args.threshold, level=args.level)
    print(compare.format_comparison(result))
    for path in (args.json, args.csv):
        if path:
            result.write(path)
    if args.figure:
        plot.save(plot.comparison(result), args.figure)
    return 1 if args.fail_on_regression and compare.regressions(result) else 0
