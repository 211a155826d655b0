"""The main job: the standard set of benchmarks, every Result and a summary in one folder.

Its OSU collectives and one-sided tests are every one the benchmark registry
holds; a new one joins the suite by its registration.
"""

from __future__ import annotations

import errno
import functools
import os
import secrets
import socket
import sys
import time

from . import _core
from .benchmarks import beff, gather, registry
from .benchmarks.sweep import OnProgress, check_rounds
from .params import resolve_sizes, usage_error
from .results.report import format_text, summary_line
from .results.result import atomic_write
from .runtime import files, interrupts, mpi
from .simulation import fabric
from .simulation import gather as gather_sim

# (file name, the benchmark's registry entry, its keyword arguments): OSU
# latency and bandwidth with host and with device buffers, ...
STANDARD_SET = [
    (f"{name}_{mem}_{mem}", registry.get(name), {"mem": (mem, mem)})
    for name in ("osu_latency", "osu_bw")
    for mem in ("H", "D")
]
# ... then every collective and one-sided test of the registry. A few sizes
# and OMB-style iterations would take minutes on a small machine, so the
# suite keeps them short. The user's -i and -x override these; the user's
# sizes bound them (short_sizes).
_SHORT = {"sizes": [8, 65536, 1 << 20], "iterations": 20, "warmup": 2}
STANDARD_SET += [
    (f"{benchmark.name}_{mem}", benchmark, {"mem": mem, **_SHORT})
    for benchmark in registry.of_family("collective", "onesided")
    for mem in ("H", "D")
]
# The quick set (`fpgacomm suite`, `make suite`): a complete result in a few
# minutes on a 2-core machine: latency and bandwidth with host and device
# buffers up to 1 MiB, one collective of each kind (a reduction, a
# broadcast, a personalised exchange) and one-sided latency and bandwidth,
# b_eff between the CPUs, the gather and the simulated fabrics. --full runs
# every entry (FULL_SET).
QUICK_ENTRIES = (
    "osu_latency_H_H",
    "osu_latency_D_D",
    "osu_bw_H_H",
    "osu_bw_D_D",
    "osu_allreduce_H",
    "osu_allreduce_D",
    "osu_bcast_H",
    "osu_alltoall_H",
    "osu_put_latency_H",
    "osu_put_bw_H",
    "beff_cpu",
    "gather_tree_D",
)
# The quick set's point-to-point sizes and b_eff's repetitions (HPCC FPGA's
# default is 10), where the user gives none (-m, --beff-repetitions).
QUICK_SIZES = "1:1M"
QUICK_BEFF_REPETITIONS = 3
# Seconds each set takes on an idle 2-core machine (PoCL, Intel's FPGA
# emulator) at its defaults, said before it starts: estimates. The full set
# took 25-30 minutes on a loaded 2-core machine; the quick set's is scaled
# from it by the entries and sizes it keeps.
EXPECTED_SECONDS = {"quick": 180, "full": 1500}
# The timed pass of every STANDARD_SET entry runs as a plain run of the
# test does (no validation: filling and checking buffers between the timed
# operations changes what the caches and the MPI library hold, and the
# figure with it); then an untimed pass of its own validates the same sizes
# with these counts, and its verdict per size joins the timed Result
# (validation_pass).
VALIDATION_PASS = {"iterations": 3, "warmup": 1}
# Options for the point-to-point entries alone: the transfer engine's, which
# the collectives and one-sided tests do not use.
_POINT_TO_POINT_ONLY = ("buffers", "touch", "path", "chunk_bytes", "slots")


def short_sizes(sizes) -> list:
    """The collective and one-sided sizes within the user's sizes (-m):
    those of the short set that lie between the smallest and the largest,
    or the largest alone where none does."""
    chosen = resolve_sizes(sizes)
    within = [size for size in _SHORT["sizes"] if min(chosen) <= size <= max(chosen)]
    return within or [max(chosen)]


def _arguments(benchmark, arguments: dict, parameters: dict) -> dict:
    """The entry's arguments, overridden by what the user gave (not None)."""
    given = {key: value for key, value in parameters.items() if value is not None}
    if benchmark.family != "pt2pt":
        given = {key: value for key, value in given.items() if key not in _POINT_TO_POINT_ONLY}
        if "sizes" in given:
            given["sizes"] = short_sizes(given["sizes"])
    return {**arguments, **given}


# b_eff takes HPCC FPGA's parameters, not OMB's: only the device choice
# carries over. cpu runs HPCC FPGA's defaults; kernel's adaptive loops
# last 0.2 s each, so three repetitions keep the suite short.
BEFF_SET = [
    ("beff_cpu", {"comm_type": "cpu", "repetitions": 10}),
    ("beff_kernel", {"comm_type": "kernel", "repetitions": 3}),
]

# A real gather takes its own small sizes; only the device choice carries over.
GATHER_SET = [
    ("gather_tree_D", {"schedule": "tree", "mem": "D", "sizes": [65536, 1 << 20], "iterations": 5}),
]


def chosen(entries: list, full: bool) -> list:
    """The entries of a set (name first) that the quick set keeps, or all of them with full."""
    return list(entries) if full else [entry for entry in entries if entry[0] in QUICK_ENTRIES]


def expected_time(full: bool) -> str:
    """The line said before a suite starts: its set and how long it takes at its defaults."""
    which = "full" if full else "quick"
    minutes = EXPECTED_SECONDS[which] / 60
    parts = len(chosen(STANDARD_SET, full)) + len(chosen(BEFF_SET, full)) + len(chosen(GATHER_SET, full)) + 1
    other = (
        "the quick set: leave out --full"
        if full
        else f"--full runs all {len(STANDARD_SET) + len(BEFF_SET) + len(GATHER_SET) + 1}, about "
        f"{EXPECTED_SECONDS['full'] / 60:.0f} minutes"
    )
    return (
        f"suite: the {which} set, {parts} parts, about {minutes:.0f} minutes on an idle 2-core machine at the "
        f"default sizes and iterations ({other})"
    )


def run(
    outdir: str,
    comm=None,
    beff_max_size: int = 20,
    beff_repetitions: int | None = None,
    rounds: int = 1,
    round_seed: int | None = None,
    on_progress: OnProgress | None = None,
    full: bool = False,
    **parameters,
) -> list:
    """Runs the quick set (QUICK_ENTRIES; full: every entry) of STANDARD_SET
    with `parameters` (sizes, iterations, device, ...; the quick set's
    sizes QUICK_SIZES and b_eff's QUICK_BEFF_REPETITIONS where none are given),
    BEFF_SET up to 2^beff_max_size bytes (beff_repetitions, when given, for
    every b_eff run), GATHER_SET and a small simulated run of every fabric preset, and
    writes NAME.json per Result, the fits and figures (fit_and_draw) and
    summary.txt into a run folder of its own (rank 0): run_folder. rounds
    and round_seed: every measured benchmark's (benchmarks.sweep); the
    simulated runs take one. on_progress: called on rank 0 with which part
    runs and how far it is ("osu_bw_D_D (3 of 41): 12 of 23 sizes measured").

    The options of every part are checked before the first measurement. A
    run that stops (an error, an interrupt) leaves its folder marked
    incomplete, with the Results it finished and the interrupted one's sizes
    so far, and says where; outdir/latest names the newest complete run."""
    # b_eff's sizes and repetitions are its own: checked now, not after the OSU tests.
    beff.message_sizes(0, beff_max_size, 1)
    if beff_repetitions is not None and beff_repetitions < 1:
        raise usage_error(f"--beff-repetitions must be at least 1, got {beff_repetitions}")
    check_rounds(rounds, round_seed)
    comm = mpi.resolve(comm)
    folder, problem = None, None
    if comm.Get_rank() == 0:
        try:
            folder = run_folder(outdir)
        except OSError as error:
            problem = f"{outdir}: cannot make a run folder in it: {error.strerror or error}"
    folder, problem = comm.bcast((folder, problem), root=0)
    if problem:
        raise usage_error(problem)
    run = RunFolder(folder) if comm.Get_rank() == 0 else None
    if run is not None:
        print(expected_time(full), flush=True)
        print(f"suite: writing into {folder}", flush=True)
    if not full and parameters.get("sizes") is None:
        parameters = {**parameters, "sizes": QUICK_SIZES}
    if not full and beff_repetitions is None:
        beff_repetitions = QUICK_BEFF_REPETITIONS
    try:
        # A rank blocked in MPI when interrupted ends on the watcher's thread: the same handling there.
        with interrupts.on_stop(lambda stop: _stopped(run, stop) if run is not None else None):
            results = _run_into(
                run,
                comm,
                beff_max_size,
                beff_repetitions,
                parameters,
                {"rounds": rounds, "round_seed": round_seed},
                on_progress,
                full,
            )
    except BaseException as stop:  # an error or an interrupt: what is finished stays, marked incomplete
        if run is not None:
            _stopped(run, stop)
        raise
    if run is not None:
        run.close(None)
        _point_latest(outdir, folder)
    return results


# The run folder's marker: that fpgacomm wrote the folder, whether the run
# is complete, and its files.
MARKER = "fpgacomm-run.txt"


def _stopped(run: RunFolder, stop: BaseException) -> None:
    """The run folder of a run that stopped: the interrupted benchmark's
    Result so far kept beside the finished ones, the marker saying why, and
    where it all is said on stderr."""
    why = str(stop) if isinstance(stop, KeyboardInterrupt) else f"failed: {type(stop).__name__}: {stop}"
    try:
        # The marker says why first: making and writing the Result so far takes a while, and the job may be
        # ended meanwhile (mpirun's SIGKILL a second after its SIGTERM, another rank's abort).
        run.close(why)
        partial = getattr(stop, "result", None)
        if partial is not None and partial.rows:
            run.keep(run.running, partial)
    except OSError as error:  # a full disk: what was written stands, and the marker still says incomplete
        print(f"suite: {error}", file=sys.stderr, flush=True)
    print(
        f"suite: stopped ({why}); the {len(run.files)} files it wrote are in {run.folder}, marked incomplete "
        f"({MARKER})",
        file=sys.stderr,
        flush=True,
    )
    stop.reported = True  # the command's ending adds nothing after this line, which says where the files are


def run_folder(outdir: str) -> str:
    """A new folder outdir/<UTC date-time>/ (a suffix where two runs start
    in the same second); outdir is created if missing, nothing in it is
    touched."""
    os.makedirs(outdir, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime())
    for number in range(1, 1000):
        folder = os.path.join(outdir, stamp if number == 1 else f"{stamp}-{number}")
        try:
            os.mkdir(folder)
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"999 run folders named {stamp} already exist")


class RunFolder:
    """One run's folder and its marker, rewritten (atomically) as each file lands."""

    def __init__(self, folder: str):
        self.folder, self.files = folder, []
        self.running = ""  # the entry being measured: an interrupt's Result so far takes its name
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.status = "incomplete: running (a run that ends with this status was killed)"
        self._mark()

    def keep(self, name: str, result) -> None:
        """NAME.json of the Result, listed in the marker."""
        self.write(f"{name}.json", result.write_json)

    def write(self, name: str, write) -> None:
        """write(path) makes the file `name` in the folder, then the marker
        lists it; its status stays (a closed folder's too)."""
        write(os.path.join(self.folder, name))
        if name not in self.files:
            self.files.append(name)
        self._mark()

    def close(self, why: str | None) -> None:
        """The final status: complete, or incomplete and why; a file written
        after it (a stopped run's Result so far) keeps it."""
        self.status = f"incomplete: {why}" if why else "complete"
        self._mark()

    def _mark(self) -> None:
        lines = [
            f"written by fpgacomm {_core.__version__} suite on {socket.gethostname()}",
            f"status: {self.status}",
            f"started: {self.started}",
            f"updated: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
            "files:",
        ]
        text = "\n".join(lines + [f"  {name}" for name in self.files]) + "\n"
        atomic_write(os.path.join(self.folder, MARKER), lambda f: f.write(text), newline=None)


def read_marker(folder: str) -> dict | None:
    """{"status": ..., "files": [...], ...} of a run folder, None where fpgacomm wrote no marker."""
    try:
        lines = files.read_text(os.path.join(folder, MARKER)).splitlines()
    except files.ResultError:  # none, or no marker fpgacomm wrote (a FIFO, binary): not a run folder of ours
        return None
    if not lines or not lines[0].startswith("written by fpgacomm "):
        return None
    fields = dict(line.split(": ", 1) for line in lines[1:] if ": " in line and not line.startswith("  "))
    fields["files"] = [line.strip() for line in lines if line.startswith("  ")]
    fields["complete"] = fields.get("status") == "complete"
    return fields


LATEST = "latest"


def _point_latest(outdir: str, folder: str) -> None:
    """outdir/latest, a symbolic link to the newest complete run, replaced
    atomically. A `latest` that is not a link (the user's) is left alone;
    where the file system has no symbolic links there is none. Either is said."""
    latest = os.path.join(outdir, LATEST)
    if os.path.lexists(latest) and not (os.path.islink(latest) and read_marker(latest) is not None):
        print(f"suite: {latest} is not fpgacomm's link to a run, left as it is; this run is {folder}", flush=True)
        return
    link = os.path.join(outdir, f".{LATEST}.{secrets.token_hex(4)}")
    try:
        os.symlink(os.path.basename(folder), link)
        os.replace(link, latest)
    except OSError as error:
        if os.path.lexists(link):
            os.unlink(link)
        print(
            f"suite: no {latest} link ({error.strerror or error}: this file system has no symbolic links); "
            f"this run is {folder}",
            flush=True,
        )


def _run_into(
    run: RunFolder | None,
    comm,
    beff_max_size: int,
    beff_repetitions: int | None,
    parameters: dict,
    repeat: dict,
    on_progress: OnProgress | None,
    full: bool,
) -> list:
    """run's measurements, each Result written into the run folder as it ends
    (rank 0); repeat: the rounds every measured benchmark takes; full: every
    entry, else the quick set's."""
    results = []
    standard, beffs, gathers = chosen(STANDARD_SET, full), chosen(BEFF_SET, full), chosen(GATHER_SET, full)
    parts = len(standard) + len(beffs) + len(gathers) + 1  # + the simulated fabrics

    def part(name: str) -> OnProgress:
        """Tells on_progress (rank 0) that part `name` begins; returns its own on_progress."""
        label = f"{name} ({len(results) + 1} of {parts})"

        def tell(state: str = "") -> None:
            if on_progress is not None and comm.Get_rank() == 0:
                on_progress(f"{label}: {state}" if state else label)

        tell()
        return tell

    def keep(name, result):
        results.append((name, result))
        if run is not None:
            run.keep(name, result)
            print(f"{summary_line(result)}    -> {name}.json", flush=True)

    def measure(name, benchmark, **arguments):
        if run is not None:
            run.running = name
        return benchmark(comm, **arguments)

    for name, benchmark, arguments in standard:
        tell = part(name)
        arguments = _arguments(benchmark, arguments, parameters)
        timed = measure(
            name, benchmark.function, **arguments, **repeat, on_row=lambda so_far, tell=tell: tell(so_far.incomplete)
        )
        tell("validating, untimed")
        validated = measure(name, benchmark.function, **{**arguments, **VALIDATION_PASS}, validate=True)
        keep(name, validation_pass(timed, validated))
    for name, arguments in beffs:
        arguments = {**arguments, "max_size": beff_max_size}
        if beff_repetitions is not None:
            arguments["repetitions"] = beff_repetitions
        keep(
            name,
            measure(name, beff.run, **arguments, **repeat, device=parameters.get("device"), on_progress=part(name)),
        )
    for name, arguments in gathers:
        tell = part(name)
        keep(
            name,
            measure(
                name,
                gather.run,
                **arguments,
                **repeat,
                device=parameters.get("device"),
                on_row=lambda so_far, tell=tell: tell(so_far.incomplete),
            ),
        )
    if run is not None:
        part("the simulated fabrics")
        # The simulated fabrics need no ranks: rank 0 runs them.
        for index, result in enumerate(fabric.suite_results() + [gather_sim.run(sizes=(64 << 10, 1 << 20, 16 << 20))]):
            keep(f"sim{index:02d}_{result.benchmark}_{result.params['fabric']}", result)
        fits = fit_and_draw(run, results)
        text = summary([r for _, r in results]) + "".join(f"\n{name}: {fit}\n" for name, fit in fits.items())
        run.write("summary.txt", lambda path: atomic_write(path, lambda f: f.write(text), newline=None))
    return [result for _, result in results]


def validation_pass(timed, validated):
    """The timed Result with the untimed pass's verdict: per size in the
    rows' validation columns, and in params["validation_pass"] how it ran
    (untimed, its own counts) and what it found."""
    verdicts = {row["size"]: (row["validation"], row["validation_errors"]) for row in validated.rows}
    for row in timed.rows:
        row["validation"], row["validation_errors"] = verdicts.get(row["size"], (None, None))
    failed = [row["size"] for row in validated.rows if row["validation"] == "fail"]
    timed.params["validation_pass"] = {
        "timed": False,
        **VALIDATION_PASS,
        "method": "a pass of its own after the timed one, with validation (-c); the timed pass runs as a plain run",
        "verdict": "fail" if failed else "pass",
        "failed_sizes": failed,
    }
    return timed


# Pairs whose figures carry the Hockney fits of the OSU latency Results:
# T(n) on the latency figure, n / T(n) on the bandwidth one.
_HOCKNEY_FIGURES = ("osu_latency", "osu_bw")


def fit_and_draw(run: RunFolder, results: list) -> dict:
    """Hockney fitted to each OSU latency Result (fit_hockney_NAME.json),
    and one figure per benchmark that plot draws and that sweeps sizes
    (BENCHMARK.png: its memory kinds, communication types or fabrics on one
    axes). A fit the data cannot support is reported and left out; the
    benchmarks' Results stand without it. Returns {NAME: Fit}."""
    from .figures import plot
    from .models.hockney import Hockney

    fits = {}
    for name, result in results:
        if result.benchmark == "osu_latency":
            try:
                fits[name] = Hockney.fit(result)
            except _core.UsageError as error:
                print(f"Hockney fit of {name}: not drawn: {error}", flush=True)
                continue
            run.keep(f"fit_hockney_{name}", fits[name].to_result())
    by_result = {result: fits[name] for name, result in results if name in fits}
    groups = {}
    for _, result in results:
        sizes = {size for size in result.column("size") if size > 0} if "size" in result.columns else ()
        if plot.drawable(result) and len(sizes) >= 2:  # a sweep, not one point
            groups.setdefault(result.benchmark, []).append(result)
    for benchmark, group in groups.items():
        models = by_result if benchmark in _HOCKNEY_FIGURES else ()
        run.write(f"{benchmark}.png", functools.partial(plot.save, plot.figure_for(group, models=models)))
    print(f"figures: {', '.join(f'{benchmark}.png' for benchmark in groups)}", flush=True)
    return fits


def summary(results: list) -> str:
    """One page: where it ran, a line per benchmark, then the tables."""
    env = next((r.env for r in results if "opencl" in r.env), results[0].env if results else {})
    opencl = env.get("opencl", {})
    lines = [
        f"fpgacomm {env.get('fpgacomm_version', '?')} ({env.get('git_revision', '?')}) suite, "
        f"{env.get('time_utc', '')}",
        f"hosts {', '.join(env.get('hosts', []))}; {env.get('ranks', '?')} ranks; "
        f"MPI {env.get('mpi_library', '?').splitlines()[0] if env.get('mpi_library') else '?'}; "
        f"thread level {env.get('mpi_thread_level', {}).get('provided', '?')}",
        f"OpenCL device {opencl.get('device', 'none')} on {opencl.get('platform', '-')} "
        f"({opencl.get('device_type', '-')})",
        "",
    ]
    lines += [summary_line(result) for result in results]
    for result in results:
        lines += ["", format_text(result)]
    return "\n".join(lines) + "\n"
