"""fpgacomm calibrate run DIR (under mpirun): one launch of the calibration
campaign; fpgacomm calibrate fit DIR -o platform.json: the platform fitted
to the launches in DIR. docs/PREDICTION.md has the method."""

from __future__ import annotations

from .options import Parser, add_mpi_options, size_argument


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="measure this cluster (calibrate run) and fit a platform to it (calibrate fit)",
        description="Calibrates a platform of this cluster for fpgacomm predict: calibrate run under mpirun, "
        "three times or more between other work (8 ranks give the fit three rank counts), then "
        "calibrate fit. docs/PREDICTION.md has the method.",
    )
    steps = parser.add_subparsers(dest="step", metavar="STEP", parser_class=Parser)
    steps.required = True

    measure = steps.add_parser(
        "run",
        help="add one launch of the campaign to DIR (under mpirun)",
        description="Adds one launch of the calibration campaign to DIR: ping-pong at log-uniformly drawn sizes, "
        "send and receive overheads, bandwidth, osu mbw_mr at 1 .. K/2 pairs, the host's copy rate with "
        "1 .. all its cores copying at once, a k-to-1 incast, "
        "barrier at 2 .. K ranks, the gather schedules ring, tree, vlink and mpi and b_eff's ring at "
        "three or more rank counts up to K, in an order drawn per launch, the load recorded. Each "
        "launch is one Result file in DIR, listed in DIR/index.json; run it again (interleaved with "
        "other work) for more launches: the fit's uncertainty comes from the spread between "
        "launches. Example: mpirun -np 2 fpgacomm calibrate run campaign/",
    )
    measure.add_argument("directory", metavar="DIR", help="the campaign's folder (made if missing)")
    measure.add_argument(
        "--sizes",
        type=_sizes,
        default=None,
        metavar="SIZE,SIZE,...",
        help="bytes per node of the gathers, K/M/G suffixes, a list or MIN:MAX doubling "
        "(default 64K,256K,1M,4M,16M)",
    )
    measure.add_argument(
        "-i",
        "--iterations",
        type=int,
        default=None,
        help="timed iterations per size of the point-to-point families, incast and barrier " "(default 50)",
    )
    measure.add_argument("--seed", type=int, default=None, help="seed of the launch's draws (default: drawn)")
    add_mpi_options(measure)
    measure.set_defaults(run=run_campaign)

    fitting = steps.add_parser(
        "fit",
        help="fit the cluster platform to the launches in DIR",
        description="Fits the cluster preset's parameters (send and receive overheads, gap, shared-memory latency "
        "and bandwidth, the host's shared bandwidth, eager threshold and rendezvous) to the launches in "
        "DIR, none negative; draws for the uncertainty come from a bootstrap over launches. Prints the "
        "parameters with their 95 % range over the draws, and the residuals per measurement family. "
        "Example: fpgacomm calibrate fit campaign/ -o platform.json",
    )
    fitting.add_argument("directory", metavar="DIR", help="the campaign's folder")
    fitting.add_argument("-o", "--output", required=True, metavar="PLATFORM.json", help="the platform file to write")
    fitting.add_argument("--draws", type=int, default=None, help="bootstrap draws (default 200)")
    fitting.set_defaults(run=run_fit)


def _sizes(text: str):
    """A gather size list as `gather --sizes` takes it: MIN:MAX kept as text, a list parsed."""
    return text if ":" in text else [size_argument(part) for part in text.split(",")]


def run_campaign(args) -> int:
    from ..calibration import campaign
    from ..runtime import mpi

    comm = mpi.world()
    options = {
        key: value
        for key, value in (("gather_sizes", args.sizes), ("iterations", args.iterations), ("seed", args.seed))
        if value is not None
    }
    result = campaign.run(comm, directory=args.directory, **options)
    if comm.Get_rank() == 0:
        families = sorted({row["family"] for row in result.rows})
        print(
            f"calibrate run: {len(result.rows)} points of {len(families)} families ({', '.join(families)}) on "
            f"{result.params['ranks']} ranks, seed {result.params['seed']}, written to {args.directory}",
            flush=True,
        )
    return 0


def run_fit(args) -> int:
    import numpy as np

    from ..calibration import fit
    from ..params import usage_error
    from ..units import with_unit as format_value

    if args.draws is not None and args.draws < 1:
        raise usage_error(f"calibrate fit: --draws {args.draws}; give 1 or more")
    fab, record, said = fit.fit(args.directory, **({"bootstrap": args.draws} if args.draws else {}))
    for line in said:
        print(f"# {line}")
    units = fabrics_units(fab)
    print(f"{'parameter':<20} {'value':>12} {'95% of draws':>28}")
    for key in fit.FITTED:
        values = [draw[key] for draw in fab.draws]
        low, high = np.percentile(values, [2.5, 97.5]) if values else (fab.arguments[key],) * 2
        print(
            f"{key:<20} {format_value(fab.arguments[key], units[key]):>12} "
            f"{format_value(low, units[key]) + ' .. ' + format_value(high, units[key]):>28}"
        )
    print(
        "# eager threshold between {} and {} B (the drawn ping-pong sizes either side of the step)".format(
            *record["eager_threshold_between"]
        )
    )
    print(
        f"{'family':<16} {'points':>6} {'median residual':>16} {'largest':>9}  "
        "(residual: (simulated - measured) / measured)"
    )
    for family, item in record["residuals"].items():
        print(f"{family:<16} {item['points']:>6} {item['median']:>+16.1%} {item['largest']:>+9.1%}")
    print(
        f"{'experiment':<16} {'factor':>7} {'per size':>16} {'scatter':>8} {'model-form':>11}  "
        f"(factor and per size: at the largest rank count, the median and each size's, what scales a rank's own "
        f"terms, which predict keeps past them; model-form: cross-validation, the factors at the next-to-largest rank "
        f"count checked at the largest)"
    )
    for name, item in record["experiments"].items():
        form = "none" if item["model_form"] is None else f"{item['model_form']:.3f}"
        per_size = fit.factor_range(item["size_factors"])
        print(f"{name:<16} {item['factor']:>7.3f} {per_size:>16} {item['scatter']:>8.3f} {form:>11}")
    fit.write(fab, record, args.output)
    print(f"# written to {args.output}")
    return 0


def fabrics_units(fab) -> dict:
    from ..simulation import fabric as fabrics

    return fabrics.PRESETS[fab.name].units
