"""`fpgacomm calibrate run`: one launch of the calibration campaign, measured
with the benchmark functions themselves and written as one Result into the
campaign's folder (plus its index). Run it again, interleaved with other work,
for more launches: the fit's uncertainty is a bootstrap over launches.

Each launch draws its own seed (rank 0, broadcast): the order of the
measurements, the ping-pong's log-uniformly drawn sizes (as SimGrid's
calibration draws them, so protocol switches show wherever they fall) and
every size order. Every row records the 1-minute load average at its start.

    mpirun -np 8 fpgacomm calibrate run campaign/
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
import time

import numpy as np

from .. import _core
from ..benchmarks import beff, collectives, gather, osu, overhead
from ..params import byte_sizes, usage_error
from ..results.result import Result, atomic_write
from ..runtime import environment, files, mpi
from ..schedules import NAMES as SCHEDULES
from . import host_copy
from .families import BENCHMARK, INDEX, INDEX_SCHEMA, UNITS

KiB, MiB = 1 << 10, 1 << 20
# Defaults that keep a launch at K=8 to a few minutes.
PINGPONG_SIZES = 32  # drawn per launch, log-uniformly (stratified) from 1 B to PINGPONG_LARGEST
PINGPONG_LARGEST = 4 * MiB
GATHER_SIZES = (64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB)
CONTENTION_SIZES = (4 * KiB, 64 * KiB, MiB)  # mbw_mr and the incast
ITERATIONS = 50  # every family's timed iterations per size (the gathers': gather.ITERATIONS)
BEFF_LARGEST = 20  # log2: HPCC FPGA's default range 2^0 .. 2^20
BEFF_REPETITIONS = 2
# b_eff's loop lengths: adaptive, each measurement about this long, instead of
# HPCC FPGA's rule (65536 exchanges of the small sizes take minutes on a loaded
# host); the held-out b_eff runs take the same rule (bench/heldout_campaign.sh).
BEFF_TARGET_TIME = 0.02


def rank_counts(ranks: int) -> list[int]:
    """The rank counts of the gathers and b_eff: the powers of two up to
    `ranks` and `ranks` itself, with counts between added until there are
    three (where the job has three ranks or more)."""
    counts = {ranks} | {1 << k for k in range(1, ranks.bit_length()) if 1 << k <= ranks}
    for n in range(ranks - 1, 1, -1):
        if len(counts) >= 3:
            break
        counts.add(n)
    return sorted(counts)


def drawn_sizes(generator: np.random.Generator, count: int, largest: int) -> list[int]:
    """`count` distinct sizes log-uniform in [1, largest], stratified: one
    drawn in each of `count` equal slices of the log range (drawn anywhere
    where rounding made two equal), so that no stretch of sizes, and no
    protocol switch in it, is left without a point by chance."""
    edges = np.linspace(0.0, np.log(largest), count + 1)
    sizes = {int(round(float(np.exp(generator.uniform(low, high))))) for low, high in zip(edges[:-1], edges[1:])}
    while len(sizes) < count:
        sizes.add(int(round(float(np.exp(generator.uniform(0.0, np.log(largest)))))))
    return sorted(sizes)


def _tasks(ranks: int, gather_sizes: list) -> list[tuple]:
    """Every measurement of a launch: (family, ranks, detail)."""
    counts = rank_counts(ranks)
    tasks = [("pingpong", 2, None), ("overhead", 2, None), ("bandwidth", 2, None)]
    tasks += [("mbw_mr", 2 * pairs, pairs) for pairs in range(1, ranks // 2 + 1)]
    tasks += [("host_copy", 1, None), ("host_pass", 1, None)]
    tasks += [("incast", n, None) for n in counts]
    tasks += [("barrier", n, None) for n in range(2, ranks + 1)]
    tasks += [("gather", n, schedule) for n in counts for schedule in SCHEDULES]
    tasks += [("beff", n, None) for n in counts]
    return tasks


def _row(family: str, ranks: int, size: int, time: float, spread, iterations, load, schedule="", pairs=0) -> dict:
    return {
        "family": family,
        "ranks": ranks,
        "schedule": schedule,
        "pairs": pairs,
        "size": size,
        "time": time,
        "spread": spread,
        "iterations": iterations,
        "load": load,
    }


def _measure(
    task: tuple, comm, generator: np.random.Generator, pingpong_sizes: list, gather_sizes: list, iterations: int
) -> list[dict]:
    """Rows of one task on its sub-communicator `comm` (valid on rank 0 of it)."""
    family, ranks, detail = task
    load = environment.load_average()
    shuffled = lambda sizes: [sizes[i] for i in generator.permutation(len(sizes))]  # noqa: E731
    if family == "pingpong":
        result = osu.latency(comm, sizes=shuffled(pingpong_sizes), iterations=iterations, warmup=iterations // 10)
        return [
            _row(family, 2, r["size"], r["latency_avg"], r["latency_stdev"], r["iterations"], load) for r in result.rows
        ]
    if family == "overhead":
        result = overhead.run(comm, sizes=shuffled(pingpong_sizes), iterations=iterations, warmup=iterations // 10)
        return [
            _row(f"{side}_overhead", 2, r["size"], r[f"{side}_overhead_p50"], None, r["iterations"], load)
            for r in result.rows
            for side in ("send", "recv")
        ]
    if family in ("bandwidth", "mbw_mr"):
        sizes = [s for s in pingpong_sizes if s >= KiB] if family == "bandwidth" else list(CONTENTION_SIZES)
        result = osu.run(
            "bw" if family == "bandwidth" else "mbw_mr",
            comm,
            sizes=shuffled(sizes),
            iterations=max(iterations // 5, 2),
            warmup=1,
        )
        pairs = detail or 1
        # Time per message per pair: OMB's bandwidth is all pairs' bytes over the time.
        return [
            _row(family, ranks, r["size"], pairs * r["size"] / r["bandwidth"], None, r["iterations"], load, pairs=pairs)
            for r in result.rows
        ]
    if family in ("host_copy", "host_pass"):
        passed = family == "host_pass"  # passing measures the cached blocks only: the ring forwards from caches
        blocks = host_copy.CACHED_BLOCKS if passed else (host_copy.BLOCK, *host_copy.CACHED_BLOCKS)
        return [
            _row(family, 1, block, time, None, None, load, pairs=threads)
            for block in blocks
            for threads, time in host_copy.measure(block, passed=passed)
        ]
    if family in ("incast", "barrier"):
        run = collectives.gather if family == "incast" else collectives.barrier
        sizes = shuffled(list(CONTENTION_SIZES)) if family == "incast" else None
        result = run(comm, sizes=sizes, iterations=iterations, warmup=iterations // 10)
        return [
            _row(
                family,
                ranks,
                r["size"] if family == "incast" else 0,
                r["latency_avg"],
                r["latency_stdev"],
                r["iterations"],
                load,
            )
            for r in result.rows
        ]
    if family == "gather":
        result = gather.run(comm, schedule=detail, mem="H", sizes=shuffled(gather_sizes))
        spreads = {key: np.std(values) for key, values in result.samples.items() if key.endswith("/time")}
        return [
            _row(
                family,
                ranks,
                r["size"],
                r["time"],
                spreads.get(f"{ranks}/{r['size']}/time"),
                r["iterations"],
                load,
                schedule=detail,
            )
            for r in result.rows
        ]
    result = beff.run(
        comm,
        max_size=BEFF_LARGEST,
        repetitions=BEFF_REPETITIONS,
        loop_rule="adaptive",
        target_time=BEFF_TARGET_TIME,
        seed=int(generator.integers(1 << 31)),
    )
    # Time per message and neighbour: each rank exchanges with both neighbours.
    return [
        _row(family, ranks, r["size"], r["size"] / r["pair_bandwidth"], None, r["loop_length"], load)
        for r in result.rows
    ]


def run(
    comm=None,
    *,
    directory,
    gather_sizes=GATHER_SIZES,
    iterations: int = ITERATIONS,
    pingpong_sizes: int = PINGPONG_SIZES,
    seed: int | None = None,
) -> Result:
    """One launch of the campaign over comm (2 ranks or more; COMM_WORLD by
    default), written into `directory` as launch-<UTC time>.json and listed in its index.json
    (rank 0 writes both); returns the launch's Result (on every rank).
    gather_sizes: bytes per node of the gathers (a list, one size or
    "MIN:MAX" doubling); iterations: timed iterations per size of every
    family but the gathers (which keep their own counts) and b_eff (HPCC
    FPGA's loop lengths); pingpong_sizes: how many sizes to draw; seed:
    of the launch's draws (drawn where None, recorded either way)."""
    comm = mpi.resolve(comm)
    ranks = comm.Get_size()
    if ranks < 2:
        raise usage_error(
            f"calibrate run needs at least 2 ranks, and this run has {ranks}; start it with "
            f"mpirun -np 2 or more (8 gives the fit three rank counts)"
        )
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 2:
        raise usage_error(f"calibrate run: iterations {iterations!r}; give a whole number, 2 or more")
    if isinstance(pingpong_sizes, bool) or not isinstance(pingpong_sizes, int) or pingpong_sizes < 4:
        raise usage_error(f"calibrate run: {pingpong_sizes!r} ping-pong sizes; give 4 or more")
    sizes = byte_sizes(gather_sizes, "calibrate run: gather size per node", smallest=1)
    directory = os.fspath(directory)
    problem = None
    if comm.Get_rank() == 0:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as error:
            problem = f"calibrate run: cannot make the folder {directory!r} ({error.strerror}); give a writable one"
        if problem is None and not os.access(directory, os.W_OK):
            problem = f"calibrate run: the folder {directory!r} is not writable; give a writable one"
    problem = comm.bcast(problem, root=0)
    if problem:
        raise usage_error(problem)

    seed = comm.bcast(secrets.randbits(63) if seed is None and comm.Get_rank() == 0 else seed, root=0)
    generator = np.random.default_rng(seed)
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = environment.warn_if_loaded(comm)
    environment.warn_if_unbound(comm)
    ping_sizes = drawn_sizes(generator, pingpong_sizes, PINGPONG_LARGEST)
    tasks = _tasks(ranks, list(sizes))
    order = [tasks[i] for i in generator.permutation(len(tasks))]
    rows, seconds = [], []
    for task in order:
        began = time.perf_counter()
        inside = comm.Get_rank() < task[1]
        sub = comm.Split(0 if inside else mpi.MPI().UNDEFINED, comm.Get_rank())
        if inside:
            measured = _measure(task, sub, generator, ping_sizes, list(sizes), iterations)
            if sub.Get_rank() == 0:
                rows += measured
            sub.Free()
        else:
            # Keep every rank's generator in step with the measuring ranks' draws.
            _skip_draws(task, generator, ping_sizes, list(sizes))
        _wait_for_all(comm)
        seconds.append(round(time.perf_counter() - began, 3))
    hosts = _core.host_names(comm)
    env = environment.collect(comm, None, hosts)
    env["machine"] = environment.machine(load_before)
    params = {
        "ranks": ranks,
        "seed": seed,
        "order": [list(map(_plain, task)) for task in order],
        "task_seconds": seconds,
        "pingpong_sizes": ping_sizes,
        "gather_sizes": list(sizes),
        "iterations": iterations,
        "beff_largest": BEFF_LARGEST,
        "beff_repetitions": BEFF_REPETITIONS,
        "beff_loop_rule": "adaptive",
        "beff_target_time": BEFF_TARGET_TIME,
        "cores": os.cpu_count(),
        "ranks_per_host": max(hosts.count(h) for h in hosts),
        "started": started.isoformat(timespec="seconds"),
    }
    result = Result(BENCHMARK, params, env, rows, UNITS)
    if comm.Get_rank() == 0:
        name = f"launch-{started.strftime('%Y%m%dT%H%M%S')}-{seed % 10000:04d}.json"
        result.write_json(os.path.join(directory, name))
        _add_to_index(directory, name, result)
    comm.Barrier()
    return result


def _wait_for_all(comm) -> None:
    """A barrier that sleeps while it waits: the ranks a task leaves out would
    otherwise poll a core each, beside the ranks (or host_copy's threads)
    measuring."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(0.001)


def _plain(value):
    return value if value is None or isinstance(value, (int, str)) else str(value)


def _skip_draws(task: tuple, generator: np.random.Generator, ping_sizes: list, gather_sizes: list) -> None:
    """The draws _measure makes for `task`, made and dropped."""
    family = task[0]
    counts = {
        "pingpong": len(ping_sizes),
        "overhead": len(ping_sizes),
        "bandwidth": sum(s >= KiB for s in ping_sizes),
        "mbw_mr": len(CONTENTION_SIZES),
        "incast": len(CONTENTION_SIZES),
        "gather": len(gather_sizes),
    }
    if family in counts:
        generator.permutation(counts[family])
    elif family == "beff":
        generator.integers(1 << 31)


def _add_to_index(directory: str, name: str, result: Result) -> None:
    """The folder's index.json, with this launch added."""
    path = os.path.join(directory, INDEX)
    index = {"schema": INDEX_SCHEMA, "launches": []}
    if os.path.exists(path):
        index = files.read_json(path, what="a calibration campaign's index")
    machine = result.env.get("machine", {})
    index["launches"].append(
        {
            "file": name,
            "started": result.params["started"],
            "ranks": result.params["ranks"],
            "cores": result.params["cores"],
            "load_before": machine.get("load_before"),
            "load_after": machine.get("load_after"),
            "rows": len(result.rows),
        }
    )
    atomic_write(path, lambda f: json.dump(index, f, indent=1), newline="\n")
