"""What each kind of Result is, declared once: its headline columns and
whether lower is better, the text that prints it and the figure that draws
it. A Result's kind is told by its benchmark name alone.

Every producer's names are here: the benchmarks run on ranks (one kind per
catalog entry, built from catalog.py), the simulations, the models' fits
and figures, calibration, prediction and validation, comparisons, loads,
and the names the peers' readers (results/peers.py) give. report.py and
figures/plot.py register their functions under the names `text` and
`figure` give (report.TEXTS, plot.FIGURES), so neither names a kind, and
compare.py takes its headline from here. A name no producer of fpgacomm
makes (a user's own Result) is of the declared kind OTHER: a plain table,
no figure, any headline column. tests/test_kinds.py checks that every name
a producer makes is declared, and that every text and figure is registered.

Adding a kind: one entry in KINDS (or, for a benchmark on ranks, its
catalog line), naming an existing text and figure or a new one that
report.py or plot.py registers.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from .. import catalog

# The names producers give and their readers look for.
COMPARISON = "comparison"  # results/compare.py
VALIDATION = "validation"  # results/validation.py
PREDICTION = "prediction"  # calibration/predict.py, read by results/validation.py
LOAD = "fpgacomm.load"  # results/result.py's load: many Results as one table

#: Whether a smaller value is the better, per quantity a headline measures.
LOWER_IS_BETTER = {"latency": True, "bandwidth": False}

#: Headline columns and their quantity, in order of preference: the most
#: precise first (nccl-tests prints its time with more digits than busbw,
#: whose small sizes print as 0.00 GB/s; the ratio of times is the inverse
#: of the ratio of bandwidths, and the direction follows the quantity).
HEADLINES = (
    ("latency_avg", "latency"),
    ("latency", "latency"),
    ("bandwidth", "bandwidth"),
    ("time", "latency"),
    ("busbw", "bandwidth"),
)

#: The SI unit of every column fpgacomm and its readers name, where a
#: Result does not record it (a Model's columns, OMB's headers): a column
#: named here exactly, else by the first of WORDS its name contains.
COLUMN_UNITS = {
    "message_rate": "1/s",
    "overall": "s",
    "compute": "s",
    "pure_comm": "s",
    "overlap": "fraction",
    "staging_share": "",
    "iterations": "",
}
WORDS = (
    ("bandwidth", "B/s"),
    ("throughput", "B/s"),
    ("bw", "B/s"),
    ("latency", "s"),
    ("time", "s"),
    ("size", "B"),
    ("bytes", "B"),
    ("hops", ""),
    ("links", ""),
    ("nodes", ""),
)


def unit_of(column: str) -> str:
    """The SI unit of a column fpgacomm names ("latency_avg" -> "s"); a
    KeyError for a column whose name says none."""
    if column in COLUMN_UNITS:
        return COLUMN_UNITS[column]
    for word, unit in WORDS:
        if word in column:
            return unit
    raise KeyError(column)


@dataclass(frozen=True)
class Kind:
    """One kind of Result. name: the benchmark name, or a pattern of names
    ("fit_*", fnmatch's). text: the formatter report.TEXTS registers under
    that name. figure: the figure plot.FIGURES registers, None where no
    figure draws the kind. quantity: what its headline measures, where the
    kind fixes it (a benchmark's catalog quantity); None where the first of
    `headlines` the Result holds says. headlines: the columns a comparison
    may take as the headline, with their quantity, the preferred first.
    figure_columns: the columns its figure draws, where the figure draws
    several kinds' columns (b_eff: measured and modelled; a peer's: time
    and bandwidth). benchmark: the catalog's entry of a benchmark run on
    ranks. made_by: which producer makes it."""

    name: str
    text: str
    figure: str | None
    made_by: str
    quantity: str | None = None
    headlines: tuple = HEADLINES
    figure_columns: tuple = ()
    benchmark: catalog.Benchmark | None = None

    def matches(self, name: str) -> bool:
        return fnmatchcase(name, self.name)

    def headline(self, columns) -> tuple | None:
        """(quantity, column, lower_is_better) of the first headline column
        among `columns` that measures the kind's quantity; None where none."""
        for column, quantity in self.headlines:
            if column in columns and self.quantity in (None, quantity):
                return quantity, column, LOWER_IS_BETTER[quantity]
        return None

    def headline_columns(self, columns) -> list:
        """The headline columns among `columns`, the preferred first (those
        of another quantity too: compare's text names what it chose among)."""
        return [column for column, _ in self.headlines if column in columns]


# The catalog's figures, as plot.py registers them: a size sweep is drawn
# by its headline quantity; b_eff's draws the aggregate bandwidth B(m) and
# the channel model's beside it.
_CATALOG_FIGURES = {"beff": "beff", "gather": "gather", None: None}
_CATALOG_FIGURE_COLUMNS = {"beff": ("bandwidth", "model_bandwidth")}


def _benchmark(entry: catalog.Benchmark) -> Kind:
    figure = entry.quantity if entry.figure == "sweep" else _CATALOG_FIGURES[entry.figure]
    return Kind(
        entry.name,
        entry.text,
        figure,
        f"benchmarks ({entry.family}), on ranks",
        quantity=entry.quantity,
        figure_columns=_CATALOG_FIGURE_COLUMNS.get(entry.figure, ()),
        benchmark=entry,
    )


def _table(name: str, made_by: str, figure: str | None = None, **facts) -> Kind:
    return Kind(name, "table", figure, made_by, **facts)


KINDS = (
    *(_benchmark(entry) for entry in catalog.BENCHMARKS),
    Kind("osu_*_timeline", "table", None, "benchmarks/osu.py, the stages of staged transfers (timeline=True)"),
    # The simulator (simulation/fabric.py, simulation/patterns.py, simulation/gather.py).
    _table("fabric_latency", "simulation/fabric.py", "latency"),
    _table("fabric_bw", "simulation/fabric.py", "bandwidth"),
    _table("fabric_put", "simulation/fabric.py", "bandwidth"),
    _table("fabric_get", "simulation/fabric.py", "bandwidth"),
    _table("fabric_beff", "simulation/fabric.py", "beff", figure_columns=("pair_bandwidth", "model_pair_bandwidth")),
    _table("fabric_traffic", "simulation/fabric.py"),
    _table("fabric_schedule", "simulation/fabric.py"),
    _table("fabric_virtual_streams", "simulation/fabric.py"),
    _table("fabric_mbw_mr", "simulation/patterns.py"),
    _table("fabric_incast", "simulation/patterns.py"),
    _table("fabric_barrier", "simulation/patterns.py"),
    _table("fabric_mpi_gather", "simulation/patterns.py"),
    Kind("gather_sim", "gather", "gather", "simulation/gather.py"),
    _table("gather_sim_fig20", "simulation/gather.py, the VCSN paper's figure 20"),
    # Models: fits (models/base.py, models/vcsn.py; fpgacomm fit --json), the
    # figures of `fpgacomm model NAME`, the papers' figures, and fit's joined data.
    _table("fit_*", "models (a Fit's Result, Model.against, fpgacomm fit --json)", "model"),
    _table("model_*", "models, the figures fpgacomm model NAME prints"),
    _table("vcsn_estimate", "models/vcsn.py"),
    _table("fshmem_peaks", "models/packet.py"),
    _table("cuscomnet_torus_projection", "models/cuscomnet.py"),
    _table("*+*", "models/fit.py, Results of several benchmarks joined on size"),
    # The user's cluster: calibration, prediction, validation.
    _table("calibration", "calibration/campaign.py"),
    _table("calibration_residuals", "calibration/api.py"),
    _table("platform_parameters", "calibration/api.py"),
    _table(PREDICTION, "calibration/predict.py, calibration/cross_validation.py"),
    Kind(VALIDATION, "validation", "validation", "results/validation.py"),
    # Runs against each other, and many runs as one table (drawn as its runs).
    Kind(COMPARISON, "comparison", "comparison", "results/compare.py"),
    _table(LOAD, "results/result.py (fpgacomm.load)", "runs"),
    # The peers' text (results/peers.py); OMB's tests fpgacomm has, and
    # HPCC FPGA's b_eff, read as the catalog's kinds.
    _table("omb_*", "results/peers.py, an OMB test fpgacomm does not have"),
    _table("omb", "results/peers.py, a log of several OMB tests"),
    _table("nccl_*", "results/peers.py, nccl-tests and rccl-tests", "peer", figure_columns=("time", "busbw")),
    _table("imb_*", "results/peers.py, Intel MPI Benchmarks", "peer", figure_columns=("latency", "bandwidth")),
    _table("imb", "results/peers.py, a log of several IMB tests", "peer", figure_columns=("latency", "bandwidth")),
)

#: A Result no producer of fpgacomm makes (a user's own): a plain table,
#: no figure, any headline column.
OTHER = _table("*", "no producer of fpgacomm")

_EXACT = {kind.name: kind for kind in KINDS if not any(mark in kind.name for mark in "*?[")}
_PATTERNS = [kind for kind in KINDS if kind.name not in _EXACT]


def find(name: str) -> Kind | None:
    """The kind a producer of fpgacomm gives this name (an exact name before
    a pattern), or None."""
    if name in _EXACT:
        return _EXACT[name]
    return next((kind for kind in _PATTERNS if kind.matches(name)), None)


def of(name: str) -> Kind:
    """The kind of a Result named `name`: find's, else OTHER."""
    return find(name) or OTHER
