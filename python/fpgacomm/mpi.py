"""MPI through mpi4py, imported lazily and at the lowest thread level we need.

fpgacomm calls MPI only from the thread that called it, while the OpenCL
runtime runs threads of its own: that is MPI_THREAD_FUNNELED. mpi4py's
default, MPI_THREAD_MULTIPLE, costs latency in some MPI libraries, so we ask
for FUNNELED unless the user imported mpi4py first; the level MPI provided is
recorded in every Result.
"""

from __future__ import annotations

import sys

THREAD_LEVEL = "funneled"
_LEVEL_NAMES = {0: "single", 1: "funneled", 2: "serialized", 3: "multiple"}


def MPI():
    """The mpi4py.MPI module, initialising MPI at THREAD_LEVEL on first use."""
    if "mpi4py.MPI" not in sys.modules:
        import mpi4py

        mpi4py.rc.thread_level = THREAD_LEVEL
    from mpi4py import MPI as module

    return module


def world():
    return MPI().COMM_WORLD


def resolve(comm=None):
    """`comm`, or COMM_WORLD when None."""
    return world() if comm is None else comm


def thread_levels() -> dict:
    """The MPI thread level asked for (mpi4py.rc) and the one provided."""
    mpi = MPI()
    import mpi4py

    provided = mpi.Query_thread()
    return {"requested": mpi4py.rc.thread_level, "provided": _LEVEL_NAMES.get(provided, str(provided))}
