"""fpgacomm: measure and model communication between accelerators.

The benchmarks are functions taking an mpi4py communicator (default
COMM_WORLD) and returning a Result: ``fpgacomm.osu.latency(mem=("D", "D"))``.
MPI is imported lazily, at the thread level fpgacomm needs (fpgacomm.mpi).

The package is built in layers, each importing only those below it
(docs/ARCHITECTURE.md): params and schedules, runtime, results, models,
simulation, benchmarks, figures, suite, cli. The modules users reach for
are attributes of the package by short names (``fpgacomm.osu``,
``from fpgacomm import plot``), each imported when first used, so that
``import fpgacomm`` stays quick and loads neither MPI nor Matplotlib.
Importing it changes nothing outside the package (the OpenCL registry is
chosen where fpgacomm opens OpenCL, runtime.devices.configure_runtime),
except in a rank that an MPI launcher started, where OpenBLAS is told to
start no threads unless the user said how many (runtime.launched).
"""

import importlib

from .runtime.launched import one_blas_thread_per_rank

one_blas_thread_per_rank()  # before anything loads NumPy

from ._core import __version__
from .benchmarks.launch import launch
from .results.compare import compare
from .results.result import Result, load
from .results.validation import validate

# Short public name -> module in its layer.
PUBLIC_MODULES = {
    "mpi": "runtime.mpi",
    "devices": "runtime.devices",
    "environment": "runtime.environment",
    "result": "results.result",
    "stats": "results.stats",
    "report": "results.report",
    "fit": "models.fit",
    "fabric": "simulation.fabric",
    "fabric_resources": "simulation.resources",
    "gather_sim": "simulation.gather",
    "osu": "benchmarks.osu",
    "collectives": "benchmarks.collectives",
    "onesided": "benchmarks.onesided",
    "beff": "benchmarks.beff",
    "gather": "benchmarks.gather",
    "devbw": "benchmarks.devbw",
    "overhead": "benchmarks.overhead",
    "plot": "figures.plot",
}

# Calibration and prediction (they load the simulator), imported when first used.
CALIBRATION_NAMES = ("calibrate", "Platform", "predict")

__all__ = ["__version__", "Result", "compare", "launch", "load", "validate", *CALIBRATION_NAMES, *PUBLIC_MODULES]


def __getattr__(name):
    if name in PUBLIC_MODULES:
        module = importlib.import_module(f"{__name__}.{PUBLIC_MODULES[name]}")
        globals()[name] = module  # later look-ups find it without this function
        return module
    if name in CALIBRATION_NAMES:
        return getattr(importlib.import_module(f"{__name__}.calibration.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
