"""fpgacomm compare A B [C ...] | --run 'CMD A' --run 'CMD B' --rounds N:
each input against the first, size by size, with intervals and tests."""

from __future__ import annotations

import argparse

from .options import rounds_argument


def register(subparsers) -> None:
    from ..results.compare import DEFAULT_ROUNDS

    parser = subparsers.add_parser(
        "compare",
        help="compare runs size by size: ratios with 95 %% intervals, tests and verdicts",
        description="Compares each input with the first, size by size. The unit is the launch (a job): each "
        "file is one launch, reduced to its median per size, and the launches are compared: the "
        "ratio (Hodges-Lehmann) with its 95 % interval, the Mann-Whitney U test corrected over the "
        "sizes (Holm) and a verdict: faster or slower (the test), no difference (the interval inside "
        "--threshold of 1), or undecided (neither shown, with the launches a side that would decide). "
        "With one launch a side the rounds of the two jobs are compared, which tells two jobs apart, "
        "not two set-ups: no faster or slower verdict there (use --run). An input is a Result file "
        "(JSON, CSV, or the text of OSU Micro-Benchmarks, nccl-tests, IMB-MPI1 or HPCC FPGA b_eff), "
        "a glob or a folder (a --run folder: its launches). --run launches commands instead, taking "
        "turns, and compares their launches. Examples: fpgacomm compare before.json after.json ; "
        "fpgacomm compare --run 'mpirun -np 2 osu_latency' --run 'mpirun -np 2 fpgacomm osu latency' "
        "--rounds 7 --threshold 5%",
    )
    parser.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="Result files, globs or folders; the first is " "the reference"
    )
    parser.add_argument(
        "--run",
        action="append",
        default=[],
        metavar="CMD",
        dest="commands",
        help="a shell command to launch --rounds times (an fpgacomm command, which gets a --json "
        "of each launch, or a program printing OMB 7.x text); repeat for each side",
    )
    parser.add_argument(
        "--rounds",
        type=rounds_argument,
        default=DEFAULT_ROUNDS,
        metavar="N",
        help="with --run: launches of each command, taking turns A B A B (default %(default)s); "
        "the whole campaign runs under fpgacomm's --timeout (give --timeout 0 for none)",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="with --run: the new folder that keeps every launch's output " "(default: compare-DATE-TIME here)",
    )
    parser.add_argument(
        "--threshold",
        default=0.0,
        metavar="T",
        help="the difference that does not matter: 5%% and 0.05 are the same 5 %% (as Python's "
        "threshold=); slower or faster need more than it, no difference needs the interval "
        "inside it (default 0: no difference is never claimed)",
    )
    parser.add_argument(
        "--level",
        type=level_argument,
        default=0.95,
        metavar="PERCENT",
        help="confidence of the intervals, and 1 - the chance of flagging any size of a "
        "comparison where none differs (default 95%%)",
    )
    parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="for CI scripts: exit with status 1 where an input is slower than the first at any "
        "size, else 3 where a size is undecided with its interval beyond --threshold on the "
        "slower side (more launches decide), else 0 (one job a side tests no set-up: 0)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the comparison as a Result JSON")
    parser.add_argument("--csv", metavar="FILE", help="write the comparison as a Result CSV")
    parser.add_argument(
        "-o", "--figure", metavar="FIG", help="draw the ratio per size with its interval as a band: .png, .pdf or .svg"
    )
    parser.set_defaults(run=run)


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
        raise usage_error(
            f"compare takes Result files or --run commands, not both (got {', '.join(args.inputs)} " "and --run)"
        )
    result = compare.compare(
        args.inputs, run=args.commands, rounds=args.rounds, out=args.out, threshold=args.threshold, level=args.level
    )
    print(compare.format_comparison(result))
    for path in (args.json, args.csv):
        if path:
            result.write(path)
    if args.figure:
        plot.save(plot.comparison(result), args.figure)
    return compare.exit_status(result) if args.fail_on_regression else 0
