"""What rank 0 shows while a sweep runs: the text's lines as soon as they
are final (OSU Micro-Benchmarks prints each size when it ends), and, on a
terminal, a progress line on stderr.

The lines are format_text's of the Result so far; each is printed once, so
the finished run's text reads exactly as if it had been printed at the end.
The progress line is drawn only when stderr is a terminal (under mpirun:
mpirun's stderr) and the sweep has run for a while, and is erased before any
other output, so that files and pipes never hold it.
"""

from __future__ import annotations

import os
import sys
import time

from ..params import usage_error
from ..results.report import format_text

# A sweep shorter than this (seconds) shows no progress line;
# FPGACOMM_PROGRESS_AFTER sets another (0: from the first size on).
PROGRESS_AFTER = 2.0


def progress_after() -> float:
    """Seconds a sweep runs before its progress line shows."""
    text = os.environ.get("FPGACOMM_PROGRESS_AFTER")
    if text is None:
        return PROGRESS_AFTER
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise usage_error(f"FPGACOMM_PROGRESS_AFTER={text!r}: give the seconds a sweep runs before its progress "
                          f"line shows, 0 or more (default {PROGRESS_AFTER:g})")
    return seconds


class LiveText:
    """on_row for a benchmark function: prints the new lines of the text of
    each Result so far; finish() prints the rest of the finished Result's."""

    def __init__(self, label: str, full: bool = False):
        self.full = full
        self.printed = 0
        self.progress = Progress(label)

    def __call__(self, result) -> None:
        self._show(result)
        self.progress.update(result.incomplete)

    def finish(self, result) -> None:
        self.progress.erase()
        self._show(result)

    def _show(self, result) -> None:
        lines = format_text(result, full=self.full).split("\n")
        if len(lines) > self.printed:
            self.progress.erase()
            try:
                print("\n".join(lines[self.printed:]), flush=True)
            except BrokenPipeError:
                # The reader left (`| head -1`) in mid-sweep: the other ranks
                # still need this one, so the sweep goes on, printing nowhere.
                silence_stdout()
            self.printed = len(lines)


def stderr_is_terminal() -> bool:
    """Whether what this process writes to stderr lands on a terminal. Under
    mpirun a rank's stderr is a pipe to mpirun, which copies it to its own:
    then mpirun's stderr decides (the launcher is the parent on one host;
    on others the parent is Open MPI's daemon, whose stderr is no terminal)."""
    if sys.stderr.isatty():
        return True
    if "OMPI_COMM_WORLD_RANK" not in os.environ:
        return False
    try:
        target = os.readlink(f"/proc/{os.getppid()}/fd/2")
    except OSError:
        return False
    return target.startswith(("/dev/pts/", "/dev/tty"))


def silence_stdout() -> None:
    """stdout goes nowhere from now on: the reader of a pipe left, and no
    later print or final flush may fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Progress:
    """`osu bw: 12 of 23 sizes measured, 4.1 s`, overwritten in place on a
    terminal's stderr once the sweep has run progress_after() seconds; nothing elsewhere."""

    on_screen = False  # one line for the process: whichever Progress drew it

    def __init__(self, label: str):
        self.label = label
        self.start = time.perf_counter()
        self.after = progress_after()
        self.on_terminal = stderr_is_terminal()

    def update(self, state: str) -> None:
        """state: how far the sweep is (the Result so far's `incomplete`)."""
        elapsed = time.perf_counter() - self.start
        if not self.on_terminal or elapsed < self.after:
            return
        sys.stderr.write(f"\r\033[K{self.label}: {state}, {elapsed:.1f} s")
        sys.stderr.flush()
        Progress.on_screen = True

    @classmethod
    def erase(cls) -> None:
        """Erases the progress line on screen, if any (before other output, and at the end)."""
        if cls.on_screen:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            cls.on_screen = False
