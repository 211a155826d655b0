"""MPI through mpi4py, imported lazily, at OSU Micro-Benchmarks' thread level.

OSU Micro-Benchmarks 7.4 calls MPI_Init, which gives MPI_THREAD_SINGLE in
Open MPI, and some MPI libraries charge every call made at a higher level
(Open MPI 4.1 about 0.2 us per small message at MPI_THREAD_FUNNELED). So
fpgacomm starts MPI at "single" unless asked otherwise (`init`, or the
command's --thread-level). That is sound with the OpenCL runtimes' own
threads (PoCL's pthread workers, NVIDIA's driver threads, the Intel FPGA
emulator's TBB workers) and with fpgacomm's watchdog thread: none of them
ever calls MPI; only the thread that called fpgacomm does. The level asked
for and the one MPI provided are recorded in every Result.
"""

from __future__ import annotations

import sys

THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")
DEFAULT_THREAD_LEVEL = "single"


def init(thread_level: str | None = None):
    """Starts MPI at `thread_level` (one of THREAD_LEVELS; default
    "single", what MPI_Init gives) and returns the mpi4py.MPI module.

    Call it before anything else uses MPI. Once MPI runs, asking for a
    level other than the one it provides is a usage error naming both
    (MPI cannot change its thread level after starting); None accepts
    whatever runs."""
    from .. import params as errors

    if thread_level is not None and thread_level not in THREAD_LEVELS:
        raise errors.usage_error(f"unknown MPI thread level '{thread_level}'; choose {', '.join(THREAD_LEVELS)}")
    if "mpi4py.MPI" not in sys.modules:
        import mpi4py

        mpi4py.rc.thread_level = thread_level or DEFAULT_THREAD_LEVEL
    from mpi4py import MPI as module

    if thread_level is not None and module.Is_initialized():
        provided = _level_name(module, module.Query_thread())
        if provided != thread_level:
            raise errors.usage_error(
                f"MPI already runs at thread level {provided}, so it cannot give the thread level {thread_level} "
                f"asked for; ask for it before MPI's first use (fpgacomm.mpi.init(thread_level='{thread_level}') "
                "before importing mpi4py.MPI or running a benchmark), or drop the request")
    return module


def MPI():
    """The mpi4py.MPI module, starting MPI at the default level on first use."""
    return init()


def world():
    return MPI().COMM_WORLD


def resolve(comm=None):
    """`comm`, or COMM_WORLD when None."""
    return world() if comm is None else comm


def thread_levels() -> dict:
    """The MPI thread level asked for (mpi4py.rc) and the one provided."""
    mpi = MPI()
    import mpi4py

    return {"requested": mpi4py.rc.thread_level, "provided": _level_name(mpi, mpi.Query_thread())}


def _level_name(module, level: int) -> str:
    names = {module.THREAD_SINGLE: "single", module.THREAD_FUNNELED: "funneled",
             module.THREAD_SERIALIZED: "serialized", module.THREAD_MULTIPLE: "multiple"}
    return names.get(level, str(level))
