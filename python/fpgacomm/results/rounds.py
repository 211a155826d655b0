"""One Result of several rounds: the Results of N complete sweeps of one
job, each size visited once per round, become one table whose scalars are
the medians over rounds and whose rows keep every round's value under
row["rounds"] (docs/METHODS.md, "Rounds").

    merged = rounds.merge([round_1, round_2, round_3])

A row of the merged Result is a row of the rounds with the same identity
(its size and the columns that say what was measured: rank, direction,
ring pattern, ...); the measured columns are those holding numbers that are
not part of the identity. Rows come in size order within the order their
other identity columns have in the rounds.
"""

from __future__ import annotations

from .result import ROUNDS, Result
from .stats import median

# Numeric columns that say what a row measured, not what it measured:
# they are part of the row's identity and hold no rounds.
DESCRIBING = ("size", "window", "rank", "nodes", "stages", "iterations", "nccl_bytes")
# Columns merged by a rule of their own rather than the median.
_VALIDATION, _VALIDATION_ERRORS = "validation", "validation_errors"


def measured_columns(rounds: list[Result]) -> list[str]:
    """The columns whose rounds a merged row keeps: numbers, not DESCRIBING,
    and measured at least once (a column of None only, as busbw of a
    barrier, holds nothing to keep)."""
    columns = rounds[0].columns
    rows = [row for result in rounds for row in result.rows]
    return [
        column
        for column in columns
        if column not in DESCRIBING
        and column != _VALIDATION
        and not any(isinstance(row.get(column), str) for row in rows)
        and any(row.get(column) is not None for row in rows)
    ]


def merge(rounds: list[Result], incomplete: str | None = None) -> Result:
    """The rounds' Results (each one round's rows, in any size order; a
    round still going on may lack columns added at a round's end) as one
    Result: per identity, the scalars are the medians over the rounds that
    measured it (of the numbers; None where no round has one), every
    round's value in row["rounds"][column]. A column that is the same in
    every round keeps its value (and type). validation is "fail" where any
    round failed, validation_errors the most bytes one round found wrong.
    Params, env, units and samples are round 1's; samples keys gain
    "@rK" (round K). incomplete: the merged Result's."""
    first = rounds[0]
    measured = measured_columns(rounds)
    identity = [column for column in first.columns if column not in measured and column != _VALIDATION]
    groups: dict[tuple, list[dict]] = {}
    for result in rounds:
        for row in result.rows:
            groups.setdefault(tuple(row.get(column) for column in identity), []).append(row)
    # Rows in size order within the first appearance of what groups them
    # (rank, ring pattern, direction, ...: the identity's text columns and
    # rank and nodes; iterations and nccl_bytes follow the size).
    all_rows = [row for result in rounds for row in result.rows]
    others = [
        column
        for column in identity
        if column in ("rank", "nodes") or any(isinstance(row.get(column), str) for row in all_rows)
    ]
    first_seen = {}
    for key in groups:
        named = dict(zip(identity, key))
        first_seen.setdefault(tuple(named[column] for column in others), len(first_seen))

    def order(key):
        named = dict(zip(identity, key))
        return first_seen[tuple(named[column] for column in others)], named.get("size") or 0

    rows = []
    for key in sorted(groups, key=order):
        group = groups[key]
        row = {}
        for column in first.columns:
            values = [member.get(column) for member in group]
            row[column] = _merged(column, values)
        if measured:
            row[ROUNDS] = {column: [member.get(column) for member in group] for column in measured}
        rows.append(row)
    samples = None
    if any(result.samples for result in rounds):
        samples = {
            _round_key(key, index): values
            for index, result in enumerate(rounds, start=1)
            for key, values in (result.samples or {}).items()
        }
    return Result(first.benchmark, first.params, first.env, rows, first.units, samples, incomplete)


def _round_key(key: str, index: int) -> str:
    """The samples key of round `index` (from 1) in a merged Result: "KEY@rK"."""
    return f"{key}@r{index}"


def samples_of(samples: dict, key: str) -> list:
    """The samples of `key`: as kept, or in a merged Result every round's
    ("KEY@rK"), in round order."""
    if key in samples:
        return samples[key]
    prefix = _round_key(key, "")
    found = sorted(
        (int(name[len(prefix) :]), values)
        for name, values in samples.items()
        if name.startswith(prefix) and name[len(prefix) :].isdigit()
    )
    return [value for _, values in found for value in values]


def _merged(column: str, values: list):
    """One row's scalar of a column from its rounds' values."""
    if all(value == values[0] and type(value) is type(values[0]) for value in values):
        return values[0]
    if column == _VALIDATION:
        return "fail" if "fail" in values else values[0]
    numbers = [value for value in values if value is not None and not isinstance(value, str)]
    if column == _VALIDATION_ERRORS:
        return max(numbers) if numbers else None
    return median(numbers) if numbers else None
