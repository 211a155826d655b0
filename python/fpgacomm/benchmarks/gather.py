"""Gather, scatter and allgather schedules of the VCSN paper on real ranks:
one node per rank, every rank's blocks in one buffer. The schedules
themselves (Schedule, Stage, Transfer, schedule(), ...) live in
fpgacomm.schedules, which needs no MPI; their names are importable from here
too, for the code that has always found them here.
"""

from __future__ import annotations

from .. import _core, schedules
from ..params import byte_sizes, usage_error
from ..results.result import Result
from ..schedules import (
    COLLECTIVES,
    NAMES,
    PORTS,
    RECEIVES,
    VIRTUAL_PORTS,
    Run,
    Schedule,
    Stage,
    Transfer,
    check,
    schedule,
)
from .sweep import OnRow, Sweep

__all__ = [
    "COLLECTIVES",
    "NAMES",
    "PORTS",
    "RECEIVES",
    "VIRTUAL_PORTS",
    "Run",
    "Schedule",
    "Stage",
    "Transfer",
    "check",
    "schedule",
    "run",
    "rank_part",
    "expected_blocks",
    "failed_sizes",
]

CONTROLS = ("barrier", "local")
DEFAULT_SIZES = "64K:256M"  # the VCSN paper's Table 6: data per node
# Timed iterations and warm-up at or below LARGE_BLOCK, then above it.
ITERATIONS = (20, 2, 5, 1)
LARGE_BLOCK = 1 << 20
_UNITS = {
    "schedule": "",
    "nodes": "",
    "size": "B",
    "stages": "",
    "time": "s",
    "throughput": "B/s",
    "setup": "s",
    "transfer": "s",
    "barrier": "s",
    "iterations": "",
    "validation": "",
    "validation_errors": "B",
}


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """(first, count) of each run of consecutive buffer positions."""
    runs = []
    for p in positions:
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((p, 1))
    return runs


def rank_part(sched: Schedule, rank: int) -> list[tuple[list, list]]:
    """What `rank` sends and receives in each stage, as (peer, first buffer
    position, blocks) triples. Position p holds node (p + root) mod n's
    block; a transfer whose blocks are not consecutive there becomes one
    message per run (both ends cut it alike, in the same order)."""
    stages = []
    for stage in sched.stages:
        sends, recvs = [], []
        for t in stage.transfers:
            if rank not in (t.src, t.dst):
                continue
            positions = [(block - sched.root) % sched.nodes for block in t.blocks]
            moves = [(t.dst if t.src == rank else t.src, first, count) for first, count in _runs(positions)]
            (sends if t.src == rank else recvs).extend(moves)
        stages.append((sends, recvs))
    return stages


def expected_blocks(collective: str, nodes: int, root: int, rank: int) -> tuple[list[int], list[int]]:
    """Buffer positions `rank` holds before the collective and must hold,
    intact, after it, from the collective's definition (not the schedule's)."""
    everything, own = list(range(nodes)), [(rank - root) % nodes]
    holds = everything if collective == "scatter" and rank == root else own
    if collective == "allgather" or rank == root:
        return holds, everything
    return holds, own


def _device_room(comm, dev, hosts: list[str], options) -> tuple[int, int]:
    """(ranks of this host on this rank's device, bytes one buffer may take)."""
    from ..runtime.devices import device_for

    rank = comm.Get_rank()
    candidates = len(_core.select_devices(options.platform, options.device, options.type))
    mine = device_for(hosts, rank, candidates, options)
    sharers = sum(
        1 for r, host in enumerate(hosts) if host == hosts[rank] and device_for(hosts, r, candidates, options) == mine
    )
    return sharers, min(dev.info.max_alloc_bytes, dev.info.global_mem_bytes // sharers)


def run(
    comm=None,
    schedule: str = "ring",
    mem: str = "D",
    sizes=DEFAULT_SIZES,
    ports: int = 2,
    virtual_ports: int = 2,
    control: str = "barrier",
    collective: str = "gather",
    iterations: int | None = None,
    device=None,
    validate: bool = True,
    *,
    root: int = 0,
    warmup: int | None = None,
    barrier_reference: int = 0,
    on_row: OnRow | None = None,
    rounds: int = 1,
    round_seed: int | None = None,
) -> Result:
    """A gather (scatter, allgather) schedule on real ranks, one node per
    rank, every rank's n blocks in one buffer of kind `mem`; collective over
    comm. sizes: bytes per node ("MIN:MAX" doubling, one size, a list); the
    default sweep stops at the largest size that fits every device, a size
    given that does not fit is a UsageError before any transfer. control:
    barrier (an MPI_Barrier closes every stage) or local (none). iterations
    and warmup: per size (default ITERATIONS). barrier_reference: bare
    MPI_Barriers timed after the sweep (samples "barrier_reference").
    on_row: called on rank 0 after each size with the Result so far; an
    interrupt raises Interrupted carrying `result`, the sizes finished,
    marked incomplete. rounds:
    complete sweeps in this job, each in its own shuffled order of the
    sizes from round_seed (drawn where None); with more than one, rows are
    the medians over rounds and keep every round's values in row["rounds"]
    (benchmarks.sweep); each round times its own barrier_reference.
    """
    from ..params import counts_params, iteration_counts
    from ..runtime import environment, mpi
    from ..runtime.devices import DeviceOptions, needs_device, open_device_if

    comm = mpi.resolve(comm)
    nodes = comm.Get_size()
    if nodes < 2:
        raise usage_error(
            f"gather needs at least 2 ranks (one per node), and this run has {nodes}; "
            f"{_core.run_it_with('2')} (or more ranks)"
        )
    check(schedule, nodes, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    if control not in CONTROLS:
        raise usage_error(
            f"gather: unknown control {control!r}; choose barrier (an MPI_Barrier closes every stage) "
            f"or local (none)"
        )
    if isinstance(barrier_reference, bool) or not isinstance(barrier_reference, int) or barrier_reference < 0:
        raise usage_error(
            f"gather: barrier_reference {barrier_reference!r}; give a whole number of barriers, " f"0 or more"
        )
    device_options = device or DeviceOptions()
    rank = comm.Get_rank()
    shape = schedules.schedule(
        schedule, nodes, 0, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective
    )
    holds, checks = expected_blocks(collective, nodes, root, rank)
    options = _core.GatherOptions(
        kind=mem,
        sizes=byte_sizes(sizes, "gather: size per node"),
        stages=[] if schedule == "mpi" else rank_part(shape, rank),
        mpi_collective=collective if schedule == "mpi" else "",
        root=root,
        holds=holds,
        checks=checks,
        counts=iteration_counts(ITERATIONS, iterations, warmup, LARGE_BLOCK),
        barrier=control == "barrier",
        validation=validate,
        barrier_reference=barrier_reference,
        bank=device_options.bank,
    )
    options.validate()

    hosts = _core.host_names(comm)
    dev = open_device_if(needs_device([mem]), comm, device_options, hosts)
    if dev is not None:
        options.device_sharers, room = _device_room(comm, dev, hosts, device_options)
        if sizes == DEFAULT_SIZES:
            fit = comm.allreduce(room // nodes, op=mpi.MPI().MIN)
            options.sizes = [s for s in options.sizes if s <= fit]
            if not options.sizes:
                raise usage_error(
                    f"gather: even the default sweep's smallest size exceeds the device's memory for "
                    f"{nodes} nodes ({fit} bytes per node fit); give smaller --sizes"
                )
    env = environment.collect(comm, dev, hosts)
    size_list = list(options.sizes)

    def result_of(sizes: list, finished: dict) -> Result:
        """The Result of the sizes measured; finished: the core's whole run, or {} while it goes on."""
        rows, samples = _rows(schedule, nodes, len(shape.stages), sizes, validate)
        if finished.get("barrier_reference"):
            samples["barrier_reference"] = finished["barrier_reference"]
        params = {
            "schedule": schedule,
            "collective": collective,
            "control": control,
            "mem": mem,
            "ports": ports,
            "virtual_ports": virtual_ports,
            "root": root,
            "sizes": size_list,
            **counts_params(options.counts),
            "large_block": LARGE_BLOCK,
            "validate": validate,
            "route": finished.get("route"),
            "device_sharers": options.device_sharers,
            **device_options.params(),
        }
        return Result("gather", params, env, rows, _UNITS, samples)

    sweep = Sweep(comm, result_of, size_list, len(size_list), on_row, rounds, round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            options.sizes = order
            sweep.round_done(_core.run_gather(comm, dev, options, sweep.on_size))
    return sweep.result()


def _rows(schedule: str, nodes: int, stages: int, sizes: list, validate: bool) -> tuple[list, dict]:
    """Rows and samples of the core's rows of the sizes measured."""
    rows, samples = [], {}
    for timing in sizes:
        size, totals = timing["size"], timing["totals"]
        phases = {
            name: [sum(column) / len(column) for column in zip(*timing[name])]
            for name in ("setup", "transfer", "barrier")
        }
        time = sum(totals) / len(totals)
        rows.append(
            {
                "schedule": schedule,
                "nodes": nodes,
                "size": size,
                "stages": stages,
                "time": time,
                "throughput": (nodes - 1) * size / time,
                **{name: sum(per_stage) for name, per_stage in phases.items()},
                "iterations": len(totals),
                "validation": ("fail" if timing["errors"] else "pass") if validate else None,
                "validation_errors": timing["errors"] if validate else None,
            }
        )
        key = f"{nodes}/{size}"
        for name, per_stage in phases.items():
            samples[f"{key}/{name}"] = per_stage
        samples[f"{key}/time"] = totals
        # Every stage of every timed iteration (the slowest rank's), iteration by iteration.
        samples[f"{key}/stage"] = [
            sum(phase)
            for i in range(len(totals))
            for phase in zip(timing["setup"][i], timing["transfer"][i], timing["barrier"][i])
        ]
    return rows, samples


def failed_sizes(result: Result) -> list[int]:
    """Sizes whose data arrived wrong."""
    return [row["size"] for row in result.rows if row["validation"] == "fail"]
