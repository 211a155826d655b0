"""The suite's figures are those of a plain run: its timed pass does not
validate, and validation is an untimed pass of its own whose verdict the
Result and the summary carry (run under mpirun with 2 ranks)."""

import json
import subprocess
import sys

import pytest
from fpgacomm import Result
from fpgacomm.suite import STANDARD_SET, VALIDATION_PASS, chosen
from processes import ENV, fpgacomm

pytestmark = pytest.mark.mpi

COUNTS = ("-i", "10", "-x", "1", "--rounds", "5")


def mpirun(*args, ranks=2, timeout=900):
    return subprocess.run(
        ["mpirun", "-np", str(ranks), sys.executable, "-m", "fpgacomm", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=ENV,
    )


def plain_allreduce(folder, name):
    run = mpirun("osu", "allreduce", "--mem", "H", "-m", "1M:1M", *COUNTS, "--json", str(folder / name))
    assert run.returncode == 0, run.stderr


def test_suite_validates_untimed_and_its_figure_is_a_plain_runs(tmp_path):
    # Plain runs before and after the suite, pooled, so that the machine's drift hits both sides alike.
    plain = tmp_path / "plain"
    plain.mkdir()
    plain_allreduce(plain, "before.json")
    run = mpirun(
        "suite", str(tmp_path / "results"), "-m", "1M:1M", *COUNTS, "--beff-max-size", "2", "--beff-repetitions", "1"
    )
    assert run.returncode == 0, run.stderr
    plain_allreduce(plain, "after.json")
    out = tmp_path / "results" / "latest"
    summary = (out / "summary.txt").read_text()
    quick = chosen(STANDARD_SET, full=False)  # make suite's set, the one run here
    for name, _, _ in quick:
        result = Result.read_json(out / f"{name}.json")
        checked = result.params["validation_pass"]
        assert result.params["validate"] is False  # the timed pass ran as a plain run
        assert checked["timed"] is False and checked["verdict"] == "pass" and checked["failed_sizes"] == []
        assert (checked["iterations"], checked["warmup"]) == (VALIDATION_PASS["iterations"], VALIDATION_PASS["warmup"])
        assert all(row["validation"] == "pass" for row in result.rows if row["size"]), name
    assert summary.count(", validated untimed: pass") == len(quick)
    assert run.stdout.count(", validated untimed: pass    -> ") == len(quick)

    # The suite's allreduce H at 1 MiB against plain runs of it: no difference beyond a generous threshold
    # (the machine is shared and noisy; validation inside the timed pass made it about 1.5x slower).
    compared = tmp_path / "compare.json"
    run = fpgacomm(
        "compare",
        str(plain),
        str(out / "osu_allreduce_H.json"),
        "--threshold",
        "50%",
        "--json",
        str(compared),
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(compared.read_text())["rows"]
    assert row["size"] == 1 << 20 and row["verdict"] not in ("slower", "faster"), row
    # What makes them alike: the suite's timed pass is the plain run, parameter for parameter.
    suite_params = Result.read_json(out / "osu_allreduce_H.json").params
    plain_params = Result.read_json(plain / "after.json").params
    differing = {key for key in {*suite_params, *plain_params} if suite_params.get(key) != plain_params.get(key)}
    assert differing <= {"validation_pass", "round_seed"}, {
        key: (suite_params.get(key), plain_params.get(key)) for key in differing
    }
