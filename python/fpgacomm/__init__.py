"""fpgacomm: measure and model communication between accelerators.

The benchmarks are functions taking an mpi4py communicator (default
COMM_WORLD) and returning a Result: ``fpgacomm.osu.latency(mem=("D", "D"))``.
MPI is imported lazily, at the thread level fpgacomm needs (fpgacomm.mpi).

The package is built in layers, each importing only those below it
(docs/ARCHITECTURE.md): params and schedules, runtime, results, models,
simulation, benchmarks, figures, suite, cli. The modules users import are
also reachable by their short names below (``import fpgacomm.osu``,
``from fpgacomm import plot``), loaded when first used.
"""

import importlib
import importlib.abc
import importlib.util
import sys

from ._core import __version__  # noqa: F401  (the build's version)
from .benchmarks.launch import launch  # noqa: F401  (a benchmark on N ranks from a notebook)
from .results.compare import compare  # noqa: F401  (runs against each other, size by size)
from .results.result import Result, load  # noqa: F401  (many Result files as one table: load)
from .results.validation import validate  # noqa: F401  (a prediction against held-out launches)
from .runtime.devices import use_user_icd_vendors

# Short public name -> module in its layer.
PUBLIC_MODULES = {
    "mpi": "runtime.mpi", "devices": "runtime.devices", "environment": "runtime.environment",
    "result": "results.result", "stats": "results.stats", "report": "results.report",
    "fit": "models.fit",
    "fabric": "simulation.fabric", "fabric_resources": "simulation.resources", "gather_sim": "simulation.gather",
    "osu": "benchmarks.osu", "collectives": "benchmarks.collectives", "onesided": "benchmarks.onesided",
    "beff": "benchmarks.beff", "gather": "benchmarks.gather", "devbw": "benchmarks.devbw",
    "overhead": "benchmarks.overhead", "plot": "figures.plot",
}


class _PublicNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Lets `import fpgacomm.osu` find fpgacomm.benchmarks.osu: the short name
    becomes one more name of the same module object."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, short = fullname.partition(".")
        if package == __name__ and short in PUBLIC_MODULES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        module = importlib.import_module(f"{__name__}.{PUBLIC_MODULES[spec.name.partition('.')[2]]}")
        spec.loader_state = module.__spec__  # the import system sets the alias's spec on the module
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state  # already executed under its own name; keep its spec


# Calibration and prediction (they load the simulator), imported when first used.
CALIBRATION_NAMES = ("calibrate", "Platform", "predict")


def __getattr__(name):
    if name in PUBLIC_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in CALIBRATION_NAMES:
        return getattr(importlib.import_module(f"{__name__}.calibration.api"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


sys.meta_path.append(_PublicNames())
use_user_icd_vendors()  # before any OpenCL call of any module
