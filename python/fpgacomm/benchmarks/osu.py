"""OSU-style point-to-point benchmarks with buffers in any memory kind.

Each is a function taking a communicator (COMM_WORLD by default) and keyword
parameters and returning a Result; the loops run in C++ (no Python in a timed
region). The methods are OMB's and are stated in docs/METHODS.md.

    mpirun -np 2 python -c "from fpgacomm import osu as o; print(o.latency(mem=('D', 'D')))"
"""

from __future__ import annotations

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
DEFAULT_WINDOW = _core.Pt2ptOptions().window  # OMB's -W
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


def run(
    test: str,
    comm=None,
    *,
    sizes=None,
    mem=("H", "H"),
    iterations: int | None = None,
    warmup: int | None = None,
    window: int = DEFAULT_WINDOW,
    validate: bool = False,
    buffers: str = "single",
    touch: bool = False,
    path: str = "auto",
    chunk_bytes: int | None = None,
    slots: int | None = None,
    timeline: bool = False,
    datatype: str = "mpi_char",
    validation_warmup: int = 0,
    pairs: int | None = None,
    vary_window: bool = False,
    print_rate: bool = True,
    device: DeviceOptions | None = None,
    on_row: OnRow | None = None,
    rounds: int = 1,
    round_seed: int | None = None,
) -> Result:
    """One OSU point-to-point test; collective over comm.

    mem: (kind of rank 0's buffers, kind of rank 1's) -- H, H!, D, B or P; in
    multi-pair tests the first and second half of the ranks. iterations and
    warmup, when given, hold for every size (OMB's -i and -x); otherwise OMB's
    defaults switch above 8192 bytes. buffers "multiple" allocates fresh
    buffers per size, one per window slot. touch launches the placeholder
    kernel on device buffers before each measured operation (untimed). path
    chooses staged or mapped transfers for device memory. chunk_bytes and
    slots (None: auto) size the staged pipeline; auto, and the smallest
    fast copy in each direction, come from runtime.calibration (measured
    and cached on accelerators, defaults on CPU devices). timeline (with a
    staging side; path "auto" then stages, where it would map on devices
    that share host memory) records every staged chunk of the last timed iteration of
    each size, a window or a round trip: the Result's attribute `timeline` is
    then, on rank 0, a Result of every rank's chunks (None on other ranks).
    datatype: OMB's -T (mpi_char, mpi_int, mpi_float): a message moves its
    whole elements, and sizes smaller than one element get no row.
    validation_warmup: OMB's -u, with validate the untimed repetitions of
    each iteration's operation before the timed one (at most 10; default
    none, the command line's OMB's VALIDATION_WARMUP).
    For mbw_mr only: pairs, OMB's -p, the pairs taking part (rank i with
    i+pairs; higher ranks only join the barriers; default N/2); vary_window,
    OMB's -V, runs every size at each window of VARIED_WINDOWS (rows then
    carry their window, samples are keyed by sample_key); print_rate, OMB's
    -R, whether the text shows the message rate (the rows always hold it).
    on_row: called on rank 0 after each size with the Result so far (its
    rows the sizes finished), to show rows as they are measured. An
    interrupt (runtime.interrupts) raises Interrupted carrying `result`:
    the sizes finished, marked incomplete. rounds: complete sweeps in this
    job, each in its own shuffled order of the sizes from round_seed
    (drawn where None); with more than one, rows are the medians over
    rounds and keep every round's values in row["rounds"] (benchmarks.sweep).
    """
    comm = mpi.resolve(comm)
    device_options = device or DeviceOptions()
    send_kind, recv_kind = _kinds(tuple(mem))
    if timeline and path == "auto":
        path = "staged"  # the timeline asked for is of staged chunks: auto leaves the choice to us
    # An unknown test takes latency's defaults here, and validate() refuses it.
    counts = iteration_counts(ITERATIONS.get(test, ITERATIONS["latency"]), iterations, warmup)
    transfer = _core.TransferOptions(path=path, chunk_bytes=chunk_bytes or 0, slots=slots or 1)
    options = _core.Pt2ptOptions(
        test=test,
        send_kind=send_kind,
        recv_kind=recv_kind,
        multiple_buffers=_multiple_buffers(buffers),
        transfer=transfer,
        window=window,
        datatype=datatype,
        sizes=resolve_sizes(sizes),
        counts=counts,
        validation=validate,
        touch=touch,
        bank=device_options.bank,
        timeline=timeline,
        validation_warmup=validation_warmup,
        pairs=pairs or 0,
        vary_window=vary_window,
    )
    options.validate()
    size_list = list(options.sizes)
    if pairs is not None and pairs < 1:  # the core reads 0 as every rank
        raise usage_error(f"-p takes the number of pairs, at least 1, got {pairs}")
    if not print_rate and test != "mbw_mr":
        raise usage_error(f"-R (print the message rate) applies to osu mbw_mr only; drop it from osu {test}")
    check_api(device_options, (send_kind, recv_kind))
    if device_options.api == "sycl" and touch:
        raise usage_error(
            "--touch launches OMB-FPGA's placeholder kernel, and fpgacomm's SYCL path has no kernels "
            "(DPC++ stages every transfer without one, OMB-FPGA section 3.2.3); drop --touch"
        )
    if device_options.api == "sycl" and path == "mapped":
        raise usage_error(
            "SYCL device memory (malloc_device) cannot be mapped into host memory; with -d sycl "
            "device buffers are staged (--path staged or auto)"
        )

    hosts = _core.host_names(comm)
    dev = open_device_if(needs_device(mem), comm, device_options, hosts)
    env = environment.collect(comm, dev, hosts)
    # This rank's buffers: the first half of the ranks sends from mem[0], the second receives into mem[1].
    my_kind = send_kind if comm.Get_rank() < comm.Get_size() // 2 else recv_kind
    stages = (
        dev is not None
        and my_kind not in HOST_KINDS
        and path != "mapped"
        and not (path == "auto" and dev.info.host_unified_memory)
    )
    sizing = calibration.resolve(comm, dev, hosts, chunk_bytes, slots, stages)
    transfer.chunk_bytes, transfer.slots = sizing.chunk_bytes, sizing.slots
    transfer.fast_to_device, transfer.fast_to_host = sizing.fast_to_device, sizing.fast_to_host
    options.transfer = transfer
    staging = comm.allgather({key: value for key, value in sizing.params().items() if key != "why"})

    def result_of(sizes: list, finished: dict) -> Result:
        """The Result of the sizes measured; finished: the core's whole run, or {} while it goes on."""
        rows, units, samples = _rows(test, sizes, validate, vary_window)
        routes = (finished.get("send_route"), finished.get("recv_route"))
        params = {
            "test": test,
            "send_kind": send_kind,
            "recv_kind": recv_kind,
            "sizes": size_list,
            "datatype": options.datatype,
            **counts_params(counts),
            "large_message": LARGE_MESSAGE,
            "window": window,
            "validate": validate,
            "buffers": buffers,
            "touch": touch,
            "path": path,
            "chunk_bytes": finished.get("chunk_bytes"),
            "slots": sizing.slots,
            "staging": staging,
            "send_route": routes[0],
            "recv_route": routes[1],
            "pairs": finished.get("pairs", pairs or comm.Get_size() // 2),
            "validation_warmup": validation_warmup if validate else None,
            "omb_differences": omb_differences(routes, validate, validation_warmup, pairs, comm.Get_size()),
            **device_options.params(),
        }
        if test in LATENCY_TESTS:
            del params["window"]
        if test == "mbw_mr":
            params.update(vary_window=vary_window, print_rate=print_rate)
            if vary_window:
                params["window"] = list(VARIED_WINDOWS)
        return Result(f"osu_{test}", params, env, rows, units, samples)

    windows = len(VARIED_WINDOWS) if vary_window else 1
    sweep = Sweep(comm, result_of, size_list, measured_sizes(size_list, datatype) * windows, on_row, rounds, round_seed)
    with sweep.interruptible():
        for order in sweep.orders():
            options.sizes = order
            raw = _core.run_pt2pt(comm, dev, options, sweep.on_size)
            sweep.round_done(raw)
    result = sweep.result()
    if timeline:
        # With rounds, the last round's chunks (a timeline shows one iteration per size).
        result.timeline = _gather_timeline(comm, f"osu_{test}_timeline", raw, result.params, env)
    return result


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
def latency(comm=None, **options) -> Result:
    """Ping-pong between two ranks: half the round-trip time per size."""
    return run("latency", comm, **options)


@options_of(run)
def bw(comm=None, **options) -> Result:
    """Rank 0 streams windows of non-blocking sends to rank 1, closed by an acknowledgement."""
    return run("bw", comm, **options)


@options_of(run)
def bibw(comm=None, **options) -> Result:
    """Both ranks stream windows to each other at once; bytes of both directions count."""
    return run("bibw", comm, **options)


@options_of(run)
def multi_lat(comm=None, **options) -> Result:
    """Ping-pong in N/2 pairs (rank i with i+N/2) at once; latency averaged over pairs."""
    return run("multi_lat", comm, **options)


@options_of(run)
def mbw_mr(comm=None, **options) -> Result:
    """Windows streamed in N/2 pairs at once: aggregate bandwidth and message rate."""
    return run("mbw_mr", comm, **options)


def failed_sizes(result: Result) -> list[int]:
    """Message sizes whose validation failed."""
    return [row["size"] for row in result.rows if row.get("validation") == "fail"]
