"""OSU-style one-sided tests (MPI windows) with the local buffer in any memory kind.

    mpirun -np 2 python -c "from fpgacomm import onesided as o; print(o.put_bw(mem='D', sync='fence'))"

OMB's method (docs/METHODS.md, "OSU one-sided tests"): rank 0 is the origin
and times; latency includes the synchronisation; bandwidth tests issue W
operations per synchronisation, operation j at offset j * size of a window
of size * W bytes. The window memory is host memory, made anew per size; a
local buffer of a device kind is staged through host memory (staging_share).
Bandwidth Results carry the curve's peak, half-bandwidth size and 95%
saturation size (params["curve"]); GET tests also run PUT with the same
parameters and report GET's overhead against it per size.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _core
from ..params import (
    BANDWIDTH_COUNTS,
    LARGE_MESSAGE,
    LATENCY_COUNTS,
    counts_params,
    iteration_counts,
    resolve_sizes,
    usage_error,
)
from ..results import stats
from ..results.result import Result
from ..runtime import environment, mpi
from ..runtime.devices import DeviceOptions, needs_device, open_device_if
from . import schema
from .osu import omb_differences
from .signatures import options_of
from .sweep import OnRow, Sweep

# OMB's defaults per test: timed iterations and warm-up below and above LARGE_MESSAGE.
ITERATIONS = {
    "put_latency": LATENCY_COUNTS,
    "get_latency": LATENCY_COUNTS,
    "put_bw": BANDWIDTH_COUNTS,
    "get_bw": BANDWIDTH_COUNTS,
    "put_bibw": BANDWIDTH_COUNTS,
}
TESTS = tuple(_core.onesided_tests())
# The core's defaults of the options it holds.
_CORE = _core.OneSidedOptions()
DEFAULT_WINDOW = _CORE.window  # OMB's -W
# OMB's -w: MPI_Win_allocate (default), MPI_Win_create, MPI_Win_create_dynamic.
WINDOW_CREATION = tuple(_core.window_creations())
# OMB's -s: passive target (flush, lock, flush_local, lock_all) and active
# target (pscw, fence); put_bibw, where both ranks put at once, takes active
# target only. The first of each test's choices is OMB's default.
SYNC = tuple(_core.onesided_syncs())
SYNC_CHOICES = {test: tuple(_core.onesided_test_syncs(test)) for test in TESTS}


def curve(rows: list) -> dict | None:
    """Peak bandwidth and where the curve gets there: the smallest size
    reaching half the peak and the smallest reaching 95% of it (None when
    no bandwidth row was measured)."""
    if not rows:
        return None
    peak = max(rows, key=lambda row: row["bandwidth"])

    def first_reaching(fraction):
        return min(row["size"] for row in rows if row["bandwidth"] >= fraction * peak["bandwidth"])

    return {
        "peak_bandwidth": peak["bandwidth"],
        "peak_size": peak["size"],
        "half_bandwidth_size": first_reaching(0.5),
        "saturation_95_size": first_reaching(0.95),
    }


def overhead(get_value: float, put_value: float, latency: bool) -> float:
    """How much worse GET is than PUT, as a fraction: extra time for latency
    (get/put - 1), missing bandwidth for bandwidth (1 - get/put)."""
    return get_value / put_value - 1.0 if latency else 1.0 - get_value / put_value


def _rows(test: str, raw: list, validate: bool) -> tuple[list, dict, dict]:
    """Rows, units and samples of the core's rows of the sizes measured."""
    latency = test.endswith("latency")
    key = "latency" if latency else "bandwidth"
    rows, samples = [], {}
    for timing in raw:
        summary = stats.summarize(timing["samples"])
        row = {"size": timing["size"], ("latency_avg" if latency else "bandwidth"): timing["value"]}
        for stat in ("min", "max", "stdev", "p50", "p90", "p99"):
            row[f"{key}_{stat}"] = summary[stat]
        row["iterations"] = timing["iterations"]
        row["staging_share"] = timing["staging_share"]
        row["validation"] = ("fail" if timing["errors"] else "pass") if validate else None
        row["validation_errors"] = timing["errors"] if validate else None
        rows.append(row)
        samples[str(timing["size"])] = timing["samples"]
    units = {column: "s" if latency else "B/s" for column in rows[0]} if rows else {}
    units.update(size="B", iterations="", staging_share="", validation="", validation_errors="B")
    return rows, units, samples


@dataclass(frozen=True, kw_only=True)
class OneSidedOptions:
    """The options of one OSU one-sided test, each declared once (as
    osu.OsuOptions: benchmarks.schema). run() takes one, or its fields as
    keywords; the core's validate() checks them before any device opens."""

    sizes: list[int] | str | None = schema.sizes_option()
    mem: str = schema.option(_CORE.kind, "the kind of the local (origin) buffer of both ranks: H, H!, D, B or P")
    iterations: int | None = schema.iterations_option()
    warmup: int | None = schema.warmup_option()
    window: int = schema.window_option(_CORE.window)
    window_creation: str = schema.option(
        _CORE.window_creation,
        "window creation, MPI_Win_allocate, MPI_Win_create or MPI_Win_create_dynamic (default {default})",
        "-w",
        "--win-options",
        choices=WINDOW_CREATION,
        type=str.lower,
    )
    sync: str | None = schema.option(
        None,
        "synchronisation: {takes} (default {default})",
        "-s",
        "--sync-option",
        doc="synchronisation, one of SYNC; None: the test's first of SYNC_CHOICES, flush, and pscw for put_bibw "
        "(which takes pscw or fence only)",
        choices=SYNC,
        type=str.lower,
    )
    validate: bool = schema.validate_option()
    compare_put: bool = schema.option(
        True,
        "for get_latency and get_bw, also run the PUT test with the same parameters and add its put_latency or "
        "put_bandwidth and overhead_vs_put columns (each round runs GET and then PUT in its order)",
    )
    device: DeviceOptions | None = schema.device_option()
    rounds: int = schema.rounds_option()
    round_seed: int | None = schema.round_seed_option()


@schema.takes_options(OneSidedOptions, "on_row")
def run(
    test: str, comm=None, options: OneSidedOptions | None = None, *, on_row: OnRow | None = None, **keywords
) -> Result:
    """One OSU one-sided test on exactly 2 ranks; collective over comm.

    options: a OneSidedOptions, and/or its fields as keywords (which
    replace its). on_row: called on rank 0 after each size of the test's
    own sweep with the Result so far; an interrupt raises Interrupted
    carrying `result`, the sizes finished, marked incomplete (without the
    PUT comparison).
    """
    options = schema.build(OneSidedOptions, options, keywords)
    mem, window_creation, window, validate = options.mem, options.window_creation, options.window, options.validate
    device, rounds = options.device, options.rounds
    comm = mpi.resolve(comm)
    device_options = device or DeviceOptions()
    # An unknown test takes put_latency's defaults here, and validate() refuses it.
    counts = iteration_counts(ITERATIONS.get(test, ITERATIONS["put_latency"]), options.iterations, options.warmup)
    # The fields the core holds by the same name (window, window_creation, sync) pass as they are.
    core = schema.core_options(
        options,
        _core.OneSidedOptions,
        test=test,
        kind=mem,
        sizes=resolve_sizes(options.sizes),
        counts=counts,
        validation=validate,
        bank=device_options.bank,
    )
    core.validate()
    size_list = list(core.sizes)
    if device_options.api == "sycl":
        raise usage_error(
            "the one-sided tests have no SYCL interface: OMB-FPGA's SYCL interface covers the "
            "point-to-point, multi-pair and collective tests; use -d opencl"
        )

    hosts = _core.host_names(comm)
    dev = open_device_if(needs_device([mem]), comm, device_options, hosts)

    env = environment.collect(comm, dev, hosts)
    latency = test.endswith("latency")

    def result_of(sizes: list, finished: dict) -> Result:
        """The test's Result of the sizes measured, without the PUT comparison;
        finished: the core's whole run, or {} while it goes on."""
        rows, units, samples = _rows(test, sizes, validate)
        params = {
            "test": test,
            "send_kind": mem,
            "recv_kind": mem,
            "sizes": size_list,
            "datatype": "MPI_CHAR",
            "window_creation": window_creation,
            "sync": core.sync,
            **counts_params(counts),
            "large_message": LARGE_MESSAGE,
            "window": window,
            "validate": validate,
            "route": finished.get("route"),
            "omb_differences": omb_differences([finished.get("route")], validate),
            "curve": None if latency else curve(rows),
        }
        if latency:
            del params["window"]
        params.update(environment.topology(env), **device_options.params())
        return Result(f"osu_{test}", params, env, rows, units, samples)

    sweep = Sweep(comm, result_of, size_list, len(size_list), on_row, rounds, options.round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            core.sizes, core.test = order, test
            raw = _core.run_onesided(comm, dev, core, sweep.on_size)
            result = result_of(raw["sizes"], raw)
            if test.startswith("get_") and options.compare_put:
                core.test = test.replace("get_", "put_")
                _compare_put(result, _core.run_onesided(comm, dev, core)["sizes"], validate)
            sweep.round_done(raw, result)
    result = sweep.result()
    if rounds > 1 and not latency:  # the curves of the medians
        result.params["curve"] = curve(result.rows)
        if "put_bandwidth" in result.columns:
            result.params["put_curve"] = curve(
                [{"size": row["size"], "bandwidth": row["put_bandwidth"]} for row in result.rows]
            )
    return result


def _compare_put(result: Result, put_sizes: list, validate: bool) -> None:
    """Adds to a GET test's Result the PUT test's value per size (the core's
    rows of a PUT sweep with the same parameters) and GET's overhead against it."""
    test = result.params["test"]
    latency = test.endswith("latency")
    put_rows, _, _ = _rows(test.replace("get_", "put_"), put_sizes, validate)
    value = "latency_avg" if latency else "bandwidth"
    by_size = {row["size"]: row[value] for row in put_rows}
    for row in result.rows:
        put_value = by_size[row["size"]]  # a size GET reached, PUT reached too unless it failed validation
        row[f"put_{value}"] = put_value
        row["overhead_vs_put"] = overhead(row[value], put_value, latency) if put_value else None
    result.units[f"put_{value}"] = result.units[value]
    result.units["overhead_vs_put"] = ""
    result.params["put_curve"] = None if latency else curve(put_rows)


@options_of(run)
def put_latency(comm=None, options: OneSidedOptions | None = None, **keywords) -> Result:
    """MPI_Put of one message from rank 0 to rank 1's window, synchronisation included."""
    return run("put_latency", comm, options, **keywords)


@options_of(run)
def get_latency(comm=None, options: OneSidedOptions | None = None, **keywords) -> Result:
    """MPI_Get of one message from rank 1's window, synchronisation included."""
    return run("get_latency", comm, options, **keywords)


@options_of(run)
def put_bw(comm=None, options: OneSidedOptions | None = None, **keywords) -> Result:
    """Windows of MPI_Put from rank 0 to rank 1, one synchronisation per window."""
    return run("put_bw", comm, options, **keywords)


@options_of(run)
def get_bw(comm=None, options: OneSidedOptions | None = None, **keywords) -> Result:
    """Windows of MPI_Get by rank 0 from rank 1, one synchronisation per window."""
    return run("get_bw", comm, options, **keywords)


@options_of(run)
def put_bibw(comm=None, options: OneSidedOptions | None = None, **keywords) -> Result:
    """Both ranks put windows to each other between fences; bytes of both directions count."""
    return run("put_bibw", comm, options, **keywords)
