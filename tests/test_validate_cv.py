"""fpgacomm validate --cv: a calibration campaign checked against itself,
on the real campaign archived from a lent 32-core host (two launches at 8
ranks: gathers and b_eff at 2, 4 and 8 ranks): fitted on 2 and 4, checked on 8."""

import os
import shutil
from pathlib import Path

import pytest
from fpgacomm import cli
from fpgacomm.calibration.cross_validation import cross_validate
from fpgacomm.results import validation
from fpgacomm.results.result import Result

CAMPAIGN = Path(__file__).resolve().parents[1] / "bench" / "results" / "heldout-h200x2-32core" / "calibration"


@pytest.fixture(scope="module")
def checked():
    return cross_validate(str(CAMPAIGN), bootstrap=10, draws=5, say=lambda *_: None)


def test_the_largest_rank_count_is_predicted_from_the_smaller_ones_and_checked(checked):
    result = checked
    assert result.params["cross_validation"] == {"directory": str(CAMPAIGN), "trained_on": [2, 4], "checked_on": 8}
    assert result.params["prediction"] == f"the prediction of a platform fitted on 2, 4 ranks of {CAMPAIGN}"
    assert {row["nodes"] for row in result.rows} == {8}
    # Every gather schedule and b_eff's ring of the campaign at 8 ranks, each point in both launches.
    kinds = {(row["experiment"], row["schedule"]) for row in result.rows}
    assert kinds == {("gather", s) for s in ("ring", "tree", "vlink", "mpi")} | {("beff", "ring")}
    assert {row["launches"] for row in result.rows} == {2}
    launches = [Result.read_json(str(path)) for path in sorted(CAMPAIGN.glob("launch-*.json"))]
    for row in result.rows:
        measured = [
            r["time"]
            for launch in launches
            for r in launch.rows
            if r["ranks"] == 8
            and r["size"] == row["size"]
            and r["family"] == row["experiment"]
            and (r["schedule"] or "ring") == row["schedule"]
        ]
        assert row["measured"] == pytest.approx(sum(measured) / 2)  # the median of two launches
        assert row["predicted_low"] < row["predicted"] < row["predicted_high"]


def test_the_claim_follows_the_launches_own_record(checked):
    result = checked
    launches = [Result.read_json(str(path)) for path in sorted(CAMPAIGN.glob("launch-*.json"))]
    machines = [launch.env["machine"] for launch in launches]
    loaded = any(machine["load_before"] > machine["cores"] for machine in machines)
    assert any("started under load" in reason for reason in result.params["refusals"]) == loaded
    assert not any("more ranks on a host" in reason for reason in result.params["refusals"])  # 8 ranks, 32 cores
    assert result.params["claim"] == (result.params["refusals"] == [])
    if result.params["claim"]:
        overall = result.params["summary"][-1]
        assert overall["nodes"] == "all" and overall["points"] == len(result.rows)
        assert "# accuracy per rank count and size class" in validation.format_validation(result)
        per_schedule = {row["what"] for row in result.params["summary"] if row["sizes"] == "all"}
        assert per_schedule == {"ring gather", "tree gather", "vlink gather", "mpi gather", "b_eff ring", "all"}


def test_the_command_cross_validates_and_refuses_what_it_cannot(tmp_path, capsys):
    status = cli.main(["validate", "--cv", str(CAMPAIGN), "pred.json"])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        f"fpgacomm: error: validate: --cv makes its own prediction from {CAMPAIGN}; give "
        "no prediction or measured files with it (got pred.json)\n"
    )
    status = cli.main(["validate"])
    _, err = capsys.readouterr()
    assert status == 2 and "or a calibration campaign to cross-validate (fpgacomm validate --cv DIR)" in err
    # One rank count only: nothing to hold out.
    single = tmp_path / "single"
    single.mkdir()
    for path in CAMPAIGN.glob("launch-*.json"):
        launch = Result.read_json(str(path))
        Result(
            launch.benchmark, launch.params, launch.env, [row for row in launch.rows if row["ranks"] <= 2], launch.units
        ).write(str(single / path.name))
    status = cli.main(["validate", "--cv", str(single)])
    _, err = capsys.readouterr()
    assert status == 2 and "holds gathers and b_eff at 2 rank count(s); cross-validation fits on the smaller" in err


@pytest.mark.slow
def test_the_command_writes_what_it_prints(tmp_path, capsys):
    folder = tmp_path / "campaign"
    shutil.copytree(CAMPAIGN, folder)
    out = tmp_path / "cv.json"
    status = cli.main(["validate", "--cv", str(folder), "--draws", "3", "--json", str(out)])
    text, _ = capsys.readouterr()
    assert status == 0 and os.path.exists(out)
    assert text.startswith(f"# fpgacomm validate: the prediction of a platform fitted on 2, 4 ranks of {folder}")
    assert Result.read_json(str(out)).params["cross_validation"]["checked_on"] == 8
