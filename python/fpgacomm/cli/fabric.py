"""fpgacomm fabric latency|bw|traffic PRESET: simulated figures of a fabric."""

from __future__ import annotations

from .options import add_memory_option, size_argument


def add_limit_options(parser, memory: bool = True) -> None:
    """--max-events and --max-memory: what a simulated run may take
    (simulation/resources.py); shared by every simulated command. memory:
    False where the command's MPI options already give --max-memory."""
    from ..simulation.resources import Limits

    parser.add_argument(
        "--max-events",
        type=float,
        metavar="N",
        help=f"events (and transfers) a simulation may take (default {Limits.events:.0e})",
    )
    if memory:
        add_memory_option(parser)


def limits_of(args):
    from ..simulation.resources import Limits

    events = Limits.events if args.max_events is None else args.max_events
    return Limits(
        events=events, memory=args.max_memory if args.max_memory is not None else Limits.memory, transfers=events
    )


def register(subparsers) -> None:
    from ..simulation.fabric import PRESETS

    parser = subparsers.add_parser(
        "fabric",
        help="simulate a fabric of the seeds (VCSN, DCN, CusComNet, FSHMEM, b_eff) or a cluster",
        description='Simulates a preset fabric, or the platform file of one (docs/FABRIC.md, "Platform files"), '
        "at frame level and prints its figures with their units (--json keeps every digit, in seconds "
        "and B/s). Presets: " + ", ".join(PRESETS) + ".",
    )
    commands = parser.add_subparsers(dest="fabric_command", metavar="MEASUREMENT")
    commands.required = True

    def add(name: str, help_text: str):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        # The preset as a word, or as --preset (the spelling of `fpgacomm model`).
        sub.add_argument(
            "preset", nargs="?", metavar="PRESET", help=f"{', '.join(PRESETS)}, or a platform file (PLATFORM.json)"
        )
        sub.add_argument("--preset", dest="preset_option", metavar="PRESET", help="the same, as an option")
        sub.add_argument("--nodes", type=int, help="number of nodes (default: the preset's)")
        sub.add_argument("--json", metavar="FILE", help="also write the Result as JSON")
        add_limit_options(sub)
        sub.set_defaults(run=run)
        return sub

    latency = add("latency", "one-way latency of a message between node 0 and a node H links away")
    latency.add_argument(
        "--hops", type=int, help="links traversed (1: neighbours on direct links; " "default: the nearest node)"
    )
    latency.add_argument("--size", type=size_argument, default=0, help="message size in bytes, K/M/G (default 0)")
    bw = add("bw", "bandwidth of one long stream between neighbours")
    bw.add_argument("--size", type=size_argument, default=64 << 20, help="stream size in bytes, K/M/G (default 64M)")
    bw.add_argument("--hops", type=int, help="links traversed (default: the nearest node)")
    traffic = add("traffic", "random uniform traffic at LAMBDA packets per second per node")
    traffic.add_argument("--rate", type=float, required=True, metavar="LAMBDA", help="packets per second per node")
    traffic.add_argument("--packets", type=int, default=2000, help="packets per node (default 2000)")
    traffic.add_argument("--size", type=size_argument, help="packet payload in bytes (default: the largest)")
    platform = commands.add_parser(
        "platform",
        help="write a preset (or a platform file, changed) as a platform file",
        description="Writes the preset's platform file (schema fpgacomm.platform/1: every parameter with its unit "
        'and provenance; docs/FABRIC.md, "Platform files") on stdout, or to --json FILE. '
        "Example: fpgacomm fabric platform cluster --nodes 16 --set ranks_per_host=8 --json cluster.json",
    )
    platform.add_argument("preset", nargs="?", metavar="PRESET", help=f"{', '.join(PRESETS)}, or a platform file")
    platform.add_argument("--preset", dest="preset_option", metavar="PRESET", help="the same, as an option")
    platform.add_argument("--nodes", type=int, help="number of nodes (default: the preset's)")
    platform.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a parameter, in SI units (s, B/s, B), e.g. --set send_overhead=1e-6; repeat " "for more",
    )
    platform.add_argument("--json", metavar="FILE", help="write the platform file here instead of stdout")
    platform.set_defaults(run=run)


def preset_of(args) -> str:
    """The preset, given as PRESET or --preset PRESET, once."""
    from ..params import usage_error

    given = [name for name in (args.preset, args.preset_option) if name is not None]
    if len(given) != 1:
        raise usage_error(
            f"fabric {args.fabric_command}: give the preset once, as PRESET or --preset PRESET "
            f"({'got ' + ' and '.join(given) if given else 'none given'})"
        )
    return given[0]


def parameter_changes(settings: list) -> dict:
    """--set NAME=VALUE, each value a whole number, a number or a name."""
    from ..params import usage_error

    changes = {}
    for setting in settings:
        name, equals, text = setting.partition("=")
        if not equals or not name:
            raise usage_error(f"fabric platform: --set {setting!r}; give NAME=VALUE, e.g. --set send_overhead=1e-6")
        for kind in (int, float, str):
            try:
                changes[name] = kind(text)
                break
            except ValueError:
                continue
    return changes


def write_platform(fab, path: str | None) -> int:
    from ..results.result import atomic_write

    text = fab.to_json()
    if path:
        atomic_write(path, lambda file: file.write(text), newline="\n")
    else:
        print(text, end="")
    return 0


def run(args) -> int:
    from ..simulation import fabric
    from ..units import MODEL_DIGITS

    args.preset = fabric.platform_or_preset(preset_of(args), args.nodes)

    if args.fabric_command == "platform":
        return write_platform(
            fabric.with_arguments(args.preset, **parameter_changes(args.set)) if args.set else args.preset, args.json
        )
    if args.fabric_command == "latency":
        result = fabric.latency(args.preset, nodes=args.nodes, hops=args.hops, size=args.size, limits=limits_of(args))
    elif args.fabric_command == "bw":
        result = fabric.bandwidth(args.preset, nodes=args.nodes, size=args.size, hops=args.hops, limits=limits_of(args))
    else:
        result = fabric.traffic(
            args.preset, rate=args.rate, nodes=args.nodes, packets=args.packets, size=args.size, limits=limits_of(args)
        )
    print(
        result.table(
            f"# fpgacomm fabric {args.fabric_command}: {result.params['fabric']} "
            f"({result.params['topology']}), simulated",
            digits=MODEL_DIGITS,
        )
    )
    if args.json:
        result.write_json(args.json)
    return 0
