"""Interrupts (SIGINT, SIGTERM, SIGHUP, and the time limit) that stop a run
at once, on the rank that got the signal, even inside the C++ loops, and
even while it waits in MPI for a peer that will never answer.

Python runs its signal handlers only between calls into the core, so a sweep
of minutes would hold Ctrl-C until it ends. install() makes the three
signals raise Interrupted (a KeyboardInterrupt): in Python at once, and in
the core's loops at their next iteration (docs/METHODS.md, "Interrupts").
A rank blocked inside MPI (its peer stopped, or gone with its host) reaches
no next iteration: with `on_blocked`, install() also starts a watcher thread
that the signal wakes (Python's wakeup file descriptor, written by the C
handler at once); when nothing took the interrupt within GRACE seconds,
the watcher runs what the code running asked for (on_stop) and hands it to
on_blocked, which ends the process. The timed loops
stay as they are: nothing polls in them. The command installs it; a script
may too. Other ranks learn of it only when the front end ends the job
(fpgacomm's command aborts every rank), since a collective run cannot go on
without one of its ranks.

The time limit (--timeout) takes the same path on rank 0: stop() sends
SIGALRM to the main thread, so the run stops and saves as on SIGTERM, and
only a rank that has not ended TIME_LIMIT_GRACE seconds after its limit is
ended outright (cli/command.py, start_watchdog).

Writing what was measured may take longer than the launcher allows:
Open MPI's mpirun, interrupted, sends its ranks SIGTERM and SIGKILL one
second later. outliving(write) writes in a child process of its own
session, which that SIGKILL does not reach, and waits for it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import threading
import time
from collections.abc import Callable

from .. import _core

# SIGALRM: the time limit's (stop()); the core's handler takes the same four.
TIME_LIMIT = signal.SIGALRM
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, TIME_LIMIT)
Interrupted = _core.Interrupted


def defer_result(stop: Interrupted, make: Callable[[], object], incomplete: str) -> None:
    """Gives `stop` the Result of what was measured, made by make() only
    when `stop.result` is first read: making it (merging rounds of millions
    of samples) takes most of a second, which a rank interrupted by mpirun
    does not have before its SIGKILL, so that the command makes it in the
    writing child of outliving() instead. `incomplete`: the Result's
    incomplete text, known at once, for what is said before it is made."""
    stop.__dict__.update(_make_result=make, _incomplete=incomplete)
    stop.__dict__.pop("_result", None)


def has_result(stop: BaseException) -> bool:
    """Whether `stop.result` holds a Result or would make one, without making it."""
    state = stop.__dict__
    return "_make_result" in state or state.get("_result", state.get("result")) is not None


def incomplete(stop: BaseException) -> str | None:
    """The incomplete text of `stop.result`, without making a deferred one."""
    state = stop.__dict__
    made = state.get("_result", state.get("result"))
    if made is not None:
        return made.incomplete
    return state.get("_incomplete") if "_make_result" in state else None


def _get_result(stop):
    state = stop.__dict__
    if "_make_result" in state:
        state["_result"] = state.pop("_make_result")()
    if state.get("_result") is None:
        raise AttributeError("result")  # getattr(stop, "result", None) gives None: nothing was measured
    return state["_result"]


def _set_result(stop, result) -> None:
    stop.__dict__.pop("_make_result", None)
    stop.__dict__["_result"] = result


# `stop.result`: made on first read where defer_result gave a maker, else
# set and read as any attribute (a script's `except Interrupted as stop:
# stop.result` and the simulations' `stop.result = ...` work as before).
# Interrupted is the core's exception type; the property goes on it here,
# beside the deferral it serves.
Interrupted.result = property(_get_result, _set_result)
# The exit status of a run ended by its time limit, as timeout(1) gives.
TIME_LIMIT_STATUS = 124
# Seconds a run has from its time limit to end by itself (rank 0 having
# saved what it measured) before the time limit ends each rank outright:
# rank 0's time to save, less how much later it started than the others;
# small enough that a job whose launcher must still be ended
# (runtime/launcher.py: its WAIT and KILL_AFTER) ends within the time
# limit + 10 s.
TIME_LIMIT_GRACE = 5.0
# Seconds a rank other than 0, interrupted, waits for rank 0 to save and
# end the job before it ends the job itself. Under Slurm a signal reaches
# every rank at once, and one rank's abort ends the whole step at once:
# rank 0 must have its turn first.
PEER_WAIT = 4.0
# Seconds a write of what was measured may take before it is announced,
# and before the job ends without waiting for it (below PEER_WAIT).
SLOW_WRITE = 0.3
WRITE_WAIT = 3.0
# Seconds a loop has to take an interrupt before its rank counts as blocked:
# above the time between two checks of the flag in most sweeps, and below
# the second Open MPI's mpirun gives its ranks between SIGTERM and SIGKILL
# when it is interrupted itself, so that rank 0 can still save.
GRACE = 0.5

# What the code running now does when an interrupt stops it (on_stop), for
# a watcher that ends a blocked rank; innermost last.
_on_stop: list = []
# The watcher's on_blocked: the one the latest install() gave.
_on_blocked: list = []


def install(on_blocked: Callable[[Interrupted], None] | None = None) -> None:
    """The three signals raise Interrupted from now on (main thread only).
    on_blocked(stop): called on the watcher thread with the Interrupted,
    once the on_stop callbacks of the code running have seen it (a sweep
    gives it its `result`), when the main thread has not taken the signal
    within GRACE seconds; it must end the process."""
    for number in SIGNALS:
        signal.signal(number, _raise_once)
    _core.install_interrupt_handler()  # after Python's: it chains to them
    if on_blocked is not None:
        if not _on_blocked:  # one watcher per process, however often install() runs
            read, write = os.pipe()
            os.set_blocking(write, False)
            signal.set_wakeup_fd(write, warn_on_full_buffer=False)
            threading.Thread(target=_watch, args=(read,), name="fpgacomm interrupt watcher", daemon=True).start()
        _on_blocked[:] = [on_blocked]


def _watch(read: int) -> None:
    while True:
        number = os.read(read, 1)[0]
        if number not in SIGNALS:
            continue  # another signal Python handles (SIGCHLD of a subprocess)
        time.sleep(GRACE)
        if _core.claim_interrupt():  # no loop and no Python handler took it: blocked
            stop = interrupted(number)
            for callback in reversed(list(_on_stop)):
                callback(stop)
            _on_blocked[0](stop)


@contextlib.contextmanager
def on_stop(callback: Callable[[Interrupted], None]):
    """Within the block, callback(stop) runs when the watcher ends this
    blocked rank, as an `except Interrupted` around the block would on the
    main thread (innermost first): the same handling on either path."""
    _on_stop.append(callback)
    try:
        yield
    finally:
        _on_stop.remove(callback)


def _raise_once(number, frame) -> None:
    # Python's handler runs again when a loop that already threw returns to
    # Python (the core's handler calls it too): one signal raises once.
    if _core.claim_interrupt():
        raise interrupted(number)


def interrupted(number: int) -> Interrupted:
    """The exception a signal raises: its message is what ended the run
    ("interrupted by SIGINT (Ctrl-C)", "time limit (--timeout)"), `signal` holds its number."""
    error = Interrupted(_core.interrupt_text(number))
    error.signal = number
    return error


def exit_status(error: Interrupted) -> int:
    """The shell's status for a process ended by the signal: 130 for
    SIGINT, 143 for SIGTERM, 129 for SIGHUP; TIME_LIMIT_STATUS for the time limit."""
    number = getattr(error, "signal", signal.SIGINT)
    return TIME_LIMIT_STATUS if number == TIME_LIMIT else 128 + number


def is_time_limit(error: BaseException) -> bool:
    """Whether the time limit ended the run (rather than a signal)."""
    return getattr(error, "signal", None) == TIME_LIMIT


# The monotonic time of the time limit (set_time_limit), None for none.
_deadline: list = [None]


def set_time_limit(seconds: float) -> None:
    """Notes the run's time limit, `seconds` from now (0: none), for time_left()."""
    _deadline[0] = time.monotonic() + seconds if seconds > 0 else None


def time_left() -> float | None:
    """Seconds until the time limit, None where there is none."""
    return None if _deadline[0] is None else _deadline[0] - time.monotonic()


def stop() -> None:
    """Asks the run to stop and save, as a signal would: SIGALRM to the
    main thread (from any thread; the time limit's watchdog calls it)."""
    signal.pthread_kill(threading.main_thread().ident, TIME_LIMIT)


class StillWriting(OSError):
    """outliving's write goes on in process `pid` after WRITE_WAIT seconds."""

    def __init__(self, pid: int):
        super().__init__(f"process {pid} is still writing it, and finishes by itself")
        self.pid = pid


def outliving(
    write: Callable[[], None], slow: Callable[[], None] = lambda: None, wait: float | None = WRITE_WAIT
) -> None:
    """Runs write() in a child process of its own session and waits for
    it, calling slow() when it has not ended within SLOW_WRITE seconds (to
    say what is being written, in case the launcher ends this process
    before the child is done); raises the child's error where the write
    failed (an OSError: a WriteError stays one), StillWriting
    where it has not ended within `wait` seconds (WRITE_WAIT: the job must
    end before its other ranks stop waiting for rank 0). wait=None: until
    the child ends (a finished run's files, which mpirun, interrupted after
    the other ranks ended, kills rank 0 for without a SIGTERM first); an
    Interrupted meanwhile leaves with `writing`, the child's pid, while the
    child writes on. A launcher's SIGKILL of this process (or of its
    process group) lets the child finish the write. The child only writes,
    and ends without running this process's exit handlers (MPI's
    finalisation among them), telling its error through a pipe (no lock a
    thread of the parent held at the fork can stop it). Where no child can
    be made, write() runs here."""
    read, report = os.pipe()
    # Until the child ignores them, the signals stay blocked in this thread and so in the child: a second
    # signal of the launcher's arriving before then would end the write (Python's handler runs in the child).
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        child = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(read)
        os.close(report)
        write()
        return
    if child == 0:
        os.close(read)
        status = 1
        try:
            try:
                os.setsid()
            except PermissionError:  # the parent has made it a process group of its own first: as good
                pass
            for number in SIGNALS:  # the write ends by itself, in bounded time
                signal.signal(number, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            write()
            status = 0
        except BaseException as error:  # noqa: BLE001: the parent raises it, an OSError (a WriteError stays one)
            text = OSError(str(error)[:4000])
            try:
                told = pickle.dumps(error if isinstance(error, OSError) else text)
            except Exception:  # noqa: BLE001: one that does not pickle goes as its text
                told = pickle.dumps(text)
            os.write(report, told)
        finally:
            os._exit(status)
    try:
        # The parent moves the child out of its process group as well (whichever of the two comes first): a
        # launcher's SIGKILL of the group may come before a loaded machine has run the child at all.
        try:
            os.setpgid(child, child)
        except OSError:  # the child has already made a session of its own
            pass
        os.close(report)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a signal held meanwhile raises here, after the fork
        if wait is None:
            select.select([read], [], [])  # the pipe is readable (at EOF) once the child ended
    except Interrupted as stop:  # the child writes on, and ends by itself
        os.close(read)
        stop.__dict__["writing"] = child
        raise
    if wait is not None and not select.select([read], [], [], min(SLOW_WRITE, wait))[0]:
        slow()
        if not select.select([read], [], [], max(0.0, wait - SLOW_WRITE))[0]:
            os.close(read)  # the child writes on, and ends by itself
            raise StillWriting(child)
    with os.fdopen(read, "rb") as errors:
        failure = errors.read()  # up to the child's end
    status = os.waitpid(child, 0)[1]
    if failure:
        raise pickle.loads(failure)  # what our own child sent
    if status != 0:
        raise OSError(f"the writing process ended with status {status}")
