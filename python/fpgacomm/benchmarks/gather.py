"""Gather, scatter and allgather schedules of the VCSN paper on real ranks:
one node per rank, every rank's blocks in one buffer. The schedules
themselves (Schedule, Stage, Transfer, schedule(), ...) live in
fpgacomm.schedules, which needs no MPI; their names are importable from here
too, for the code that has always found them here.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

from .. import _core, schedules
from ..params import usage_error
from ..results.result import Result
from ..runtime.devices import DeviceOptions
from ..schedules import (
    COLLECTIVES,
    CONTROLS,
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
from ..simulation import gather as gather_sim
from ..simulation.resources import Limits
from . import schema
from .sweep import OnProgress, OnRow, Sweep

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
    "GatherOptions",
    "run",
    "simulate",
    "rank_part",
    "expected_blocks",
    "failed_sizes",
]

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


_CORE = _core.GatherOptions()  # the core's defaults
# The simulated run's defaults (simulation.gather.run), of the options it reads.
_SIMULATED = inspect.signature(gather_sim.run).parameters
REAL, SIMULATED = schema.REAL_RUNS, schema.SIMULATED_RUNS


@dataclass(frozen=True, kw_only=True)
class GatherOptions:
    """The options of a gather run, on real ranks (run()) or on the
    simulated fabric (simulate()), each declared once (as osu.OsuOptions:
    benchmarks.schema): default, help, `fpgacomm gather`'s flag, and which
    runs read it (`applies`; a run refuses with the field's message a value
    that only the other kind reads, where the field says so). Defaults are
    the core's GatherOptions' (root, validation, barrier_reference) and the
    simulated run's (ports, virtual_ports, control, collective, reuse,
    fast_forward); None where each kind has its own. Each value is checked
    once: names, control, node counts and sizes by fpgacomm.schedules, the
    ones each kind alone reads by that run."""

    schedule: str | None = schema.option(
        None,
        "default: ring on real ranks, the simulator's own with --fabric",
        "--schedule",
        doc="ring (DCN), tree (VCSN virtual tree), vlink (virtual links reconfigured every stage) or mpi "
        "(MPI_Gather); None: ring on real ranks, the fabric's own simulated (ring on dcn_ring, tree on vcsn and "
        "vcsn_fat_tree, mpi on host_path and cluster)",
        choices=NAMES,
    )
    mem: str | None = schema.option(
        None,
        f"kind of every rank's buffer: H, H!, D, B, P (real runs; default {_CORE.kind})",
        "--mem",
        doc=f"kind of every rank's buffer: H, H!, D, B or P; None: {_CORE.kind}",
        applies=REAL,
        refused="gather: --mem applies to real runs; leave it out with --fabric",
        metavar="KIND",
    )
    sizes: object = schema.option(
        None,
        f"bytes per node, K/M/G suffixes, doubling (default {DEFAULT_SIZES}, stopping at what fits the device)",
        "--sizes",
        doc='bytes per node: "MIN:MAX" doubling, one size, or a list; 0 or more on real ranks, 1 or more '
        f"simulated; None: {DEFAULT_SIZES} on real ranks, stopping at the largest size that fits every device "
        "(a size given that does not fit is a UsageError before any transfer), the VCSN paper's Table 6 "
        "simulated",
        metavar="[MIN:]MAX",
    )
    ports: int = schema.option(
        _SIMULATED["ports"].default, "physical ports per node", "--ports", type=int, choices=schedules.PORTS
    )
    virtual_ports: int = schema.option(
        _SIMULATED["virtual_ports"].default,
        "virtual ports per physical port (VCSN)",
        "--virtual-ports",
        type=int,
        choices=schedules.VIRTUAL_PORTS,
    )
    control: str = schema.option(
        _SIMULATED["control"].default,
        "barrier: an MPI_Barrier closes every stage (the seed's); local: none (section 6.4)",
        "--control",
        choices=CONTROLS,
    )
    collective: str = schema.option(
        _SIMULATED["collective"].default,
        "",
        "--collective",
        doc="gather, scatter or allgather (simulated allgathers are ring allgathers)",
        choices=COLLECTIVES,
    )
    root: int = schema.option(
        _CORE.root,
        "the root node (real runs)",
        "--root",
        doc="the root node, 0 to ranks - 1 (checked once the run knows its ranks)",
        applies=REAL,
        refused="gather: --root applies to real runs (the simulated schedules gather into node 0); leave it out "
        "with --fabric",
        type=int,
    )
    iterations: int | None = schema.option(
        None,
        f"timed iterations per size (default {ITERATIONS[0]}, {ITERATIONS[2]} above {LARGE_BLOCK >> 20} MiB)",
        "-i",
        "--iterations",
        doc=f"timed iterations per size; None: {ITERATIONS[0]}, {ITERATIONS[2]} above {LARGE_BLOCK} bytes",
        applies=REAL,
        type=int,
    )
    validate: bool = schema.option(
        _CORE.validation,
        "check every block, in an untimed iteration after the timed ones (the default)",
        "-c",
        "--validation",
        doc="check every block, in an untimed iteration after the timed ones",
        negative=("--no-validation", "do not check the blocks"),
        applies=REAL,
        action="store_true",
    )
    # `fpgacomm gather` gives the rounds' flags (cli/options.py, add_rounds_options) here.
    rounds: int = schema.rounds_option(
        applies=REAL,
        refused="gather: --rounds repeats measurements on real ranks, and the simulated fabric (--fabric) gives "
        "the same figures every time; leave --rounds out, got {value}",
    )
    round_seed: int | None = schema.round_seed_option(applies=REAL)
    fabric: object = schema.option(
        None,
        "simulate on this fabric preset or platform file (PLATFORM.json) instead (no mpirun); a schedule the "
        "platform cannot run is refused with the pairs that can",
        "--fabric",
        doc=f"the simulated fabric: a preset's name, a platform file or a Fabric; None: "
        f"{_SIMULATED['fabric'].default}",
        applies=SIMULATED,
        refused="gather: the fabric {value!r} is simulated; give it to gather.simulate",
        metavar="PLATFORM",
    )
    nodes: object = schema.option(
        None,
        f"simulated node counts (with --fabric; default {','.join(map(str, _SIMULATED['nodes'].default))})",
        "--nodes",
        doc=f"simulated node counts, one or several; None: {', '.join(map(str, _SIMULATED['nodes'].default))}",
        applies=SIMULATED,
        refused="gather: --nodes sets simulated node counts; give --fabric, or set the real node count with "
        "mpirun -np",
        metavar="N,N,...",
    )
    reuse: bool = schema.option(
        _SIMULATED["reuse"].default,
        "with --fabric: simulate every stage in full instead of each distinct group of independent transfers "
        "once (the same times, bit for bit; slower)",
        "--no-reuse",
        doc="simulate each distinct group of independent transfers once (the same times to the bit; False: "
        "every stage in full; control local always simulates in full)",
        applies=SIMULATED,
        refused="gather: --no-reuse applies to simulated runs; give --fabric, or leave it out",
        action="store_false",
    )
    warmup: int | None = schema.option(
        None, f"untimed warm-up iterations per size; None: {ITERATIONS[1]}, {ITERATIONS[3]} above", applies=REAL
    )
    barrier_reference: int = schema.option(
        _CORE.barrier_reference,
        'bare MPI_Barriers timed after the sweep (samples "barrier_reference"; each round times its own)',
        applies=REAL,
    )
    device: DeviceOptions | None = schema.device_option(applies=REAL)
    fast_forward: bool = schema.option(
        _SIMULATED["fast_forward"].default,
        "jump through long streams' steady state by whole periods (the same times to the bit; False: every "
        "frame stepped)",
        applies=SIMULATED,
    )
    limits: Limits | None = schema.option(
        None, "what the simulator may take (simulation.resources.Limits)", applies=SIMULATED
    )


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


@schema.takes_options(GatherOptions, "on_row")
def run(comm=None, options: GatherOptions | None = None, *, on_row: OnRow | None = None, **keywords) -> Result:
    """A gather (scatter, allgather) schedule on real ranks, one node per
    rank, every rank's n blocks in one buffer of kind `mem`; collective over
    comm (COMM_WORLD by default). options: a GatherOptions, and/or its
    fields as keywords (which replace its). on_row: called on rank 0 after
    each size with the Result so far; an interrupt raises Interrupted
    carrying `result`, the sizes finished, marked incomplete. With rounds
    above 1, rows are the medians over rounds and keep every round's values
    in row["rounds"] (benchmarks.sweep).
    """
    from ..params import counts_params, iteration_counts
    from ..runtime import environment, mpi
    from ..runtime.devices import needs_device, open_device_if

    options = schema.build(GatherOptions, options, keywords)
    schema.refuse_other_runs(options, simulated=False)
    comm = mpi.resolve(comm)
    nodes = comm.Get_size()
    if nodes < 2:
        raise usage_error(
            f"gather needs at least 2 ranks (one per node), and this run has {nodes}; "
            f"{_core.run_it_with('2')} (or more ranks)"
        )
    schedule, mem, root, collective = (
        options.schedule or "ring",
        options.mem or _CORE.kind,
        options.root,
        options.collective,
    )
    ports, virtual_ports, validate = options.ports, options.virtual_ports, options.validate
    check(schedule, nodes, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective)
    schedules.check_control(options.control)
    barrier_reference = options.barrier_reference
    if isinstance(barrier_reference, bool) or not isinstance(barrier_reference, int) or barrier_reference < 0:
        raise usage_error(
            f"gather: barrier_reference {barrier_reference!r}; give a whole number of barriers, " f"0 or more"
        )
    default_sweep = options.sizes in (None, DEFAULT_SIZES)
    device_options = options.device or DeviceOptions()
    rank = comm.Get_rank()
    shape = schedules.schedule(
        schedule, nodes, 0, ports=ports, virtual_ports=virtual_ports, root=root, collective=collective
    )
    holds, checks = expected_blocks(collective, nodes, root, rank)
    core = _core.GatherOptions(
        kind=mem,
        sizes=schedules.block_sizes(DEFAULT_SIZES if default_sweep else options.sizes, simulated=False),
        stages=[] if schedule == "mpi" else rank_part(shape, rank),
        mpi_collective=collective if schedule == "mpi" else "",
        root=root,
        holds=holds,
        checks=checks,
        counts=iteration_counts(ITERATIONS, options.iterations, options.warmup, LARGE_BLOCK),
        barrier=options.control == "barrier",
        validation=validate,
        barrier_reference=barrier_reference,
        bank=device_options.bank,
    )
    core.validate()

    hosts = _core.host_names(comm)
    dev = open_device_if(needs_device([mem]), comm, device_options, hosts)
    if dev is not None:
        core.device_sharers, room = _device_room(comm, dev, hosts, device_options)
        if default_sweep:
            fit = comm.allreduce(room // nodes, op=mpi.MPI().MIN)
            core.sizes = [s for s in core.sizes if s <= fit]
            if not core.sizes:
                raise usage_error(
                    f"gather: even the default sweep's smallest size exceeds the device's memory for "
                    f"{nodes} nodes ({fit} bytes per node fit); give smaller --sizes"
                )
    env = environment.collect(comm, dev, hosts)
    size_list = list(core.sizes)

    def result_of(sizes: list, finished: dict) -> Result:
        """The Result of the sizes measured; finished: the core's whole run, or {} while it goes on."""
        rows, samples = _rows(schedule, nodes, len(shape.stages), sizes, validate)
        if finished.get("barrier_reference"):
            samples["barrier_reference"] = finished["barrier_reference"]
        params = {
            "schedule": schedule,
            "collective": collective,
            "control": options.control,
            "mem": mem,
            "ports": ports,
            "virtual_ports": virtual_ports,
            "root": root,
            "sizes": size_list,
            **counts_params(core.counts),
            "large_block": LARGE_BLOCK,
            "validate": validate,
            "route": finished.get("route"),
            "device_sharers": core.device_sharers,
            **device_options.params(),
        }
        return Result("gather", params, env, rows, _UNITS, samples)

    sweep = Sweep(comm, result_of, size_list, len(size_list), on_row, options.rounds, options.round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            core.sizes = order
            sweep.round_done(_core.run_gather(comm, dev, core, sweep.on_size))
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


@schema.takes_options(GatherOptions, "on_progress")
def simulate(options: GatherOptions | None = None, *, on_progress: OnProgress | None = None, **keywords) -> Result:
    """The schedule on the simulated fabric (simulation.gather.run, whose
    Result it is): the options that simulated runs read; a value given of
    one that only real runs read and refuse is a UsageError. options: a
    GatherOptions, and/or its fields as keywords (which replace its).
    on_progress: called with how far the run is as each point begins and ends.
    """
    options = schema.build(GatherOptions, options, keywords)
    schema.refuse_other_runs(options, simulated=True)
    # What simulated runs read, where given (None: the simulated run's own default).
    given = {
        field.name: getattr(options, field.name)
        for field in dataclasses.fields(options)
        if field.metadata["applies"] != REAL and getattr(options, field.name) is not None
    }
    return gather_sim.run(**given, on_progress=on_progress)
