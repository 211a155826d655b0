"""Comparisons of runs: each input against the first, size by size, as a
Result named "comparison" (`fpgacomm compare`, `fpgacomm.compare`).

An input is a side: a Result file (JSON, CSV, or a peer's text that
results/peers.py reads), a glob, or a folder of them (results/inputs.py; a
`fpgacomm compare --run` folder gives its launches). Each file is one launch
(a job): its rounds (row["rounds"]) or its one value, per series (the
identity results/series.py names) and size. Launches are the unit of the
test; rounds only compare two single jobs. The statistics are
compare_stats.py's; the methods are in docs/METHODS.md, "Comparing runs".
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..params import usage_error
from ..runtime import files
from ..units import human_bytes, with_unit
from . import kinds, launch_record, launches, peers, series
from .compare_stats import LEVEL, holm, launches_to_decide, shift
from .inputs import expand
from .result import SCHEMA, Result

NAME = kinds.COMPARISON
# Launches a compare --run campaign makes of each command unless told.
DEFAULT_ROUNDS = 7


@dataclass
class Side:
    """One input: its label ("A"), what was given, the files read (its
    launches), the benchmark and headline column, and per (series, size)
    the values of each launch (its rounds, or its one value)."""

    label: str
    given: str
    files: list
    benchmark: str
    quantity: str
    column: str
    unit: str
    launches: dict = field(default_factory=dict)
    loaded: list = field(default_factory=list)  # rounds or launches taken under load
    zeros: dict = field(default_factory=dict)  # (series, size) -> launches whose value printed as 0
    resolution: float | None = None  # the printed step of the column, where a peer's text gives it
    command: str | None = None  # the command a `compare --run` folder's launches ran
    experiment: tuple = ()  # what its launches measured: the benchmark and series identity (_experiment)
    headlines: list = field(default_factory=list)  # the headline columns it has, the one compared first


def read_with_rounds(path: str) -> tuple:
    """(Result, rounds): the file's Result without its rounds, and for each
    row its rounds ({column: [value per round]}) or None. Rounds are read
    from the file's own dict, so that files with rounds read whatever the
    Result class accepts."""
    if path.lower().endswith(".json"):
        data = files.read_json(path, what="an fpgacomm Result")
        if not isinstance(data, dict) or data.get("schema") != SCHEMA:
            raise ValueError(
                f"{path}: not an fpgacomm Result (no schema {SCHEMA!r}); fpgacomm reads Result JSON "
                f"and CSV files and the text output of {', '.join(peers.FORMATS)}"
            )
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
        result = Result(
            result.benchmark,
            result.params,
            result.env,
            rows,
            {key: unit for key, unit in result.units.items() if key != "rounds"},
            None,
            result.incomplete,
        )
    return result, rounds


def quantity_of(result: Result) -> tuple:
    """(quantity, column, lower_is_better) of a Result's headline figure,
    as its kind (results/kinds.py) declares it."""
    found = kinds.of(result.benchmark).headline(result.columns)
    if found is None:
        raise ValueError(
            f"{result.benchmark} has no latency or bandwidth column to compare (columns: {', '.join(result.columns)})"
        )
    return found


def read_side(given: str, label: str) -> Side:
    """An input's values per (series, size) and launch: each file is one
    launch (a job), giving its rounds or its one value."""
    files = expand(given)
    record = launch_record.record(given) if os.path.isdir(given) else None
    side = None
    for path in files:
        try:
            result, rounds = read_with_rounds(path)
            quantity, column, _ = quantity_of(result)
        except (ValueError, TypeError, KeyError) as error:
            raise usage_error(f"{label}: {error}") from None
        if side is None:
            side = Side(
                label,
                os.fspath(given),
                files,
                result.benchmark,
                quantity,
                column,
                result.units.get(column, ""),
                experiment=_experiment(result),
                headlines=kinds.of(result.benchmark).headline_columns(result.columns),
            )
        elif _experiment(result) != side.experiment:
            raise usage_error(
                f"{label}: {side.files[0]} ({_experiment_text(side.experiment)}) and {path} "
                f"({_experiment_text(_experiment(result))}) are different experiments, and the files "
                "of an input are launches of one; give them as separate inputs"
            )
        launch = {}
        for row, row_rounds in zip(result.rows, rounds):
            if not isinstance(row.get("size"), (int, float)):
                continue
            values = row_rounds.get(column) if isinstance(row_rounds, dict) else None
            values = [row[column]] if values is None else values
            key = (series.label(series.identity(row)), int(row["size"]))  # sizes are matched within a series
            numbers = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
            if numbers and not any(v > 0 for v in numbers):
                side.zeros.setdefault(key, []).append(path)
                side.resolution = _resolution(result, column)
            launch.setdefault(key, []).extend(v for v in numbers if v > 0)
        for key, values in launch.items():
            if values:
                side.launches.setdefault(key, []).append(values)
        side.loaded += _under_load(path, result, whole_run=record is None)
    if record is not None:
        side.command = record.get("command")
        side.loaded += _launches_under_load(given, record)
    return side


def _resolution(result: Result, column: str) -> float | None:
    """The step of the column's last printed digit (peers' text records it)."""
    steps = result.params.get("resolution")
    step = steps.get(column) if isinstance(steps, dict) else None
    return step if isinstance(step, (int, float)) else None


def _experiment(result: Result) -> tuple:
    """What a file measured, which its launches share: the benchmark and
    the series' identity its parameters give (memory kinds, test, ...)."""
    return (result.benchmark,) + series.identity(result.params)


def _experiment_text(experiment: tuple) -> str:
    return " ".join([experiment[0], series.label(experiment[1:])]).strip()


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
        loaded = [
            (index + 1, load) for index, load in enumerate(loads) if isinstance(load, (int, float)) and load > cores
        ]
        if not loaded:
            return []
        numbers = ", ".join(str(number) for number, _ in loaded)
        low, high = min(load for _, load in loaded), max(load for _, load in loaded)
        return [
            f"{path} round{'s' if len(loaded) > 1 else ''} {numbers} (load {low:.1f}"
            f"{f' to {high:.1f}' if high > low else ''} on {cores} cores)"
        ]
    load = machine.get("load_before")
    if not whole_run:
        return []
    return [f"{path} (load {load:.1f} on {cores} cores)"] if isinstance(load, (int, float)) and load > cores else []


def _launches_under_load(given: str, record: dict) -> list:
    """The launches of a `compare --run` folder that started under load,
    from its record (the text of OMB's programs records no load)."""
    return [
        f"{os.path.join(given, launch['output'])} (launch {launch['launch']}, load {launch['load_before']:.1f} "
        f"on {launch['cores']} cores)"
        for launch in record.get("launches", [])
        if launch.get("load_before") is not None and launch["load_before"] > launch.get("cores", math.inf)
    ]


def _range(keys) -> str:
    sizes = sorted(size for _, size in keys)
    if not sizes:
        return "no sizes"
    return human_bytes(sizes[0]) if sizes[0] == sizes[-1] else f"{human_bytes(sizes[0])} to {human_bytes(sizes[-1])}"


def threshold_of(value) -> float:
    """The one meaning of a threshold, in Python and on the command line: a
    fraction below 1 (0.05) or a percentage written with its sign ("5%"),
    both 5 %. A bare number of 1 or more is refused rather than guessed."""
    text = str(value).strip()
    try:
        number = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        number = math.nan
    if isinstance(value, bool) or not 0 <= number < 1:
        raise usage_error(
            f"--threshold takes a fraction below 1 or a percentage: 0.05 and 5% both mean 5 %; " f"got {value!r}"
        )
    return number


def compare(
    inputs=(), *, run=(), rounds: int = DEFAULT_ROUNDS, out=None, labels=None, threshold=0.0, level: float = LEVEL
) -> Result:
    """Each input against the first, size by size. The unit is the launch
    (a job, one file): each launch is reduced to its median per size, and
    the launches' medians are compared: the ratio of the input's to the
    first's (Hodges-Lehmann) with its interval at `level`, the Mann-Whitney
    p value, Holm's correction over the sizes of each comparison, and a
    verdict per size:

    - "faster" or "slower": the corrected test is significant and the ratio
      departs from 1 by more than `threshold`;
    - "no difference": the interval lies inside the threshold band
      [1 - threshold, 1 + threshold] (an equivalence test: never with
      threshold 0 unless every value is the same);
    - "undecided": neither is shown; launches_needed estimates how many
      launches a side would decide it;
    - with one launch a side, "jobs differ" or "one job a side": the
      rounds of the two jobs are compared, which says whether these two
      jobs differ, not two set-ups (compare --run launches many).

    threshold: a fraction (0.05) or a percentage string ("5%"), the same 5 %.
    inputs: paths, globs or folders (results/inputs.py); labels: their names
    (default A, B, C, ...). run: shell commands to launch instead, `rounds`
    times each, taking turns (results/launches.py), their outputs kept under
    `out` (default: a new folder compare-DATE-TIME here); the folders are
    then compared."""
    inputs = [os.fspath(given) for given in ([inputs] if isinstance(inputs, (str, os.PathLike)) else inputs)]
    threshold = threshold_of(threshold)
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
            raise usage_error(
                f"{side.label} ({side.given}, {side.benchmark}) measures {side.quantity} and "
                f"{base.label} ({base.given}, {base.benchmark}) {base.quantity}; compare runs of one "
                "quantity (latency with latency, bandwidth with bandwidth)"
            )
        if not set(side.launches) & set(base.launches):
            if {name for name, _ in side.launches} == {name for name, _ in base.launches}:
                raise usage_error(
                    f"the sizes of {base.label} and {side.label} do not overlap: {base.label} "
                    f"({base.given}) has {_range(base.launches)}, {side.label} ({side.given}) has "
                    f"{_range(side.launches)}"
                )
            raise usage_error(
                f"no series of {base.label} ({base.given}) is one of {side.label} ({side.given}); "
                f"sizes are compared within a series ({', '.join(series.SERIES_COLUMNS)}): "
                f"{'; '.join(_unmatched(base, side))}"
            )
    lower_is_better = kinds.LOWER_IS_BETTER[base.quantity]
    unmatched = {side.label: _unmatched(base, side) for side in sides[1:]}
    rows = []
    for side in sides[1:]:
        keys = sorted(set(side.launches) & set(base.launches))
        found = [_size(base.launches[key], side.launches[key], level) for key in keys]
        adjusted = holm([math.nan if size.shift is None else size.shift.p for size in found])
        alpha = (1 - level) / max(1, len(keys))  # Holm's first step: what a lone difference must reach
        for key, size, p_holm in zip(keys, found, adjusted):
            tested = size.shift
            verdict = _verdict(size, None if tested is None else float(p_holm), level, threshold, lower_is_better)
            needed = (
                launches_to_decide(np.log(size.medians_a), np.log(size.medians_b), threshold, alpha)
                if verdict == UNDECIDED
                else None
            )
            rows.append(
                {
                    "candidate": side.label,
                    "series": key[0],
                    "size": key[1],
                    "n_base": len(size.medians_a),
                    "n_candidate": len(size.medians_b),
                    "median_base": float(np.median(size.medians_a)),
                    "median_candidate": float(np.median(size.medians_b)),
                    "ratio": tested.ratio if tested else float(np.median(size.medians_b) / np.median(size.medians_a)),
                    "ratio_low": tested.low if tested else None,
                    "ratio_high": tested.high if tested else None,
                    "coverage": tested.coverage if tested else None,
                    "p": tested.p if tested else None,
                    "p_holm": None if tested is None else float(p_holm),
                    "verdict": verdict,
                    "launches_needed": needed,
                }
            )
    units = {
        "candidate": "",
        "series": "",
        "size": "B",
        "n_base": "",
        "n_candidate": "",
        "median_base": base.unit,
        "median_candidate": base.unit,
        "ratio": "",
        "ratio_low": "",
        "ratio_high": "",
        "coverage": "",
        "p": "",
        "p_holm": "",
        "verdict": "",
        "launches_needed": "",
    }
    if not any(row["series"] for row in rows):
        rows = [{key: value for key, value in row.items() if key != "series"} for row in rows]
        units.pop("series")
    params = {
        "inputs": {side.label: side.given for side in sides},
        "commands": {side.label: side.command for side in sides if side.command},
        "benchmarks": {side.label: side.benchmark for side in sides},
        "files": {side.label: len(side.files) for side in sides},
        "quantity": base.quantity,
        "column": base.column,
        "lower_is_better": lower_is_better,
        "headline_columns": base.headlines,
        "level": level,
        "threshold": threshold,
        "unit": "the launch: each file's median per size; with one launch a side, the rounds of the two jobs",
        "interval": "Hodges-Lehmann estimate of the ratio, distribution-free interval from U's distribution",
        "test": "Mann-Whitney U, two-sided (exact without ties up to 50 values a side, else normal)",
        "correction": "Holm over the sizes of each comparison",
        "equivalence": "no difference where the interval lies inside [1 - threshold, 1 + threshold]",
        "unmatched": {label: found for label, found in unmatched.items() if found},
        "printed_as_zero": {
            side.label: sorted(f"{name + ' ' if name else ''}{human_bytes(size)}" for name, size in side.zeros)
            for side in sides
            if side.zeros
        },
        "printed_step": {side.label: side.resolution for side in sides if side.resolution},
    }
    env = {"under_load": {side.label: side.loaded for side in sides if side.loaded}}
    return Result(NAME, params, env, rows, units)


@dataclass
class _Size:
    """One size of a comparison: each side's launch medians, whether each
    side is one job, and the shift tested (None where there is no test)."""

    medians_a: list
    medians_b: list
    one_job: bool
    shift: object


def _size(launches_a: list, launches_b: list, level: float) -> _Size:
    """The test of one size: across launches (their medians) where each
    side has two or more; across the rounds of the one job a side has where
    both have one; no test where one side has one launch and the other more."""
    medians_a = [float(np.median(values)) for values in launches_a]
    medians_b = [float(np.median(values)) for values in launches_b]
    if len(launches_a) == len(launches_b) == 1:
        rounds_a, rounds_b = launches_a[0], launches_b[0]
        tested = shift(rounds_a, rounds_b, level) if len(rounds_a) >= 2 and len(rounds_b) >= 2 else None
        return _Size(medians_a, medians_b, True, tested)
    tested = shift(medians_a, medians_b, level) if len(medians_a) >= 2 and len(medians_b) >= 2 else None
    return _Size(medians_a, medians_b, False, tested)


def _verdict(size: _Size, p_holm, level: float, threshold: float, lower_is_better: bool) -> str:
    tested = size.shift
    differs = tested is not None and p_holm < 1 - level and abs(tested.ratio - 1) > threshold
    if size.one_job:
        # Rounds of one job share its placement and memory layout: they can
        # tell these two jobs apart, never two set-ups.
        return JOBS_DIFFER if differs else ONE_JOB
    if differs:
        return "slower" if (tested.ratio > 1) == lower_is_better else "faster"
    if (
        tested is not None
        and tested.coverage >= level
        and (1 - threshold <= tested.low and tested.high <= 1 + threshold)
    ):
        return "no difference"
    return UNDECIDED


# Neither a difference nor its absence shown: more launches decide.
UNDECIDED = "undecided"
# One launch a side: the two jobs' rounds differ, or nothing is claimed.
JOBS_DIFFER = "jobs differ"
ONE_JOB = "one job a side"


def _unmatched(base: Side, side: Side) -> list:
    """What one input has and the other lacks, per series: sizes no test
    could pair (a series of one side only shows as all of its sizes)."""
    found = []
    for owner, own, other in ((base.label, base.launches, side.launches), (side.label, side.launches, base.launches)):
        alone = [key for key in own if key not in other]
        for name in sorted({name for name, _ in alone}):
            keys = [key for key in alone if key[0] == name]
            found.append(
                f"{owner} only: {name + ', ' if name else ''}{len(keys)} size{'s' if len(keys) > 1 else ''}, "
                f"{_range(keys)}"
            )
    return found


def regressions(result: Result) -> list:
    """The rows of a comparison whose verdict is "slower": significantly
    worse by more than its threshold."""
    return [row for row in result.rows if row["verdict"] == "slower"]


def undecided_on_the_slower_side(result: Result) -> list:
    """The undecided rows whose interval lies wholly beyond the threshold on
    the slower side: a regression the data point to but cannot yet show."""
    lower_is_better, threshold = result.params["lower_is_better"], result.params["threshold"]
    return [
        row
        for row in result.rows
        if row["verdict"] == UNDECIDED
        and row["ratio_low"] is not None
        and (row["ratio_low"] > 1 + threshold if lower_is_better else row["ratio_high"] < 1 - threshold)
    ]


def exit_status(result: Result) -> int:
    """--fail-on-regression's status: 1 where a size is slower, 3 where none
    is but one is undecided on the slower side, else 0 (one job a side is
    no test of a set-up, so it fails nothing)."""
    if regressions(result):
        return 1
    return 3 if undecided_on_the_slower_side(result) else 0


def format_comparison(result: Result, full: bool = False) -> str:
    """The comparison as text: a block per input against the first, a line
    per size with both medians, the launches a side, the ratio, its
    interval, the p value after Holm's correction and the verdict; then what
    the verdicts rest on, what matched nothing and which runs were loaded."""
    params = result.params
    labels = list(params["inputs"])
    base = labels[0]
    better = "lower" if params["lower_is_better"] else "higher"
    level = params["level"]
    percent = f"{level * 100:g} %"
    choices = params.get("headline_columns", [])
    column = params["column"] + (f", the most precise of {' and '.join(choices)}" if len(choices) > 1 else "")
    lines = [
        f"# fpgacomm compare: {column} ({params['quantity']}, {better} is better), each input against "
        f"{base}; each launch (file) reduced to its median per size; ratio "
        f"{labels[-1] if len(labels) == 2 else 'X'}/{base} of the launches with its {percent} interval "
        "(Hodges-Lehmann), Mann-Whitney U, Holm over the sizes"
    ]
    if params.get("threshold"):
        lines.append(f"# no difference: an interval inside {params['threshold'] * 100:g} % of 1 (--threshold)")
    for label in labels:
        command = params.get("commands", {}).get(label)
        lines.append(
            f"# {label}: {params['inputs'][label]} ({params['benchmarks'][label]}, "
            f"{params['files'][label]} launch{'es' if params['files'][label] != 1 else ''})"
            + (f": {command}" if command else "")
        )
    unit = result.units.get("median_base", "")
    has_series = "series" in result.columns
    width = max([len(row["series"]) for row in result.rows] + [6]) + 2 if has_series else 0
    for label in labels[1:]:
        rows = [row for row in result.rows if row["candidate"] == label]
        header = ([f"{'series':<{width}}"] if has_series else []) + [
            f"{'Size':<10}",
            f"{base + ' median':>14}",
            f"{label + ' median':>14}",
            f"{'launches':>10}",
            f"{label + '/' + base:>8}",
            f"{'interval':>26}",
            f"{'p (Holm)':>10}",
            "  verdict",
        ]
        lines += ["", f"# {label} against {base}", "".join(header)]
        for row in rows:
            interval = "-"
            if row["ratio_low"] is not None:
                interval = f"{row['ratio_low']:.3f} .. {row['ratio_high']:.3f} ({row['coverage'] * 100:.3g} %)"
            verdict = row["verdict"] + (
                f" ({row['launches_needed']} launches a side would decide)" if row.get("launches_needed") else ""
            )
            cells = ([f"{row['series']:<{width}}"] if has_series else []) + [
                f"{human_bytes(row['size']):<10}",
                f"{with_unit(row['median_base'], unit):>14}",
                f"{with_unit(row['median_candidate'], unit):>14}",
                f"{str(row['n_base']) + '/' + str(row['n_candidate']):>10}",
                f"{row['ratio']:>8.3f}",
                f"{interval:>26}",
                f"{'-' if row['p_holm'] is None else format(row['p_holm'], '.2g'):>10}",
                f"  {verdict}",
            ]
            lines.append("".join(cells))
        lines += _notes(rows, params)
        lines += [f"# matched nothing: {found}" for found in params.get("unmatched", {}).get(label, [])]
    for label, where in params.get("printed_as_zero", {}).items():
        step = params.get("printed_step", {}).get(label)
        precision = f" ({with_unit(step, unit)})" if step else ""
        lines.append(
            f"# {label}: values printed as 0, below the printed precision{precision}, left out of the "
            f"ratios at {', '.join(where)}"
        )
    loaded = result.env.get("under_load") or {}
    for label, names in loaded.items():
        lines.append(f"# {label}: taken while the load exceeded the cores: {'; '.join(names)}")
    return "\n".join(lines)


def _span(counts: list) -> str:
    low, high = min(counts), max(counts)
    return f"about {low}" if low == high else f"from about {low} to {high}"


def _notes(rows: list, params: dict) -> list:
    """What the verdicts of one comparison rest on, where it is not plain."""
    notes = []

    def sizes(count: int) -> str:
        return f"{count} size{'s' if count > 1 else ''}"

    one_job = [row for row in rows if row["verdict"] in (ONE_JOB, JOBS_DIFFER)]
    if one_job:
        notes.append(
            f"# one job a side at {sizes(len(one_job))}: the interval is of the rounds of these two jobs, "
            "which share each job's placement and memory layout; it says whether two jobs differ, not two "
            "set-ups, so there is no faster or slower verdict: use compare --run (several launches a "
            "side) for one"
        )
    undecided = [row for row in rows if row["verdict"] == UNDECIDED]
    if undecided:
        needed = [row["launches_needed"] for row in undecided if row["launches_needed"]]
        notes.append(
            f"# undecided at {sizes(len(undecided))}: neither a difference (the test, corrected over the "
            "sizes) nor its absence (the interval inside the threshold band) is shown"
            + (
                f"; {_span(needed)} launches a side would decide (each size's count beside its verdict)"
                if needed
                else ""
            )
            + (
                ""
                if params["threshold"]
                else "; without --threshold no difference can never be shown "
                "(give the difference that does not matter, e.g. --threshold 5%)"
            )
        )
    return notes
