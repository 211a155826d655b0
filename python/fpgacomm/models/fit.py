"""Fitting a registered model to measured Results (`fpgacomm fit`).

Several Results combine into one before the fit: Results of one benchmark
with the same columns are stacked (their rows appended: e.g. fabric
latencies at several hop counts for CusComNet); Results of different
benchmarks are joined on their size column (e.g. osu latency, bw and
overhead for LogGP), a size missing from one of them leaving its cells None
and a column several of them have kept from each as "benchmark.column".

    python -c "from fpgacomm import fit; f, c = fit.fit(['lat.json'], 'hockney'); print(f)"
"""

from __future__ import annotations

import os

from .. import models
from .base import Fit, usage_error
from ..results.result import Result


def read(paths) -> Result:
    """One Result from the JSON files, combined as the module says."""
    results = []
    for path in paths:
        if not os.path.isfile(path):
            raise usage_error(f"fit: {path}: no such file; give a Result JSON written with --json")
        try:
            results.append(Result.read_json(path))
        except (ValueError, KeyError, TypeError) as error:
            raise usage_error(f"fit: {path} is not a Result JSON of fpgacomm ({error})") from None
    return combine(results)


def combine(results: list) -> Result:
    first = results[0]
    if len(results) == 1:
        return first
    if all(r.benchmark == first.benchmark and r.columns == first.columns for r in results):
        rows = [row for r in results for row in r.rows]
        return Result(first.benchmark, {**first.params, "stacked": len(results)}, first.env, rows, first.units)
    return _join_on_size(results)


def _join_on_size(results: list) -> Result:
    """One row per size; a column that several Results share (iterations,
    validation) is kept from each as "benchmark.column"."""
    for r in results:
        if "size" not in r.columns:
            raise usage_error(f"fit: Results of different benchmarks are joined on 'size', and {r.benchmark} "
                              f"has no size column ({', '.join(r.columns)})")
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
            table.setdefault(row["size"], {}).update({name[k]: v for k, v in row.items() if k != "size"})
    rows = [{c: (size if c == "size" else cells.get(c)) for c in units} for size, cells in sorted(table.items())]
    return Result("+".join(r.benchmark for r in results), {"joined": [r.benchmark for r in results]},
                  results[0].env, rows, units)


def fit(paths, model: str) -> tuple:
    """(Fit, comparison Result) of the registered model on the Results in `paths`."""
    module = models.load(model)
    result = read(paths)
    fitted = module.fit(result)
    return fitted, fitted.model.compare(result)


def to_result(fitted: Fit, comparison: Result, paths) -> Result:
    """The fit as a Result (a row per parameter), with the comparison (a
    whole Result, units included, so `fpgacomm plot` can draw the file) and
    the source files in its params."""
    result = fitted.to_result()
    result.params.update(sources=[str(p) for p in paths], compare=comparison.to_dict())
    return result
