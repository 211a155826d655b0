"""bench/mpi_window.py, the staged wire pattern in plain MPI, under mpirun."""

import sys
from pathlib import Path

import pytest
from processes import mpirun

pytestmark = pytest.mark.mpi

PROBE = str(Path(__file__).resolve().parents[1] / "bench" / "mpi_window.py")


def test_every_pattern_moves_its_chunks_intact():
    run = mpirun(
        2,
        sys.executable,
        PROBE,
        "--chunk",
        "64K",
        "--bytes",
        "1M",
        "--slots",
        "3",
        "--pieces",
        "2",
        "--reps",
        "2",
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split(" chunk")[0] for line in lines] == ["all", "stream depth 3", "slots depth 3"]
    assert all("chunk 65536 x2 bytes 1048576: median" in line and line.endswith("data intact") for line in lines)


def test_bad_input_is_named_with_its_fix():
    run = mpirun(3, sys.executable, PROBE, timeout=120)
    assert run.returncode != 0 and "needs exactly 2 ranks, got 3; run it under mpirun -np 2" in run.stderr
    run = mpirun(2, sys.executable, PROBE, "--bytes", "10M", "--patterns", "all,ring", timeout=120)
    assert run.returncode != 0
    assert "--bytes 10485760 is not a multiple of --chunk 4194304" in run.stderr
    assert "unknown pattern(s) ring; choose all, stream or slots" in run.stderr
    assert "Traceback" not in run.stderr and run.stderr.count("mpi_window:") == 1
