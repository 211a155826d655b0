"""The files a command will write, checked before anything is measured or
simulated, so that a long run never ends in a result it cannot save.

Rank 0 writes every output, so rank 0 checks, and under mpirun every rank
takes its verdict: all of them stop with the same message, or none does.
"""

from __future__ import annotations

import os
import tempfile

from ..params import usage_error
from .options import launch_rank, launch_size

# The options that name a file to write, and the suffix the file must have.
FILES = {"json": ".json", "csv": ".csv", "timeline": ".json"}
# The option that names a folder to write into (the suite's).
FOLDER = "outdir"


def problem(args) -> str | None:
    """What stops the command from writing its outputs, or None."""
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
