"""A family's options declared once, as the fields of a dataclass.

Each field is one option: its name (the keyword), its type, its default
(read from the core's options struct where the core has the field) and, in
its metadata, its help and, where `fpgacomm osu` takes it with a flag of OSU
Micro-Benchmarks, the flag and argparse's keywords. From the class come the
options object a family's run() takes, run()'s keywords (the same fields),
its signature and docstring, and the command line's flags (cli/options.py,
add_option). Ranges and combinations are the core's to check, once, in its
options' validate(). A field::

    @dataclass(frozen=True, kw_only=True)
    class Options:
        window: int = option(64, "messages in flight per window (default {default})", "-W", "--window-size")
"""

from __future__ import annotations

import dataclasses
import inspect

from .. import _core
from ..params import DATATYPES, usage_error

# The placeholder of a help text for the default that each surface shows:
# the library's default in docstrings, the command line's in --help.
DEFAULT = "{default}"


# Which tests of a family take an option on the command line (option's
# `tests`): every one, those whose headline is a bandwidth (they stream
# windows), or the ones named.
EVERY_TEST, BANDWIDTH_TESTS = "every", "bandwidth"

# Which runs read an option (option's `applies`), for a family that runs on
# real ranks or on the simulated fabric.
REAL_RUNS, SIMULATED_RUNS = "real", "simulated"


def option(
    default,
    help: str,
    *flags: str,
    cli_default=dataclasses.MISSING,
    doc: str = "",
    tests: str | tuple = EVERY_TEST,
    negative: tuple = (),
    applies: str | None = None,
    refused: str = "",
    **argparse_keywords,
):
    """One option as a dataclass field: its default and help ("{default}"
    in it is replaced by the default each surface shows), and, for an option
    of the command line, its flags and argparse's keywords (a type that only
    the command line parses by its name there: "size", bytes with K/M/G, and
    "root_rank", N or OMB's fixed:N; cli/options.py's Parser). cli_default: the
    command line's default where it differs from the library's; doc: the
    docstring's text where it differs from the help's (whose other
    placeholders the command line fills per test); tests: which of the
    family's tests take its flag (EVERY_TEST, BANDWIDTH_TESTS or a tuple
    of test names); negative: (flag, help) of a second flag that sets the
    field False (-c's --no-validation). For a family whose runs are real or
    simulated (gather): applies, the runs that read the field (REAL_RUNS,
    SIMULATED_RUNS; None: both), and refused, the message ({value}: the
    value given) with which a run of the other kind refuses it when it is
    not the default (without it, the other kind leaves it unread)."""
    metadata = {
        "help": help,
        "doc": doc or help,
        "flags": flags,
        "argparse": argparse_keywords,
        "tests": tests,
        "negative": negative,
        "applies": applies,
        "refused": refused,
    }
    if cli_default is not dataclasses.MISSING:
        metadata["cli_default"] = cli_default
    return dataclasses.field(default=default, metadata=metadata)


# The options that every OSU family's run takes alike (each family's class
# declares the rest, and -W with its own default).


def sizes_option():
    return option(None, "message sizes in bytes: a list, or [MIN:]MAX with K/M/G suffixes (OSU Micro-Benchmarks' -m)")


def iterations_option():
    return option(
        None,
        f"timed iterations for every size (-i); None: OSU Micro-Benchmarks' defaults, which switch above "
        f"{_core.LARGE_MESSAGE} bytes",
    )


def warmup_option():
    return option(None, "untimed warm-up iterations for every size (-x); None: as iterations")


def window_option(default: int):
    return option(
        default,
        "messages in flight per window (default {default})",
        "-W",
        "--window-size",
        tests=BANDWIDTH_TESTS,
        type=int,
        metavar="WINDOW_SIZE",
    )


def datatype_option(default: str):
    return option(
        default,
        "MPI datatype of the elements (default {default}, as OSU Micro-Benchmarks 7.4); sizes smaller than one "
        "element are skipped",
        "-T",
        "--type",
        type=str.lower,
        choices=DATATYPES,
    )


def validation_warmup_option(default: int):
    """-u: the library's default is the core's (none), the command line's OMB's."""
    return option(
        default,
        "with -c, untimed repetitions of each iteration's operation before the timed one "
        f"(default {DEFAULT}, at most {_core.MAX_VALIDATION_WARMUP})",
        "-u",
        "--validation-warmup",
        cli_default=_core.VALIDATION_WARMUP,
        type=int,
        metavar="N",
    )


def validate_option():
    return option(
        False, "check every received message (outside the timed region)", "-c", "--validation", action="store_true"
    )


def device_option(**keywords):
    return option(None, "the device of each rank; None: DeviceOptions()", **keywords)


def rounds_option(**keywords):
    return option(
        1,
        "complete sweeps in this job, each in its own shuffled order of the sizes; with more than one, rows are "
        "the medians over rounds and keep every round's values in row['rounds'] (benchmarks.sweep)",
        **keywords,
    )


def round_seed_option(**keywords):
    return option(None, "the seed of the rounds' orders; None: drawn", **keywords)


def flagged(cls) -> dict[str, dataclasses.Field]:
    """The fields of `cls` that the command line takes with a flag, by name."""
    return {field.name: field for field in dataclasses.fields(cls) if field.metadata.get("flags")}


def flags_of_test(cls, test: str, quantity: str) -> tuple:
    """The names of the fields of `cls` whose flags this test of the family
    takes (quantity: its headline, latency or bandwidth)."""
    taken = []
    for name, field in flagged(cls).items():
        tests = field.metadata["tests"]
        if tests == EVERY_TEST or (tests == BANDWIDTH_TESTS and quantity == "bandwidth") or test in tests:
            taken.append(name)
    return tuple(taken)


def cli_default(field: dataclasses.Field):
    """The command line's default of a field."""
    return field.metadata.get("cli_default", field.default)


def help_text(field: dataclasses.Field, default, **values) -> str:
    """The field's help, showing `default` as its default and `values` in its other placeholders."""
    return field.metadata["help"].format(default=default, **values)


def refuse_other_runs(options, simulated: bool) -> None:
    """The one rule of the options that one kind of run reads: a field that
    the other kind reads alone, and refuses (option's `refused`), given a
    value other than its default, is a usage error with its message."""
    here = SIMULATED_RUNS if simulated else REAL_RUNS
    for field in dataclasses.fields(options):
        applies, refused = field.metadata.get("applies"), field.metadata.get("refused")
        value = getattr(options, field.name)
        if applies not in (None, here) and refused and value != field.default:
            raise usage_error(refused.format(value=value))


def build(cls, options, keywords: dict):
    """An instance of `cls`: `options` (an instance, or None for the
    defaults) with `keywords` replacing its fields; a keyword that names no
    field is a TypeError naming it, as a function's unknown keyword is."""
    names = [field.name for field in dataclasses.fields(cls)]
    unknown = [name for name in keywords if name not in names]
    if unknown:
        raise TypeError(f"{cls.__name__} has no option '{unknown[0]}'; the options are {', '.join(names)}")
    if options is None:
        return cls(**keywords)
    if not isinstance(options, cls):
        raise TypeError(f"options must be a {cls.__name__}, got {type(options).__name__}")
    return dataclasses.replace(options, **keywords)


def core_options(options, core_class, **converted):
    """The core's options (an instance of `core_class`, not yet validated)
    of an options object: `converted`, the fields the core names otherwise
    or takes converted, and every other field that the core's class holds
    under the same name, as it is."""
    same = {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if field.name not in converted and isinstance(getattr(core_class, field.name, None), property)
    }
    return core_class(**same, **converted)


def described(cls) -> str:
    """One line per field: its name, its flag, its help with the library's default."""
    lines = []
    for field in dataclasses.fields(cls):
        flag = field.metadata["flags"][0] if field.metadata.get("flags") else ""
        text = field.metadata["doc"].replace(DEFAULT, str(field.default))
        lines.append(f"{field.name}{f' ({flag})' if flag else ''}: {text}.")
    return "\n".join(lines)


def takes_options(cls, *after):
    """Decorator of a family's run, which takes its leading parameters,
    options=None, the keyword-only parameters named in `after` and the
    fields as further keywords: its signature shows each field of `cls` as
    a keyword (before those of `after`, which are run's own), and its
    docstring gains the fields' help."""

    def decorate(function):
        signature = inspect.signature(function)
        head = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD and p.name not in after]
        fields = [
            inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=field.default, annotation=field.type)
            for field in dataclasses.fields(cls)
        ]
        own = [signature.parameters[name] for name in after]
        function.__signature__ = signature.replace(parameters=head + fields + own)
        function.__doc__ = (
            f"{inspect.cleandoc(function.__doc__ or '')}\n\n"
            f"The options, {cls.__name__}'s fields, each also a keyword:\n\n{described(cls)}"
        )
        return function

    return decorate
