"""Starts the MPI test modules under mpirun, once per rank count, and the
fault scenarios where one rank fails or hangs while the others wait."""

import sys

import pytest
from processes import HERE, mpirun

pytestmark = pytest.mark.mpi

PYTHON = sys.executable

# Each module of tests/mpi and the rank counts it runs under (one mpirun each).
# b_eff runs on rings of every size: one rank exchanges with itself, three make an odd ring.
MODULES = {
    "test_pt2pt.py": (2, 4),
    "test_collectives.py": (2, 3, 4),
    "test_onesided.py": (2, 3, 4),
    "test_beff.py": (1, 2, 3, 4),
    "test_gather.py": (2, 3, 4),
    "test_overhead.py": (2, 3),
}


@pytest.mark.parametrize("module,ranks", [(module, ranks) for module, counts in MODULES.items() for ranks in counts])
def test_mpi_modules(module, ranks):
    run = mpirun(
        ranks, PYTHON, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", str(HERE / "mpi" / module), timeout=900
    )
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout


def test_one_rank_failing_ends_the_job_with_its_error():
    run = mpirun(2, PYTHON, str(HERE / "mpi" / "fault.py"), "raise", timeout=120)
    assert run.returncode != 0
    assert "fpgacomm: error on rank 1" in run.stderr or "internal error on rank 1" in run.stderr, run.stderr
    assert "injected fault" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_hanging_rank_is_ended_by_the_time_limit():
    run = mpirun(2, PYTHON, str(HERE / "mpi" / "fault.py"), "hang", timeout=120)
    assert run.returncode != 0
    assert "time limit of 5 s exceeded" in run.stderr, run.stderr
