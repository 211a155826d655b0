"""What a command writes: its files, checked before anything is measured or
simulated, so that a long run never ends in a result it cannot save; and
the one way every write fails, files and standard output alike: a
WriteError naming the file ("cannot write 'F': No space left on device"),
which the command reports as a usage error (status 2), the text already
printed left as it stands.

Rank 0 writes every output, so rank 0 checks, and under mpirun every rank
takes its verdict: all of them stop with the same message, or none does.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile

from ..params import usage_error
from ..results.result import WriteError
from ..runtime.launched import launch_rank, launch_size

# The options that name a file to write, and the suffix the file must have.
FILES = {"json": ".json", "csv": ".csv", "timeline": ".json"}
# The option that names a folder to write into (the suite's).
FOLDER = "outdir"


def problem(args) -> str | None:
    """What stops the command from writing its outputs, or None."""
    named = {}
    for option in FILES:
        path = getattr(args, option, None)
        if path:
            same = named.setdefault(os.path.realpath(path), option)
            if same != option:
                return (
                    f"--{same} and --{option} name the same file ({path}): one would overwrite the other; "
                    "give each its own"
                )
    for option, suffix in FILES.items():
        path = getattr(args, option, None)
        if not path:
            continue
        if not path.lower().endswith(suffix):
            return f"--{option} {path}: --{option} writes a {suffix[1:].upper()} file; give a name ending in {suffix}"
        if os.path.isdir(path):
            return f"--{option} {path}: that is a directory; give a file name"
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            return f"--{option} {path}: its directory does not exist; create it or give another path"
        trouble = _unwritable(directory)
        if trouble:
            return f"--{option} {path}: cannot write in {directory} ({trouble}); give another path"
    folder = getattr(args, FOLDER, None)
    if folder:
        if os.path.exists(folder) and not os.path.isdir(folder):
            return f"{folder}: a file, not a folder; give a folder for the results"
        existing = os.path.abspath(folder)
        while not os.path.isdir(existing):
            existing = os.path.dirname(existing)
        trouble = _unwritable(existing)
        if trouble:
            return f"{folder}: cannot write in {existing} ({trouble}); give another folder"
    return None


def _unwritable(directory: str) -> str | None:
    """Why a file cannot be made in `directory` (tried, as the writers make
    their temporary files there), or None."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".fpgacomm-probe-"):
            return None
    except OSError as error:
        return error.strerror or str(error)


def check(args) -> None:
    """A usage error, the same on every rank, when an output cannot be written."""
    if launch_size() > 1:
        from ..runtime import mpi

        world = mpi.world()
        found = world.bcast(problem(args) if world.Get_rank() == 0 else None, root=0)
    else:
        found = problem(args) if launch_rank() == 0 else None
    if found:
        raise usage_error(found)


STDOUT = "standard output"


class CheckedStream:
    """A text stream whose write errors are WriteErrors naming it (`fpgacomm
    model vcsn > /dev/full`), as the files' are. A closed pipe stays a
    BrokenPipeError: the reader left, which is no error of the writer's."""

    def __init__(self, stream, name: str = STDOUT):
        self._stream, self._name = stream, name
        self.wrapped = stream  # the stream it checks (live.Screen asks whether it is the process's own)

    def _checked(self, call, *args):
        try:
            return call(*args)
        except OSError as error:
            if error.errno == errno.EPIPE:
                raise
            raise WriteError(error.errno, error.strerror or str(error), self._name) from error

    def write(self, text):
        return self._checked(self._stream.write, text)

    def flush(self):
        return self._checked(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def check_stdout() -> None:
    """stdout's writes from now on fail as WriteErrors (main installs it once)."""
    if not isinstance(sys.stdout, CheckedStream):
        sys.stdout = CheckedStream(sys.stdout)
