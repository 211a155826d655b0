"""The experiments a platform predicts, each run on the simulator with a
cluster's arguments: the gather schedules (simulation.gather), b_eff's ring
and osu mbw_mr (simulation.patterns). One home for how each is simulated, so
that the fit's discrepancy and the prediction take the same times."""

from __future__ import annotations

import math

import numpy as np

from .. import schedules
from ..params import usage_error
from ..schedules import COLLECTIVES
from ..schedules import NAMES as SCHEDULES
from ..simulation import fabric as fabrics
from ..simulation import gather as gather_sim
from ..simulation import patterns

# What a platform predicts; each is also a family of the campaign (the other
# families only fit its parameters), an mbw_mr row of K ranks with K/2 pairs.
EXPERIMENTS = ("gather", "beff", "mbw_mr")
WINDOW = 64  # osu mbw_mr's messages in flight (OMB's -W default)


def check(experiment: str, schedule: str, collective: str = "gather") -> None:
    if experiment not in EXPERIMENTS:
        raise usage_error(f"predict: experiment {experiment!r}; choose {', '.join(EXPERIMENTS)}")
    if experiment == "gather" and schedule not in SCHEDULES:
        raise usage_error(f"predict: schedule {schedule!r}; choose {', '.join(SCHEDULES)}")
    if experiment == "gather" and collective not in COLLECTIVES:
        raise usage_error(f"predict: collective {collective!r}; choose {', '.join(COLLECTIVES)}")


def of_row(row: dict) -> tuple | None:
    """(experiment, schedule) of a campaign row that measured one, else None:
    the gathers by their schedule, b_eff's ring, mbw_mr without one."""
    if row["family"] not in EXPERIMENTS:
        return None
    return row["family"], {"gather": row["schedule"], "beff": "ring"}.get(row["family"], "")


def record_key(experiment: str, schedule: str) -> str:
    """The key of an experiment's terms in a platform's calibration record: gather/tree, beff/ring, mbw_mr."""
    return f"{experiment}/{schedule}" if schedule else experiment


def one_way(fab: fabrics.Fabric, sizes: list) -> list[float]:
    """A ping-pong's one-way time from rank 0 to rank 1, per size."""
    return [
        fabrics.run_schedule(fab, [[(0, 1, size)]], reconfigure=False, details=False).rows[1]["transfer"]
        for size in sizes
    ]


# A rank's own terms: its software, its latencies, its copy of what arrives.
# A discrepancy factor scales these (times up, the copy rate down): what a
# model leaves out at a few ranks is in each rank's work, while the host's
# shared bus was measured on its own (host_copy, mbw_mr) and the links
# between hosts are not measured on one host; both keep their values.
RANK_TIMES = ("send_overhead", "recv_overhead", "gap", "intra_latency", "rendezvous_latency")
RANK_RATES = ("intra_bandwidth",)


# The key under which a cluster's arguments may carry host_copy's rates,
# [[block, threads, bytes per second], ...] (calibrate fit's record): the
# bus of each simulated point is then the rate host_copy measured with as
# many threads as the host has ranks, copying blocks as large as each rank's
# share of what the point moves (`host_bus`). One bus for every point could
# not be right for both a 32-rank gather of 1 MiB blocks (bytes in memory:
# 32 threads copied 69-77 GB/s on a 64-core host) and b_eff's 64 KiB
# messages at 32 ranks (in the caches: 32 threads copied 750-840 GB/s).
COPY_RATES = "host_copy_rates"


def without_copy_rates(arguments: dict) -> dict:
    """A cluster's arguments as the preset takes them: without COPY_RATES."""
    return {key: value for key, value in arguments.items() if key != COPY_RATES}


def moved_per_rank(experiment: str, schedule: str, ranks: int, size: int, collective: str = "gather") -> float:
    """Bytes one operation of the experiment moves, over its ranks: a
    gather's every message (a block forwarded twice counts twice), b_eff's
    two messages a rank, mbw_mr's window of messages a pair."""
    if experiment == "gather":
        built = schedules.schedule(schedule, ranks, size, collective=collective)
        moved = size * sum(run.count * run.span for stage in built.stages for run in stage.runs)
    elif experiment == "beff":
        moved = 2 * ranks * size
    else:
        moved = ranks // 2 * WINDOW * size
    return moved / ranks


def host_bus(rates: list, threads: int, block: float) -> float:
    """The host's copy rate (B/s) from host_copy's [[block, threads, rate],
    ...]: its smallest block at least `block` (a step, not a slope: a
    working set that outgrows a cache falls off it at once), at `threads`
    (interpolated in log threads and log rate between those measured, the
    nearest count's beyond them)."""
    blocks = sorted({row[0] for row in rates})
    chosen = next((b for b in blocks if b >= block), blocks[-1])
    points = sorted((t, r) for b, t, r in rates if b == chosen)
    return float(
        np.exp(np.interp(math.log(threads), [math.log(t) for t, _ in points], [math.log(r) for _, r in points]))
    )


def scaled(arguments: dict, factor: float) -> dict:
    """`arguments` with a rank's own terms scaled by the discrepancy `factor`."""
    found = dict(arguments)
    for key in RANK_TIMES:
        if key in found:
            found[key] = found[key] * factor
    for key in RANK_RATES:
        if key in found:
            found[key] = found[key] / factor
    return found


def simulate(
    arguments: dict,
    experiment: str,
    schedule: str,
    ranks: int,
    sizes: list,
    collective: str = "gather",
    name: str = "cluster",
    factor_of=None,
) -> list[float]:
    """The simulated time of each size: a gather's time; b_eff's time per
    message and neighbour (every rank sends to both neighbours at once);
    mbw_mr's time per message and pair (ranks/2 pairs, WINDOW messages each).
    factor_of(size): the discrepancy factor of each size, which scales a
    rank's own terms (`scaled`); None: the arguments as given. Where the
    arguments carry COPY_RATES, each size's bus is host_bus's."""
    rates = arguments.get(COPY_RATES)
    if factor_of is not None or rates:
        found = []
        for size in sizes:
            own = without_copy_rates(arguments)
            own = scaled(own, factor_of(size)) if factor_of is not None else own
            if rates:
                threads = min(ranks, own.get("ranks_per_host", ranks))
                block = moved_per_rank(experiment, schedule, ranks, size, collective)
                own["host_bandwidth"] = max(host_bus(rates, threads, block), own["intra_bandwidth"])
            found += simulate(own, experiment, schedule, ranks, [size], collective, name)
        return found
    fab = fabrics.preset(name, ranks, **arguments)
    if experiment == "gather":
        result = gather_sim.run(
            schedule, fab, nodes=[ranks], sizes=sizes, collective=collective, on_progress=lambda *_: None
        )
        return [row["time"] for row in result.rows]
    if experiment == "beff":
        # HPCC FPGA's b_eff (src/bench/beff.cpp): each rank sends to both neighbours at once (at 2 ranks,
        # two messages to the other); the measured time is one such exchange.
        return [
            fabrics.run_schedule(
                fab,
                [[(ranks, 0, 1, 1, 1, size, 0, 0), (ranks, 0, 1, ranks - 1, 1, size, 0, 0)]],
                reconfigure=False,
                details=False,
            ).rows[1]["transfer"]
            for size in sizes
        ]
    rows = patterns.mbw_mr(fab, pairs=ranks // 2, size=sizes, window=WINDOW).rows
    return [row["time"] / WINDOW for row in rows]
