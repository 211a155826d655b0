"""The experiments a platform predicts, each run on the simulator with a
cluster's arguments: the gather schedules (simulation.gather), b_eff's ring
and osu mbw_mr (simulation.patterns). One home for how each is simulated, so
that the fit's discrepancy and the prediction take the same times."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

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


def held_per_rank(experiment: str, ranks: int, size: int) -> int | None:
    """The bytes a rank works on while `experiment` runs, the block whose
    copies the host's caches hold or not: b_eff's two messages out and two
    in; a gather's buffer of every rank's block. None for mbw_mr, whose
    pairs measured the bus the fit takes."""
    return {"beff": 4 * size, "gather": ranks * size}.get(experiment)


def copy_rate(table: list, threads: int, block: int) -> float:
    """A rate (B/s, all threads together) from a table of host_copy's kind,
    [[threads, block, rate], ...], interpolated in log threads and log block
    between the measured ones, the nearest beyond them."""
    counts = sorted({row[0] for row in table})
    blocks = sorted({row[1] for row in table})
    rates = {(row[0], row[1]): row[2] for row in table}

    def at(count: int) -> float:
        return float(np.interp(math.log(block), np.log(blocks), [rates[(count, b)] for b in blocks]))

    return float(np.interp(math.log(threads), np.log(counts), [at(count) for count in counts]))


@dataclass(frozen=True)
class Buses:
    """The host's buses in bytes of messages, each [[threads, block, B/s of
    all threads], ...]: what its cores copy at once, each its own block
    (host_copy), and what they pass on at once, each the block its neighbour
    wrote (host_pass, None where the launches did not measure it), over the
    times the MPI copies each message inside a host."""

    copied: list
    passed: list | None = None


def bus_rates(copy_rates: list | None, message_copies: int, pass_rates: list | None = None) -> Buses | None:
    """The host's buses (`Buses`): host_copy's and host_pass's rates over the
    times the MPI copies each message inside a host (fit.message_copies: once
    by the receiver with a single-copy mechanism, twice through shared
    fragments without one). None without host_copy's table."""
    if not copy_rates:
        return None

    def over_copies(table):
        return [[threads, block, rate / message_copies] for threads, block, rate in table] if table else None

    return Buses(over_copies(copy_rates), over_copies(pass_rates))


# host_copy's blocks that stay in a core's own cache (two of them fit its L2):
# copied there, a core goes as fast as its clock, whatever the memory does.
CORE_BLOCKS = (64 << 10, 256 << 10)
SLOWEST = 0.1  # a core's speed never taken below this, however far past the table a line reaches
# b_eff's messages past this size: a rank's two in outgrow the blocks that stay in a core's own cache.
PASSED_PAST = max(CORE_BLOCKS) // 2


def core_speed(buses: Buses | None, threads: int) -> float:
    """A core's speed with `threads` cores of its host busy, over its speed
    alone: host_copy's rate per core in the blocks that stay in a core's
    cache (CORE_BLOCKS), which falls as servers clock their cores down the
    more of them run, taken as a straight line in the busy cores through 1
    at one (least squares over the table's thread counts and both blocks:
    a single count's rate is noisy, 0.87-1.07 of one core's at 2 threads).
    Lent hosts of 16, 32 and 64 cores lost 0.66-0.98 % of a core's speed per
    busy core. 1.0 without host_copy's table."""
    if not buses:
        return 1.0
    alone = {block: copy_rate(buses.copied, 1, block) for block in CORE_BLOCKS}
    points = [
        (count - 1, rate / count / alone[block] - 1)
        for count, block, rate in buses.copied
        if block in CORE_BLOCKS and count > 1
    ]
    if not points:
        return 1.0
    busy, lost = np.array(points).T
    per_core = float(busy @ lost / (busy @ busy))
    return max(1.0 + per_core * (threads - 1), SLOWEST)


def passed_per_rank(experiment: str, size: int) -> int | None:
    """The bytes a rank takes in from other cores at once, where that
    outgrows the blocks that stay in a core's own cache (PASSED_PAST), so
    that they pass through the caches the cores share: b_eff's two messages
    in. None where the experiment has none such (a gather's ranks take in
    one block at a time, mbw_mr's pairs measured the bus the fit takes)."""
    if experiment != "beff" or size <= PASSED_PAST:
        return None
    return 2 * size


def with_host(arguments: dict, buses: Buses | None, experiment: str, ranks: int, size: int) -> dict:
    """`arguments` as the point's host runs it, with as many of its cores
    busy as it has ranks there: a rank's own terms slowed by the cores'
    speed (`core_speed`), and the host's bus what as many cores copy at once
    in blocks of what each rank works on: from the caches where those stay
    there, from memory where they do not, and the less, the fewer cores
    share the memory; where the ranks take in more from other cores than a
    core's own cache holds (`passed_per_rank`), what as many cores pass on
    from core to core at once (host_pass)."""
    if not buses:
        return arguments
    threads = min(ranks, arguments.get("ranks_per_host", ranks))
    found = scaled(arguments, 1.0 / core_speed(buses, threads))
    passed = passed_per_rank(experiment, size)
    if passed and buses.passed:
        return {**found, "host_bandwidth": copy_rate(buses.passed, threads, passed)}
    block = held_per_rank(experiment, ranks, size)
    if block is None:
        return found
    return {**found, "host_bandwidth": copy_rate(buses.copied, threads, block)}


def simulate(
    arguments: dict,
    experiment: str,
    schedule: str,
    ranks: int,
    sizes: list,
    collective: str = "gather",
    name: str = "cluster",
    factor_of=None,
    buses: Buses | None = None,
) -> list[float]:
    """The simulated time of each size: a gather's time; b_eff's time per
    message and neighbour (every rank sends to both neighbours at once);
    mbw_mr's time per message and pair (ranks/2 pairs, WINDOW messages each).
    factor_of(size): the discrepancy factor of each size, which scales a
    rank's own terms (`scaled`); None: the arguments as given. buses: the
    host's bus per cores and block (`bus_rates`), from which each point
    takes its own bus and its cores' speed (`with_host`); None: the
    arguments as given."""
    if factor_of is not None or buses:
        return [
            simulate(
                with_host(
                    scaled(arguments, factor_of(size)) if factor_of else arguments, buses, experiment, ranks, size
                ),
                experiment,
                schedule,
                ranks,
                [size],
                collective,
                name,
            )[0]
            for size in sizes
        ]
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
