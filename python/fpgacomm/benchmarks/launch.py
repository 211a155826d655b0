"""Runs a benchmark on N fresh MPI ranks from a process that is not one of
them: a Jupyter notebook or a plain script.

    from fpgacomm import launch, osu
    result = launch(2, osu.latency, mem=("D", "D"), sizes="1:64K", validate=True)

The benchmark function (any function of fpgacomm taking a communicator first
and returning a Result) runs under `mpirun -np N` in new Python processes;
rank 0 sends its Result back through a file, so the caller gets the Result
itself. launch() never starts MPI in the calling process, and works as well
where the caller has started it.

Run as `python -m fpgacomm.benchmarks.launch TASK` by launch() itself, on
every rank.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..params import usage_error
from ..results.result import Result

DEFAULT_TIMEOUT = 600.0


def launch(ranks: int, benchmark, *, timeout: float = DEFAULT_TIMEOUT, mpirun: str = "mpirun", **options) -> Result:
    """`benchmark(**options)` on `ranks` MPI ranks started with `mpirun`;
    returns rank 0's Result. Options the function does not take raise its
    TypeError here, before any rank starts; a usage error of the benchmark
    (a bad option value) is raised here as the same UsageError; any other failure of the ranks
    as a RuntimeError carrying their error output. `timeout` (seconds)
    ends a run that hangs."""
    if not isinstance(ranks, int) or isinstance(ranks, bool) or ranks < 1:
        raise usage_error(f"ranks must be a whole number of at least 1, got {ranks!r}")
    function = f"{benchmark.__module__}:{benchmark.__qualname__}" if callable(benchmark) else str(benchmark)
    _check_arguments(function, _resolve(function), options)  # refused before anything starts
    launcher = shutil.which(mpirun)
    if launcher is None:
        raise usage_error(
            f"cannot find the MPI launcher '{mpirun}' on PATH; install MPI or pass " "mpirun='/path/to/mpirun'"
        )
    with tempfile.TemporaryDirectory(prefix="fpgacomm-launch-") as folder:
        task = Path(folder) / "task.pickle"
        answer = Path(folder) / "answer.pickle"
        task.write_bytes(pickle.dumps({"function": function, "options": options, "answer": str(answer)}))
        command = [launcher, "-np", str(ranks), *_oversubscribe(launcher), sys.executable, "-m", __name__, str(task)]
        try:
            # os.environ as Python saw it, not the C environment: MPI started in
            # this process (a singleton) adds variables that would make mpirun
            # join it instead of starting a job of its own.
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=dict(os.environ))
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{' '.join(command)} did not end within {timeout:g} s (timeout=)") from None
        if answer.exists():
            outcome = pickle.loads(answer.read_bytes())
            if "usage_error" in outcome:
                raise usage_error(outcome["usage_error"])
            if run.returncode == 0:
                return Result.from_dict(outcome["result"])
        raise RuntimeError(f"{' '.join(command)} failed with status {run.returncode}:\n{run.stderr.strip()}")


def _resolve(function: str):
    """The function named "module:qualified.name", or a usage error."""
    module_name, _, name = function.partition(":")
    try:
        try:
            target = importlib.import_module(module_name)
        except ModuleNotFoundError:  # a public short name of the package root: fpgacomm.osu
            target = getattr(importlib.import_module("fpgacomm"), module_name.removeprefix("fpgacomm."))
        for part in name.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError, ValueError):
        target = None
    if not callable(target) or not module_name.startswith("fpgacomm."):
        raise usage_error(f"'{function}' is not a benchmark function of fpgacomm; pass one, e.g. fpgacomm.osu.latency")
    return target


def _check_arguments(name: str, function, options: dict) -> None:
    """The TypeError the call itself would raise on every rank (an unknown
    or missing keyword), raised here instead."""
    try:
        inspect.signature(function).bind(None, **options)
    except TypeError as error:
        raise TypeError(f"{name.replace(':', '.')}(): {error}") from None


@functools.cache
def _oversubscribe(launcher: str) -> list[str]:
    """Open MPI's mpirun refuses more ranks than cores unless told; others accept them."""
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True, env=dict(os.environ)).stdout
    return ["--oversubscribe"] if "Open MPI" in version or "OpenRTE" in version else []


def _rank_main(task_path: str) -> int:
    from .. import _core
    from ..runtime import mpi

    task = pickle.loads(Path(task_path).read_bytes())
    world = mpi.world()
    outcome = {}
    try:
        result = _resolve(task["function"])(world, **task["options"])
        outcome = {"result": result.to_dict()}
    except _core.Error as error:
        if not getattr(error, "agreed", False):
            raise  # one rank's failure: the traceback names it, mpirun ends the others
        outcome = {"usage_error": str(error)}
    if world.Get_rank() == 0:
        partial = f"{task['answer']}.{os.getpid()}"
        Path(partial).write_bytes(pickle.dumps(outcome))
        os.replace(partial, task["answer"])  # whole or absent, never half-written
    return 2 if "usage_error" in outcome else 0


if __name__ == "__main__":
    sys.exit(_rank_main(sys.argv[1]))
