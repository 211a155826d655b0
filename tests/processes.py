"""The processes tests start and watch: fpgacomm in one process or under
mpirun, and what /proc says of the processes left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from fpgacomm.runtime.launcher import running  # noqa: F401 (the tests' too)

# Open MPI refuses root without these; CI and containers run as root.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
HERE = Path(__file__).resolve().parent  # tests/
LIVE = dict(ENV, PYTHONUNBUFFERED="1")  # rank 0's rows reach the pipe as they are printed
GONE_WITHIN = 5.0  # seconds from a signal until every process of a job has ended


def mpirun(np_: int, *command, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    """`mpirun -np NP COMMAND` from tests/, oversubscribed, its output captured."""
    full_env = dict(ENV, OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    return subprocess.run(
        ["mpirun", "-np", str(np_), *command], capture_output=True, text=True, timeout=timeout, env=full_env, cwd=HERE
    )


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


class Job:
    """mpirun of `fpgacomm ARGS` on 2 ranks, its stdout read line by line as it comes."""

    def __init__(self, *args, cwd):
        self.process = start(*args, env=LIVE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
        self.lines: list[tuple[float, str]] = []
        self._stderr = ""
        threading.Thread(target=self._read, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def _read_stderr(self):
        self._stderr = self.process.stderr.read()

    @property
    def stderr(self) -> str:
        """What the job wrote on stderr: all of it once mpirun has ended (its
        reader waited for: the writing child and the launcher's watcher hold
        the pipe a few seconds past mpirun's end), "" while it runs."""
        if self.process.poll() is not None:
            self._stderr_reader.join(timeout=60)
        return self._stderr

    def wait_for(self, predicate, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate([line for _, line in self.lines]):
            assert self.process.poll() is None, f"the run ended early: {self.stderr}"
            assert time.monotonic() < deadline, f"waited {timeout} s; stdout so far: {self.lines}"
            time.sleep(0.05)

    def ranks(self) -> dict[int, int]:
        """rank -> pid of mpirun's children."""
        found = rank_pids(self.process.pid)
        assert sorted(found) == [0, 1], f"ranks found: {found}"
        return found

    def signal_and_wait(self, target: str, number: int) -> tuple[int, float, dict]:
        """Sends `number` to "mpirun", "rank0" or "rank1"; returns mpirun's
        status, the seconds until every process had ended, and the rank pids."""
        ranks = self.ranks()
        pid = self.process.pid if target == "mpirun" else ranks[int(target[-1])]
        sent = time.monotonic()
        os.kill(pid, number)
        try:
            status = self.process.wait(timeout=GONE_WITHIN + 5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            for rank_pid in ranks.values():
                _kill_quietly(rank_pid)
            pytest.fail(f"mpirun still running {GONE_WITHIN + 5} s after the signal")
        while any(running(rank_pid) for rank_pid in ranks.values()) and time.monotonic() - sent < GONE_WITHIN + 5:
            time.sleep(0.02)
        return status, time.monotonic() - sent, ranks

    def rows(self) -> list[str]:
        return [line for _, line in self.lines if line and not line.startswith("#")]


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def rows_coming(count: int):
    """The sweep has printed `count` rows."""
    return lambda lines: sum(1 for line in lines if line and not line.startswith("#")) >= count
