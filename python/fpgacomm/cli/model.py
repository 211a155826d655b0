"""fpgacomm model NAME [--option VALUE ...]: a model's figures, no measurement."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    from ..models import REGISTRY

    parser = subparsers.add_parser(
        "model",
        help="print a performance model's predictions",
        description="Prints a model's figures, each with its unit, without measuring anything. Models: "
        f"{', '.join(REGISTRY)}; their options: fpgacomm model NAME --help. "
        "Example: fpgacomm model cuscomnet --links 2 --packet-bits 512",
    )
    parser.add_argument("name", metavar="NAME", help=", ".join(REGISTRY))
    parser.add_argument("options", nargs=argparse.REMAINDER, help="the model's options")
    parser.set_defaults(run=run)


def run(args) -> int:
    from .. import models
    from .options import Parser

    module = models.load(args.name)
    parser = Parser(prog=f"fpgacomm model {args.name}", description=(module.__doc__ or "").split("\n")[0])
    for key, (kind, default, text) in module.OPTIONS.items():
        parser.add_argument(
            f"--{key.replace('_', '-')}",
            dest=key,
            type=kind,
            default=default,
            help=text + ("" if default is None else f" (default {default})"),
        )
    result = module.predictions(**vars(parser.parse_args(args.options)))
    print(format_figures(result))
    return 0


def format_figures(result) -> str:
    """One line per figure: its name, then its value with the unit, to
    four significant digits (a model's figures are exact for its inputs)."""
    from ..units import MODEL_DIGITS, with_unit

    width = max((len(row["figure"]) for row in result.rows), default=0)
    lines = [f"# fpgacomm {result.benchmark.replace('_', ' ')}"]
    lines += [f"{row['figure']:<{width}}  {with_unit(row['value'], row['unit'], MODEL_DIGITS)}" for row in result.rows]
    return "\n".join(lines)
