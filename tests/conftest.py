"""The test suite's two sets, and the check that keeps them honest.

`make test` (CI, README) runs every test; `make test-fast` leaves out those
marked `mpi` (they start ranks through mpirun or Slurm) and `slow` (long
without any rank), so that the unit tests alone take a minute or two.

The `mpi` marks are written in the test files (a module's `pytestmark`, or a
test's decorator) and checked here as the tests run: a test not marked `mpi`
that starts mpirun, mpiexec, srun, salloc or sbatch is stopped at that call
and fails, naming the mark it lacks. The check sees what this process starts
(subprocess, os.system, os.exec*, os.posix_spawn) and the command lines it
hands on (`fpgacomm compare --run 'mpirun ...'`, `sh -c '... srun ...'`); a
child that starts ranks of its own accord, with no launcher in its command
line, escapes it. `slow` cannot be checked so: after a run that left slow
tests out, the tests that took more than SLOW_SECONDS are named, to be
marked or made shorter.
"""

from __future__ import annotations

import os
import sys

import pytest

LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "prterun", "srun", "salloc", "sbatch"})
SLOW_SECONDS = 10.0
# The audit events of starting a program, and where their arguments hold the command:
# subprocess.Popen (executable, args, cwd, env), os.system (command,), os.exec and
# os.posix_spawn (path, argv, env), os.spawn (mode, path, args, env).
SPAWNS = {
    "subprocess.Popen": (0, 1),
    "os.system": (0,),
    "os.exec": (0, 1),
    "os.posix_spawn": (0, 1),
    "os.spawn": (1, 2),
}


class UnmarkedLaunch(RuntimeError):
    """A test not marked `mpi` started a launcher."""


def launcher_in(*parts) -> str | None:
    """The launcher that a program and its arguments would start or hand on,
    or None: any word of them (a shell line split at blanks, quotes and
    separators) whose last path component is a launcher's name."""
    for part in parts:
        for argument in part if isinstance(part, (list, tuple)) else [part]:
            if argument is None:
                continue
            text = os.fsdecode(argument) if isinstance(argument, (bytes, os.PathLike)) else str(argument)
            for separator in "'\";&|()`=":
                text = text.replace(separator, " ")
            for word in text.split():
                if os.path.basename(word) in LAUNCHERS:
                    return os.path.basename(word)
    return None


class _Watch:
    """The audit hook's state: the test running now and whether it may launch."""

    test: str | None = None
    may_launch = True
    seen: list[str] = []


def _audit(event: str, arguments: tuple) -> None:
    if event not in SPAWNS or _Watch.may_launch:
        return
    launcher = launcher_in(*(arguments[index] for index in SPAWNS[event]))
    if launcher is None:
        return
    message = (
        f"{_Watch.test} starts {launcher} but is not marked mpi: mark it (@pytest.mark.mpi, or the module's "
        "pytestmark) so that make test-fast leaves it out"
    )
    _Watch.seen.append(message)
    raise UnmarkedLaunch(message)


def pytest_configure(config):
    # Installed once per process (audit hooks cannot be removed); inside the
    # ranks that tests/test_mpi.py starts, nothing launches.
    if not getattr(sys, "_fpgacomm_test_audit", False):
        sys.addaudithook(_audit)
        sys._fpgacomm_test_audit = True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Watches the test's set-up (module fixtures included), call and tear-down."""
    _Watch.test, _Watch.may_launch, _Watch.seen = item.nodeid, item.get_closest_marker("mpi") is not None, []
    try:
        yield
    finally:
        _Watch.test, _Watch.may_launch = None, True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Fails the test even where it caught the launcher's refusal itself."""
    outcome = yield
    report = outcome.get_result()
    if _Watch.seen and report.passed and call.when == "call":
        report.outcome = "failed"
        report.longrepr = _Watch.seen[0]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Names the tests that took long in a run that left the slow ones out."""
    if "not slow" not in (config.getoption("markexpr") or ""):
        return
    long = sorted(
        (
            (report.duration, report.nodeid)
            for reports in terminalreporter.stats.values()
            for report in reports
            if getattr(report, "when", None) == "call" and getattr(report, "duration", 0) > SLOW_SECONDS
        ),
        reverse=True,
    )
    if long:
        terminalreporter.write_sep("-", f"tests not marked slow that took more than {SLOW_SECONDS:g} s")
        for duration, nodeid in long:
            terminalreporter.write_line(f"{duration:6.1f} s  {nodeid}  (mark it slow, or make it shorter)")
