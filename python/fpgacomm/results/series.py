"""What tells one series of a table from another: the columns whose values
name an experiment (IMB's test, its process count, -multi's groups and the group a row is of,
IMB-EXT's mode, OMB's memory kinds, nccl-tests's datatype and reduction
(-d all, -o all print a row of each at every size), b_eff's ring pattern,
gather's schedule and nodes). Sizes are compared, plotted and fitted within a
series; two series are never pooled as repeats of one experiment.

The readers (peers.py, result.load) write these columns; compare and
plot look a row's series up here and nowhere else.
"""

from __future__ import annotations

#: The columns of a series' identity, in the order a label names them.
SERIES_COLUMNS = (
    "test",
    "processes",
    "groups",
    "group",
    "mode",
    "send_kind",
    "recv_kind",
    "type",
    "redop",
    "pattern",
    "schedule",
    "nodes",
)


def identity(row: dict) -> tuple:
    """The row's series: ((column, value), ...) of the identity columns it
    has a value in, in SERIES_COLUMNS' order; () for a table of one series."""
    return tuple((column, row[column]) for column in SERIES_COLUMNS if row.get(column) is not None)


def label(series: tuple) -> str:
    """A series as text: "test=PingPong processes=2"; "" for ()."""
    return " ".join(f"{column}={value}" for column, value in series)
