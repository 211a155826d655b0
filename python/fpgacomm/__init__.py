"""fpgacomm: measure and model communication between accelerators.

The benchmarks are functions taking an mpi4py communicator (default
COMM_WORLD) and returning a Result: ``fpgacomm.osu.latency(mem=("D", "D"))``.
MPI is imported lazily, at the thread level fpgacomm needs (fpgacomm.mpi).
"""

from ._core import __version__  # noqa: F401  (the build's version)
from .devices import use_user_icd_vendors
from .result import Result  # noqa: F401

use_user_icd_vendors()  # before any OpenCL call of any module
