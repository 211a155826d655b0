#!/usr/bin/env python3
"""Executes notebooks headless, top to bottom, in a scratch folder, through
the Jupyter kernel they name, "fpgacomm" (scripts/setup.sh registers it for
the environment fpgacomm is installed in), with Agg figures and mpirun
allowed as root. The repository keeps its notebooks executed, so that they
show their tables and figures when read as files:

    .venv/bin/python scripts/execute_notebooks.py            # every notebook, stored with its outputs
    .venv/bin/python scripts/execute_notebooks.py osu.ipynb  # one

tests/test_notebooks.py executes them again with `execute` below.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


KERNEL = "fpgacomm"


def kernel_interpreter(name: str = KERNEL) -> str:
    """The interpreter the registered kernel `name` starts, as Jupyter
    started from this environment finds it; a RuntimeError saying how to
    register it where there is none."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        return KernelSpecManager().get_kernel_spec(name).argv[0]
    except NoSuchKernel:
        raise RuntimeError(
            f"no Jupyter kernel {name!r} for {sys.prefix}: scripts/setup.sh registers it "
            f"({sys.executable} -m ipykernel install --sys-prefix --name {name})"
        ) from None


def execute(path: Path, workdir: Path, timeout: float):
    """The notebook at `path`, executed in `workdir` through the kernel
    its metadata names; raises nbclient's CellExecutionError, naming the
    cell, on any error."""
    import nbclient
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    kernel = notebook.metadata["kernelspec"]["name"]
    kernel_interpreter(kernel)  # registered, or a message saying how
    saved = dict(os.environ)
    os.environ.update(
        MPLBACKEND="Agg",
        PYDEVD_DISABLE_FILE_VALIDATION="1",  # the debugger warns on frozen modules
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
    )
    try:
        nbclient.NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name=kernel,
            record_timing=False,
            resources={"metadata": {"path": str(workdir)}},
        ).execute()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return notebook


def main(names: list[str]) -> int:
    import nbformat

    paths = [NOTEBOOKS / name for name in names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="fpgacomm-notebook-") as workdir:
            notebook = execute(path, Path(workdir), timeout=600)
        notebook.metadata.pop("widgets", None)
        nbformat.write(notebook, path)
        print(f"{path.name}: executed and stored")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
