"""Comparisons of runs: each input against the first, size by size, as a
Result named "comparison" (`fpgacomm compare`, `fpgacomm.compare`).

An input is a side: a Result file (JSON, CSV, or a peer's text that
results/peers.py reads), a glob, or a folder of them (the rounds of runs, or
the launches `fpgacomm compare --run` keeps). A side's values of a size are
pooled over its files: each file gives its rounds (row["rounds"]) or,
without rounds, its one value. The statistics are compare_stats.py's; the
methods are in docs/METHODS.md, "Comparing runs".
"""

from __future__ import annotations

import glob
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..catalog import BY_NAME
from ..params import usage_error
from ..runtime import files
from . import launches, peers
from .compare_stats import LEVEL, holm, shift
from .result import SCHEMA, Result
from .units import human_bytes, with_unit

NAME = "comparison"
#: Headline columns and their quantity, in order of preference (a peer's
#: time per operation comes after its bandwidth: nccl-tests's busbw).
HEADLINES = (("latency_avg", "latency"), ("latency", "latency"), ("bandwidth", "bandwidth"), ("busbw", "bandwidth"),
             ("time", "latency"))
# Columns that split one table into series (b_eff's ring patterns, IMB's
# tests, gather's schedules): sizes are compared within a series.
SERIES_COLUMNS = ("pattern", "test", "processes", "schedule", "nodes")
# Launches a compare --run campaign makes of each command unless told.
DEFAULT_ROUNDS = 7


@dataclass
class Side:
    """One input: its label ("A"), what was given, the files read, the
    benchmark and headline column, and the values pooled per (series, size)."""

    label: str
    given: str
    files: list
    benchmark: str
    quantity: str
    column: str
    unit: str
    values: dict = field(default_factory=dict)
    loaded: list = field(default_factory=list)  # rounds or launches taken under load
    command: str | None = None  # the command a `compare --run` folder's launches ran


def files_of(given: str) -> list:
    """The files of an input: itself, a glob's matches, or a folder's
    Result files (JSON, else CSV, else every file but the launches' stderr
    and record)."""
    if os.path.isdir(given):
        names = sorted(os.listdir(given))
        paths = [os.path.join(given, name) for name in names if os.path.isfile(os.path.join(given, name))]
        for suffix in (".json", ".csv"):
            chosen = [path for path in paths if path.endswith(suffix) and os.path.basename(path) != launches.LAUNCHES]
            if chosen:
                return chosen
        return [path for path in paths if not path.endswith(".err") and os.path.basename(path) != launches.LAUNCHES]
    if glob.has_magic(given):
        return sorted(path for path in glob.glob(given) if os.path.isfile(path))
    if not os.path.exists(given):
        raise usage_error(f"{given}: no such file or folder")
    return [given]


def read_with_rounds(path: str) -> tuple:
    """(Result, rounds): the file's Result without its rounds, and for each
    row its rounds ({column: [value per round]}) or None. Rounds are read
    from the file's own dict, so that files with rounds read whatever the
    Result class accepts."""
    if path.lower().endswith(".json"):
        data = files.read_json(path, what="an fpgacomm Result")
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(f"{path}: not an fpgacomm Result (no schema {SCHEMA!r}); fpgacomm reads Result JSON "
                             f"and CSV files and the text output of {', '.join(peers.FORMATS)}")
        units = data.get("units")
        if isinstance(units, dict):  # a "rounds" unit of older files: the rounds cell is no column
            data = {**data, "units": {key: unit for key, unit in units.items() if key != "rounds"}}
        result = Result.from_file(path, data)  # every cell checked, the rounds cells too
        rounds = [row.pop("rounds", None) for row in result.rows]
        return result, rounds
    result = Result.read(path)  # CSV: its reader gives each row's rounds cell back, as JSON's
    rounds = [row.get("rounds") if isinstance(row.get("rounds"), dict) else None for row in result.rows]
    if any(cell is not None for cell in rounds):
        rows = [{key: value for key, value in row.items() if key != "rounds"} for row in result.rows]
        result = Result(result.benchmark, result.params, result.env, rows,
                        {key: unit for key, unit in result.units.items() if key != "rounds"}, None, result.incomplete)
    return result, rounds


def quantity_of(result: Result) -> tuple:
    """(quantity, column, lower_is_better) of a Result's headline figure:
    the catalog's quantity for fpgacomm's benchmarks, else the first
    latency or bandwidth column it has."""
    entry = BY_NAME.get(result.benchmark)
    for column, quantity in HEADLINES:
        if column in result.columns and (entry is None or entry.quantity == quantity):
            return quantity, column, quantity == "latency"
    raise ValueError(f"{result.benchmark} has no latency or bandwidth column to compare "
                     f"(columns: {', '.join(result.columns)})")


def read_side(given: str, label: str) -> Side:
    """An input's values per (series, size), pooled over its files."""
    files = files_of(os.fspath(given))
    if not files:
        raise usage_error(f"{label}: {given} holds no Result files")
    record = launches.record(given) if os.path.isdir(given) else None
    side = None
    for path in files:
        try:
            result, rounds = read_with_rounds(path)
            quantity, column, _ = quantity_of(result)
        except (ValueError, TypeError, KeyError) as error:
            raise usage_error(f"{label}: {error}") from None
        if side is None:
            side = Side(label, os.fspath(given), files, result.benchmark, quantity, column,
                        result.units.get(column, ""))
        elif quantity != side.quantity:
            raise usage_error(f"{label}: {path} measures {quantity} and {side.files[0]} {side.quantity}; "
                             "an input holds runs of one benchmark")
        series = [key for key in SERIES_COLUMNS if key in result.columns]
        for row, row_rounds in zip(result.rows, rounds):
            if not isinstance(row.get("size"), (int, float)):
                continue
            values = row_rounds.get(column) if isinstance(row_rounds, dict) else None
            values = [row[column]] if values is None else values
            key = (" ".join(f"{name}={row[name]}" for name in series), int(row["size"]))
            side.values.setdefault(key, []).extend(float(v) for v in values
                                                   if v is not None and math.isfinite(v) and v > 0)
        side.loaded += _under_load(path, result, whole_run=record is None)
    side.values = {key: values for key, values in side.values.items() if values}
    if record is not None:
        side.command = record.get("command")
        side.loaded += _launches_under_load(given, record)
    return side


def _under_load(path: str, result: Result, whole_run: bool) -> list:
    """The rounds (env round_loads) or, if whole_run, the run (env
    machine.load_before) of a file taken while the 1-minute load average
    exceeded the cores. (A launch folder's record names its launches.)"""
    machine = result.env.get("machine") if isinstance(result.env.get("machine"), dict) else {}
    cores = machine.get("cores")
    if not cores:
        return []
    loads = result.env.get("round_loads")
    if isinstance(loads, list) and loads:
        loaded = [(index + 1, load) for index, load in enumerate(loads)
                  if isinstance(load, (int, float)) and load > cores]
        if not loaded:
            return []
        numbers = ", ".join(str(number) for number, _ in loaded)
        low, high = min(load for _, load in loaded), max(load for _, load in loaded)
        return [f"{path} round{'s' if len(loaded) > 1 else ''} {numbers} (load {low:.1f}"
                f"{f' to {high:.1f}' if high > low else ''} on {cores} cores)"]
    load = machine.get("load_before")
    if not whole_run:
        return []
    return [f"{path} (load {load:.1f} on {cores} cores)"] if isinstance(load, (int, float)) and load > cores else []


def _launches_under_load(given: str, record: dict) -> list:
    """The launches of a `compare --run` folder that started under load,
    from its record (the text of OMB's programs records no load)."""
    return [f"{os.path.join(given, launch['output'])} (launch {launch['launch']}, load {launch['load_before']:.1f} "
            f"on {launch['cores']} cores)" for launch in record.get("launches", [])
            if launch.get("load_before") is not None and launch["load_before"] > launch.get("cores", math.inf)]


def _range(keys) -> str:
    sizes = sorted(size for _, size in keys)
    return f"{human_bytes(sizes[0])} to {human_bytes(sizes[-1])}" if sizes else "no sizes"


def compare(inputs=(), *, run=(), rounds: int = DEFAULT_ROUNDS, out=None, labels=None, threshold: float = 0.0,
            level: float = LEVEL) -> Result:
    """Each input against the first, size by size: the ratio of its values
    to the first's (Hodges-Lehmann) with its interval at `level`, the
    Mann-Whitney p value, Holm's correction over the sizes of each
    comparison, and a verdict: "faster" or "slower" where the difference
    is significant and the ratio departs from 1 by more than `threshold`
    (a fraction: 0.05 for 5 %), "undecided" where the size's interval lies
    beyond the threshold but the corrected test is not significant (too few
    values a side), "no difference" otherwise, "no test" where a side has
    one value of the size. inputs: paths, globs or folders
    (see read_side); labels: their names (default A, B, C, ...).

    run: shell commands to launch instead, `rounds` times each, taking
    turns (results/launches.py), their outputs kept under `out` (default: a
    new folder compare-DATE-TIME here); the folders are then compared."""
    inputs = [os.fspath(given) for given in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]
    if not 0 <= threshold < 1:
        raise usage_error(f"the threshold is a fraction from 0 to below 1 (5 % is 0.05), got {threshold!r}")
    if not 0 < level < 1:
        raise usage_error(f"the confidence level is a fraction between 0 and 1 (0.95), got {level!r}")
    if run:
        if inputs:
            raise usage_error("compare takes Result files or --run commands, not both")
        out = out or time.strftime("compare-%Y%m%d-%H%M%S")
        inputs = launches.run(list(run), rounds, out, log=print)
    if len(inputs) < 2:
        raise usage_error(f"compare needs two inputs at least, got {len(inputs)}")
    labels = list(labels) if labels else [chr(ord("A") + i) if i < 26 else f"X{i}" for i in range(len(inputs))]
    sides = [read_side(given, label) for given, label in zip(inputs, labels)]
    base = sides[0]
    for side in sides[1:]:
        if side.quantity != base.quantity:
            raise usage_error(f"{side.label} ({side.given}, {side.benchmark}) measures {side.quantity} and "
                             f"{base.label} ({base.given}, {base.benchmark}) {base.quantity}; compare runs of one "
                             "quantity (latency with latency, bandwidth with bandwidth)")
        if not set(side.values) & set(base.values):
            raise usage_error(f"the sizes of {base.label} and {side.label} do not overlap: {base.label} ({base.given}) "
                             f"has {_range(base.values)}, {side.label} ({side.given}) has {_range(side.values)}")
    lower_is_better = base.quantity == "latency"
    rows = []
    for side in sides[1:]:
        keys = sorted(set(side.values) & set(base.values))
        found = []
        for key in keys:
            a, b = base.values[key], side.values[key]
            if len(a) >= 2 and len(b) >= 2:
                found.append(shift(a, b, level))
            else:
                found.append(None)
        adjusted = holm([math.nan if s is None else s.p for s in found])
        for key, result, p_holm in zip(keys, found, adjusted):
            a, b = base.values[key], side.values[key]
            ratio = result.ratio if result else float(np.median(b) / np.median(a))
            row = {"candidate": side.label, "series": key[0], "size": key[1], "n_base": len(a), "n_candidate": len(b),
                   "median_base": float(np.median(a)), "median_candidate": float(np.median(b)), "ratio": ratio,
                   "ratio_low": result.low if result else None, "ratio_high": result.high if result else None,
                   "p": result.p if result else None, "p_holm": None if result is None else float(p_holm),
                   "verdict": _verdict(ratio, None if result is None else float(p_holm), level, threshold,
                                       lower_is_better, result)}
            rows.append(row)
    units = {"candidate": "", "series": "", "size": "B", "n_base": "", "n_candidate": "", "median_base": base.unit,
             "median_candidate": base.unit, "ratio": "", "ratio_low": "", "ratio_high": "", "p": "", "p_holm": "",
             "verdict": ""}
    if not any(row["series"] for row in rows):
        rows = [{key: value for key, value in row.items() if key != "series"} for row in rows]
        units.pop("series")
    params = {"inputs": {side.label: side.given for side in sides},
              "commands": {side.label: side.command for side in sides if side.command},
              "benchmarks": {side.label: side.benchmark for side in sides},
              "files": {side.label: len(side.files) for side in sides},
              "quantity": base.quantity, "column": base.column, "lower_is_better": lower_is_better,
              "level": level, "threshold": threshold,
              "interval": "Hodges-Lehmann estimate of the ratio, distribution-free interval from U's distribution",
              "test": "Mann-Whitney U, two-sided (exact without ties up to 50 values a side, else normal)",
              "correction": "Holm over the sizes of each comparison"}
    env = {"under_load": {side.label: side.loaded for side in sides if side.loaded}}
    return Result(NAME, params, env, rows, units)


def _verdict(ratio: float, p_holm, level: float, threshold: float, lower_is_better: bool, result=None) -> str:
    if p_holm is None:
        return "no test"
    if abs(ratio - 1) <= threshold:
        return "no difference"
    if p_holm >= 1 - level:
        # The size's own interval lies beyond the threshold, but corrected over
        # the sizes the test is not significant: with few values a side (5
        # against 5 cannot give p below 0.008) more rounds decide, and "no
        # difference" would claim what the data do not show.
        beyond = result is not None and result.low is not None and (
            result.low > 1 + threshold or result.high < 1 - threshold)
        return UNDECIDED if beyond else "no difference"
    return "slower" if (ratio > 1) == lower_is_better else "faster"


# The verdict where the interval says different and the corrected test cannot yet.
UNDECIDED = "undecided"


def regressions(result: Result) -> list:
    """The rows of a comparison whose verdict is "slower": significantly
    worse by more than its threshold (for --fail-on-regression)."""
    return [row for row in result.rows if row["verdict"] == "slower"]


def format_comparison(result: Result, full: bool = False) -> str:
    """The comparison as text: a block per input against the first, a line
    per size with both medians, the ratio, its interval, the p value after
    Holm's correction and the verdict; then what could not be tested and
    which rounds ran under load."""
    params = result.params
    labels = list(params["inputs"])
    base = labels[0]
    better = "lower" if params["lower_is_better"] else "higher"
    percent = f"{params['level'] * 100:g} %"
    lines = [f"# fpgacomm compare: {params['column']} ({params['quantity']}, {better} is better), each input against "
             f"{base}; ratio {labels[-1] if len(labels) == 2 else 'X'}/{base} with its {percent} interval "
             "(Hodges-Lehmann), Mann-Whitney U, Holm over the sizes"]
    if params.get("threshold"):
        lines.append(f"# differences within {params['threshold'] * 100:g} % count as no difference (--threshold)")
    for label in labels:
        command = params.get("commands", {}).get(label)
        lines.append(f"# {label}: {params['inputs'][label]} ({params['benchmarks'][label]}, "
                     f"{params['files'][label]} file{'s' if params['files'][label] != 1 else ''})"
                     + (f": {command}" if command else ""))
    unit = result.units.get("median_base", "")
    series = "series" in result.columns
    width = max([len(row["series"]) for row in result.rows] + [6]) + 2 if series else 0
    for label in labels[1:]:
        rows = [row for row in result.rows if row["candidate"] == label]
        header = ([f"{'series':<{width}}"] if series else []) + [
            f"{'Size':<10}", f"{base + ' median':>14}", f"{label + ' median':>14}", f"{'n':>11}",
            f"{label + '/' + base:>8}", f"{percent + ' interval':>19}", f"{'p (Holm)':>10}", "  verdict"]
        lines += ["", f"# {label} against {base}", "".join(header)]
        for row in rows:
            interval = (f"{row['ratio_low']:.3f} .. {row['ratio_high']:.3f}" if row["ratio_low"] is not None
                        else "-")
            cells = ([f"{row['series']:<{width}}"] if series else []) + [
                f"{human_bytes(row['size']):<10}", f"{with_unit(row['median_base'], unit):>14}",
                f"{with_unit(row['median_candidate'], unit):>14}",
                f"{str(row['n_base']) + '/' + str(row['n_candidate']):>11}",
                f"{row['ratio']:>8.3f}", f"{interval:>19}",
                f"{'-' if row['p_holm'] is None else format(row['p_holm'], '.2g'):>10}", f"  {row['verdict']}"]
            lines.append("".join(cells))
        undecided = [row for row in rows if row["verdict"] == UNDECIDED]
        if undecided:
            lines.append(f"# undecided at {len(undecided)} size{'s' if len(undecided) > 1 else ''}: the interval "
                         "excludes 1, but corrected over the sizes the test is not significant: run more rounds or "
                         "launches (--rounds, compare --run)")
        untested = [row for row in rows if row["verdict"] == "no test"]
        if untested:
            lines.append(f"# one value a side at {len(untested)} size{'s' if len(untested) > 1 else ''}: ratios "
                         "only, no test was possible (run more rounds or launches: --rounds, compare --run)")
    loaded = result.env.get("under_load") or {}
    for label, names in loaded.items():
        lines.append(f"# {label}: taken while the load exceeded the cores: {'; '.join(names)}")
    return "\n".join(lines)
