"""Every notebook in notebooks/ is stored executed, with its tables and
figures, and runs again headless, top to bottom, without an error, through
the Jupyter kernel it names, fpgacomm, which scripts/setup.sh registers
for this environment (scripts/execute_notebooks.py stores them). How fast they run is no test's
business: the cell time limit only stops a notebook that hangs."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Seconds a cell may take before it counts as hung (a whole notebook takes
# 10-45 s on the 2-core development machine).
CELL_TIME_LIMIT = 300
REQUIRED = {"osu", "beff", "packets", "gather"}

try:
    import ipykernel  # noqa: F401  (the kernel nbclient starts)
    import nbclient  # noqa: F401
    import nbformat  # noqa: F401

    MISSING = None
except ImportError as error:
    MISSING = (
        f"nbclient is not importable ({error}); scripts/setup.sh installs Debian's python3-nbclient, "
        f"python3-ipykernel and python3-nbformat, which a machine without network cannot fetch"
    )


def _executor():
    spec = importlib.util.spec_from_file_location("execute_notebooks", ROOT / "scripts" / "execute_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_experiments_have_their_notebooks():
    assert REQUIRED <= {path.stem for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_stored_executed_with_its_figures(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "fpgacomm"  # the kernel scripts/setup.sh registers
    assert notebook["cells"][0]["cell_type"] == "markdown"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert [cell["execution_count"] for cell in code] == list(
        range(1, len(code) + 1)
    ), f"{path.name} is not stored executed top to bottom: run scripts/execute_notebooks.py {path.name}"
    outputs = [output for cell in code for output in cell["outputs"]]
    assert not [output for output in outputs if output["output_type"] == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs), f"{path.name} stores no figure"


def test_the_fpgacomm_kernel_runs_this_environment():
    """The kernel the notebooks name starts the interpreter fpgacomm is installed in."""
    if MISSING:
        pytest.skip(MISSING)
    interpreter = _executor().kernel_interpreter("fpgacomm")
    assert (
        Path(interpreter).absolute() == Path(sys.executable).absolute()
    ), f"the kernel fpgacomm starts {interpreter}, not {sys.executable}: rerun scripts/setup.sh"


def launches_ranks(path: Path) -> bool:
    """Whether a notebook's code starts ranks (mpirun, or fpgacomm.launch, which starts mpirun): its
    run is marked mpi, as tests/conftest.py cannot see what the kernel, a process of its own, starts."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    code = "".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    return "mpirun" in code or "launch(" in code


@pytest.mark.slow  # a kernel started for each
@pytest.mark.parametrize(
    "path",
    [pytest.param(path, marks=[pytest.mark.mpi] if launches_ranks(path) else []) for path in NOTEBOOKS],
    ids=lambda path: path.name,
)
def test_notebook_runs_headless(path, tmp_path):
    if MISSING:
        pytest.skip(MISSING)
    _executor().execute(path, tmp_path, timeout=CELL_TIME_LIMIT)  # raises CellExecutionError on any error
