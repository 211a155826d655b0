"""Fitting a registered model to measured Results (`fpgacomm fit`).

Results are never pooled silently. They are first split into groups by what
they measured (memory kinds, b_eff communication type, datatype, fabric,
schedule): one fit per group; a Result that records none of these (fpgacomm
overhead's host buffers) joins every group. Within a group, Results of one
benchmark over different points are stacked (their rows appended: e.g.
fabric latencies at several hop counts for CusComNet), two runs over the
same points are refused (their samples are kept, as the fits read
per-stage times from them); Results of different benchmarks are joined on
their size column (e.g. osu latency, bw and overhead for LogGP), a size
missing from one of them leaving its cells None. Every file must change the
fit: one the model does not read is refused, by name, not dropped.

    python -c "from fpgacomm import fit; f, c = fit.fit(['lat.json'], 'hockney'); print(f)"
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .. import models
from ..results.result import Result
from .base import Fit, usage_error

# Parameters that say what a Result measured: Results that differ in one
# are fitted apart.
GROUPING = ("send_kind", "recv_kind", "mem", "comm_type", "datatype", "fabric", "schedule", "collective")


@dataclass
class GroupFit:
    """One group's fit: what its Results share, their files, the Fit and
    the model against the measurement."""

    label: str
    files: list
    fit: Fit
    against: Result


def read(paths) -> Result:
    """One Result from the JSON files of one group, combined as the module says."""
    return _combine(_one_group(paths, "fit each group alone")[1])


def _one_group(paths, advice: str) -> tuple:
    """(label, members) of the files in `paths`, read once, or a usage
    error where they make several groups."""
    groups = _groups(_load(paths))
    if len(groups) > 1:
        raise usage_error(
            f"fit: these files measured different things ({'; '.join(label for label, _ in groups)}); " f"{advice}"
        )
    return groups[0]


def _load(paths) -> list:
    loaded = []
    for path in paths:
        if not os.path.isfile(path):
            raise usage_error(f"fit: {path}: no such file; give a Result JSON written with --json")
        try:
            loaded.append((str(path), Result.read_json(path)))
        except (ValueError, KeyError, TypeError) as error:
            raise usage_error(f"fit: {path} is not a Result JSON of fpgacomm ({error})") from None
    return loaded


def _kinds(result: Result) -> tuple:
    return tuple((key, result.params[key]) for key in GROUPING if isinstance(result.params.get(key), (str, int)))


def _groups(loaded: list) -> list:
    """[(label, [(path, Result)])] in the order of the files."""
    keys = list(dict.fromkeys(_kinds(result) for _, result in loaded if _kinds(result)))
    if not keys:
        keys = [()]
    groups = []
    for key in keys:
        members = [(path, result) for path, result in loaded if _kinds(result) in (key, ())]
        benchmarks = list(dict.fromkeys(result.benchmark for _, result in members))
        groups.append((", ".join(["+".join(benchmarks)] + [f"{name} {value}" for name, value in key]), members))
    return groups


def _combine(members: list) -> Result:
    """The group's Results as one: stacked, or joined on size. Two Results of
    one benchmark over a common point, or of one benchmark beside others,
    are refused, naming the files."""
    results = [result for _, result in members]
    first = results[0]
    if all(r.benchmark == first.benchmark for r in results):
        seen = {}
        for path, result in members:
            points = {_point(row) for row in result.rows}
            for other, other_points in seen.items():
                if points & other_points:
                    raise usage_error(
                        f"fit: {other} and {path} are two runs of {first.benchmark} over the same "
                        "points; fit them one at a time, or give one of them"
                    )
            seen[path] = points
    else:
        counts = [r.benchmark for r in results]
        twice = sorted({name for name in counts if counts.count(name) > 1})
        if twice:
            files = [path for path, result in members if result.benchmark in twice]
            raise usage_error(
                f"fit: {', '.join(files)} are several runs of {', '.join(twice)} among other "
                "benchmarks, which are joined on size one run each; give one run of each"
            )
    return combine(results)


def _point(row: dict):
    """Where a row was measured: its size, hop count or packet size."""
    return tuple(row.get(key) for key in ("size", "hops", "nodes", "packet_size", "rate"))


def combine(results: list) -> Result:
    first = results[0]
    if len(results) == 1:
        return first
    if all(r.benchmark == first.benchmark and r.columns == first.columns for r in results):
        rows = [row for r in results for row in r.rows]
        return Result(
            first.benchmark,
            {**first.params, "stacked": len(results)},
            first.env,
            rows,
            first.units,
            _samples(results, [str(number) for number in range(1, len(results) + 1)]),
        )
    return _join_on_size(results)


def _samples(results: list, labels: list) -> dict | None:
    """Every Result's samples in one dict (the fit reads per-stage times from
    them): a key that one Result holds keeps its name, a key that several
    hold is named "label.key" after each (the Result's place in a stack, or
    its benchmark in a join, as joined columns are)."""
    holders = {}
    for result in results:
        for key in result.samples or {}:
            holders[key] = holders.get(key, 0) + 1
    merged = {
        (key if holders[key] == 1 else f"{label}.{key}"): values
        for result, label in zip(results, labels)
        for key, values in (result.samples or {}).items()
    }
    return merged or None


def _join_on_size(results: list) -> Result:
    """One row per size; a column that several Results share (iterations,
    validation) is kept from each as "benchmark.column"."""
    for r in results:
        if "size" not in r.columns:
            raise usage_error(
                f"fit: Results of different benchmarks are joined on 'size', and {r.benchmark} "
                f"has no size column ({', '.join(r.columns)})"
            )
    counts = {}
    for r in results:
        for column in r.columns:
            counts[column] = counts.get(column, 0) + 1
    names = [{c: c if counts[c] == 1 or c == "size" else f"{r.benchmark}.{c}" for c in r.columns} for r in results]
    units = {"size": "B"}
    for r, name in zip(results, names):
        units.update({name[c]: r.units[c] for c in r.columns if c != "size"})
    table = {}
    for r, name in zip(results, names):
        for row in r.rows:
            # The columns only: a Result of rounds keeps every round in row["rounds"], no column.
            table.setdefault(row["size"], {}).update({name[k]: row[k] for k in r.columns if k != "size"})
    rows = [{c: (size if c == "size" else cells.get(c)) for c in units} for size, cells in sorted(table.items())]
    return Result(
        "+".join(r.benchmark for r in results),
        {"joined": [r.benchmark for r in results]},
        results[0].env,
        rows,
        units,
        _samples(results, [r.benchmark for r in results]),
    )


def fit_groups(paths, model: str) -> list:
    """A GroupFit of the registered model for each group of the Results in
    `paths` (the module says how they group)."""
    module = models.load(model)
    return [_fit_group(module, model, label, members) for label, members in _groups(_load(paths))]


def fit(paths, model: str) -> tuple:
    """(Fit, measured-against-model Result) of the registered model on the Results in
    `paths`, which must form one group (fit_groups fits several)."""
    label, members = _one_group(paths, "fit each group alone, or use fit_groups")
    single = _fit_group(models.load(model), model, label, members)
    return single.fit, single.against


def _fit_group(module, model: str, label: str, members: list) -> GroupFit:
    result = _combine(members)
    fitted = module.fit(result)
    if len(members) > 1:
        _require_every_file(module, model, members, fitted)
    return GroupFit(label, [path for path, _ in members], fitted, fitted.model.against(result))


def _require_every_file(module, model: str, members: list, fitted: Fit) -> None:
    """A usage error naming a file the fit does not read: the same fit
    comes out without it."""
    for index, (path, result) in enumerate(members):
        rest = members[:index] + members[index + 1 :]
        try:
            without = module.fit(_combine(rest))
        except Exception:  # the fit needs this file
            continue
        same = [
            np.isclose(without.model.params.get(name, np.nan), value, rtol=1e-12, atol=0.0)
            for name, value in fitted.model.params.items()
        ]
        if all(same) and len(without.model.params) == len(fitted.model.params):
            raise usage_error(f"fit: the {model} model reads nothing from {path} ({result.benchmark}); leave it out")


def to_result(fitted: Fit, against: Result, paths) -> Result:
    """The fit as a Result (a row per parameter), with the model against
    the measurement (a
    whole Result, units included, so `fpgacomm plot` can draw the file) and
    the source files in its params."""
    result = fitted.to_result()
    result.params.update(sources=[str(p) for p in paths], against=against.to_dict())
    if np.ndim(fitted.x) == 2:  # a gather model's points (nodes, size): its figure draws them per node count
        result.params["points"] = {
            "nodes": fitted.x[:, 0].tolist(),
            "size": fitted.x[:, 1].tolist(),
            "measured": fitted.y.tolist(),
            "predicted": (fitted.y - fitted.residuals).tolist(),
        }
    return result
