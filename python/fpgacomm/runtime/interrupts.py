"""Interrupts (SIGINT, SIGTERM, SIGHUP) that stop a run at once, on the rank
that got the signal, even inside the C++ loops, and even while it waits in
MPI for a peer that will never answer.

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
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from typing import Callable

from .. import _core

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
Interrupted = _core.Interrupted
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
    """The exception a signal raises: its message names the signal, `signal` holds its number."""
    error = Interrupted(f"interrupted by {_core.signal_name(number)}")
    error.signal = number
    return error


def exit_status(error: Interrupted) -> int:
    """The shell's status for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + getattr(error, "signal", signal.SIGINT)
