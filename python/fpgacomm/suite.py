"""The main job: the standard set of benchmarks, every Result and a summary in one folder.

Its OSU collectives and one-sided tests are every one the benchmark registry
holds; a new one joins the suite by its registration.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket

from . import _core
from .benchmarks import beff, gather, registry
from .benchmarks.sweep import OnProgress, check_rounds
from .simulation import fabric, gather as gather_sim
from .params import resolve_sizes, usage_error
from .runtime import mpi
from .results.report import format_text, summary_line
from .results.result import atomic_write

# (file name, the benchmark's registry entry, its keyword arguments): OSU
# latency and bandwidth with host and with device buffers, ...
STANDARD_SET = [(f"{name}_{mem}_{mem}", registry.get(name), {"mem": (mem, mem)})
                for name in ("osu_latency", "osu_bw") for mem in ("H", "D")]
# ... then every collective and one-sided test of the registry. A few sizes
# and OMB-style iterations would take minutes on a small machine, so the
# suite keeps them short. The user's -i and -x override these; the user's
# sizes bound them (short_sizes).
_SHORT = {"sizes": [8, 65536, 1 << 20], "iterations": 20, "warmup": 2}
STANDARD_SET += [(f"{benchmark.name}_{mem}", benchmark, {"mem": mem, **_SHORT})
                 for benchmark in registry.of_family("collective", "onesided") for mem in ("H", "D")]
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


def run(outdir: str, comm=None, beff_max_size: int = 20, beff_repetitions: int | None = None, rounds: int = 1,
        round_seed: int | None = None, on_progress: OnProgress | None = None, **parameters) -> list:
    """Runs STANDARD_SET with `parameters` (sizes, iterations, device, ...),
    BEFF_SET up to 2^beff_max_size bytes (beff_repetitions, when given, for
    every b_eff run), GATHER_SET and a small simulated run of every fabric preset, and
    writes NAME.json per Result, the fits and figures (fit_and_draw) and
    summary.txt into outdir (rank 0). rounds and round_seed: every measured
    benchmark's (benchmarks.sweep); the simulated runs take one.

    The options of every part are checked before the first measurement. The
    run writes into a fresh hidden folder beside outdir, which replaces
    outdir only when the run is whole: outdir never mixes two runs, and a
    run that is stopped leaves the previous one as it was. What a killed
    run left beside outdir is cleared at the start (_clear_stale).
    on_progress: called on rank 0 with which part runs and how far it is
    ("osu_bw_D_D (3 of 41): 12 of 23 sizes measured")."""
    # b_eff's sizes and repetitions are its own: checked now, not after the OSU tests.
    beff.message_sizes(0, beff_max_size, 1)
    if beff_repetitions is not None and beff_repetitions < 1:
        raise usage_error(f"--beff-repetitions must be at least 1, got {beff_repetitions}")
    check_rounds(rounds, round_seed)
    repeat = {"rounds": rounds, "round_seed": round_seed}
    comm = mpi.resolve(comm)
    parent, name = os.path.split(os.path.abspath(outdir))
    staging = os.path.join(parent, f".{name}.run-{comm.bcast(secrets.token_hex(4), root=0)}")
    if comm.Get_rank() == 0:
        os.makedirs(parent, exist_ok=True)
        _clear_stale(parent, name)
        os.mkdir(staging)
        with open(os.path.join(staging, _OWNER), "w") as owner:
            owner.write(f"{socket.gethostname()} {os.getpid()}\n")
    try:
        return _run_into(staging, outdir, comm, beff_max_size, beff_repetitions, {**parameters, **repeat},
                         on_progress)
    except BaseException:  # an error or an interrupt: the run folder goes, the previous results stay
        if comm.Get_rank() == 0:
            shutil.rmtree(staging, ignore_errors=True)
        raise


def _run_into(staging: str, outdir: str, comm, beff_max_size: int, beff_repetitions: int | None,
              parameters: dict, on_progress: OnProgress | None) -> list:
    """run's measurements, written into `staging`, which then replaces outdir."""
    results = []
    parts = len(STANDARD_SET) + len(BEFF_SET) + len(GATHER_SET) + 1  # + the simulated fabrics

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
        if comm.Get_rank() == 0:
            result.write_json(os.path.join(staging, f"{name}.json"))
            print(f"{summary_line(result)}    -> {name}.json", flush=True)

    for name, benchmark, arguments in STANDARD_SET:
        tell = part(name)
        keep(name, benchmark.function(comm, **_arguments(benchmark, arguments, parameters), validate=True,
                                      on_row=lambda so_far: tell(so_far.incomplete)))
    for name, arguments in BEFF_SET:
        arguments = {**arguments, "max_size": beff_max_size}
        if beff_repetitions is not None:
            arguments["repetitions"] = beff_repetitions
        keep(name, beff.run(comm, **arguments, **_repeat(parameters), device=parameters.get("device"),
                            on_progress=part(name)))
    for name, arguments in GATHER_SET:
        tell = part(name)
        keep(name, gather.run(comm, **arguments, **_repeat(parameters), device=parameters.get("device"),
                              on_row=lambda so_far: tell(so_far.incomplete)))
    if comm.Get_rank() == 0:
        part("the simulated fabrics")
        # The simulated fabrics need no ranks: rank 0 runs them.
        for index, result in enumerate(fabric.suite_results() + [gather_sim.run(sizes=(64 << 10, 1 << 20, 16 << 20))]):
            name = f"sim{index:02d}_{result.benchmark}_{result.params['fabric']}"
            results.append((name, result))
            result.write_json(os.path.join(staging, f"{name}.json"))
            print(f"{summary_line(result)}    -> {name}.json", flush=True)
        fits = fit_and_draw(staging, results)
        text = summary([r for _, r in results]) + "".join(f"\n{name}: {fit}\n" for name, fit in fits.items())
        atomic_write(os.path.join(staging, "summary.txt"), lambda f: f.write(text), newline=None)
        os.remove(os.path.join(staging, _OWNER))
        _replace(staging, outdir)
    return [result for _, result in results]


def _repeat(parameters: dict) -> dict:
    """The rounds of the suite's parameters, for b_eff and the gather."""
    return {key: parameters[key] for key in ("rounds", "round_seed") if key in parameters}


# In a run folder while it is written: the host and process of rank 0.
_OWNER = ".owner"


def _clear_stale(parent: str, name: str) -> None:
    """What earlier runs into parent/name left when they were killed outright
    (kill -9, a lost host: nothing of theirs could run): a run folder whose
    process is gone is removed; a previous run moved aside but never
    replaced goes back in outdir's place, and one already replaced is
    removed. A run folder of a live process, or of another host, is left alone."""
    pattern = re.compile(rf"\.{re.escape(name)}\.run-[0-9a-f]{{8}}(\.previous)?")
    outdir = os.path.join(parent, name)
    for entry in sorted(os.listdir(parent)):
        match = pattern.fullmatch(entry)
        path = os.path.join(parent, entry)
        if not match or not os.path.isdir(path):
            continue
        if match.group(1):
            if os.path.exists(outdir):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.rename(path, outdir)
        elif not _owner_alive(path):
            shutil.rmtree(path, ignore_errors=True)


def _owner_alive(folder: str) -> bool:
    """Whether the run writing `folder` may still be running."""
    try:
        with open(os.path.join(folder, _OWNER)) as owner:
            host, pid = owner.read().split()
    except (OSError, ValueError):
        return False  # killed before it named itself
    if host != socket.gethostname():
        return True
    try:
        with open(f"/proc/{int(pid)}/stat") as stat:
            # A zombie is gone too: killed, only not yet reaped by its parent.
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _replace(staging: str, outdir: str) -> None:
    """The finished run's folder in outdir's place; the previous run, if
    any, moved aside first and removed once the new one stands."""
    previous = None
    if os.path.exists(outdir):
        previous = f"{staging}.previous"
        os.rename(outdir, previous)
    try:
        os.rename(staging, outdir)
    except BaseException:  # an interrupt between the two renames: the previous run goes back
        if previous and not os.path.exists(outdir):
            os.rename(previous, outdir)
        raise
    if previous:
        shutil.rmtree(previous)


# Pairs whose figures carry the Hockney fits of the OSU latency Results:
# T(n) on the latency figure, n / T(n) on the bandwidth one.
_HOCKNEY_FIGURES = ("osu_latency", "osu_bw")


def fit_and_draw(outdir: str, results: list) -> dict:
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
            fits[name].to_result().write_json(os.path.join(outdir, f"fit_hockney_{name}.json"))
    by_result = {result: fits[name] for name, result in results if name in fits}
    groups = {}
    for _, result in results:
        sizes = {size for size in result.column("size") if size > 0} if "size" in result.columns else ()
        if plot.drawable(result) and len(sizes) >= 2:  # a sweep, not one point
            groups.setdefault(result.benchmark, []).append(result)
    for benchmark, group in groups.items():
        models = by_result if benchmark in _HOCKNEY_FIGURES else ()
        plot.save(plot.figure_for(group, models=models), os.path.join(outdir, f"{benchmark}.png"))
    print(f"figures: {', '.join(f'{benchmark}.png' for benchmark in groups)}", flush=True)
    return fits


def summary(results: list) -> str:
    """One page: where it ran, a line per benchmark, then the tables."""
    env = next((r.env for r in results if "opencl" in r.env), results[0].env if results else {})
    opencl = env.get("opencl", {})
    lines = [f"fpgacomm {env.get('fpgacomm_version', '?')} ({env.get('git_revision', '?')}) suite, "
             f"{env.get('time_utc', '')}",
             f"hosts {', '.join(env.get('hosts', []))}; {env.get('ranks', '?')} ranks; "
             f"MPI {env.get('mpi_library', '?').splitlines()[0] if env.get('mpi_library') else '?'}; "
             f"thread level {env.get('mpi_thread_level', {}).get('provided', '?')}",
             f"OpenCL device {opencl.get('device', 'none')} on {opencl.get('platform', '-')} "
             f"({opencl.get('device_type', '-')})", ""]
    lines += [summary_line(result) for result in results]
    for result in results:
        lines += ["", format_text(result)]
    return "\n".join(lines) + "\n"
