"""Every benchmark on real ranks, one entry each: the catalog's facts (name,
family, headline quantity, text format, figure) with the Python function
that runs it and what the command line offers it. `fpgacomm osu` builds one
parser per test from these entries, results/kinds.py makes each a kind of
Result (its text and figure) and suite.py takes its collectives and
one-sided tests from them.

    from fpgacomm.benchmarks import registry
    registry.get("osu_bw").function(mem=("D", "D"))   # the same as fpgacomm.osu.bw

Adding a benchmark:

1. its timed loop in src/bench/ and its pybind11 binding in src/bindings/;
2. its Python function in its family's module (FAMILIES below): for the
   OSU families a function named as the test (osu_put_bw: onesided.put_bw),
   for the others the module's run;
3. one line in BENCHMARKS of python/fpgacomm/catalog.py: its name, family,
   headline quantity, text format and OSU Micro-Benchmarks' title (the
   helpers there fill the rest per family), and its figure.

A collective is one entry of src/bench/collective_table.cpp instead, which
gives it all three: its MPI call and buffers for the timed loop, the
function collectives.TEST and its catalog line (docs/ARCHITECTURE.md,
"Where a collective's facts live").

That line gives it its `fpgacomm osu TEST` parser (with the options of its
family and, from the facts here, -W, --root or none), its text report, its
figure, and, for a collective or one-sided test, its place in the suite. A
new family adds its module and options to FAMILIES here, and a new text
format to results/report.py's TEXTS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import NamedTuple

from .. import catalog
from ..params import DEFAULT_SIZES
from . import beff, collectives, devbw, gather, onesided, osu, overhead, schema


class Family(NamedTuple):
    """What every benchmark of a family shares. options: the command line
    options its tests take (cli/osu.py builds each): kinds (SEND_KIND
    RECV_KIND), mem (--mem), accelerator (-d), sizes (-m), transfer (the
    staging engine's -b, --touch, --path, --chunk, --slots), timeline;
    with them, the flags of its options class (schema) that each test
    takes (benchmarks.schema.flags_of_test: -W, -T, -u, -M, --root, -w,
    -s, -p, -V, -R).
    window: the default -W of its bandwidth tests, None where no test
    streams windows. sizes: the default sweep of `fpgacomm osu`'s
    families, (smallest, largest) bytes."""

    module: ModuleType
    options: tuple = ()
    window: int | None = None
    sizes: tuple | None = None
    schema: type | None = None


FAMILIES = {
    "pt2pt": Family(
        osu,
        ("kinds", "accelerator", "sizes", "transfer", "timeline"),
        window=osu.DEFAULT_WINDOW,
        sizes=DEFAULT_SIZES,
        schema=osu.OsuOptions,
    ),
    "collective": Family(
        collectives,
        ("mem", "accelerator", "sizes"),
        sizes=collectives.DEFAULT_SIZES,
        schema=collectives.CollectiveOptions,
    ),
    "onesided": Family(
        onesided,
        ("mem", "accelerator", "sizes"),
        window=onesided.DEFAULT_WINDOW,
        sizes=DEFAULT_SIZES,
        schema=onesided.OneSidedOptions,
    ),
    "beff": Family(beff),
    "gather": Family(gather),
    "devbw": Family(devbw),
    "overhead": Family(overhead),
}
# Options about the data a message holds, which a benchmark that moves none
# (catalog: messages=False) does not take: nothing to validate (-u) or to cap (-M).
_MESSAGE_OPTIONS = ("kinds", "mem", "accelerator", "sizes", "datatype", "validation_warmup", "mem_limit")


@dataclass(frozen=True, kw_only=True)
class Benchmark(catalog.Benchmark):
    """A catalog entry with its function, which takes a communicator and
    keyword options and returns a Result, and the command line options of
    its test: Family.options, with the flags of its family's options class
    that it takes (window for the tests that stream windows of -W messages,
    mbw_mr's pairs, vary_window and print_rate, the rooted collectives'
    root)."""

    function: Callable
    options: tuple

    @property
    def window(self) -> int | None:
        """The default -W, for a test that streams windows; else None."""
        return FAMILIES[self.family].window if "window" in self.options else None

    @property
    def sizes(self) -> tuple | None:
        """The default sweep of an osu test, (smallest, largest) bytes."""
        return FAMILIES[self.family].sizes


def _entry(facts: catalog.Benchmark) -> Benchmark:
    family = FAMILIES[facts.family]
    osu_test = facts.family in catalog.OSU_FAMILIES
    function = getattr(family.module, facts.test if osu_test else "run")
    options = list(family.options)
    if family.schema is not None:  # -c, every test's, is not among them
        options.extend(
            name for name in schema.flags_of_test(family.schema, facts.test, facts.quantity) if name != "validate"
        )
    options = [option for option in options if facts.messages or option not in _MESSAGE_OPTIONS]
    return Benchmark(**asdict(facts), function=function, options=tuple(options))


BENCHMARKS = {facts.name: _entry(facts) for facts in catalog.BENCHMARKS}


def get(name: str) -> Benchmark:
    """The entry of benchmark `name` (a Result's benchmark name, e.g. osu_bw)."""
    return BENCHMARKS[name]


def of_family(*families: str) -> list[Benchmark]:
    """The entries of these families, in the catalog's order."""
    return [benchmark for benchmark in BENCHMARKS.values() if benchmark.family in families]


def osu_tests() -> dict[str, Benchmark]:
    """The tests of `fpgacomm osu`, by test name, in the catalog's order."""
    return {benchmark.test: benchmark for benchmark in of_family(*catalog.OSU_FAMILIES)}
