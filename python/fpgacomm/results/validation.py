"""A prediction against held-out measurements (`fpgacomm validate`,
`fpgacomm.validate`), as a Result named "validation".

The unit of replication is the launch: each measured file is one launch (a
gather or b_eff Result, or one launch of a calibration campaign), and a point
(what ran, the rank count, the size) measured in several launches has as
many values. Per point: the median over launches with its distribution-free
interval (stats.median_ci), the prediction with its interval, the signed
error (predicted - measured) / measured and whether the prediction's interval
covered the measured median. Per rank count and size class: the median and
the largest absolute error, the coverage and the mean half-width of the predicted
intervals (relative to the prediction).

It claims no accuracy, and says why, where the held-out launches cannot back
one: a launch ran more ranks on a host than it has cores, or started under a
load above its cores (both recorded in each Result's env), or the launches'
own spread exceeds the error it would report (one launch per point has no
spread to tell); the per-point error and coverage are then left out of the
Result itself, so that neither its text nor its file holds an accuracy it
cannot back. docs/VALIDATION.md has the method::

    fpgacomm.validate("pred.json", ["heldout/"]).write("validation.json")
"""

from __future__ import annotations

import glob
import os

import numpy as np

from ..params import usage_error
from ..runtime import files
from ..runtime.environment import topology
from ..units import human_bytes, with_unit
from . import kinds
from .inputs import files_of
from .result import SCHEMA, Result
from .stats import median, median_ci

NAME = kinds.VALIDATION
# The Result `fpgacomm predict --json` writes, and the keys of its rows this
# module reads: the point, the predicted time and its interval.
PREDICTION = kinds.PREDICTION
POINT = ("experiment", "schedule", "collective", "nodes", "size")
PREDICTED, LOW, HIGH = "time", "low", "high"
# The experiments a measured launch gives points of, and b_eff's schedule.
GATHER, BEFF, RING = "gather", "beff", "ring"
# Size classes of the summary: (smallest, name), each up to the next.
KiB, MiB = 1 << 10, 1 << 20
SIZE_CLASSES = (
    (0, "below 64 KiB"),
    (64 * KiB, "64 KiB to 1 MiB"),
    (MiB, "1 MiB to 16 MiB"),
    (16 * MiB + 1, "above 16 MiB"),
)
UNITS = {
    "experiment": "",
    "schedule": "",
    "collective": "",
    "nodes": "",
    "size": "B",
    "launches": "",
    "measured": "s",
    "measured_low": "s",
    "measured_high": "s",
    "predicted": "s",
    "predicted_low": "s",
    "predicted_high": "s",
    "error": "fraction",
    "covered": "",
}
# The per-point columns that claim an accuracy: absent where none can be claimed.
CLAIMS = ("error", "covered")
SUMMARY_UNITS = {
    "nodes": "",
    "what": "",
    "sizes": "",
    "points": "",
    "median_error": "fraction",
    "largest_error": "fraction",
    "coverage": "fraction",
    "mean_half_width": "fraction",
}


def validate(prediction, measured, *, ranks: int | None = None) -> Result:
    """The prediction (a path or a Result of `fpgacomm predict`) against the
    measured launches (paths, folders of JSON files, or globs; one launch each);
    ranks: only the points measured at this rank count (a cross-validation's
    held-out count: the others trained the platform). A usage error, before
    anything is computed, for a prediction that is not one, a measured file
    that is no Result this reads, or measured files that match no predicted
    point (each named). Further predictions among the measured files (one
    per schedule, as predict writes them) join the first."""
    predicted_path, predicted = _read_prediction(prediction)
    paths = []
    for path in _expand(measured):
        if _is_prediction(path):
            more_path, more = _read_prediction(path)
            twice = sorted(set(more) & set(predicted), key=_order)
            if twice:
                raise usage_error(
                    f"validate: {more_path} predicts {_describe(twice[0])} again"
                    f"{f' (and {len(twice) - 1} more points)' if len(twice) > 1 else ''}; give each "
                    "point's prediction once"
                )
            predicted.update(more)
            predicted_path = f"{predicted_path}, {more_path}"
        else:
            paths.append(path)
    if not paths:
        raise usage_error("validate: no measured files given; give the held-out launches' Result JSON files")
    twice = sorted({path for path in paths if [os.path.realpath(p) for p in paths].count(os.path.realpath(path)) > 1})
    if twice:
        raise usage_error(f"validate: {', '.join(twice)} given more than once; each file is one launch, give it once")
    launches = [(path, _read(path)) for path in paths]
    values, unmatched, unpredicted = {}, [], set()
    for path, result in launches:
        points = {
            point: value for point, value in _launch_points(path, result).items() if ranks is None or point[3] == ranks
        }
        matched = {point: value for point, value in points.items() if point in predicted}
        if not matched:
            shown = ", ".join(_describe(point) for point in list(points)[:3])
            unmatched.append(f"{path} ({shown}{', ...' if len(points) > 3 else ''})")
        unpredicted.update(point for point in points if point not in predicted)
        for point, value in matched.items():
            values.setdefault(point, []).append(value)
    if unmatched:
        raise usage_error(
            f"validate: measured files that match no predicted point: {'; '.join(unmatched)}; "
            f"the prediction {predicted_path} has {_range(predicted)}"
        )
    rows = [_row(point, values[point], predicted[point]) for point in sorted(values, key=_order)]
    refusals = _refusals([result for _, result in launches], rows)
    if refusals:  # no accuracy anywhere, printed or saved: the errors go, the times stay
        rows = [{key: value for key, value in row.items() if key not in CLAIMS} for row in rows]
    params = {
        "prediction": predicted_path,
        "measured": [path for path, _ in launches],
        "launches_per_point": sorted({row["launches"] for row in rows}),
        "claim": not refusals,
        "refusals": refusals,
        "summary": None if refusals else _summary(rows),
        "unpredicted": [_describe(point) for point in sorted(unpredicted, key=_order)],
    }
    return Result(NAME, params, {}, rows, {column: UNITS[column] for column in rows[0]})


def _read_prediction(prediction) -> tuple:
    """(name, {point: (time, low, high)}) of a prediction, or a usage error."""
    name = (
        f"the prediction of {prediction.params.get('platform', 'a platform')}"
        if isinstance(prediction, Result)
        else str(prediction)
    )
    result = prediction if isinstance(prediction, Result) else _read(str(prediction))
    need = (*POINT, PREDICTED, LOW, HIGH)
    if result.benchmark != PREDICTION or any(column not in result.columns for column in need):
        raise usage_error(
            f"validate: {name} is not a prediction: it is a {result.benchmark} Result with columns "
            f"{', '.join(result.columns)}; give the file of fpgacomm predict --json first"
        )
    for row in result.rows:
        values = (row[LOW], row[PREDICTED], row[HIGH])
        if not all(isinstance(v, (int, float)) and 0 < v < float("inf") for v in values) or sorted(values) != list(
            values
        ):
            raise usage_error(
                f"validate: {name} is not a usable prediction: at {_describe(_key(row))} its time and "
                f"interval are {values}, where positive times with {LOW} <= {PREDICTED} <= {HIGH} are "
                "needed; write it again with fpgacomm predict"
            )
    return name, {_key(row): (row[PREDICTED], row[LOW], row[HIGH]) for row in result.rows}


def _is_prediction(path: str) -> bool:
    """Whether a JSON file holds a prediction Result (without reading it whole into a Result)."""
    try:
        document = files.read_json(path)
    except ValueError:  # files.ResultError is a ValueError
        return False
    return isinstance(document, dict) and document.get("schema") == SCHEMA and document.get("benchmark") == PREDICTION


def _key(row: dict) -> tuple:
    """A prediction row's point."""
    return row["experiment"], row["schedule"], row["collective"], int(row["nodes"]), int(row["size"])


def _read(path: str) -> Result:
    if not os.path.isfile(path):
        raise usage_error(f"validate: {path}: no such file; give Result JSON files written with --json")
    try:
        return Result.read_json(path)
    except (ValueError, KeyError, TypeError) as error:
        raise usage_error(f"validate: {path} is not a Result JSON of fpgacomm ({error})") from None


def _expand(measured) -> list:
    """The launch files of paths, globs and folders (inputs.files_of); in a
    folder, files of fpgacomm that are not Results (a calibration campaign's
    index) are passed over."""
    given = [measured] if isinstance(measured, (str, os.PathLike)) else list(measured)
    paths = []
    for item in map(os.fspath, given):
        if not glob.has_magic(item) and not os.path.exists(item):
            raise usage_error(f"validate: {item}: no such file; give Result JSON files written with --json")
        found = files_of(item)
        paths += [path for path in found if not (os.path.isdir(item) and _other_fpgacomm_file(path))]
    return paths


def _other_fpgacomm_file(path: str) -> bool:
    """Whether the file is JSON of fpgacomm under a schema other than a Result's."""
    try:
        schema = files.read_json(path).get("schema", "")
    except (ValueError, AttributeError):  # files.ResultError is a ValueError
        return False
    return isinstance(schema, str) and schema.startswith("fpgacomm.") and schema != SCHEMA


def _launch_points(path: str, result: Result) -> dict:
    """{point: time} of one launch: a gather's rows (by schedule), a b_eff
    ring's (pattern "ring", at the launch's rank count, the time per message
    and neighbour), or a calibration launch's gather and b_eff rows."""
    if result.benchmark == "gather":
        collective = result.params.get("collective", GATHER)
        return {
            (GATHER, row["schedule"], collective, int(row["nodes"]), int(row["size"])): row["time"]
            for row in result.rows
        }
    if result.benchmark == "beff":
        # The time per message and neighbour (the row's time is its whole loop), as calibrate run records b_eff.
        ranks = int(result.env.get("ranks") or 0)
        return {
            (BEFF, RING, "", ranks, int(row["size"])): row["size"] / row["pair_bandwidth"]
            for row in result.rows
            if row["pattern"] == RING and row.get("pair_bandwidth")
        }
    if result.benchmark == "calibration":
        return {
            ((GATHER, row["schedule"], GATHER) if row["family"] == GATHER else (BEFF, RING, ""))
            + (int(row["ranks"]), int(row["size"])): row["time"]
            for row in result.rows
            if row["family"] in (GATHER, BEFF)
        }
    raise usage_error(
        f"validate: {path} is a {result.benchmark} Result; the measured files are launches of "
        f"fpgacomm gather, fpgacomm beff or fpgacomm calibrate run"
    )


def what_ran(point: tuple) -> str:
    """ "tree gather", "b_eff ring", "mbw_mr": what a point measured."""
    experiment, schedule, collective = point[:3]
    if experiment == BEFF:
        return f"b_eff {schedule}"
    return f"{schedule} {collective}" if experiment == GATHER else experiment


def _describe(point: tuple) -> str:
    return f"{what_ran(point)} at {point[3]} ranks and {human_bytes(point[4])}"


def _range(predicted: dict) -> str:
    kinds = sorted({what_ran(point) for point in predicted})
    nodes = sorted({point[3] for point in predicted})
    sizes = sorted({point[4] for point in predicted})
    return (
        f"{', '.join(kinds)} at {', '.join(map(str, nodes))} ranks, "
        f"{human_bytes(sizes[0])} to {human_bytes(sizes[-1])}"
    )


def _order(point: tuple) -> tuple:
    """Rank count first, then what ran, then the size."""
    return point[3], point[:3], point[4]


def _row(point: tuple, launches: list, prediction: tuple) -> dict:
    measured = median(launches)
    low, high, _ = median_ci(launches)
    predicted, predicted_low, predicted_high = prediction
    return {
        **dict(zip(POINT, point)),
        "launches": len(launches),
        "measured": measured,
        "measured_low": low,
        "measured_high": high,
        "predicted": predicted,
        "predicted_low": predicted_low,
        "predicted_high": predicted_high,
        "error": (predicted - measured) / measured,
        "covered": "yes" if predicted_low <= measured <= predicted_high else "no",
    }


def _refusals(launches: list, rows: list) -> list:
    """Why no accuracy can be claimed from these launches (empty: it can)."""
    reasons = []
    crowded = [r for r in launches if _ranks_per_host(r) > _cores(r)]
    if crowded:
        worst = max(crowded, key=lambda r: _ranks_per_host(r) / _cores(r))
        reasons.append(
            f"{len(crowded)} of {len(launches)} held-out launches ran more ranks on a host than it has "
            f"cores (up to {_ranks_per_host(worst)} ranks on {_cores(worst)} cores): the ranks took turns "
            "on the cores, which no prediction of the machine's network describes"
        )
    loaded = [r for r in launches if (_load(r) or 0.0) > _cores(r)]
    if loaded:
        worst = max(loaded, key=lambda r: _load(r) / _cores(r))
        reasons.append(
            f"{len(loaded)} of {len(launches)} held-out launches started under load (1-minute load "
            f"average up to {_load(worst):.1f} on {_cores(worst)} cores): other work, or the launch just "
            "before, still occupied the machine; leave a minute between launches, on an idle host"
        )
    single = sum(row["launches"] < 2 for row in rows)
    if single:
        reasons.append(
            f"{single} of {len(rows)} points were measured in one launch only: there is no spread to "
            "tell their error from; measure each point in 3 launches or more"
        )
    else:
        spread = median([(row["measured_high"] - row["measured_low"]) / 2 / row["measured"] for row in rows])
        error = median([abs(row["error"]) for row in rows])
        if spread > error:
            reasons.append(
                f"the held-out launches spread by {with_unit(spread, 'fraction')} (the median half-width "
                f"of their intervals), more than the median error {with_unit(error, 'fraction')} it "
                "would report"
            )
    return reasons


def _ranks_per_host(result: Result) -> int:
    """The most ranks the launch ran on one host."""
    return int(topology(result.env).get("ranks_per_node") or result.env.get("ranks") or 1)


def _cores(result: Result) -> int:
    return int(result.env.get("machine", {}).get("cores") or 1)


def _load(result: Result) -> float | None:
    return result.env.get("machine", {}).get("load_before")


def size_class(size: int) -> str:
    return [name for smallest, name in SIZE_CLASSES if size >= smallest][-1]


def _summary(rows: list) -> list:
    """Per rank count and size class, per rank count and what ran (each
    schedule: the misses of a model differ by schedule), then over all
    points: the median and largest |error|, the coverage and the mean
    half-width of the predicted intervals, relative to the prediction."""
    groups = {}
    for row in rows:
        groups.setdefault((row["nodes"], "all", size_class(row["size"])), []).append(row)
    for row in rows:
        groups.setdefault((row["nodes"], what_ran(tuple(row[key] for key in POINT)), "all"), []).append(row)
    groups[("all", "all", "all")] = rows
    summary = []
    for (nodes, what, sizes), members in groups.items():
        errors = np.abs([row["error"] for row in members])
        summary.append(
            {
                "nodes": nodes,
                "what": what,
                "sizes": sizes,
                "points": len(members),
                "median_error": float(np.median(errors)),
                "largest_error": float(np.max(errors)),
                "coverage": sum(row["covered"] == "yes" for row in members) / len(members),
                "mean_half_width": float(
                    np.mean([(row["predicted_high"] - row["predicted_low"]) / 2 / row["predicted"] for row in members])
                ),
            }
        )
    return summary


def format_validation(result: Result, full: bool = False) -> str:
    """Per point the measured and the predicted time with their intervals
    (and, where the launches back a claim, the error and coverage); then the
    summary per rank count and size class, or why no accuracy is claimed.
    full: no effect."""
    params = result.params
    count = len(params.get("measured", []))
    lines = [
        result.table(
            f"# fpgacomm validate: {params.get('prediction')} against {count} held-out "
            f"launch{'es' if count != 1 else ''} ({len(result.rows)} points)"
        )
    ]
    if params.get("unpredicted"):
        lines.append(f"# measured but not predicted, left out: {'; '.join(params['unpredicted'])}")
    if params.get("claim"):
        summary = Result(NAME, {}, {}, params["summary"], SUMMARY_UNITS)
        lines.append(
            summary.table(
                "# accuracy per rank count and size class, and per rank count and what ran: |error| = |predicted - measured| / "
                "measured; coverage: the points whose measured median lies in the 95 % "
                "interval; half-width relative to the prediction"
            )
        )
    else:
        lines.append("# no accuracy claimed:")
        lines += [f"#   {reason}" for reason in params.get("refusals", [])]
    return "\n".join(lines)
