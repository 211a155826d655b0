"""fpgacomm.launch: a benchmark on N fresh MPI ranks from a process that is
not one of them (a notebook, a script), the Result handed back."""

import os
import subprocess
import sys

import fpgacomm
import pytest
from fpgacomm import _core, collectives, osu

pytestmark = pytest.mark.mpi


@pytest.fixture(autouse=True)
def mpirun_as_root(monkeypatch):
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def test_a_point_to_point_benchmark_on_two_ranks_comes_back_as_its_result():
    result = fpgacomm.launch(2, osu.latency, mem=("H", "D"), sizes="1:64", iterations=20, warmup=2, validate=True)
    assert result.benchmark == "osu_latency"
    assert [row["size"] for row in result.rows] == [1, 2, 4, 8, 16, 32, 64]
    assert all(row["validation"] == "pass" and row["latency_avg"] > 0 for row in result.rows)
    assert (result.params["send_kind"], result.params["recv_kind"]) == ("H", "D")
    assert result.env["ranks"] == 2


def test_the_caller_never_starts_mpi_and_may_have_started_it_itself():
    script = (
        "import sys, fpgacomm; from fpgacomm import osu\n"
        "first = fpgacomm.launch(2, osu.latency, sizes=8, iterations=5).rows[0]['size']\n"
        "print(first, 'mpi4py.MPI' in sys.modules)\n"
        "from mpi4py import MPI  # the caller starts MPI: launch must still start a job of its own\n"
        "print(fpgacomm.launch(2, osu.latency, sizes=16, iterations=5).rows[0]['size'])"
    )
    # env: os.environ as Python sees it, without what MPI started in this test process adds
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["8", "False", "16"]


def test_three_ranks_and_a_benchmark_named_by_text():
    result = fpgacomm.launch(
        3, "fpgacomm.benchmarks.collectives:allreduce", sizes="4:16", iterations=5, warmup=1, validate=True
    )
    assert result.benchmark == "osu_allreduce" and result.env["ranks"] == 3
    assert all(row["validation"] == "pass" for row in result.rows)


def test_a_bad_option_comes_back_as_the_same_usage_error():
    with pytest.raises(_core.UsageError, match="unknown memory kind 'X'") as error:
        fpgacomm.launch(2, osu.bw, mem=("X", "H"), sizes="8")
    assert error.value.agreed


@pytest.mark.parametrize(
    "benchmark, ranks, message",
    [
        (print, 2, "'builtins:print' is not a benchmark function of fpgacomm"),
        ("fpgacomm.benchmarks.osu:nothing", 2, "is not a benchmark function of fpgacomm"),
        (collectives.allreduce, 0, "ranks must be a whole number of at least 1, got 0"),
    ],
)
def test_what_cannot_run_is_refused_before_anything_starts(benchmark, ranks, message):
    with pytest.raises(_core.UsageError, match=message):
        fpgacomm.launch(ranks, benchmark)


def test_a_missing_launcher_is_named():
    with pytest.raises(_core.UsageError, match="cannot find the MPI launcher 'no-such-mpirun'"):
        fpgacomm.launch(2, osu.latency, mpirun="no-such-mpirun")
