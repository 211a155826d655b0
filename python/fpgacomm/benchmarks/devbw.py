"""Host-to-device and device-to-host copy bandwidth and latency: the
reference for what any device path of fpgacomm can reach.

Each rank measures its own device (under mpirun with one device per rank, or
ranks sharing one). Per size, direction (h2d, d2h) and host memory kind
(H pageable, H! pinned), one blocking copy of the whole message is timed per
iteration by the host clock and by the copy's OpenCL profiling event; the
event's interval is the device's time, the rest is command overhead. Small
sizes give the latency of one copy, large ones the bandwidth. The method is
in docs/METHODS.md (devbw).

    mpirun -np 2 python -c "from fpgacomm import devbw as d; print(d.run(sizes='1:64M').rows[0])"
"""

from __future__ import annotations

from .. import _core
from ..params import HOST_KINDS, LARGE_MESSAGE, counts_params, iteration_counts, resolve_sizes, usage_error
from ..results import stats
from ..results.result import Result
from ..runtime import environment, mpi
from ..runtime.devices import DeviceOptions, open_device
from .sweep import OnProgress, Rounds, check_rounds, progress_of_round

DIRECTIONS = ("h2d", "d2h")
LARGEST_DEFAULT = 256 << 20
# (timed, warm-up) below and above LARGE_MESSAGE: many for latencies, few for
# large copies, whose time is long against the clock's resolution.
ITERATIONS = (1000, 100, 20, 2)


def sample_key(rank: int, direction: str, host_kind: str, size: int, clock: str) -> str:
    """Key of one series in Result.samples; clock is "host" or "device"."""
    return f"{rank} {direction} {host_kind} {size} {clock}"


def _check_parameters(directions, host_kinds) -> tuple[tuple, tuple]:
    directions, host_kinds = tuple(directions), tuple(host_kinds)
    if not directions or any(d not in DIRECTIONS for d in directions):
        raise usage_error(f"copy directions must be among {', '.join(DIRECTIONS)}, got {list(directions)}")
    if not host_kinds or any(k not in HOST_KINDS for k in host_kinds):
        raise usage_error(
            f"devbw copies between host and device memory: host kinds must be among "
            f"H (pageable) and H! (pinned), got {list(host_kinds)}"
        )
    return directions, host_kinds


def largest_fitting(comm, device) -> int:
    """LARGEST_DEFAULT, or the largest power of two every rank's device can allocate."""
    fits = min(LARGEST_DEFAULT, 1 << (device.info.max_alloc_bytes.bit_length() - 1))
    return comm.allreduce(fits, op=mpi.MPI().MIN)


def _measure(dev, rank: int, size_list, directions, host_kinds, counts, on_copy) -> tuple[list, dict]:
    """Every row of this rank; on_copy(rows done, rows planned) after each."""
    rows, samples = [], {}
    planned = len(directions) * len(host_kinds) * len(size_list)
    for direction in directions:
        for host_kind in host_kinds:
            for size in size_list:
                iterations, warmup = counts.timed(size), counts.untimed(size)
                host, device = _core.copy_samples(dev, direction, host_kind, size, iterations, warmup)
                host_summary, device_summary = stats.summarize(host), stats.summarize(device)
                rows.append(
                    {
                        "rank": rank,
                        "size": size,
                        "direction": direction,
                        "host_kind": host_kind,
                        "iterations": iterations,
                        "time_avg": host_summary["avg"],
                        "time_min": host_summary["min"],
                        "time_max": host_summary["max"],
                        "time_stdev": host_summary["stdev"],
                        "device_time_avg": device_summary["avg"],
                        "device_time_min": device_summary["min"],
                        "bandwidth": size / host_summary["avg"],
                        "bandwidth_max": size / host_summary["min"],
                        # None where the copy fell below the event timer's resolution
                        "device_bandwidth": size / device_summary["avg"] if device_summary["avg"] else None,
                    }
                )
                samples[sample_key(rank, direction, host_kind, size, "host")] = host
                samples[sample_key(rank, direction, host_kind, size, "device")] = device
                on_copy(len(rows), planned)
    return rows, samples


UNITS = {
    "rank": "",
    "size": "B",
    "direction": "",
    "host_kind": "",
    "iterations": "",
    "time_avg": "s",
    "time_min": "s",
    "time_max": "s",
    "time_stdev": "s",
    "device_time_avg": "s",
    "device_time_min": "s",
    "bandwidth": "B/s",
    "bandwidth_max": "B/s",
    "device_bandwidth": "B/s",
}


def run(
    comm=None,
    *,
    sizes=None,
    device: DeviceOptions | None = None,
    iterations: int | None = None,
    warmup: int | None = None,
    directions=DIRECTIONS,
    host_kinds=HOST_KINDS,
    concurrent: bool = False,
    rounds: int = 1,
    round_seed: int | None = None,
    on_progress: OnProgress | None = None,
) -> Result:
    """Copy bandwidth and latency of every rank's device; collective over comm.

    sizes: None (1 B .. 256 MiB, or the largest power of two every device can
    allocate), an OMB -m string "[MIN:]MAX", one size or a list. iterations
    and warmup, when given, hold for every size; otherwise 1000 (100 warm-up)
    up to 8 KiB and 20 (2) above. Ranks take turns, so each sees its device
    alone; concurrent=True measures on all ranks at once (what ranks sharing a
    device or a link get). Every rank returns every rank's rows. rounds:
    complete sweeps in this job (every rank's turn in each), each visiting
    the sizes in its own shuffled order from round_seed (drawn where None);
    with more than one, rows are the medians over rounds with every round's
    values in row["rounds"] (benchmarks.sweep). on_progress: called on rank
    0 with how far the run is, after each of its own rows and as each other
    rank's turn begins (with rounds, "round 2 of 5, " first).
    """
    comm = mpi.resolve(comm)
    directions, host_kinds = _check_parameters(directions, host_kinds)
    check_rounds(rounds, round_seed)
    counts = iteration_counts(ITERATIONS, iterations, warmup)
    counts.validate()  # before any device opens
    device_options = device or DeviceOptions()
    hosts = _core.host_names(comm)
    dev = open_device(comm, device_options, hosts)
    size_list = resolve_sizes(sizes, (1, largest_fitting(comm, dev)))
    limit = dev.info.max_alloc_bytes
    _core.agree(
        comm,
        ""
        if max(size_list) <= limit
        else f"cannot copy {max(size_list)} bytes on {dev.info.label()}: its largest allocation is {limit} bytes "
        f"(CL_DEVICE_MAX_MEM_ALLOC_SIZE); use smaller sizes (-m)",
    )
    # Host memory (docs/METHODS.md, "Host memory of a run"): the host buffer
    # of the largest size, and two times per timed iteration of each row.
    timed = sum(counts.timed(size) for size in size_list)
    _core.check_host_memory(
        comm,
        buffers=max(size_list),
        posted=0,
        samples=2 * len(directions) * len(host_kinds) * timed,
        run="devbw",
        fix="give smaller sizes (-m) or fewer iterations (-i)",
    )

    params = {
        "sizes": size_list,
        "directions": list(directions),
        "host_kinds": list(host_kinds),
        **counts_params(counts),
        "large_message": LARGE_MESSAGE,
        "concurrent": concurrent,
        **device_options.params(),
    }
    env = environment.collect(comm, dev, hosts)
    plan = Rounds(comm, size_list, rounds, round_seed)
    results = []
    with plan.keeping(results):
        for index, order in enumerate(plan.orders(), start=1):
            rows, samples = _round(
                comm,
                dev,
                order,
                directions,
                host_kinds,
                counts,
                concurrent,
                progress_of_round(on_progress, index, rounds),
            )
            results.append(Result("devbw", params, env, rows, UNITS, samples))
        return plan.of(results)


def _round(
    comm, dev, size_list: list, directions, host_kinds, counts, concurrent: bool, on_progress: OnProgress | None
) -> tuple[list, dict]:
    """One round: every rank's rows and samples, the sizes in size_list's order."""
    rank = comm.Get_rank()
    rows, samples = [], {}
    turns = [None] if concurrent else range(comm.Get_size())
    tell = on_progress if on_progress is not None and rank == 0 else (lambda state: None)
    for turn in turns:
        failure, usage = "", True
        whose = "every rank at once" if turn is None else f"rank {turn} ({turn + 1} of {len(turns)})"
        tell(f"{whose} copying")
        if turn is None or turn == rank:
            try:
                rows, samples = _measure(
                    dev,
                    rank,
                    size_list,
                    directions,
                    host_kinds,
                    counts,
                    lambda done, planned, whose=whose: tell(f"{whose}: {done} of {planned} rows measured"),
                )
            except _core.Error as error:
                failure, usage = str(error), isinstance(error, _core.UsageError)
        _core.agree(comm, failure, usage)
    all_rows = [row for rank_rows in comm.allgather(rows) for row in rank_rows]
    all_samples = {key: values for rank_samples in comm.allgather(samples) for key, values in rank_samples.items()}
    return all_rows, all_samples


def round_trip(result: Result, rank: int = 0, host_kind: str = "H!") -> float:
    """One device round trip at the smallest size: a write plus a read, host clock, seconds."""
    rows = [row for row in result.rows if row["rank"] == rank and row["host_kind"] == host_kind]
    if not rows:
        raise ValueError(f"{result.benchmark} has no rows for rank {rank} and host kind {host_kind}")
    smallest = min(row["size"] for row in rows)
    times = {row["direction"]: row["time_avg"] for row in rows if row["size"] == smallest}
    if set(times) != set(DIRECTIONS):
        raise ValueError(f"a round trip needs both directions, {result.benchmark} has {sorted(times)}")
    return times["h2d"] + times["d2h"]


def peak_bandwidth(result: Result, direction: str, rank: int = 0, host_kind: str = "H!", min_size: int = 0) -> float:
    """The highest average bandwidth of one direction at sizes >= min_size, B/s."""
    values = [
        row["bandwidth"]
        for row in result.rows
        if row["rank"] == rank
        and row["direction"] == direction
        and row["host_kind"] == host_kind
        and row["size"] >= min_size
    ]
    if not values:
        raise ValueError(
            f"{result.benchmark} has no {direction} {host_kind} rows of rank {rank} " f"at {min_size} B or more"
        )
    return max(values)
