"""The standard figures of fpgacomm Results, drawn with Matplotlib.

Figures are made without pyplot (a Figure on an Agg canvas): nothing is
displayed, no global list of figures grows during a long suite run, and a
notebook shows a returned Figure like any other value. Each figure function
takes Results (and optionally the Axes to draw on) and returns the Figure;
`figure_for` picks the right one by the Results' kinds (results/kinds.py
names each kind's figure, FIGURES registers the functions by those names).

Plotted values are the Result's columns scaled to the unit the axis label
names: sizes in bytes, times in µs, bandwidths in GB/s (10^9 B/s, decimal as
OMB's MB/s).

    from fpgacomm import Result, plot
    plot.figure_for([Result.read_json("lat_HH.json"), Result.read_json("lat_DD.json")]).savefig("lat.pdf")
"""

from __future__ import annotations

import io
import itertools
import math
import os
from typing import NamedTuple

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, Locator, NullFormatter

from ..models.base import Fit, Model
from ..params import usage_error
from ..results import kinds, series
from ..results.result import Result, atomic_write, runs
from ..results.validation import POINT as VALIDATION_POINT
from ..results.validation import what_ran
from ..runtime.environment import topology
from ..units import human_bandwidth, human_bytes, with_unit

# Result unit -> (unit on the axis, factor from the Result's value).
_DISPLAY_UNITS = {"s": ("µs", 1e6), "B/s": ("GB/s", 1e-9), "B": ("bytes", 1.0), "1/s": ("1/s", 1.0)}
FORMATS = ("png", "pdf", "svg")
_LINE_STYLES = ("-", "--", ":", "-.")
_FIGSIZE = (6.4, 4.4)


# ------------------------------------------------------------------ files


def figure_format(path) -> str:
    """png, pdf or svg from the file's suffix, or a UsageError."""
    suffix = os.path.splitext(os.fspath(path))[1].lower().lstrip(".")
    if suffix not in FORMATS:
        raise usage_error(
            f"cannot write a figure to {os.fspath(path)!r}: unknown extension "
            f"{'.' + suffix if suffix else '(none)'}; use .png, .pdf or .svg"
        )
    return suffix


def save(figure: Figure, path) -> None:
    """Writes the figure as PNG, PDF or SVG (by suffix), atomically: the
    file holds the whole figure or is left as it was (a WriteError names it)."""
    fmt = figure_format(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise usage_error(f"cannot write {os.fspath(path)!r}: directory {directory!r} does not exist")
    atomic_write(path, lambda f: figure.savefig(f, format=fmt, dpi=150), newline=None, binary=True)


# ------------------------------------------------------------------ axes


class ShownFigure(Figure):
    """A Figure that a notebook displays as an image when a cell returns it.
    IPython shows Matplotlib's figures only once a backend (`%matplotlib
    inline`) has registered its formatters; without pyplot none has, so the
    figure says itself how it looks, as a table's _repr_html_ does. Under
    `%matplotlib inline` IPython's own formatter answers first: one image."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=100)
        return buffer.getvalue()


def new_figure(rows: int = 1, columns: int = 1, *, height_ratios=None, sharex: bool = False) -> tuple:
    """(Figure, array of Axes) on an Agg canvas, laid out by Matplotlib."""
    figure = ShownFigure(
        figsize=(_FIGSIZE[0] * columns, _FIGSIZE[1] * (1 if height_ratios else rows)), layout="constrained"
    )
    FigureCanvasAgg(figure)
    axes = figure.subplots(
        rows,
        columns,
        squeeze=False,
        sharex=sharex,
        gridspec_kw={"height_ratios": height_ratios} if height_ratios else None,
    )
    return figure, axes.ravel()


def _axes(ax):
    return new_figure()[1][0] if ax is None else ax


def _display(unit: str) -> tuple:
    """(axis unit, factor) for a Result unit; unknown units stay as they are."""
    return _DISPLAY_UNITS.get(unit, (unit, 1.0))


def unit_of(column: str) -> str:
    """The unit of a column fpgacomm names ("latency_avg" -> "s"), by results/kinds.py's rule."""
    try:
        return kinds.unit_of(column)
    except KeyError:
        raise usage_error(f"cannot tell the unit of column {column!r}; record it in the Result's units") from None


class _SizeTicks(Locator):
    """Ticks of a log size axis at whole powers of two, as many as read well:
    every power over a few, every second over more, and over a wide range
    the powers of 1024 (1 B, 1 KiB, 1 MiB), the others as minor ticks."""

    def __init__(self, minor: bool = False):
        self.minor = minor

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, low, high):
        low, high = sorted((max(low, 1e-300), max(high, 1e-300)))
        first, last = math.ceil(math.log2(low) - 1e-9), math.floor(math.log2(high) + 1e-9)
        span = last - first
        step = 1 if span <= 8 else 2 if span <= 18 else 10
        major = [2.0**k for k in range(first, last + 1) if k % step == 0]
        if self.minor:
            return [2.0**k for k in range(first, last + 1) if k % step]
        return major


class _DecimalTicks(Locator):
    """Ticks of a log value axis at 1, 10, 100 (every second or more decade
    over many), with 2 and 5 between over less than two decades, and every
    digit over a fraction of one."""

    def __call__(self):
        return self.tick_values(*self.axis.get_view_interval())

    def tick_values(self, low, high):
        low, high = sorted((max(low, 1e-300), max(high, 1e-300)))
        decades = math.log10(high / low)
        stride = max(1, math.ceil(decades / 8))
        exponents = [e for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1) if e % stride == 0]
        for subs in ((1,), (1, 2, 5), range(1, 10)):
            if len(subs) > 1 and decades >= 2:
                break
            ticks = [m * 10.0**e for e in exponents for m in subs if low <= m * 10.0**e <= high]
            if len(ticks) >= 3 or decades >= 2:
                break
        return ticks


def _decimal_tick(value: float, _position=None) -> str:
    """A log axis's tick as people write it: 0.1, 1, 10, 100, 1000."""
    return f"{value:.0f}" if value >= 1 else f"{value:g}"


def size_axis(ax, label: str | None = "message size") -> None:
    """Log base 2 with binary size names on the ticks ("1 KiB", "1 MiB")."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(_SizeTicks())
    ax.xaxis.set_minor_locator(_SizeTicks(minor=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: human_bytes(value) if value >= 0.99 else ""))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if label:
        ax.set_xlabel(f"{label} (bytes)")


def _value_axis(ax, quantity: str, unit: str, log: bool = True) -> float:
    """Labels the y axis with its unit; returns the factor for the values.
    A log axis is labelled 1, 10, 100 (and 2, 5 between where it spans
    less than a few decades), never 3.4x10^1."""
    name, factor = _display(unit)
    ax.set_ylabel(f"{quantity} ({name})" if name else quantity)
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(_DecimalTicks())
        ax.yaxis.set_major_formatter(FuncFormatter(_decimal_tick))
        ax.yaxis.set_minor_formatter(NullFormatter())
    return factor


def _finish(ax, title: str) -> Figure:
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    return ax.figure


# ------------------------------------------------------------- labels


def label(result: Result) -> str:
    """How a Result is named in a legend: its buffer kinds, its fabric, and
    "scale-out (N hosts)" where its ranks sat on several hosts."""
    params = result.params
    if "send_kind" in params and "recv_kind" in params:
        text = f"{params['send_kind']} {params['recv_kind']}"
    elif "comm_type" in params:
        text = params["comm_type"]
    else:
        text = result.benchmark
    if "fabric" in params:
        text += f" {params['fabric']} (simulated)"
    where = topology(result.env)
    if where.get("scale") == "scale-out":
        text += f" scale-out ({where['nodes']} hosts)"
    return text


# How long a run was, not what it measured: named in a legend only where
# nothing else tells two Results apart.
_RUN_LENGTH = {"iterations", "warmup", "iterations_large", "warmup_large"}
# Parameters drawn afresh for every run (the rounds' shuffling seed): they
# tell runs apart without saying anything about them, so never name a line.
_DRAWN_PER_RUN = {"round_seed"}


def _distinguishing(group: list) -> list:
    """The scalar parameters that differ within `group`, without the run
    length where the others already tell every Result apart."""
    keys = sorted({key for result in group for key in result.params} - _DRAWN_PER_RUN)
    differing = [
        key
        for key in keys
        if len({repr(result.params.get(key)) for result in group}) > 1
        and all(isinstance(result.params.get(key), (int, float, str)) for result in group)
    ]
    described = [key for key in differing if key not in _RUN_LENGTH]
    apart = len({tuple(repr(result.params.get(key)) for key in described) for result in group}) == len(group)
    return described if described and apart else differing


def legend_labels(results: list, labels=None, fallback=None) -> list:
    """Legend names: `labels` where given (one per Result); else each
    Result's kinds, with the benchmark prefixed where several are mixed,
    and, where names collide, the parameters that tell those Results apart
    (a chunk-size sweep: "D D chunk_bytes=1048576") or, where none does,
    the `fallback` names (fpgacomm plot gives the file names), else a
    number."""
    if labels is not None:
        labels = [labels] if isinstance(labels, str) else [str(name) for name in labels]
        if len(labels) != len(results):
            raise usage_error(
                f"{len(labels)} label{'s' if len(labels) != 1 else ''} for {len(results)} "
                "Results: give one label per Result, in their order"
            )
        return labels
    names = [label(result) for result in results]
    # Beside a scale-out run, a run on one host says so too.
    scales = [topology(result.env).get("scale") for result in results]
    if "scale-out" in scales:
        names = [f"{name} scale-up" if scale == "scale-up" else name for name, scale in zip(names, scales)]
    if len({result.benchmark for result in results}) > 1:
        names = [f"{result.benchmark} {name}" for result, name in zip(results, names)]
    labelled = list(names)
    for name in set(names):
        group = [i for i, other in enumerate(names) if other == name]
        if len(group) > 1:
            keys = _distinguishing([results[i] for i in group])
            for number, i in enumerate(group, start=1):
                if keys:
                    labelled[i] = name + "".join(f" {key}={results[i].params.get(key)}" for key in keys)
                else:
                    labelled[i] = fallback[i] if fallback is not None else f"{name} ({number})"
    return labelled


def model_label(model: Model) -> str:
    """ "hockney: alpha 1.20 us, beta 3.40 GB/s" """
    parts = []
    for name in model.parameters:
        parts.append(f"{name} {with_unit(model.params[name], model.units.get(name, ''))}")
    # Three parameters a line keeps a many-parameter model's legend narrow.
    lines = [", ".join(parts[i : i + 3]) for i in range(0, len(parts), 3)]
    return f"{model.name}: " + ",\n".join(lines)


def _as_model(model) -> Model:
    if isinstance(model, Fit):
        return model.model
    if isinstance(model, Model):
        return model
    raise usage_error(f"a model overlay is a Model or a Fit, got {type(model).__name__}")


def _model_curve(model: Model, sizes: np.ndarray, unit: str) -> np.ndarray:
    """The model's prediction over sizes in the plotted unit: a model of
    the time per message drawn on a bandwidth plot shows size / time."""
    predicted = np.asarray(model.predict(sizes), dtype=float)
    predicts = unit_of(model.y_column)
    if predicts == unit:
        return predicted
    if {predicts, unit} == {"s", "B/s"}:
        return sizes / predicted
    raise usage_error(
        f"the {model.name} model predicts {model.y_column} ({predicts}); it cannot be drawn " f"on a plot in {unit}"
    )


# ------------------------------------------------------ size sweeps


def _column(result: Result, candidates: tuple) -> str:
    for column in candidates:
        if column in result.columns:
            return column
    raise usage_error(
        f"{result.benchmark} has none of the columns {', '.join(candidates)}; "
        f"its columns: {', '.join(result.columns)}"
    )


def _size_sweep(results, ax, models, quantity: str, candidates: tuple, labels=None) -> Figure:
    results = _as_list(results)
    ax = _axes(ax)
    size_axis(ax)
    lines = _lines(results, labels)
    units = {result.units[_column(result, candidates)] for result, _ in lines}
    if len(units) != 1:
        raise usage_error(f"cannot draw {quantity} in {' and '.join(sorted(units))} on one axis")
    unit = units.pop()
    factor = _value_axis(ax, quantity, unit)
    colours = {}
    for result, name in lines:
        column = _column(result, candidates)
        order = np.argsort(result.column("size"), kind="stable")
        sizes = result.column("size")[order]
        (line,) = ax.plot(
            sizes,
            result.column(column)[order] * factor,
            marker="o",
            markersize=3,
            label=name,
            linestyle="-" if _dense(sizes) else "none",
        )
        colours[label(result)] = line.get_color()
    _overlay(ax, [result for result, _ in lines], models, unit, factor, colours)
    return _finish(ax, f"{_what([result for result, _ in lines])}: {quantity} by message size")


def _lines(results: list, labels=None) -> list:
    """[(Result, legend name)], one per line: a table of fpgacomm.load is
    split into its runs (one line each, named by what tells them apart)."""
    lines = []
    for result, name in zip(results, legend_labels(results, labels)):
        if _figure(result) == "runs":
            lines += [(run, run_label) for run_label, run in runs(result)]
        else:
            lines.append((result, name))
    return lines


def _dense(sizes) -> bool:
    """Whether a sweep's sizes lie close enough (at most 4x apart) that a
    line between them says something; sparse points are drawn alone."""
    sizes = np.sort(np.asarray(sizes, dtype=float))
    return len(sizes) < 2 or bool(np.all(sizes[1:] <= 4 * sizes[:-1]))


def _what(results) -> str:
    """The benchmarks drawn, and their kinds where they all share them."""
    names = ", ".join(dict.fromkeys(result.benchmark for result in results))
    kinds = {label(result) for result in results} - {result.benchmark for result in results}
    return f"{names} {kinds.pop()}" if len(kinds) == 1 else names


def _overlays(models) -> list:
    """[(name of the Result fitted, Model)]: models is a sequence of Model
    or Fit (name None), or a mapping from a Result to one or a list."""
    if isinstance(models, dict):
        return [
            (label(result), _as_model(model))
            for result, value in models.items()
            for model in (value if isinstance(value, (list, tuple)) else [value])
        ]
    return [(None, _as_model(model)) for model in models]


def _overlay(ax, results: list, models, unit: str, factor: float, colours: dict) -> None:
    """Each model's prediction over a fine grid of the Results' sizes; a
    model given for a Result is drawn in the colour of that Result's kinds."""
    overlays = _overlays(models)
    if not overlays:
        return
    sizes = np.concatenate([result.column("size") for result in results]).astype(float)
    sizes = sizes[sizes > 0]
    if not len(sizes):
        raise usage_error("a model overlay needs Results with sizes above 0 bytes to draw over")
    grid = np.geomspace(sizes.min(), sizes.max(), 200)
    for i, (name, model) in enumerate(overlays):
        ax.plot(
            grid,
            _model_curve(model, grid, unit) * factor,
            color=colours.get(name, "black"),
            linewidth=1,
            linestyle=_LINE_STYLES[1 + i % (len(_LINE_STYLES) - 1)] if name is None else "--",
            label=model_label(model) if name is None else f"{name} {model_label(model)}",
        )


def latency(results, ax=None, *, models=(), labels=None) -> Figure:
    """Latency against message size on log axes, one line per Result (OMB's
    comparison of memory kinds when the Results differ in kinds), with the
    models' predictions over a fine grid of sizes. models: Models or Fits
    (drawn in black), or {Result: Model or Fit, or a list} (each drawn in
    the colour of the Result's kinds, here and on any axes showing them).
    labels: the legend's names, one per Result (default: what tells the
    Results apart)."""
    return _size_sweep(results, ax, models, "latency", ("latency_avg", "latency"), labels)


def bandwidth(results, ax=None, *, models=(), labels=None) -> Figure:
    """Bandwidth against message size on log axes; as latency."""
    return _size_sweep(results, ax, models, "bandwidth", ("bandwidth",), labels)


def memory_kinds(results, axes=None, *, models=(), labels=None) -> Figure:
    """OMB-style comparison of memory kinds: latency Results on the left,
    bandwidth Results on the right, one line per send/receive kind pair."""
    results = _as_list(results)
    if axes is None:
        axes = new_figure(1, 2)[1]
    names = None if labels is None else dict(zip(map(id, results), legend_labels(results, labels)))
    latencies = [r for r in results if _figure(r) == "latency"]
    bandwidths = [r for r in results if _figure(r) == "bandwidth"]
    if not latencies or not bandwidths or len(latencies) + len(bandwidths) != len(results):
        raise usage_error("memory_kinds draws latency and bandwidth Results side by side; give both kinds")
    latency(latencies, axes[0], models=models, labels=None if names is None else [names[id(r)] for r in latencies])
    bandwidth(bandwidths, axes[1], models=models, labels=None if names is None else [names[id(r)] for r in bandwidths])
    return axes[0].figure


# ------------------------------------------------------- IMB, nccl-tests


def peer_sweeps(results, axes=None, *, labels=None) -> Figure:
    """Intel MPI Benchmarks and nccl-tests Results: time (left) and
    bandwidth (right; nccl-tests's bus bandwidth) against message size, a
    line per series of each Result (results/series.py: IMB's tests, process
    counts, groups and modes, nccl-tests's collectives), named by the
    Result's file (where there are several) or its label (`labels`, one per
    Result) and the series. Sizes of 0 bytes and values printed as 0 have
    no place on log axes."""
    results = _as_list(results)
    if axes is None:
        axes = new_figure(1, 2)[1]
    names = (
        [
            os.path.basename(str(result.env.get("source", result.benchmark))) if len(results) > 1 else ""
            for result in results
        ]
        if labels is None
        else legend_labels(results, labels)
    )
    for ax, index, quantity, unit in ((axes[0], 0, "latency", "s"), (axes[1], 1, "bandwidth", "B/s")):
        size_axis(ax)
        factor = _value_axis(ax, quantity, unit)
        for result, name in zip(results, names):
            column = _figure_columns(result)[index]
            lines = {}
            for row in result.rows:
                value = row.get(column)
                size = row.get("size")
                if isinstance(value, (int, float)) and value > 0 and isinstance(size, (int, float)) and size > 0:
                    lines.setdefault(series.label(series.identity(row)), []).append((row["size"], value))
            for label_text, points in lines.items():
                sizes, values = np.array(sorted(points)).T
                ax.plot(
                    sizes,
                    values * factor,
                    marker="o",
                    markersize=3,
                    linestyle="-" if _dense(sizes) else "none",
                    label=f"{name} {label_text}".strip(),
                )
        _finish(ax, f"{_what(results)}: {quantity} by message size")
    return axes[0].figure


# ---------------------------------------------------------------- b_eff


def beff(results, ax=None, *, models=(), labels=None) -> Figure:
    """b_eff per message size: the measured bandwidth per ring pattern and
    the channel model's (when the Result carries it) dashed in the same
    colour; b_eff itself as a dotted level."""
    results = _as_list(results)
    ax = _axes(ax)
    size_axis(ax)
    factor = _value_axis(ax, "bandwidth", "B/s")
    colours = itertools.cycle(f"C{i}" for i in range(10))
    result_colours = {}  # each Result's first colour, for its model overlay
    for result, name in zip(results, legend_labels(results, labels)):
        measured, modelled = _figure_columns(result)
        table = result.to_numpy()
        patterns = np.unique(table["pattern"]) if "pattern" in table.dtype.names else [None]
        for pattern in patterns:
            rows = table if pattern is None else table[table["pattern"] == pattern]
            colour = next(colours)
            if pattern is None or pattern == patterns[0]:
                result_colours[label(result)] = colour
            text = name if pattern is None or len(patterns) == 1 else f"{name} {pattern}"
            ax.plot(
                rows["size"],
                rows[measured] * factor,
                marker="o",
                markersize=3,
                color=colour,
                label=f"{text} ({measured})",
            )
            if modelled in table.dtype.names and pattern in (None, patterns[0]):  # the same for every ring
                ax.plot(
                    rows["size"], rows[modelled] * factor, linestyle="--", color=colour, label=f"{name} channel model"
                )
        if "b_eff" in result.params:
            ax.axhline(
                result.params["b_eff"] * factor,
                linestyle=":",
                color=colour,
                label=f"{name} b_eff {human_bandwidth(result.params['b_eff'])}",
            )
    _overlay(ax, results, models, "B/s", factor, result_colours)
    return _finish(ax, "b_eff by message size")


# --------------------------------------------------------------- gather


def _gather_lines(results) -> dict:
    """{(schedule, nodes, label): rows sorted by size} over every Result."""
    lines = {}
    for result in _as_list(results):
        for column in ("schedule", "nodes", "size", "time", "throughput"):
            if column not in result.columns:
                raise usage_error(
                    f"{result.benchmark} lacks the gather column {column!r}; "
                    f"its columns: {', '.join(result.columns)}"
                )
        where = topology(result.env)
        source = (
            f"{result.params['fabric']} (simulated)"
            if "fabric" in result.params
            else f"scale-out ({where['nodes']} hosts)"
            if where.get("scale") == "scale-out"
            else "measured"
        )
        table = result.to_numpy()
        for schedule, nodes in sorted({(str(s), int(n)) for s, n in zip(table["schedule"], table["nodes"])}):
            rows = table[(table["schedule"] == schedule) & (table["nodes"] == nodes)]
            lines[(schedule, nodes, source)] = rows[np.argsort(rows["size"])]
    return lines


def _gather_panel(results, ax, column: str, quantity: str) -> Figure:
    ax = _axes(ax)
    lines = _gather_lines(results)
    size_axis(ax, "data per node")
    factor = _value_axis(ax, quantity, "s" if column == "time" else "B/s")
    node_counts = sorted({nodes for _, nodes, _ in lines})
    # A style per schedule and source, so a measured and a simulated run of
    # one schedule on as many nodes do not share colour and style.
    series = sorted({(schedule, source) for schedule, _, source in lines})
    has_model = False
    for (schedule, nodes, source), rows in lines.items():
        colour = f"C{node_counts.index(nodes) % 10}"
        style = _LINE_STYLES[series.index((schedule, source)) % len(_LINE_STYLES)]
        ax.plot(
            rows["size"],
            rows[column] * factor,
            linestyle=style,
            marker="o",
            markersize=3,
            color=colour,
            label=f"{schedule}, {nodes} nodes" + ("" if source == "measured" else f", {source}"),
        )
        if column == "time" and "model" in rows.dtype.names:
            ax.plot(rows["size"], rows["model"] * factor, linestyle="none", marker="x", color=colour)
            has_model = True
    if has_model:  # one legend entry, in no line's colour, for the crosses of every line
        ax.plot([], [], linestyle="none", marker="x", color="gray", label="model (VCSN eq. 7)")
    return _finish(ax, f"gather {quantity} by data size")


def gather_time(results, ax=None) -> Figure:
    """Gather time against data per node: colour per node count, line
    style per schedule (ring, tree, vlink, mpi); the model's times as
    crosses for simulated runs."""
    return _gather_panel(results, ax, "time", "time")


def gather_throughput(results, ax=None) -> Figure:
    """Gather throughput, (nodes - 1) * size / time, against data per node."""
    return _gather_panel(results, ax, "throughput", "throughput")


def gather(results, axes=None) -> Figure:
    """Time and throughput side by side, schedule against schedule."""
    if axes is None:
        axes = new_figure(1, 2)[1]
    gather_time(results, axes[0])
    gather_throughput(results, axes[1])
    return axes[0].figure


# --------------------------------------------------- model against measurement


class _Comparison(NamedTuple):
    x: np.ndarray
    measured: np.ndarray
    predicted: np.ndarray  # at x
    model: Model | None  # known for a Fit: drawn over a fine grid
    x_name: str
    y_name: str
    x_unit: str
    y_unit: str
    title: str


def _comparison(source) -> _Comparison:
    if isinstance(source, Fit):
        model = source.model
        return _Comparison(
            source.x,
            source.y,
            np.asarray(model.predict(source.x), dtype=float),
            model,
            model.x_column,
            model.y_column,
            unit_of(model.x_column),
            unit_of(model.y_column),
            f"{model.name} fit (R^2 = {source.r_squared:.4f})",
        )
    if _saved_fit(source):
        return _comparison(Result.from_dict(source.params["against"]))
    if isinstance(source, Result) and _figure(source) == "model" and "predicted" in source.columns:
        # Model.against records the model's columns and, from the measured
        # Result, their units; units it could not know follow the names.
        params = source.params
        x_name, y_name = params.get("x_column", "x"), params.get("y_column", "measured")
        return _Comparison(
            source.column("x"),
            source.column("measured"),
            source.column("predicted"),
            None,
            x_name,
            y_name,
            source.units.get("x") or unit_of(x_name),
            source.units.get("measured") or unit_of(y_name),
            f"{params.get('model', 'model')} against {params.get('source', 'measurement')}",
        )
    raise usage_error(
        f"model_against_measurement draws a Fit or a fit_MODEL Result, got "
        f"{source.benchmark if isinstance(source, Result) else type(source).__name__}"
    )


def model_against_measurement(source, axes=None) -> Figure:
    """Measured points and the model's line (over a fine grid where the
    model itself is known, a Fit; through the compared points otherwise),
    and below them the relative error (predicted - measured) / measured."""
    points = _gather_points(source)
    if points is not None:
        return _gather_fit(*points, axes)
    x, measured, predicted, model, x_name, y_name, x_unit, y_unit, title = _comparison(source)
    if axes is None:
        axes = new_figure(2, 1, height_ratios=(3, 1), sharex=True)[1]
    top, bottom = axes
    order = np.argsort(x)
    x, measured, predicted = (np.asarray(a, dtype=float)[order] for a in (x, measured, predicted))
    log_x = x_unit == "B" and bool(np.all(x > 0))
    if log_x:
        size_axis(top)
        size_axis(bottom, "message size" if x_name == "size" else x_name.replace("_", " "))
    else:
        unit, x_factor = _display(x_unit)
        x = x * x_factor
        bottom.set_xlabel(f"{x_name} ({unit})" if unit else x_name)
    # Log values where they span decades over sizes; linear over hops or nodes.
    spans_decades = bool(np.all(measured > 0)) and np.max(measured) > 10 * np.min(measured)
    factor = _value_axis(top, y_name, y_unit, log=log_x and spans_decades)
    top.plot(x, measured * factor, linestyle="none", marker="o", label="measured")
    if model is not None and log_x:
        grid = np.geomspace(x.min(), x.max(), 200)
        top.plot(grid, np.asarray(model.predict(grid), dtype=float) * factor, color="black", label=model_label(model))
    else:
        top.plot(x, predicted * factor, color="black", label="model" if model is None else model_label(model))
    bottom.plot(x, (predicted - measured) / measured * 100, marker="o", linestyle="-")
    bottom.axhline(0.0, color="black", linewidth=0.8)
    bottom.set_ylabel("relative error (%)")
    bottom.grid(True, alpha=0.3)
    top.set_xlabel("")
    return _finish(top, title)


def _gather_points(source):
    """(nodes, size, measured, predicted, title) of a gather model's fit, whose
    points are (nodes, size) pairs: a Fit, or its file (models/fit.py saves the
    points); None for any other source."""
    if isinstance(source, Fit) and np.ndim(source.x) == 2:
        return (
            source.x[:, 0],
            source.x[:, 1],
            source.y,
            source.y - source.residuals,
            f"{source.model.name} fit (R^2 = {source.r_squared:.4f})",
        )
    if _saved_fit(source) and isinstance(source.params.get("points"), dict):
        points = source.params["points"]
        return (
            *(np.asarray(points[key], dtype=float) for key in ("nodes", "size", "measured", "predicted")),
            f"{source.params['model']} fit (R^2 = {source.params['r_squared']:.4f})",
        )
    return None


def _gather_fit(nodes, sizes, measured, predicted, title, axes=None) -> Figure:
    """Per node count the measured gather times as points and the model's as
    a line against the size, and below them the relative error."""
    if axes is None:
        axes = new_figure(2, 1, height_ratios=(3, 1), sharex=True)[1]
    top, bottom = axes
    size_axis(top)
    size_axis(bottom, "bytes per node")
    factor = _value_axis(top, "time", "s", log=True)
    for count in sorted(set(nodes.tolist())):
        pick = np.flatnonzero(nodes == count)
        pick = pick[np.argsort(sizes[pick])]
        (line,) = top.plot(sizes[pick], predicted[pick] * factor, label=f"{count:g} nodes: model")
        top.plot(
            sizes[pick],
            measured[pick] * factor,
            linestyle="none",
            marker="o",
            color=line.get_color(),
            label=f"{count:g} nodes: measured",
        )
        bottom.plot(
            sizes[pick], (predicted[pick] - measured[pick]) / measured[pick] * 100, marker="o", color=line.get_color()
        )
    bottom.axhline(0.0, color="black", linewidth=0.8)
    bottom.set_ylabel("relative error (%)")
    bottom.grid(True, alpha=0.3)
    top.set_xlabel("")
    return _finish(top, title)


# ------------------------------------------------------------ dispatch


# ------------------------------------------------------ comparisons


def comparison(result: Result, ax=None) -> Figure:
    """A comparison (fpgacomm compare): each input's ratio to the first per
    size on a log axis (0.5 and 2 equally far from 1), its interval as a
    band; filled markers where the verdict is a difference, hollow ones
    elsewhere; the threshold, if any, dashed around 1. The legend names the
    inputs (their commands for compare --run, else their paths)."""
    if _figure(result) != "comparison":
        raise usage_error(f"plot.comparison draws the Result of fpgacomm compare, got {result.benchmark}")
    ax = _axes(ax)
    size_axis(ax)
    params = result.params
    base = next(iter(params["inputs"]))
    ax.set_ylabel(f"ratio of {params['column']} to {base}")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(_DecimalTicks())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.axhline(1.0, color="black", linewidth=0.8)
    if params.get("threshold"):
        for bound in (1 - params["threshold"], 1 + params["threshold"]):
            ax.axhline(bound, color="gray", linewidth=0.8, linestyle="--")

    def named(label: str) -> str:
        text = params.get("commands", {}).get(label) or params["inputs"][label]
        return text if len(text) <= 48 else "..." + text[-45:]

    series = sorted({(row["candidate"], row.get("series", "")) for row in result.rows})
    for candidate, name in series:
        rows = sorted(
            (
                row
                for row in result.rows
                if (row["candidate"], row.get("series", "")) == (candidate, name) and row["size"] > 0
            ),
            key=lambda row: row["size"],
        )
        if not rows:
            continue
        sizes = np.array([row["size"] for row in rows], dtype=float)
        ratio = np.array([row["ratio"] for row in rows])
        (line,) = ax.plot(
            sizes,
            ratio,
            label=f"{candidate}/{base}" + (f" {name}" if name else "") + f": {named(candidate)} / {named(base)}",
            linestyle="-" if _dense(sizes) else "none",
        )
        low = np.array([np.nan if row["ratio_low"] is None else row["ratio_low"] for row in rows])
        high = np.array([np.nan if row["ratio_high"] is None else row["ratio_high"] for row in rows])
        ax.fill_between(sizes, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
        decided = np.array([row["verdict"] in ("faster", "slower") for row in rows])
        ax.plot(sizes[decided], ratio[decided], linestyle="none", marker="o", color=line.get_color())
        ax.plot(
            sizes[~decided],
            ratio[~decided],
            linestyle="none",
            marker="o",
            markerfacecolor="none",
            color=line.get_color(),
        )
    percent = f"{params['level'] * 100:g} %"
    return _finish(ax, f"{params['quantity']} against {base}, with {percent} intervals; filled: a difference")


# The columns of a validation drawn, all times.
_VALIDATION_TIMES = ("measured", "measured_low", "measured_high", "predicted", "predicted_low", "predicted_high")


def validation(result: Result, ax=None) -> Figure:
    """A validation (fpgacomm validate): per experiment and rank count, the
    prediction against the size with its interval as a band, and the
    measured medians with their intervals over launches as error bars."""
    if _figure(result) != "validation":
        raise usage_error(f"plot.validation draws the Result of fpgacomm validate, got {result.benchmark}")
    ax = _axes(ax)
    size_axis(ax, "bytes per rank")
    factor = _value_axis(ax, "time", "s", log=True)
    series = sorted({tuple(row[key] for key in VALIDATION_POINT[:4]) for row in result.rows}, key=lambda s: s[::-1])
    for kind in series:
        rows = sorted(
            (row for row in result.rows if tuple(row[key] for key in VALIDATION_POINT[:4]) == kind),
            key=lambda row: row["size"],
        )
        name = f"{what_ran(kind)}, {kind[3]} ranks"
        sizes = np.array([row["size"] for row in rows], dtype=float)
        column = {key: np.array([row[key] for row in rows]) * factor for key in _VALIDATION_TIMES}
        (line,) = ax.plot(sizes, column["predicted"], label=f"{name}: predicted")
        ax.fill_between(
            sizes, column["predicted_low"], column["predicted_high"], color=line.get_color(), alpha=0.2, linewidth=0
        )
        ax.errorbar(
            sizes,
            column["measured"],
            yerr=[column["measured"] - column["measured_low"], column["measured_high"] - column["measured"]],
            linestyle="none",
            marker="o",
            color=line.get_color(),
            label=f"{name}: measured",
        )
    claim = "" if result.params.get("claim") else " (no accuracy claimed)"
    return _finish(ax, f"prediction with its 95 % interval against held-out launches{claim}")


def _as_list(results) -> list:
    items = [results] if isinstance(results, (Result, Fit)) else list(results)
    if not items:
        raise usage_error("nothing to plot: give at least one Result")
    empty = [item for item in items if not has_values(item)]
    if empty:
        raise usage_error(
            f"nothing to draw: {', '.join(_name(item) for item in empty)} "
            f"({'has no rows' if not empty[0].rows else 'has no finite value'}); "
            "plot a Result that holds measurements"
        )
    return items


def has_values(result) -> bool:
    """Whether the Result holds a finite number besides its sizes (a Fit always does)."""
    if isinstance(result, Fit):
        return True
    return any(
        isinstance(value, (int, float)) and np.isfinite(value)
        for row in result.rows
        for column, value in row.items()
        if column != "size"
    )


def _figure(result) -> str | None:
    """The figure its kind names (results/kinds.py)."""
    return kinds.of(result.benchmark).figure


def _figure_columns(result) -> tuple:
    """The columns its kind's figure draws (b_eff's measured and modelled, a peer's time and bandwidth)."""
    columns = kinds.of(result.benchmark).figure_columns
    if not columns:
        raise usage_error(f"cannot draw a {result.benchmark} Result here: its kind names no columns to draw")
    return columns


def drawable(result) -> str | None:
    """latency | bandwidth | beff | gather | model | comparison | validation | peer: which
    figure draws it, or None where no figure does."""
    if isinstance(result, Fit):
        return "model"
    figure = _figure(result)
    if figure == "runs":  # a joined table: what its runs are, where they agree
        figures = {drawable(run) for _, run in runs(result)}
        return figures.pop() if len(figures) == 1 else None
    if figure == "model":  # a fit's Result draws its model against what it was fitted to
        return figure if "predicted" in result.columns or _saved_fit(result) else None
    return figure


def _saved_fit(result) -> bool:
    """A file of `fpgacomm fit --json`: the fit with the model against the measurement inside."""
    return isinstance(result, Result) and _figure(result) == "model" and isinstance(result.params.get("against"), dict)


def kind(result) -> str:
    """drawable(result), or a UsageError naming what can be drawn."""
    found = drawable(result)
    if found is not None:
        return found
    name = result.benchmark
    raise usage_error(
        f"cannot draw a {name} Result; fpgacomm plot draws OSU latency and bandwidth "
        f"(osu_latency, osu_bw, ...), b_eff, gather, fit_MODEL, comparison and validation Results"
    )


def figure_for(results, *, models=(), labels=None) -> Figure:
    """The standard figure of these Results, chosen by their benchmarks:
    latency or bandwidth by size (both: memory_kinds), b_eff, gather, or
    model against measurement (one fit_MODEL Result or Fit), or a comparison. models (Model
    or Fit) overlay the size sweeps and b_eff; labels name their lines, one per Result."""
    results = _as_list(results)
    kinds = sorted({kind(result) for result in results})
    if kinds == ["bandwidth", "latency"]:
        return memory_kinds(results, models=models, labels=labels)
    if len(kinds) > 1:
        raise usage_error(
            f"cannot draw {' and '.join(kinds)} Results on one figure "
            f"({', '.join(sorted({_name(r) for r in results}))}); plot them separately"
        )
    figure_kind = kinds[0]
    if figure_kind in ("gather", "model") and models:
        raise usage_error(f"model overlays apply to latency, bandwidth and b_eff figures, not to {figure_kind}")
    if figure_kind in ("gather", "model", "comparison") and labels is not None:
        raise usage_error(
            f"labels name the lines of latency, bandwidth and b_eff figures, not of {figure_kind} "
            "(a comparison names its inputs itself)"
        )
    if figure_kind == "model":
        if len(results) != 1:
            raise usage_error("model against measurement draws one fit_MODEL Result or Fit at a time")
        return model_against_measurement(results[0])
    if figure_kind == "peer":
        if models:
            raise usage_error("model overlays apply to fpgacomm's latency, bandwidth and b_eff figures")
        return peer_sweeps(results, labels=labels)
    if figure_kind == "comparison":
        if len(results) != 1 or models:
            raise usage_error("a comparison is drawn alone, without model overlays")
        return comparison(results[0])
    if figure_kind == "validation":
        if len(results) != 1 or models:
            raise usage_error("a validation is drawn alone, without model overlays")
        return validation(results[0])
    draw = FIGURES[figure_kind]
    return draw(results) if figure_kind == "gather" else draw(results, models=models, labels=labels)


def _name(result) -> str:
    return f"fit_{result.model.name}" if isinstance(result, Fit) else result.benchmark


#: Figure name (a kind's `figure`, results/kinds.py) -> the function that draws it;
#: "runs", a joined table of fpgacomm.load, is drawn as its runs are.
FIGURES = {
    "latency": latency,
    "bandwidth": bandwidth,
    "beff": beff,
    "gather": gather,
    "model": model_against_measurement,
    "comparison": comparison,
    "validation": validation,
    "peer": peer_sweeps,
    "runs": figure_for,
}
