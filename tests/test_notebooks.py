"""Every notebook in notebooks/ is stored clean and runs headless, top to
bottom, without an error and within its time limit."""

import json
import os
import sys
import time
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
TIME_LIMIT = 45  # seconds per notebook on the 2-core development machine
REQUIRED = {"osu", "beff", "packets"}

try:
    import nbclient
    import nbformat
    import ipykernel  # noqa: F401  (the kernel nbclient starts)
except ImportError as error:
    nbclient = None
    MISSING = (f"nbclient is not importable ({error}); scripts/setup.sh installs Debian's python3-nbclient, "
               f"python3-ipykernel and python3-nbformat, which a machine without network cannot fetch")


def test_the_experiments_have_their_notebooks():
    assert REQUIRED <= {path.stem for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_stored_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code and all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)
    assert notebook["cells"][0]["cell_type"] == "markdown"


@pytest.fixture
def kernel_environment(tmp_path, monkeypatch):
    """A "python3" kernel running this interpreter (the one fpgacomm is
    installed in), found first on JUPYTER_PATH; Agg figures; mpirun allowed
    as root, as the tests run here."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (fpgacomm tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(tmp_path / "jupyter"), os.environ.get("JUPYTER_PATH", "")]))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger warns on frozen modules
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_runs_headless_in_time(path, kernel_environment):
    if nbclient is None:
        pytest.skip(MISSING)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=TIME_LIMIT, kernel_name="python3",
                                     resources={"metadata": {"path": str(kernel_environment)}})
    start = time.monotonic()
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error
    elapsed = time.monotonic() - start
    assert elapsed < TIME_LIMIT, f"{path.name} took {elapsed:.1f} s; the limit is {TIME_LIMIT} s"
    print(f"{path.name}: {elapsed:.1f} s")
