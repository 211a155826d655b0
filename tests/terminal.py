"""Reading what a process writes to a pseudo-terminal, as a terminal would."""

import os
import time


def read_terminal(leader: int, written: bytes = b"", until: bytes | None = None, seconds: float | None = None) -> bytes:
    """`written` and what the pty's leader `leader` gives after it: up to
    the end (the terminal's last writer gone), or until `until` stands in
    the whole, or `seconds` have passed."""
    deadline = None if seconds is None else time.monotonic() + seconds
    while (until is None or until not in written) and (deadline is None or time.monotonic() < deadline):
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's last writer has gone
            break
        if not chunk:
            break
        written += chunk
    return written
