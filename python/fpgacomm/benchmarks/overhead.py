"""LogGP's send and receive overheads, measured alone (two ranks, host
buffers), so that a LogGP fit can separate them from the latency L.

send_overhead: the duration of MPI_Isend on rank 0, the CPU's part in
starting a message. recv_overhead: the duration of MPI_Irecv + MPI_Wait on
rank 1 for a message that MPI_Iprobe has already seen arrive. Above the MPI
library's eager limit only the rendezvous request has arrived by then, so
recv_overhead also holds the transfer. docs/METHODS.md ("Models") has the
method.

    mpirun -np 2 python -c "from fpgacomm import overhead as o; print(o.run(sizes='1:64K'))"
"""

from __future__ import annotations

from .. import _core
from ..params import LARGE_MESSAGE, counts_params, iteration_counts, resolve_sizes
from ..results import stats
from ..results.result import Result
from ..runtime import environment, mpi
from .sweep import Rounds

# Timed and warm-up iterations below and above LARGE_MESSAGE: each has a
# barrier, so fewer than osu latency's.
ITERATIONS = (1000, 100, 100, 10)


def run(
    comm=None,
    *,
    sizes=None,
    iterations: int | None = None,
    warmup: int | None = None,
    rounds: int = 1,
    round_seed: int | None = None,
) -> Result:
    """Send and receive overhead per size; collective over comm (2 ranks).
    Rows: the mean over iterations (the headline, as OMB's) with min and
    p50; samples["SIZE/send"] and ["SIZE/receive"] hold every iteration's.
    rounds: complete sweeps in this job, each in its own shuffled order of
    the sizes from round_seed (drawn where None); with more than one, rows
    are the medians over rounds with every round's values in row["rounds"]
    (benchmarks.sweep)."""
    comm = mpi.resolve(comm)
    size_list = resolve_sizes(sizes)
    counts = iteration_counts(ITERATIONS, iterations, warmup)
    params = {"sizes": size_list, **counts_params(counts), "large_message": LARGE_MESSAGE, "buffers": "H"}
    env = environment.collect(comm, None, _core.host_names(comm))
    plan = Rounds(comm, size_list, rounds, round_seed)
    results = []
    with plan.keeping(results):
        for order in plan.orders():
            results.append(_result(_core.run_overhead(comm, order, counts), params, env))
        return plan.of(results)


def _result(raw: list, params: dict, env: dict) -> Result:
    """One round's Result."""
    rows, samples = [], {}
    for timing in raw:
        send, receive = stats.summarize(timing["send"]), stats.summarize(timing["receive"])
        rows.append(
            {
                "size": timing["size"],
                "send_overhead": send["avg"],
                "send_overhead_min": send["min"],
                "send_overhead_p50": send["p50"],
                "recv_overhead": receive["avg"],
                "recv_overhead_min": receive["min"],
                "recv_overhead_p50": receive["p50"],
                "iterations": timing["iterations"],
            }
        )
        samples[f"{timing['size']}/send"] = timing["send"]
        samples[f"{timing['size']}/receive"] = timing["receive"]
    units = {column: "s" for column in rows[0]}
    units.update(size="B", iterations="")
    return Result("osu_overhead", params, env, rows, units, samples)
