"""OSU-style blocking collectives with buffers in any memory kind.

    mpirun -np 4 python -c "from fpgacomm import collectives as c; print(c.allreduce(mem='D'))"

OMB's method (docs/METHODS.md, "Collectives"): per iteration each rank times
one MPI call, then a barrier outside the timed region; OMB's avg, min and max
are the mean, min and max over ranks of each rank's mean time; percentiles
are over iterations of the rank-averaged times. Rows also carry nccl-tests'
algorithm and bus bandwidth, on nccl-tests' byte base (`nccl_bytes`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

from .. import _core
from ..params import LARGE_MESSAGE, counts_params, iteration_counts, resolve_sizes, usage_error
from ..results import stats
from ..results.result import Result
from ..runtime import environment, mpi
from ..runtime.devices import DeviceOptions, check_api, needs_device, open_device_if
from . import schema
from .osu import measured_sizes, omb_differences
from .signatures import options_of
from .sweep import OnRow, Sweep

# Each collective's facts are the core's entry (src/bench/collective_table.cpp):
# _core.collective(op) looks one up, and an unknown name is a UsageError.
TESTS = tuple(_core.collective_ops())
ROOTED = tuple(_core.rooted_collective_ops())
# OMB's COLL_LOOP_SMALL, COLL_SKIP_SMALL, COLL_LOOP_LARGE, COLL_SKIP_LARGE.
ITERATIONS = (1000, 100, 100, 10)
# OMB's MIN_MESSAGE_SIZE and MAX_MSG_SIZE_COLL.
DEFAULT_SIZES = (1, 1 << 20)
# OMB's -M: the memory one process may take for a collective's buffers
# (MAX_MEM_LIMIT), and the least it accepts (MAX_MEM_LOWER_LIMIT).
MEM_LIMIT = 512 << 20
MEM_LIMIT_FLOOR = 1 << 20
# The core's defaults of the options it holds.
_CORE = _core.CollectiveOptions()


class MemLimitWarning(UserWarning):
    """OMB's -M changed the run: it capped the largest message, or was raised to its floor."""


def mem_limit_sizes(op: str, sizes: list, ranks: int, mem_limit: int) -> tuple[list, int, list]:
    """OMB's check_mem_limit: (the sizes at or below the cap, the limit
    used, the warnings to give). The cap is mem_limit / ranks for gather,
    scatter, allgather and alltoall, whose buffers hold a block per rank,
    and mem_limit for the others; a limit below MEM_LIMIT_FLOOR is raised
    to it, as OMB does. A cap below every size is a usage error."""
    entry = _core.collective(op)
    said = []
    if mem_limit < MEM_LIMIT_FLOOR:
        said.append(
            f"-M {mem_limit} bytes is below OSU Micro-Benchmarks' least memory limit; using "
            f"{MEM_LIMIT_FLOOR} bytes instead"
        )
        mem_limit = MEM_LIMIT_FLOOR
    if not entry.moves_data:
        return sizes, mem_limit, said
    cap = mem_limit // ranks if entry.holds_every_rank else mem_limit
    kept = [size for size in sizes if size <= cap]
    per = f" / {ranks} ranks" if entry.holds_every_rank else ""
    if not kept:
        raise usage_error(
            f"-M {mem_limit} bytes per process{per} caps osu {op}'s messages at {cap} bytes, below "
            f"the smallest size asked ({min(sizes)} bytes); give a larger -M or smaller sizes (-m)"
        )
    if len(kept) < len(sizes):
        said.append(
            f"limiting the largest message of osu {op} to {max(kept)} bytes: -M {mem_limit} bytes per "
            f"process{per} allows {cap}; increase -M (--mem-limit) for larger messages"
        )
    return kept, mem_limit, said


def nccl_bytes(op: str, size: int, ranks: int) -> int | None:
    """The bytes nccl-tests divides by the time for algbw, from OMB's per-rank
    size (the core's entry of op): the whole gathered, scattered or exchanged
    buffer for gather, scatter, allgather and alltoall (size * ranks); the
    vector for the reductions (reduce_scatter's vector is what each rank
    contributes, i.e. nccl-tests' total); the message for bcast; None for
    the barrier, which moves no data."""
    return _core.collective(op).nccl_bytes(size, ranks)


def busbw_factor(op: str, ranks: int) -> float | None:
    """nccl-tests' bus bandwidth factor (the core's entry of op): what each
    rank's link must carry relative to algbw in the optimal algorithm; None
    for the barrier, which moves no data."""
    return _core.collective(op).busbw_factor(ranks)


def _rows(op: str, sizes: list, ranks: int, validate: bool) -> tuple[list, dict, dict]:
    """Rows, units and samples of the core's rows of the sizes measured."""
    rows, samples = [], {}
    for timing in sizes:
        summary = stats.summarize(timing["samples"])
        rank_means = timing["rank_means"]
        average = sum(rank_means) / len(rank_means)
        size = timing["size"]
        total = nccl_bytes(op, size, ranks)
        algbw = total / average if total else None
        row = {
            "size": size,
            # OMB's numbers: over ranks, of each rank's mean over iterations.
            "latency_avg": average,
            "latency_min": min(rank_means),
            "latency_max": max(rank_means),
            # Over iterations, of the rank-averaged time (OMB's -z).
            "latency_stdev": summary["stdev"],
            "latency_p50": summary["p50"],
            "latency_p90": summary["p90"],
            "latency_p99": summary["p99"],
            "iterations": timing["iterations"],
            "staging_avg": timing["staging"],
            "staging_share": timing["staging"] / average,
            "nccl_bytes": total,
            "algbw": algbw,
            "busbw": algbw * busbw_factor(op, ranks) if algbw is not None else None,
            "validation": ("fail" if timing["errors"] else "pass") if validate else None,
            "validation_errors": timing["errors"] if validate else None,
        }
        rows.append(row)
        samples[str(size)] = timing["samples"]
    units = {column: "s" for column in rows[0]} if rows else {}
    units.update(
        size="B",
        iterations="",
        staging_share="",
        nccl_bytes="B",
        algbw="B/s",
        busbw="B/s",
        validation="",
        validation_errors="B",
    )
    return rows, units, samples


@dataclass(frozen=True, kw_only=True)
class CollectiveOptions:
    """The options of one OSU collective, each declared once (as
    osu.OsuOptions: benchmarks.schema): defaults the core's
    CollectiveOptions' where it has the field. run() takes one, or its
    fields as keywords; the core's validate() checks them before any device
    opens. root is the rooted collectives' (ROOTED)."""

    sizes: list[int] | str | None = schema.option(
        None,
        "OSU Micro-Benchmarks' per-rank sizes (-m; bytes each rank contributes, see nccl_bytes for nccl-tests' "
        f'totals): None ({DEFAULT_SIZES[0]} B .. {DEFAULT_SIZES[1] >> 20} MiB), a string "[MIN:]MAX" (the missing '
        "end from those defaults), one size or a list",
    )
    mem: str = schema.option(
        _CORE.kind,
        "the kind of every buffer (H, H!, D, B, P); device kinds are staged through host memory and staging_share "
        "says how much of the time that took",
    )
    root: int | None = schema.option(
        _CORE.root,
        "root rank (default 0); OSU Micro-Benchmarks' -k fixed:N is the same",
        "--root",
        "-k",
        "--root-rank",
        doc="the root of gather, scatter, bcast and reduce; None: rank 0",
        tests=ROOTED,
        type="root_rank",
        metavar="N",
    )
    iterations: int | None = schema.iterations_option()
    warmup: int | None = schema.warmup_option()
    validate: bool = schema.validate_option()
    datatype: str = schema.datatype_option(_CORE.datatype.lower())
    validation_warmup: int = schema.validation_warmup_option(_CORE.validation_warmup)
    mem_limit: int = schema.option(
        MEM_LIMIT,
        f"memory per process for the buffers, K/M/G (default {schema.DEFAULT}, at least {MEM_LIMIT_FLOOR >> 20}M), "
        "as OSU Micro-Benchmarks: a larger message is skipped with a warning (--max-memory instead refuses a run "
        "that would take more than the host has)",
        "-M",
        "--mem-limit",
        doc=f"OSU Micro-Benchmarks' -M, the bytes one process may take for the buffers (default {schema.DEFAULT}, "
        f"at least {MEM_LIMIT_FLOOR}): sizes above what it allows are dropped with a MemLimitWarning (on rank 0), "
        "as mem_limit_sizes says",
        type="size",
        metavar="SIZE",
    )
    device: DeviceOptions | None = schema.device_option()
    rounds: int = schema.rounds_option()
    round_seed: int | None = schema.round_seed_option()


@schema.takes_options(CollectiveOptions, "on_row")
def run(
    op: str, comm=None, options: CollectiveOptions | None = None, *, on_row: OnRow | None = None, **keywords
) -> Result:
    """One OSU collective; collective over comm.

    options: a CollectiveOptions, and/or its fields as keywords (which
    replace its). A message moves its whole elements of datatype (OMB's
    -T), and sizes smaller than one element get no row. on_row: called on
    rank 0 after each size with the Result so far (its rows the sizes
    finished); an interrupt raises Interrupted carrying `result`, the sizes
    finished, marked incomplete.
    """
    options = schema.build(CollectiveOptions, options, keywords)
    entry = _core.collective(op)
    comm = mpi.resolve(comm)
    mem, validate = options.mem, options.validate
    device_options = options.device or DeviceOptions()
    asked = resolve_sizes(options.sizes, DEFAULT_SIZES) if entry.moves_data else [0]
    kept, mem_limit, said = mem_limit_sizes(op, asked, comm.Get_size(), options.mem_limit)
    # The fields the core holds by the same name (root, datatype, -u) pass as they are.
    core = schema.core_options(
        options,
        _core.CollectiveOptions,
        op=op,
        kind=mem,
        sizes=kept,
        counts=iteration_counts(ITERATIONS, options.iterations, options.warmup),
        validation=validate,
        bank=device_options.bank,
    )
    core.validate()
    check_api(device_options, [mem])
    size_list = list(core.sizes)
    if comm.Get_rank() == 0:
        for text in said:
            warnings.warn(text, MemLimitWarning, stacklevel=3)

    hosts = _core.host_names(comm)
    # The barrier moves no data, so it needs no device whatever mem says.
    dev = open_device_if(needs_device([mem]) and entry.moves_data, comm, device_options, hosts)
    env = environment.collect(comm, dev, hosts)
    validation_warmup = options.validation_warmup

    def result_of(sizes: list, finished: dict) -> Result:
        """The Result of the sizes measured; finished: the core's whole run, or {} while it goes on."""
        rows, units, samples = _rows(op, sizes, comm.Get_size(), validate)
        params = {
            "test": op,
            "send_kind": mem,
            "recv_kind": mem,
            "sizes": size_list,
            "root": finished.get("root"),
            "datatype": core.datatype,
            **counts_params(core.counts),
            "large_message": LARGE_MESSAGE,
            "validate": validate,
            "validation_warmup": validation_warmup if validate else None,
            "mem_limit": mem_limit,
            "route": finished.get("route"),
            "omb_differences": omb_differences([finished.get("route")], validate, validation_warmup),
            "busbw_factor": entry.busbw_factor(comm.Get_size()),
            **environment.topology(env),
            **device_options.params(),
        }
        return Result(f"osu_{op}", params, env, rows, units, samples)

    planned = measured_sizes(size_list, core.datatype) if entry.moves_data else 1
    sweep = Sweep(comm, result_of, size_list, planned, on_row, options.rounds, options.round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            core.sizes = order
            sweep.round_done(_core.run_collective(comm, dev, core, sweep.on_size))
    return sweep.result()


def _test(entry: _core.Collective) -> Callable[..., Result]:
    """The function of one collective, named as its test: run(entry.name, ...)
    with run's options and the entry's summary as its docstring."""

    def test(comm=None, options: CollectiveOptions | None = None, **keywords) -> Result:
        return run(entry.name, comm, options, **keywords)

    test.__name__ = test.__qualname__ = entry.name
    test.__doc__ = entry.summary
    return options_of(run)(test)


# One function per entry of the core's table, named as its test
# (fpgacomm.collectives.allreduce(...), collectives.barrier).
globals().update({entry.name: _test(entry) for entry in _core.collectives()})
