"""A sweep's rounds and rows as they are measured.

Rounds (docs/METHODS.md, "Rounds"): `rounds` complete sweeps in one job,
each visiting every size once, in an order shuffled per round from one
seed (drawn on rank 0 and broadcast where not given, so every rank runs
the same order). Each round is one call into the core with that round's
order: nothing of the rounds runs in a timed region. With one round the
sizes keep their order and the Result is what it always was; with more,
rows are the medians over rounds (results/rounds.py).

Rows as measured: the core calls back after each size on every rank
(outside the timed region); rank 0 hands the Result so far to the
caller's `on_row`: the rows whose every round is done, in size order
(with one round: every size measured so far), marked incomplete ("12 of
23 sizes measured", or "round 2 of 5, 12 of 23 sizes measured"). An
interrupt leaves with what was measured: every size with its rounds so
far ("interrupted by SIGINT: 3 of 5 rounds complete; round 4: 12 of 23
sizes"). The loop of a benchmark::

    sweep = Sweep(comm, result_of, sizes, planned=len(sizes), on_row=on_row, rounds=3)
    with sweep.interruptible():
        for order in sweep.orders():
            options.sizes = order
            sweep.round_done(_core.run_pt2pt(comm, dev, options, sweep.on_size))
    return sweep.result()

result_of(raw_sizes, finished) builds the family's Result of one round
from the core's rows of the sizes measured; finished is the core's whole
run of that round, or {} for a round still going on.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import sys
import time
from collections.abc import Callable

import numpy as np

from .. import _core
from ..params import usage_error
from ..results import rounds as merging
from ..results.result import Result
from ..runtime import environment, interrupts
from ..runtime.interrupts import Interrupted

OnRow = Callable[[Result], None]
# How far a run without rows so far is ("ring: 5 of 21 sizes measured"),
# for the caller's progress line: b_eff, devbw, the suite.
OnProgress = Callable[[str], None]


def progress_of_round(on_progress: OnProgress | None, index: int, rounds: int) -> OnProgress | None:
    """on_progress with round `index` first ("round 2 of 5, ring: ..."), where there are rounds."""
    if on_progress is None or rounds == 1:
        return on_progress
    return lambda state: on_progress(f"round {index} of {rounds}, {state}")


def work_done(state: str) -> float | None:
    """The share of a run's work done, read from how far it is as its
    progress states it ("round 2 of 5, 12 of 23 sizes measured", "ring: 5
    of 21 sizes measured", "3 of 8 points simulated"): sizes or points
    done of the round going on, plus the rounds before; None where the
    state tells no count (a run that reports no sizes)."""
    counted = re.search(r"\b(\d+) of (\d+) (?:sizes|points)\b", state)
    if counted is None or int(counted[2]) == 0:
        return None
    share = int(counted[1]) / int(counted[2])
    rounds = re.search(r"\bround (\d+) of (\d+)\b", state)
    if rounds is not None and int(rounds[2]) > 0:
        share = (int(rounds[1]) - 1 + share) / int(rounds[2])
    return min(share, 1.0)


def measured_whole(rounds: int) -> str:
    """How an interrupted run that had measured everything says so: what
    the Result holds is whole, the run just had not ended."""
    every = "every size" if rounds == 1 else f"all {rounds} rounds of every size"
    return f"{every} measured; the run was ending (its Result being made or written)"


def check_rounds(rounds, round_seed) -> None:
    """rounds: a whole number, 1 or more; round_seed: None or a whole number 0 .. 2^64 - 1."""
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise usage_error(
            f"rounds must be a whole number of complete sweeps, 1 or more, got {rounds!r} " "(--rounds N)"
        )
    if round_seed is not None and (
        isinstance(round_seed, bool) or not isinstance(round_seed, (int, np.integer)) or not 0 <= round_seed < 1 << 64
    ):
        raise usage_error(f"round_seed must be a whole number from 0 to 2^64 - 1, got {round_seed!r} " "(--round-seed)")


def round_orders(sizes: list, rounds: int, seed: int | None):
    """Each round's order of the sizes, made as it is asked for (a run of
    many rounds holds only those begun): as given for one round; for more,
    a permutation per round, drawn one after the other from NumPy's
    default generator seeded with `seed`."""
    if rounds == 1:
        yield list(sizes)
        return
    generator = np.random.default_rng(seed)
    for _ in range(rounds):
        yield [sizes[i] for i in generator.permutation(len(sizes))]


class Rounds:
    """The plan of a run's rounds, the same on every rank: the seed and each
    round's order of the sizes, the load average at the start of each
    round, and the machine's state around the run (env["machine"]).
    Collective (the seed is broadcast where drawn; the host memory of the
    rounds is checked); call at the start of the measuring, after the
    options are checked: it prints the warnings of a loaded machine and of
    unbound ranks (environment.warn_if_loaded, warn_if_unbound)."""

    def __init__(self, comm, sizes: list, rounds: int = 1, round_seed: int | None = None):
        check_rounds(rounds, round_seed)
        sizes = list(sizes)
        if rounds > 1 and len(set(sizes)) != len(sizes):
            raise usage_error(
                f"sizes {sizes} repeat a size; with rounds each size is measured once per round: " "give each size once"
            )
        self.comm, self.sizes = comm, sizes
        self.count = int(rounds)
        self.check_memory()
        self.load_before = environment.warn_if_loaded(comm)
        environment.warn_if_unbound(comm)
        if self.count > 1 and round_seed is None:
            round_seed = comm.bcast(secrets.randbits(63) if comm.Get_rank() == 0 else None, root=0)
        self.seed = None if round_seed is None else int(round_seed)
        self.begun: list = []  # the orders of the rounds begun
        self.loads: list = []  # the load average at the start of each round begun
        self.machine = environment.machine(self.load_before)
        self.started = time.monotonic()

    def check_memory(self, samples_per_round: float = 0) -> None:
        """Refuses (collectively, status 2) a run whose rounds would hold
        more host memory than the limit: each round keeps a row per size
        and its order, and the timed samples of its sizes (known once the
        first round has measured them; the core checks one round's)."""
        if self.count == 1:
            return  # one call into the core: its own check covers it
        _core.check_host_memory(
            self.comm,
            buffers=0,
            posted=0,
            samples=samples_per_round * self.count,
            rows=float(self.count) * len(self.sizes),
            run=f"{self.count} rounds of {len(self.sizes)} sizes",
            fix="give fewer --rounds, sizes or iterations (-i)",
        )

    def orders(self):
        """Each round's order of the sizes, noting the load at its start."""
        for order in round_orders(self.sizes, self.count, self.seed):
            self.begun.append(order)
            self.loads.append(environment.load_average())
            yield order

    def first_round_done(self, result: Result) -> None:
        """After the first of several rounds: the host memory checked again
        with its samples counted, and, where the run cannot end within its
        time limit at the first round's speed, a warning (rank 0's
        estimate, told to every rank alike)."""
        if self.count == 1:
            return
        samples = sum(len(values) for values in (result.samples or {}).values())
        self.check_memory(samples)
        if self.comm.Get_rank() == 0:
            needed = (time.monotonic() - self.started) * (self.count - 1)
            left = interrupts.time_left()
            if left is not None and needed > left:
                print(
                    f"fpgacomm: at the first round's speed the {self.count - 1} rounds to come need about "
                    f"{needed:.0f} s, and the time limit leaves {max(left, 0):.0f} s (--timeout): the run will "
                    "end incomplete; give fewer --rounds or a longer --timeout",
                    file=sys.stderr,
                    flush=True,
                )

    def record(self, result: Result) -> Result:
        """The Result with the run's record: env["machine"] with the load
        before and now; with several rounds also params rounds and
        round_seed, env round_loads and round_orders (of the rounds begun)."""
        result.env["machine"] = {**self.machine, "load_after": environment.load_average()}
        if self.count > 1:
            result.params.update(rounds=self.count, round_seed=self.seed)
            result.env.update(round_loads=list(self.loads), round_orders=[list(order) for order in self.begun])
        return result

    def of(self, results: list[Result]) -> Result:
        """The run's Result from its rounds' Results, recorded: the one
        round's with one round, else the rounds merged."""
        return self.record(results[0] if self.count == 1 else merging.merge(results))

    @contextlib.contextmanager
    def keeping(self, results: list[Result], finish: Callable[[Result], Result] = lambda result: result):
        """For a run whose core calls do not report each size (b_eff, devbw,
        overhead): an Interrupted leaving the block carries `result`, the
        rounds complete so far (the Results in `results`, which the block
        appends to) merged and marked incomplete ("interrupted by SIGINT: 2
        of 5 rounds complete; round 3 not kept"); none before the first
        round is complete, nor from a single round cut short. The block
        makes the run's Result too (plan.of inside it), so that an interrupt
        while it is made keeps every round. finish: what the run does to its
        Result at the end (b_eff's headline of the medians)."""
        try:
            yield
        except Interrupted as stop:
            if results:
                kept = list(results)
                if len(kept) == self.count:  # the loop had ended: its Result was being made
                    incomplete = f"{stop}: {measured_whole(self.count)}"
                else:
                    incomplete = f"{stop}: {len(kept)} of {self.count} rounds complete; round {len(kept) + 1} not kept"

                def make() -> Result:
                    result = finish(self.of(kept))
                    result.incomplete = incomplete
                    return result

                # Made when first read, as Sweep's: after the fork of the command's writing child.
                interrupts.defer_result(stop, make, incomplete)
            raise


class Sweep:
    """One run's rounds and its rows as measured (the module's docstring).
    planned: how many of `sizes` get a row (those holding a whole element)."""

    def __init__(
        self,
        comm,
        result_of: Callable[[list, dict], Result],
        sizes: list,
        planned: int,
        on_row: OnRow | None = None,
        rounds: int = 1,
        round_seed: int | None = None,
    ):
        self.rounds = Rounds(comm, sizes, rounds, round_seed)
        self.result_of, self.planned = result_of, planned
        self.on_row = on_row if comm.Get_rank() == 0 else None
        self.done: list[Result] = []  # one Result per finished round
        self.raw: list = []  # the round going on: the core's rows so far

    def orders(self):
        """Each round's order of the sizes; call round_done at the end of each."""
        for order in self.rounds.orders():
            self.raw = []
            yield order
            if any(row.get("validation") == "fail" for row in self.done[-1].rows):
                return  # as OSU Micro-Benchmarks: a failing size ends the sweep, and so the run

    def on_size(self, raw_size: dict) -> None:
        """The core's per-size hook: keeps the row; on rank 0, shows the Result so far."""
        self.raw.append(raw_size)
        if self.on_row is not None:
            self.on_row(self.so_far())

    def round_done(self, finished: dict, result: Result | None = None) -> Result:
        """Ends a round: its Result from the core's whole run (`finished`,
        whose "sizes" are the rows), or `result` where the family built it."""
        self.done.append(result if result is not None else self.result_of(finished["sizes"], finished))
        self.raw = []
        if len(self.done) == 1:
            self.rounds.first_round_done(self.done[0])
        return self.done[-1]

    def result(self) -> Result:
        """The finished run: the one round's Result, or the rounds merged.
        An interrupt while they merge (seconds for millions of samples)
        still carries every round (interruptible)."""
        with self.interruptible():
            return self.rounds.of(self.done)

    def _state(self) -> str:
        """How far the run is: "12 of 23 sizes measured", with rounds "round 2 of 5, 12 of 23 sizes measured"."""
        sizes = f"{len(self.raw)} of {self.planned} sizes measured"
        if self.rounds.count == 1:
            return sizes
        return f"round {len(self.done) + 1} of {self.rounds.count}, {sizes}"

    def so_far(self) -> Result:
        """The Result so far for on_row: the sizes finished (with rounds:
        those whose every round is done, the smallest first, up to the
        first size still waiting), marked incomplete by _state."""
        if self.rounds.count == 1:
            result = self.result_of(self.raw, {})
        else:
            result = self._complete_prefix()
        result.incomplete = self._state()
        return self.rounds.record(result)

    def _complete_prefix(self) -> Result:
        """With rounds: the rows of the sizes every round has measured, in
        size order up to the first size not yet done."""
        if len(self.done) < self.rounds.count - 1:
            return self.result_of([], {})  # no size has every round before the last
        done = {timing["size"] for timing in self.raw}
        # The sizes that get rows: those the first round measured (a size
        # smaller than one element of the datatype gets none).
        expected = {row.get("size") for row in self.done[0].rows} if self.done else set(self.rounds.begun[0])
        prefix = []
        for size in sorted(expected):
            if size not in done:
                break
            prefix.append(size)
        last = [timing for timing in self.raw if timing["size"] in prefix]
        merged = merging.merge(self.done + [self.result_of(last, {})])
        merged.rows = [row for row in merged.rows if row.get("size") in prefix]
        return merged

    def interrupted(self, why: str) -> Result:
        """What an interrupt keeps: every size measured, with the rounds it
        has (rows of sizes still missing a round have fewer), marked
        incomplete: "interrupted by SIGINT: 12 of 23 sizes measured", or
        with rounds "...: 3 of 5 rounds complete; round 4: 12 of 23 sizes"."""
        results = self.done + ([self.result_of(self.raw, {})] if self.raw or not self.done else [])
        result = results[0] if self.rounds.count == 1 else merging.merge(results)
        result.incomplete = self._incomplete(why)
        return self.rounds.record(result)

    def _incomplete(self, why: str) -> str:
        if not self.raw and len(self.done) == self.rounds.count:
            return f"{why}: {measured_whole(self.rounds.count)}"
        if self.rounds.count == 1:
            return f"{why}: {len(self.raw)} of {self.planned} sizes measured"
        return (
            f"{why}: {len(self.done)} of {self.rounds.count} rounds complete; "
            f"round {len(self.done) + 1}: {len(self.raw)} of {self.planned} sizes"
        )

    @contextlib.contextmanager
    def interruptible(self):
        """An Interrupted leaving the block carries `result`: what was
        measured so far, marked incomplete (on every rank); a rank blocked
        in MPI when the signal came gets it from the watcher (interrupts.on_stop)."""
        try:
            with interrupts.on_stop(self._carry_so_far):
                yield self
        except Interrupted as stop:
            self._carry_so_far(stop)
            raise

    def _carry_so_far(self, stop: Interrupted) -> None:
        # Made when first read, not here: on rank 0 of an interrupted mpirun
        # the command reads it in its writing child, after the fork that
        # must come before mpirun's SIGKILL (interrupts.defer_result). The
        # measurements stay as they are: the loops that fill them have ended.
        why = str(stop)
        interrupts.defer_result(stop, lambda: self.interrupted(why), self._incomplete(why))
