"""OSU-style point-to-point benchmarks with buffers in any memory kind.

Each is a function taking a communicator (COMM_WORLD by default) and keyword
parameters and returning a Result; the loops run in C++ (no Python in a timed
region). The methods are OMB's and are stated in docs/METHODS.md.

    mpirun -np 2 python -c "from fpgacomm import osu as o; print(o.latency(mem=('D', 'D')))"
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _core
from ..params import (
    BANDWIDTH_COUNTS,
    HOST_KINDS,
    LARGE_MESSAGE,
    LATENCY_COUNTS,
    counts_params,
    iteration_counts,
    resolve_sizes,
    usage_error,
)
from ..results import stats
from ..results.result import Result
from ..runtime import calibration, environment, mpi
from ..runtime.devices import DeviceOptions, check_api, needs_device, open_device_if
from . import schema
from .signatures import options_of
from .sweep import OnRow, Sweep

# OMB's defaults: timed iterations and warm-up, below and above LARGE_MESSAGE.
ITERATIONS = {
    "latency": LATENCY_COUNTS,
    "multi_lat": LATENCY_COUNTS,
    "bw": BANDWIDTH_COUNTS,
    "bibw": BANDWIDTH_COUNTS,
    "mbw_mr": BANDWIDTH_COUNTS,
}
# The core's defaults of the options it holds.
_CORE = _core.Pt2ptOptions()
DEFAULT_WINDOW = _CORE.window  # OMB's -W
# OMB's default -u, the command line's: untimed repetitions before each
# validated timed operation. The functions default to none.
VALIDATION_WARMUP = _core.VALIDATION_WARMUP
# mbw_mr -V: the windows each size runs at (OMB's WINDOW_SIZES).
VARIED_WINDOWS = tuple(_core.varied_windows())
LATENCY_TESTS = ("latency", "multi_lat")
# Columns of a timeline (docs/METHODS.md, "Timeline of staged transfers"):
# host times in seconds since the rank's window started, device durations
# from the copy's OpenCL profiling event.
TIMELINE_UNITS = {
    "rank": "",
    "size": "B",
    "direction": "",
    "chunk": "",
    "offset": "B",
    "bytes": "B",
    "copy_enqueued": "s",
    "copy_done": "s",
    "mpi_posted": "s",
    "mpi_done": "s",
    "queued_to_submit": "s",
    "submit_to_start": "s",
    "start_to_end": "s",
}


def omb_differences(
    routes, validate: bool, validation_warmup: int | None = None, pairs: int | None = None, ranks: int | None = None
) -> list[str]:
    """Where a run's method departs on purpose from OSU Micro-Benchmarks
    7.4's, in words, for the Result (docs/METHODS.md has the detail).
    routes: how the run's buffers moved (direct, staged, mapped).
    validation_warmup: -u of a validated test that takes it, None for one
    that does not (the one-sided tests). pairs: mbw_mr's -p when given,
    with the run's ranks."""
    notes = []
    if "staged" in routes:
        notes.append(
            "device buffers move through pinned host memory (fpgacomm's staging); OSU Micro-Benchmarks "
            "hands device buffers to a device-aware MPI"
        )
    if "mapped" in routes:
        notes.append("device buffers are mapped into host memory for MPI (the device shares host memory)")
    if validate and validation_warmup is None:
        notes.append(
            "validation (-c) is fpgacomm's own here: OSU Micro-Benchmarks' put and get tests do not "
            "validate; fpgacomm fills and checks buffers outside the timed region"
        )
    elif validate:
        note = (
            "validation fills and checks buffers outside the timed region with fpgacomm's own pattern, which a "
            "misplaced chunk cannot pass"
        )
        if validation_warmup != VALIDATION_WARMUP:
            note += (
                f"; each timed operation follows {validation_warmup} untimed ones (-u {validation_warmup}), "
                f"where OSU Micro-Benchmarks' -c repeats it {VALIDATION_WARMUP} times untimed first"
            )
        notes.append(note)
    if pairs is not None:
        notes.append(
            f"-p {pairs} runs {pairs} pair{'' if pairs == 1 else 's'} (rank i with rank i+{pairs}; ranks from {2 * pairs} on only join "
            f"the barriers), as OSU Micro-Benchmarks documents -p; OSU Micro-Benchmarks 7.4 parses -p and "
            f"then runs N/2 pairs ({(ranks or 0) // 2} here) whatever it says"
        )
    return notes


def _kinds(mem) -> tuple[str, str]:
    """(send kind, receive kind); the core checks each."""
    if len(mem) != 2:
        raise usage_error(f"mem takes two memory kinds (send, receive), got {mem!r}")
    return mem[0], mem[1]


def _multiple_buffers(buffers: str) -> bool:
    if buffers not in ("single", "multiple"):
        raise usage_error(f"unknown buffer reuse '{buffers}'; choose single or multiple (-b)")
    return buffers == "multiple"


def sample_key(size: int, window: int | None = None) -> str:
    """Key of a row's per-iteration values in Result.samples: the size, and
    with mbw_mr -V (several windows per size) the window ("64 w8")."""
    return f"{size} w{window}" if window else str(size)


def _rows(test: str, sizes: list, validate: bool, vary_window: bool = False) -> tuple[list, dict, dict]:
    """Rows, units and samples of the core's rows of the sizes measured."""
    key = "latency" if test in LATENCY_TESTS else "bandwidth"
    unit = "s" if key == "latency" else "B/s"
    rows, samples = [], {}
    for timing in sizes:
        summary = stats.summarize(timing["samples"])
        row = {"size": timing["size"]}
        if vary_window:
            row["window"] = timing["window"]
        # The headline is OMB's number: total time over iterations (latency,
        # half a round trip) or bytes over total time (bandwidth).
        row["latency_avg" if key == "latency" else "bandwidth"] = timing["value"]
        for stat in ("min", "max", "stdev", "p50", "p90", "p99"):
            row[f"{key}_{stat}"] = summary[stat]
        if test == "mbw_mr":
            row["message_rate"] = timing["value"] / timing["size"]
        row["iterations"] = timing["iterations"]
        row["validation"] = ("fail" if timing["errors"] else "pass") if validate else None
        row["validation_errors"] = timing["errors"] if validate else None
        rows.append(row)
        samples[sample_key(timing["size"], timing["window"] if vary_window else None)] = timing["samples"]
    units = {column: unit for column in rows[0]} if rows else {}
    units.update(size="B", iterations="", validation="", validation_errors="B")
    if vary_window:
        units["window"] = ""
    if test == "mbw_mr":
        units["message_rate"] = "1/s"
    return rows, units, samples


@dataclass(frozen=True, kw_only=True)
class OsuOptions:
    """The options of one OSU point-to-point test, each declared once:
    its default (the core's Pt2ptOptions' where it has the field), its help
    and, for `fpgacomm osu`, its flag (benchmarks.schema). run() takes one,
    or its fields as keywords; the core's validate() checks them before any
    device opens. pairs, vary_window and print_rate are mbw_mr's."""

    sizes: list[int] | str | None = schema.sizes_option()
    mem: tuple = schema.option(
        ("H", "H"),
        "(kind of rank 0's buffers, kind of rank 1's), each H, H!, D, B or P; in multi_lat and mbw_mr "
        "the first and second half of the ranks",
    )
    iterations: int | None = schema.iterations_option()
    warmup: int | None = schema.warmup_option()
    window: int = schema.window_option(_CORE.window)
    validate: bool = schema.validate_option()
    buffers: str = schema.option(
        "single", "single (one buffer per side) or multiple (fresh buffers per size, one per window slot)"
    )
    touch: bool = schema.option(
        False, "launch the placeholder kernel on device buffers before each measured operation (untimed)"
    )
    path: str = schema.option(
        "auto",
        "how device buffers reach MPI: staged, mapped, or auto (mapped where the device shares host memory); "
        "with timeline, auto stages",
    )
    chunk_bytes: int | None = schema.option(
        None,
        "the staged pipeline's chunk; None: runtime.calibration's (measured and cached on accelerators, "
        "defaults on CPU devices), as are the smallest fast copies",
    )
    slots: int | None = schema.option(None, "staging buffers per direction; None: runtime.calibration's")
    timeline: bool = schema.option(
        False,
        "record every staged chunk of the last timed iteration of each size (a window or a round trip): "
        "the Result's attribute timeline is then, on rank 0, a Result of every rank's chunks (None elsewhere)",
    )
    datatype: str = schema.datatype_option(_CORE.datatype.lower())
    validation_warmup: int = schema.validation_warmup_option(_CORE.validation_warmup)
    pairs: int | None = schema.option(
        None,
        "pairs taking part, rank i with rank i+PAIRS; higher ranks wait (default N/2)",
        "-p",
        "--num-pairs",
        tests=("mbw_mr",),
        type=int,
        metavar="PAIRS",
    )
    vary_window: bool = schema.option(
        False,
        f"run every size at each window of {', '.join(map(str, VARIED_WINDOWS))} (not with -W)",
        "-V",
        "--vary-window",
        tests=("mbw_mr",),
        action="store_true",
    )
    print_rate: bool = schema.option(
        True,
        "1: print the message rate beside the bandwidth (default); 0: the bandwidth only",
        "-R",
        "--print-rate",
        tests=("mbw_mr",),
        cli_default=1,
        type=int,
        choices=(0, 1),
        metavar="0|1",
    )
    device: DeviceOptions | None = schema.device_option()
    rounds: int = schema.rounds_option()
    round_seed: int | None = schema.round_seed_option()


@schema.takes_options(OsuOptions, "on_row")
def run(test: str, comm=None, options: OsuOptions | None = None, *, on_row: OnRow | None = None, **keywords) -> Result:
    """One OSU point-to-point test; collective over comm.

    options: an OsuOptions, and/or its fields as keywords (which replace
    its). on_row: called on rank 0 after each size with the Result so far
    (its rows the sizes finished), to show rows as they are measured. An
    interrupt (runtime.interrupts) raises Interrupted carrying `result`:
    the sizes finished, marked incomplete.
    """
    options = schema.build(OsuOptions, options, keywords)
    comm = mpi.resolve(comm)
    device_options = options.device or DeviceOptions()
    core = _core_options(test, options, device_options)
    send_kind, recv_kind, transfer, counts = core.send_kind, core.recv_kind, core.transfer, core.counts
    size_list = list(core.sizes)
    path = transfer.path

    hosts = _core.host_names(comm)
    dev = open_device_if(needs_device(options.mem), comm, device_options, hosts)
    env = environment.collect(comm, dev, hosts)
    # This rank's buffers: the first half of the ranks sends from mem[0], the second receives into mem[1].
    my_kind = send_kind if comm.Get_rank() < comm.Get_size() // 2 else recv_kind
    stages = (
        dev is not None
        and my_kind not in HOST_KINDS
        and path != "mapped"
        and not (path == "auto" and dev.info.host_unified_memory)
    )
    sizing = calibration.resolve(comm, dev, hosts, options.chunk_bytes, options.slots, stages)
    transfer.chunk_bytes, transfer.slots = sizing.chunk_bytes, sizing.slots
    transfer.fast_to_device, transfer.fast_to_host = sizing.fast_to_device, sizing.fast_to_host
    core.transfer = transfer
    staging = comm.allgather({key: value for key, value in sizing.params().items() if key != "why"})
    validate, vary_window, pairs = options.validate, options.vary_window, options.pairs

    def result_of(sizes: list, finished: dict) -> Result:
        """The Result of the sizes measured; finished: the core's whole run, or {} while it goes on."""
        rows, units, samples = _rows(test, sizes, validate, vary_window)
        routes = (finished.get("send_route"), finished.get("recv_route"))
        params = {
            "test": test,
            "send_kind": send_kind,
            "recv_kind": recv_kind,
            "sizes": size_list,
            "datatype": core.datatype,
            **counts_params(counts),
            "large_message": LARGE_MESSAGE,
            "window": options.window,
            "validate": validate,
            "buffers": options.buffers,
            "touch": options.touch,
            "path": path,
            "chunk_bytes": finished.get("chunk_bytes"),
            "slots": sizing.slots,
            "staging": staging,
            "send_route": routes[0],
            "recv_route": routes[1],
            "pairs": finished.get("pairs", pairs or comm.Get_size() // 2),
            "validation_warmup": options.validation_warmup if validate else None,
            "omb_differences": omb_differences(routes, validate, options.validation_warmup, pairs, comm.Get_size()),
            **device_options.params(),
        }
        if test in LATENCY_TESTS:
            del params["window"]
        if test == "mbw_mr":
            params.update(vary_window=vary_window, print_rate=options.print_rate)
            if vary_window:
                params["window"] = list(VARIED_WINDOWS)
        return Result(f"osu_{test}", params, env, rows, units, samples)

    windows = len(VARIED_WINDOWS) if vary_window else 1
    measured = measured_sizes(size_list, core.datatype) * windows
    sweep = Sweep(comm, result_of, size_list, measured, on_row, options.rounds, options.round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            core.sizes = order
            raw = _core.run_pt2pt(comm, dev, core, sweep.on_size)
            sweep.round_done(raw)
    result = sweep.result()
    if options.timeline:
        # With rounds, the last round's chunks (a timeline shows one iteration per size).
        result.timeline = _gather_timeline(comm, f"osu_{test}_timeline", raw, result.params, env)
    return result


def _core_options(test: str, options: OsuOptions, device: DeviceOptions) -> _core.Pt2ptOptions:
    """The core's options of the run, validated (the agreed UsageError on
    every rank alike), with what only Python knows checked beside them."""
    send_kind, recv_kind = _kinds(tuple(options.mem))
    path = options.path
    if options.timeline and path == "auto":
        path = "staged"  # the timeline asked for is of staged chunks: auto leaves the choice to us
    # An unknown test takes latency's defaults here, and validate() refuses it.
    counts = iteration_counts(ITERATIONS.get(test, ITERATIONS["latency"]), options.iterations, options.warmup)
    # The fields the core holds by the same name (window, datatype, -u, -p, ...) pass as they are.
    core = schema.core_options(
        options,
        _core.Pt2ptOptions,
        test=test,
        send_kind=send_kind,
        recv_kind=recv_kind,
        multiple_buffers=_multiple_buffers(options.buffers),
        transfer=_core.TransferOptions(path=path, chunk_bytes=options.chunk_bytes or 0, slots=options.slots or 1),
        sizes=resolve_sizes(options.sizes),
        counts=counts,
        validation=options.validate,
        bank=device.bank,
    )
    core.validate()
    check_api(device, (send_kind, recv_kind))
    if device.api == "sycl" and options.touch:
        raise usage_error(
            "--touch launches OMB-FPGA's placeholder kernel, and fpgacomm's SYCL path has no kernels "
            "(DPC++ stages every transfer without one, OMB-FPGA section 3.2.3); drop --touch"
        )
    if device.api == "sycl" and path == "mapped":
        raise usage_error(
            "SYCL device memory (malloc_device) cannot be mapped into host memory; with -d sycl "
            "device buffers are staged (--path staged or auto)"
        )
    return core


def measured_sizes(sizes: list, datatype: str) -> int:
    """How many of `sizes` get a row: those holding a whole element (OMB's -T)."""
    return sum(size >= _core.datatype_bytes(datatype) for size in sizes)


def _gather_timeline(comm, benchmark: str, raw: dict, params: dict, env: dict) -> Result | None:
    """Every rank's timeline rows, gathered to rank 0 as one Result (None elsewhere), in size order."""
    mine = [
        {"rank": comm.Get_rank(), "size": timing["size"], **chunk}
        for timing in sorted(raw["sizes"], key=lambda timing: timing["size"])
        for chunk in timing["timeline"]
    ]
    gathered = comm.gather(mine, root=0)
    if comm.Get_rank() != 0:
        return None
    return Result(benchmark, params, env, [row for rows in gathered for row in rows], TIMELINE_UNITS)


@options_of(run)
def latency(comm=None, options: OsuOptions | None = None, **keywords) -> Result:
    """Ping-pong between two ranks: half the round-trip time per size."""
    return run("latency", comm, options, **keywords)


@options_of(run)
def bw(comm=None, options: OsuOptions | None = None, **keywords) -> Result:
    """Rank 0 streams windows of non-blocking sends to rank 1, closed by an acknowledgement."""
    return run("bw", comm, options, **keywords)


@options_of(run)
def bibw(comm=None, options: OsuOptions | None = None, **keywords) -> Result:
    """Both ranks stream windows to each other at once; bytes of both directions count."""
    return run("bibw", comm, options, **keywords)


@options_of(run)
def multi_lat(comm=None, options: OsuOptions | None = None, **keywords) -> Result:
    """Ping-pong in N/2 pairs (rank i with i+N/2) at once; latency averaged over pairs."""
    return run("multi_lat", comm, options, **keywords)


@options_of(run)
def mbw_mr(comm=None, options: OsuOptions | None = None, **keywords) -> Result:
    """Windows streamed in N/2 pairs at once: aggregate bandwidth and message rate."""
    return run("mbw_mr", comm, options, **keywords)


def failed_sizes(result: Result) -> list[int]:
    """Message sizes whose validation failed."""
    return [row["size"] for row in result.rows if row.get("validation") == "fail"]
