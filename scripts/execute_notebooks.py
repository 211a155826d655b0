#!/usr/bin/env python3
"""Executes notebooks headless, top to bottom, in a scratch folder, with this
interpreter (the one fpgacomm is installed in) as their kernel, Agg figures
and mpirun allowed as root. The repository keeps its notebooks executed, so
that they show their tables and figures when read as files:

    .venv/bin/python scripts/execute_notebooks.py            # every notebook, stored with its outputs
    .venv/bin/python scripts/execute_notebooks.py osu.ipynb  # one

tests/test_notebooks.py executes them again with `execute` below.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def execute(path: Path, workdir: Path, timeout: float):
    """The notebook at `path`, executed in `workdir`; raises
    nbclient's CellExecutionError, naming the cell, on any error."""
    import nbclient
    import nbformat

    with tempfile.TemporaryDirectory(prefix="fpgacomm-kernel-") as jupyter:
        spec = Path(jupyter) / "kernels" / "python3"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (fpgacomm)", "language": "python"}))
        saved = dict(os.environ)
        os.environ.update(JUPYTER_PATH=os.pathsep.join([jupyter, os.environ.get("JUPYTER_PATH", "")]),
                          MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1",  # the debugger warns on frozen modules
                          OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        try:
            notebook = nbformat.read(path, as_version=4)
            nbclient.NotebookClient(notebook, timeout=timeout, kernel_name="python3", record_timing=False,
                                    resources={"metadata": {"path": str(workdir)}}).execute()
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
