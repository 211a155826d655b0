"""What rank 0 shows while a command runs: the text's lines as soon as they
are final (OSU Micro-Benchmarks prints each size when it ends), and, on a
terminal, a progress line that says how far the run is.

Everything rank 0 writes goes through one writer, the Screen: while a
progress line stands, every write first erases it and every finished line
redraws it below, so that no row is glued to it or erased by it. Under
mpirun a rank's stdout and stderr reach the terminal by two pipes that
mpirun copies in no fixed order, so where both end on the same terminal the
progress line (and anything written to stderr while it stands) travels on
stdout, the rows' own stream. Where stdout goes elsewhere (a file) and
stderr to a terminal, the line is drawn on stderr; where stdout is a pipe
(`| tee`), whose reader may print on the same screen in an order no writer
can keep, and where stderr is no terminal, no progress line is drawn:
files and pipes never hold one.

The rows are format_text's of the Result so far; each is printed once, so
the finished run's text reads exactly as if it had been printed at the end.

The progress line shows from the start and its clock moves every second
(a thread of the Screen redraws it), with the time left estimated from
the work done and the work to do: "osu bw: 12 of 23 sizes measured, 14 s,
about 30 s left".
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time

from ..benchmarks.sweep import work_done
from ..params import usage_error
from ..results.report import format_text

# Seconds a run goes on before its progress line shows: from the start;
# FPGACOMM_PROGRESS_AFTER sets another.
PROGRESS_AFTER = 0.0
# Seconds between two redraws of the progress line's clock.
TICK = 1.0
ERASE = "\r\033[K"


def progress_after() -> float:
    """Seconds a run goes on before its progress line shows."""
    text = os.environ.get("FPGACOMM_PROGRESS_AFTER")
    if text is None:
        return PROGRESS_AFTER
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise usage_error(
            f"FPGACOMM_PROGRESS_AFTER={text!r}: give the seconds a sweep runs before its progress "
            f"line shows, 0 or more (default {PROGRESS_AFTER:g})"
        )
    return seconds


def destination(fd: int) -> str:
    """Where this process's stream `fd` lands: "terminal:PATH", "pipe" or
    "file". Under mpirun a rank's streams lead to mpirun (its stdout even
    through a pseudo-terminal of Open MPI's own), which copies them to its
    own: then mpirun's decide (the launcher is the parent on one host; on
    others the parent is Open MPI's daemon, whose streams are no terminal)."""
    if "OMPI_COMM_WORLD_RANK" in os.environ:
        try:
            target = os.readlink(f"/proc/{os.getppid()}/fd/{fd}")
        except OSError:
            return "pipe"
        if target.startswith(("/dev/pts/", "/dev/tty")):
            return f"terminal:{target}"
        return "pipe" if target.startswith(("pipe:", "socket:")) else "file"
    try:
        if os.isatty(fd):
            return f"terminal:{os.ttyname(fd)}"
        mode = os.fstat(fd).st_mode
    except OSError:
        return "pipe"
    return "pipe" if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else "file"


def stderr_is_terminal() -> bool:
    """Whether what this process writes to stderr lands on a terminal."""
    return destination(2).startswith("terminal:")


def on_a_clean_line(text: str) -> str:
    """`text` for a rank other than 0 to print on stderr: after an erase
    where stderr is a terminal, so that a progress line rank 0 drew there
    is not glued to it (rank 0 erases its own, but the two reach the
    terminal in no fixed order)."""
    return ERASE + text if stderr_is_terminal() else text


def _own(stream, original) -> bool:
    """Whether stream is the process's own: the original, or outputs'
    CheckedStream over it; not one a test took over."""
    return stream is original or getattr(stream, "wrapped", None) is original


def _columns(where: str) -> int:
    """The width of the terminal at `where` ("terminal:PATH"), 80 if unknown."""
    try:
        fd = os.open(where.split(":", 1)[1], os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
        try:
            return os.get_terminal_size(fd).columns or 80
        finally:
            os.close(fd)
    except OSError:
        return 80


class Screen:
    """The one writer of rank 0's stdout and stderr while a progress line
    may stand (Screen.live()). show(text) draws or replaces the progress
    line; any other write erases it first, and a write that ends a line
    draws it again after."""

    def __init__(self):
        self.text = ""  # the progress line's text, "" for none
        self.on_screen = False  # whether it is drawn now
        self.stdout = self.stderr = None  # the real streams while live
        self.line_stream = None  # where the progress line goes, None for nowhere
        self.columns = 80
        self.clock = None  # what the progress line says now (a callable), redrawn every TICK while set
        # The main thread writes rows, the clock's thread redraws the line, the time limit's thread ends it.
        self.lock = threading.RLock()
        self.stopped = threading.Event()

    @contextlib.contextmanager
    def live(self):
        """Routes sys.stdout and sys.stderr through this writer for the
        block; the progress line is erased when it ends, however it ends."""
        if self.stdout is not None:  # already live (a command inside another)
            yield self
            return
        rows, notes = destination(1), destination(2)
        self.stdout, self.stderr = sys.stdout, sys.stderr
        if not _own(sys.stdout, sys.__stdout__) or not _own(sys.stderr, sys.__stderr__):
            self.line_stream = None  # streams taken over (a test capturing them): their files are not ours
        elif notes.startswith("terminal:") and rows == notes:
            self.line_stream = self.stdout
        elif notes.startswith("terminal:") and rows == "file":
            self.line_stream = self.stderr
        else:
            self.line_stream = None
        if self.line_stream is not None:
            self.columns = _columns(notes)
        sys.stdout, sys.stderr = _Routed(self, self.stdout), _Routed(self, self.stderr)
        self.stopped.clear()
        if self.line_stream is not None:  # a clock only where a progress line can be seen
            threading.Thread(target=self._tick, name="fpgacomm progress clock", daemon=True).start()
        try:
            yield self
        finally:
            self.stopped.set()
            with self.lock:
                self.clock = None
                self.erase()
                sys.stdout, sys.stderr = self.stdout, self.stderr
                self.stdout = self.stderr = self.line_stream = None
                self.text = ""

    def _tick(self) -> None:
        """The clock's thread: the progress line redrawn every TICK seconds while a clock is set."""
        while not self.stopped.wait(TICK):
            with self.lock:
                if self.clock is not None and self.draws:
                    self.show(self.clock())

    def run_clock(self, line) -> None:
        """line(): the progress line's text, drawn now and redrawn every
        TICK seconds (its clock moves) until hide()."""
        with self.lock:
            self.clock = line
            self.show(line())

    @property
    def draws(self) -> bool:
        """Whether a progress line can be seen (live, on a terminal)."""
        return self.line_stream is not None

    def show(self, text: str) -> None:
        """Draws `text` as the progress line, in place of the one before."""
        if not self.draws:
            return
        with self.lock:
            self.text = text[: max(self.columns - 1, 1)]  # one row: a wrapped line could not be erased whole
            self._draw()

    def erase(self) -> None:
        """Erases the progress line, if one is drawn (before other output, and at the end)."""
        with self.lock:
            if self.on_screen:
                self._raw(ERASE)
                self.on_screen = False

    def hide(self) -> None:
        """Erases the progress line and forgets it, its clock stopped (the
        run it told of is over, or is ending: before any ending message)."""
        with self.lock:
            self.clock = None
            self.erase()
            self.text = ""

    def write(self, real, text: str) -> int:
        """`text` on the real stream `real`: the progress line erased before,
        drawn again after a finished line. Where the line shares stdout (both
        streams on one terminal), text for stderr goes there too, from the
        first write on: under mpirun the two reach the terminal by separate
        channels in no fixed order, so a warning printed before the first
        row could otherwise land inside a row or a progress line."""
        with self.lock:
            if self.draws and self.text:
                self.erase()
            if self.line_stream is not None and self.line_stream is self.stdout:
                real = self.stdout
            try:
                real.write(text)
                real.flush()
            except BrokenPipeError:
                if real is not self.stdout:
                    raise
                # The reader left (`| head -1`) in mid-sweep: the other ranks
                # still need this one, so the run goes on, printing nowhere.
                silence_stdout()
            if text.endswith("\n") and self.text:
                self._draw()
        return len(text)

    def _draw(self) -> None:
        self._raw(f"{ERASE}{self.text}")
        self.on_screen = True

    def _raw(self, text: str) -> None:
        try:
            self.line_stream.write(text)
            self.line_stream.flush()
        except (BrokenPipeError, AttributeError):
            pass


class _Routed:
    """A stream whose writes go through the Screen; the rest is the real stream's."""

    def __init__(self, screen: Screen, real):
        self._screen, self._real = screen, real

    def write(self, text: str) -> int:
        return self._screen.write(self._real, text)

    def __getattr__(self, name):
        return getattr(self._real, name)


SCREEN = Screen()


def silence_stdout() -> None:
    """stdout goes nowhere from now on: the reader of a pipe left, and no
    later print or final flush may fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Progress:
    """`osu bw: 12 of 23 sizes measured, 14 s, about 30 s left` as the
    progress line, from the start (or once the run has gone on
    progress_after() seconds), its clock moving every second; update(state)
    is the benchmarks' on_progress. The time left: the time so far for the
    work done (sweep.work_done reads it from the state), spread over the
    work to do, counting down between two updates. Draws nothing where the
    Screen draws nothing."""

    def __init__(self, label: str, screen: Screen = SCREEN):
        self.label, self.screen = label, screen
        self.start = time.perf_counter()
        self.after = progress_after()
        self.state = ""
        self.left_at = None  # (the time of the latest update, the seconds left estimated then)
        if self.after == 0:
            screen.run_clock(self.line)

    def update(self, state: str) -> None:
        """state: how far the run is ("12 of 23 sizes measured")."""
        now = time.perf_counter()
        self.state = state
        done = work_done(state)
        if done:
            self.left_at = (now, (now - self.start) * (1 - done) / done)
        if now - self.start >= self.after:
            self.screen.run_clock(self.line)

    __call__ = update

    def line(self) -> str:
        """The progress line's text now."""
        now = time.perf_counter()
        parts = [self.state] if self.state else []
        parts.append(f"{now - self.start:.0f} s")
        if self.left_at is not None:
            since, left = self.left_at
            parts.append(f"about {max(left - (now - since), 0):.0f} s left")
        return f"{self.label}: {', '.join(parts)}"


class LiveText:
    """on_row for a benchmark function: prints the new lines of the text of
    each Result so far and shows how far the sweep is; finish() prints the
    rest of the finished Result's."""

    def __init__(self, label: str, full: bool = False, screen: Screen = SCREEN):
        self.full = full
        self.printed = 0
        self.progress = Progress(label, screen)

    def __call__(self, result) -> None:
        self._show(result)
        self.progress.update(result.incomplete)

    def finish(self, result) -> None:
        self.progress.screen.hide()
        self._show(result)

    def _show(self, result) -> None:
        lines = format_text(result, full=self.full).split("\n")
        if len(lines) > self.printed:
            print("\n".join(lines[self.printed :]), flush=True)
            self.printed = len(lines)
