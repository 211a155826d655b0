"""Interrupts (SIGINT, SIGTERM) that stop a run at once, on the rank that got
the signal, even inside the C++ loops.

Python runs its signal handlers only between calls into the core, so a sweep
of minutes would hold Ctrl-C until it ends. install() makes both signals
raise Interrupted (a KeyboardInterrupt): in Python at once, and in the core's
loops at their next iteration (docs/METHODS.md, "Interrupts"). The command
installs it; a script may too. Other ranks learn of it only when the front
end ends the job (fpgacomm's command aborts every rank), since a collective
run cannot go on without one of its ranks.
"""

from __future__ import annotations

import signal

from .. import _core

SIGNALS = (signal.SIGINT, signal.SIGTERM)
Interrupted = _core.Interrupted


def install() -> None:
    """SIGINT and SIGTERM raise Interrupted from now on (main thread only)."""
    for number in SIGNALS:
        signal.signal(number, _raise_once)
    _core.install_interrupt_handler()  # after Python's: it chains to them


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
    """The shell's status for a process ended by the signal: 130 for SIGINT, 143 for SIGTERM."""
    return 128 + getattr(error, "signal", signal.SIGINT)
