"""The suite's two sets: `fpgacomm suite` (the quick set, README's first
command through `make suite`) and `fpgacomm suite --full` (every entry),
each saying its set and expected time before it starts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fpgacomm import suite

SHORT = ["-m", "8", "-i", "3", "-x", "1", "--beff-max-size", "2", "--beff-repetitions", "1"]


@pytest.mark.mpi
def test_the_quick_set_writes_its_entries_and_says_its_time_first(tmp_path):
    environment = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", MPLBACKEND="Agg")
    run = subprocess.run(
        ["mpirun", "-np", "2", "--oversubscribe", sys.executable, "-m", "fpgacomm", "suite", "out", *SHORT],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith("suite: the quick set, 13 parts, about 3 minutes on an idle 2-core machine"), first
    assert "--full runs all 36, about 25 minutes" in first
    folder = tmp_path / "out" / "latest"
    measured = sorted(path.stem for path in folder.glob("*.json") if not path.name.startswith(("sim", "fit_")))
    assert measured == sorted(suite.QUICK_ENTRIES)
    assert "status: complete" in (folder / suite.MARKER).read_text()
    assert len(list(folder.glob("sim*.json"))) >= 7 and (folder / "summary.txt").exists()


def test_the_full_set_is_every_entry_and_says_so():
    assert len(suite.chosen(suite.STANDARD_SET, True)) == len(suite.STANDARD_SET) == 32
    assert suite.expected_time(True).startswith("suite: the full set, 36 parts, about 25 minutes on an idle 2-core")
    every = {name for name, *_ in suite.STANDARD_SET + suite.BEFF_SET + suite.GATHER_SET}
    assert set(suite.QUICK_ENTRIES) < every  # no quick entry names one the suite lacks


def test_make_suite_runs_the_quick_set():
    makefile = (Path(__file__).resolve().parents[1] / "Makefile").read_text()
    suite_rule = makefile.split("\nsuite:", 1)[1].split("\n\n", 1)[0]
    assert "fpgacomm suite $(RESULTS)" in suite_rule and "--full" not in suite_rule
