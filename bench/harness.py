"""What the speed benchmarks share: Open MPI's root variables, building a
plain-C reference into a shared library, and handing figures from inside
mpirun back to the driver."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Open MPI refuses to start as root unless told it may.
ENV = dict(
    os.environ, **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if os.geteuid() == 0 else {})
)


def build_reference(name: str) -> Path:
    """Compiles bench/reference/NAME.c with mpicc into build/bench/NAME.so."""
    library = ROOT / "build" / "bench" / f"{name}.so"
    library.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mpicc", "-O2", "-shared", "-fPIC", "-o", str(library), str(ROOT / "bench" / "reference" / f"{name}.c")],
        check=True,
    )
    return library


def write_part(path: str, figures) -> None:
    """Inside mpirun: rank 0 writes the figures for the driver to read."""
    from fpgacomm import mpi

    if mpi.world().Get_rank() == 0:
        Path(path).write_text(json.dumps(figures))
