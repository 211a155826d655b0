"""The processes tests start and watch: fpgacomm in one process or under
mpirun, and what /proc says of the processes left."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fpgacomm.runtime.launcher import running  # noqa: F401 (the tests' too)

# Open MPI refuses root without these; CI and containers run as root.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def command(*args, ranks: int | None = None, oversubscribe: bool = False, mpirun_options=()) -> list[str]:
    """`python -m fpgacomm ARGS`, under `mpirun -np RANKS [--oversubscribe]
    [MPIRUN_OPTIONS]` where `ranks` is given."""
    line = [sys.executable, "-m", "fpgacomm", *args]
    if ranks:
        line = ["mpirun", "-np", str(ranks), *(["--oversubscribe"] if oversubscribe else []), *mpirun_options, *line]
    return line


def fpgacomm(*args, ranks: int | None = None, timeout: float = 300, cwd=None) -> subprocess.CompletedProcess:
    """fpgacomm ARGS run to its end (under mpirun, oversubscribed, where `ranks` is given), its outputs as text."""
    return subprocess.run(
        command(*args, ranks=ranks, oversubscribe=True),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
        cwd=cwd,
    )


def start(*args, ranks: int = 2, oversubscribe: bool = False, env: dict = ENV, **popen) -> subprocess.Popen:
    """`mpirun -np RANKS fpgacomm ARGS` started, not waited for; `popen`: the
    rest of subprocess.Popen's arguments (outputs, cwd, session)."""
    return subprocess.Popen(command(*args, ranks=ranks, oversubscribe=oversubscribe), env=env, **popen)


def rank_pids(mpirun_pid: int) -> dict[int, int]:
    """rank -> pid of the MPI ranks an mpirun started on this host: its
    children that carry OMPI_COMM_WORLD_RANK (none yet while it starts them)."""
    with open(f"/proc/{mpirun_pid}/task/{mpirun_pid}/children") as children:
        pids = [int(pid) for pid in children.read().split()]
    found = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                variables = dict(item.split(b"=", 1) for item in environ.read().split(b"\0") if b"=" in item)
        except FileNotFoundError:
            continue
        if b"OMPI_COMM_WORLD_RANK" in variables:
            found[int(variables[b"OMPI_COMM_WORLD_RANK"])] = pid
    return found


def pids_where(test: Callable[[Path], bool]) -> list[int]:
    """The processes other than this one whose /proc folder passes `test`
    (one that ends while it is read does not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if test(entry):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def holding(marker: str) -> list[int]:
    """The processes whose command line or environment holds `marker` (a
    folder of the test's own, or a command line of its own)."""
    return pids_where(
        lambda entry: marker.encode() in (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes()
    )


def working_in(folder: Path, holding_a_file: bool = False) -> list[int]:
    """The processes whose working folder is `folder` (holding_a_file: and
    that have a file in it open, as one being written)."""

    def holds(entry: Path) -> bool:
        return any(os.readlink(fd).startswith(f"{folder}/") for fd in (entry / "fd").iterdir())

    return pids_where(lambda entry: os.readlink(entry / "cwd") == str(folder) and (not holding_a_file or holds(entry)))


def gone_within(find: Callable[[], list[int]], seconds: float) -> list[int]:
    """What `find` still finds after up to `seconds` of waiting for it to find nothing."""
    deadline = time.monotonic() + seconds
    while find() and time.monotonic() < deadline:
        time.sleep(0.1)
    return find()
