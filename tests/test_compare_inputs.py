"""The same inputs everywhere (results/inputs.py): compare, plot, fit and
load take a file, a glob and a folder alike; a `compare --run` folder is
read as its launches, through its record (launches.json), and a glob over
it leaves the record out."""

import json
import os
import subprocess
import sys

import fpgacomm
import pytest
from fpgacomm.results.inputs import expand
from test_compare import rounds_file

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
SIZES = (1, 8, 64, 512, 4096)


def cli(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "fpgacomm", *args], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300
    )


def campaign(folder, statuses):
    """A command folder as compare --run leaves it: a Result per launch, each
    launch's stderr, and the record; the last launch here failed (its output
    is kept, and is no launch to compare)."""
    folder.mkdir(parents=True)
    for number in range(1, len(statuses) + 1):
        rounds_file(folder / f"{number:02d}.json", {s: [(1e-6 + s * 1e-9) * (1 + number / 50)] for s in SIZES})
        (folder / f"{number:02d}.err").write_text("")
    record = {
        "command": "mpirun -np 2 fpgacomm osu latency",
        "fpgacomm": True,
        "rounds": len(statuses),
        "launches": [
            {
                "launch": number,
                "output": f"{number:02d}.json",
                "status": status,
                "seconds": 1.0,
                "load_before": 0.1,
                "cores": 2,
            }
            for number, status in enumerate(statuses, start=1)
        ],
    }
    (folder / "launches.json").write_text(json.dumps(record))
    return folder


def test_a_run_folder_is_its_launches_and_a_glob_over_it_leaves_the_record_out(tmp_path):
    folder = campaign(tmp_path / "runs" / "A", [0, 0, 1])
    (folder / "notes.json").write_text("{}")  # no launch of the record: not read
    assert expand(folder) == [str(folder / "01.json"), str(folder / "02.json")]
    assert expand(str(folder / "*.json")) == [
        str(folder / name) for name in ("01.json", "02.json", "03.json", "notes.json")
    ]
    run = cli("compare", "runs/A", "runs/A/0*.json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "# A: runs/A (osu_latency, 2 launches): mpirun -np 2 fpgacomm osu latency" in run.stdout
    assert "# B: runs/A/0*.json (osu_latency, 3 launches)" in run.stdout


def test_plot_fit_and_load_take_files_globs_and_folders_alike(tmp_path):
    campaign(tmp_path / "A", [0])
    campaign(tmp_path / "B", [0])
    for given in (["A"], ["A/*.json"], ["A/01.json"]):
        fitted = cli("fit", *given, "--model", "hockney", cwd=tmp_path)
        assert fitted.returncode == 0 and "# hockney fit to osu_latency: A/01.json" in fitted.stdout, fitted.stderr
        assert [row["file"] for row in fpgacomm.load([str(tmp_path / path) for path in given]).rows] == [
            str(tmp_path / "A" / "01.json")
        ] * len(SIZES)
    drawn = cli("plot", "A", "B/*.json", "-o", "both.png", cwd=tmp_path)
    assert drawn.returncode == 0 and "2 Result(s) -> both.png" in drawn.stdout, drawn.stderr


@pytest.mark.parametrize(
    "command", [("compare", "A", "A"), ("plot", "A", "-o", "x.png"), ("fit", "A", "--model", "hockney")]
)
def test_a_broken_record_or_an_empty_folder_is_one_message(tmp_path, command):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "launches.json").write_text(json.dumps({"command": "x", "launches": [{"output": 1}]}))
    run = cli(*command, cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.count("error") == 1 and "Traceback" not in run.stderr
    assert "A/launches.json: launch 1 output: " in run.stderr and "compare --run writes" in run.stderr
    (tmp_path / "A" / "launches.json").unlink()
    run = cli(*command, cwd=tmp_path)
    assert run.returncode == 2 and "A: holds no Result files" in run.stderr, run.stderr
