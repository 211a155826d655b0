"""The marks that split the suite (tests/conftest.py): a test that starts a
launcher without the mark mpi fails, at once and saying so, however it
starts it; a marked one runs. Checked on a small suite of its own, run by
pytest with this suite's conftest.py, in a folder of its own."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CASES = """
import os
import subprocess
import sys

import pytest

FAKE = {fake!r}


def test_unmarked_runs_the_launcher():
    subprocess.run([FAKE, "-np", "2", "true"], check=True)


def test_unmarked_swallows_the_refusal():
    try:
        subprocess.run([FAKE])
    except Exception:
        pass


def test_unmarked_shell_line():
    os.system("cd / && srun -n 2 true")


def test_unmarked_hands_on_a_command_line():
    subprocess.run([sys.executable, "-c", "pass", "--run", "mpirun -np 2 x"], check=True)


def test_unmarked_runs_another_program():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.mpi
def test_marked_runs_the_launcher():
    subprocess.run([FAKE], check=True)
"""

MODULE_MARKED = """
import subprocess

import pytest

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def launched():
    return subprocess.run([{fake!r}], check=True).returncode


def test_a_module_fixture_may_launch(launched):
    assert launched == 0
"""


def run_cases(folder: Path, *options) -> subprocess.CompletedProcess:
    fake = folder / "bin" / "mpirun"  # starts nothing: the check refuses it before it runs, or it exits 0
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    shutil.copy(HERE / "conftest.py", folder / "conftest.py")
    (folder / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers\nmarkers =\n    mpi: ranks\n    slow: long\n"
    )
    (folder / "test_cases.py").write_text(CASES.format(fake=str(fake)))
    (folder / "test_module_marked.py").write_text(MODULE_MARKED.format(fake=str(fake)))
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rf", *options],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "COLUMNS": "400"},  # summary lines whole
        timeout=120,
    )


def test_a_test_that_starts_a_launcher_without_the_mark_fails_and_names_it(tmp_path):
    run = run_cases(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    failed = re.findall(r"^FAILED test_cases\.py::(\w+)", run.stdout, re.MULTILINE)
    assert sorted(failed) == [
        "test_unmarked_hands_on_a_command_line",
        "test_unmarked_runs_the_launcher",
        "test_unmarked_shell_line",
        "test_unmarked_swallows_the_refusal",
    ], run.stdout
    for name in failed:
        launcher = "srun" if name == "test_unmarked_shell_line" else "mpirun"
        assert f"test_cases.py::{name} starts {launcher} but is not marked mpi: mark it" in run.stdout, run.stdout
    assert "4 failed, 3 passed" in run.stdout, run.stdout


def test_the_fast_set_leaves_the_marked_tests_out(tmp_path):
    run = run_cases(tmp_path, "-m", "not mpi and not slow", "test_module_marked.py")
    assert run.returncode == 5 and "1 deselected" in run.stdout, run.stdout  # 5: no test ran
