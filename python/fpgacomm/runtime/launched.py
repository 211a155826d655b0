"""What the MPI launcher (mpirun, srun) told this process, read from its
environment without starting MPI: its rank, the job's size, and whether it
is a rank at all."""

from __future__ import annotations

import os

_RANK_VARIABLES = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
_SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")


def launch_rank() -> int:
    """This process's rank as the MPI launcher says, without starting MPI."""
    for variable in _RANK_VARIABLES:
        if variable in os.environ:
            return int(os.environ[variable])
    return 0


def launch_size() -> int:
    """The number of ranks the MPI launcher started, without starting MPI."""
    for variable in _SIZE_VARIABLES:
        if variable in os.environ:
            return int(os.environ[variable])
    return 1


def one_blas_thread_per_rank() -> None:
    """In a rank a launcher started, and unless the user chose otherwise, let
    OpenBLAS start no threads: NumPy's OpenBLAS starts one per core when it
    loads, and they spin for a while before they sleep. A rank measures, it
    does not multiply matrices; 32 ranks of a 64-core host spent 55-64 core
    seconds starting fpgacomm with them, 15 without (bench/RESULTS.md),
    beside the ranks being measured. Called before NumPy is first imported."""
    if any(variable in os.environ for variable in _RANK_VARIABLES):
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
