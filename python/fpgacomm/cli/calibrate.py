"""fpgacomm calibrate run DIR (under mpirun): one launch of the calibration
campaign; fpgacomm calibrate fit DIR -o platform.json: the platform fitted
to the launches in DIR. docs/PREDICTION.md has the method."""

from __future__ import annotations

from .options import Parser, add_mpi_options, size_argument


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="measure this cluster (calibrate run) and fit a platform to it (calibrate fit)",
        description="Calibrates a platform of this cluster for fpgacomm predict. Example: mpirun -np 8 fpgacomm "
                    "calibrate run campaign/ (three times or more, between other work); then fpgacomm calibrate "
                    "fit campaign/ -o platform.json")
    steps = parser.add_subparsers(dest="step", metavar="STEP", parser_class=Parser)
    steps.required = True

    measure = steps.add_parser(
        "run", help="add one launch of the campaign to DIR (under mpirun)",
        description="Adds one launch of the calibration campaign to DIR: ping-pong at log-uniformly drawn sizes, "
                    "send and receive overheads, bandwidth, osu mbw_mr at 1 .. K/2 pairs, a k-to-1 incast, "
                    "barrier at 2 .. K ranks, the gather schedules ring, tree, vlink and mpi and b_eff's ring at "
                    "three or more rank counts up to K, in an order drawn per launch, the load recorded. Each "
                    "launch is one Result file in DIR, listed in DIR/index.json; run it again (interleaved with "
                    "other work) for more launches: the fit's uncertainty comes from the spread between "
                    "launches. Example: mpirun -np 8 fpgacomm calibrate run campaign/")
    measure.add_argument("directory", metavar="DIR", help="the campaign's folder (made if missing)")
    measure.add_argument("--sizes", type=_sizes, default=None, metavar="SIZE,SIZE,...",
                         help="bytes per node of the gathers, K/M/G suffixes, a list or MIN:MAX doubling "
                              "(default 64K,256K,1M,4M,16M)")
    measure.add_argument("-i", "--iterations", type=int, default=None,
                         help="timed iterations per size of the point-to-point families, incast and barrier "
                              "(default 50)")
    measure.add_argument("--seed", type=int, default=None, help="seed of the launch's draws (default: drawn)")
    add_mpi_options(measure)
    measure.set_defaults(run=run_campaign)


def _sizes(text: str):
    """A gather size list as `gather --sizes` takes it: MIN:MAX kept as text, a list parsed."""
    return text if ":" in text else [size_argument(part) for part in text.split(",")]


def run_campaign(args) -> int:
    from ..calibration import campaign
    from ..runtime import mpi

    comm = mpi.world()
    options = {key: value for key, value in (("gather_sizes", args.sizes), ("iterations", args.iterations),
                                             ("seed", args.seed)) if value is not None}
    result = campaign.run(args.directory, comm, **options)
    if comm.Get_rank() == 0:
        families = sorted({row["family"] for row in result.rows})
        print(f"calibrate run: {len(result.rows)} points of {len(families)} families ({', '.join(families)}) on "
              f"{result.params['ranks']} ranks, seed {result.params['seed']}, written to {args.directory}",
              flush=True)
    return 0
