"""fpgacomm timeline FILE [-o FIG]: what limits the staged pipeline, from a
timeline written by `fpgacomm osu TEST ... --timeline FILE`."""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "timeline",
        help="analyse a staged-transfer timeline (osu --timeline)",
        description="Reads a timeline written by fpgacomm osu TEST ... --timeline FILE and prints, per rank and "
        "message size, how long each stage of the staged pipeline (device-to-host copies, MPI, "
        "host-to-device copies) was busy in the recorded iteration, how much the stages overlapped, "
        "how long all stood idle, the mean per-chunk latencies, and the stage that limits the "
        'pipeline (docs/METHODS.md, "Timeline of staged transfers"). Example: mpirun -np 2 '
        "fpgacomm osu bw D D --path staged --timeline tl.json; fpgacomm timeline tl.json -o tl.png",
    )
    parser.add_argument("file", metavar="FILE", help="a timeline JSON from fpgacomm osu TEST --timeline")
    parser.add_argument(
        "-o", "--output", metavar="FIG", help="also draw each stage's busy share per size: .png, .pdf or .svg"
    )
    parser.set_defaults(run=run)


def run(args) -> int:
    from ..results import timeline
    from .plot import read_result

    if args.output:  # matplotlib only when a figure is asked for
        from ..figures import plot
        from ..figures import timeline as timeline_figure

        plot.figure_format(args.output)  # before any work: a bad name is a usage error
    result = read_result(args.file)
    summaries = timeline.summarize(timeline.chunks(result, args.file))
    print("\n".join(timeline.report(summary) for summary in summaries))
    if args.output:
        plot.save(timeline_figure.figure(result, args.file), args.output)
    return 0
