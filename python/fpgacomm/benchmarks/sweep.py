"""A sweep's rows as they are measured: the core calls back after each size
on every rank (outside the timed region); rank 0 hands the Result so far
(marked incomplete: "12 of 23 sizes measured") to the caller's `on_row`,
and an interrupt leaves with it ("interrupted by SIGINT: 12 of 23 sizes
measured").

    sweep = Sweep(comm, result_of, planned=len(sizes), on_row=on_row)
    with sweep.interruptible():
        raw = _core.run_pt2pt(comm, dev, options, sweep.on_size)
    return result_of(raw["sizes"], raw)

result_of(raw_sizes, finished) builds the family's Result from the core's
rows of the sizes measured; finished is the core's whole run, or {} for the
Results so far, which the sweep builds.
"""

from __future__ import annotations

import contextlib
from typing import Callable

from ..results.result import Result
from ..runtime import interrupts
from ..runtime.interrupts import Interrupted

OnRow = Callable[[Result], None]


class Sweep:
    def __init__(self, comm, result_of: Callable[[list, dict], Result], planned: int, on_row: OnRow | None = None):
        self.raw: list = []
        self.result_of, self.planned = result_of, planned
        self.on_row = on_row if comm.Get_rank() == 0 else None

    def on_size(self, raw_size: dict) -> None:
        """The core's per-size hook: keeps the row; on rank 0, shows the Result so far."""
        self.raw.append(raw_size)
        if self.on_row is not None:
            self.on_row(self.so_far())

    def so_far(self, why: str = "") -> Result:
        """The Result of the sizes finished, marked incomplete: "[why: ]N of M sizes measured"."""
        result = self.result_of(self.raw, {})
        result.incomplete = f"{why + ': ' if why else ''}{len(self.raw)} of {self.planned} sizes measured"
        return result

    @contextlib.contextmanager
    def interruptible(self):
        """An Interrupted leaving the block carries `result`: the sizes
        finished so far, marked incomplete (on every rank); a rank blocked
        in MPI when the signal came gets them from the watcher (interrupts.on_stop)."""
        try:
            with interrupts.on_stop(self._carry_so_far):
                yield self
        except Interrupted as stop:
            self._carry_so_far(stop)
            raise

    def _carry_so_far(self, stop: Interrupted) -> None:
        stop.result = self.so_far(str(stop))
