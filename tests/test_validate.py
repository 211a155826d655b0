"""fpgacomm validate and fpgacomm.validate: a prediction against held-out
launches of real gathers run under mpirun, per point and per rank count and
size class, and the refusals: ranks crowding the cores, load, a spread
larger than the error, one launch per point; bad input with one message."""

import copy
import os
import subprocess
import sys

import fpgacomm
import pytest
from fpgacomm import cli
from fpgacomm.figures import plot
from fpgacomm.results import validation
from fpgacomm.results.result import Result
from fpgacomm.results.stats import median, median_ci

pytestmark = pytest.mark.mpi

SIZES = "64K:128K"
LAUNCHES = 3
RANKS = 3  # held out: more than the 2 cores of the team's VM, so its env must say so


def launch(path, ranks=RANKS, schedule="tree"):
    env = dict(
        os.environ,
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_rmaps_base_oversubscribe="1",
    )
    run = subprocess.run(
        [
            "mpirun",
            "-np",
            str(ranks),
            sys.executable,
            "-m",
            "fpgacomm",
            "gather",
            "--schedule",
            schedule,
            "--mem",
            "H",
            "--sizes",
            SIZES,
            "-i",
            "3",
            "--json",
            str(path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return str(path)


@pytest.fixture(scope="module")
def launches(tmp_path_factory):
    """Three separate launches of a real tree gather, as a held-out campaign takes them."""
    folder = tmp_path_factory.mktemp("heldout")
    return [launch(folder / f"tree-r{k}.json") for k in range(1, LAUNCHES + 1)]


def times(paths) -> dict:
    """{size: [time per launch]} of the launches."""
    found = {}
    for path in paths:
        for row in Result.read_json(path).rows:
            found.setdefault(row["size"], []).append(row["time"])
    return found


def prediction(tmp_path, points: dict, name="pred.json") -> str:
    """A prediction file of fpgacomm predict's form (docs/PREDICTION.md): {(schedule, nodes, size): (time,
    low, high)} of gathers, schedule "beff" for b_eff's ring."""
    rows = [
        {
            "experiment": "beff" if s == "beff" else "gather",
            "schedule": "ring" if s == "beff" else s,
            "collective": "" if s == "beff" else "gather",
            "nodes": n,
            "size": d,
            "time": t,
            "low": low,
            "high": high,
            "simulated": t,
            "draws": 200,
        }
        for (s, n, d), (t, low, high) in points.items()
    ]
    path = tmp_path / name
    Result(
        "prediction",
        {"fabric": "platform.json"},
        {},
        rows,
        {
            "experiment": "",
            "schedule": "",
            "collective": "",
            "nodes": "",
            "size": "B",
            "time": "s",
            "low": "s",
            "high": "s",
            "simulated": "s",
            "draws": "",
        },
    ).write(str(path))
    return str(path)


def with_machine(tmp_path, paths, *, cores, load, ranks_per_node=RANKS) -> list:
    """Copies of the launches as if taken on a machine of `cores` cores at `load`."""
    copies = []
    for k, path in enumerate(paths):
        result = Result.read_json(path)
        env = copy.deepcopy(result.env)
        env["machine"].update(cores=cores, load_before=load)
        env["ranks_per_node"] = {"host": ranks_per_node}
        copy_path = tmp_path / f"machine-{k}.json"
        Result(result.benchmark, result.params, env, result.rows, result.units, result.samples).write(str(copy_path))
        copies.append(str(copy_path))
    return copies


def test_each_point_is_the_median_over_launches_against_the_prediction(tmp_path, launches):
    measured = times(launches)
    # Predicted 30 % above each measured median, the interval +-40 %: an error the spread of three
    # launches on a quiet machine stays under, covered.
    points = {
        ("tree", RANKS, size): (1.3 * median(values), 0.9 * median(values), 1.7 * median(values))
        for size, values in measured.items()
    }
    quiet = with_machine(tmp_path, launches, cores=64, load=0.5)
    result = fpgacomm.validate(prediction(tmp_path, points), quiet)
    assert result.benchmark == "validation" and len(result.rows) == len(measured)
    for row in result.rows:
        values = measured[row["size"]]
        low, high, _ = median_ci(values)
        assert row["launches"] == LAUNCHES
        assert (row["measured"], row["measured_low"], row["measured_high"]) == (median(values), low, high)
        assert row["predicted"] == pytest.approx(1.3 * median(values))
    spread = median([(r["measured_high"] - r["measured_low"]) / 2 / r["measured"] for r in result.rows])
    if spread > 0.3:  # the launches themselves disagree by more than the error: no claim, and it says so
        assert result.params["claim"] is False and "spread by" in result.params["refusals"][0]
        assert "error" not in result.columns
        return
    assert result.params["claim"] is True and result.params["refusals"] == []
    assert all(row["error"] == pytest.approx(0.3) and row["covered"] == "yes" for row in result.rows)
    summary = {(row["nodes"], row["what"], row["sizes"]): row for row in result.params["summary"]}
    assert list(summary) == [(RANKS, "all", "64 KiB to 1 MiB"), (RANKS, "tree gather", "all"), ("all", "all", "all")]
    assert summary[(RANKS, "all", "64 KiB to 1 MiB")]["points"] == len(measured)
    overall = summary[("all", "all", "all")]
    assert overall["median_error"] == pytest.approx(0.3) and overall["largest_error"] == pytest.approx(0.3)
    assert overall["coverage"] == 1.0 and overall["mean_half_width"] == pytest.approx(0.4 / 1.3)


def test_no_accuracy_is_claimed_where_the_ranks_crowded_the_cores_or_the_machine_was_loaded(tmp_path, launches):
    measured = times(launches)
    points = {
        ("tree", RANKS, size): (median(values), 0.5 * median(values), 2 * median(values))
        for size, values in measured.items()
    }
    pred = prediction(tmp_path, points)
    crowded = fpgacomm.validate(pred, with_machine(tmp_path, launches, cores=2, load=0.0, ranks_per_node=4))
    assert crowded.params["claim"] is False and crowded.params["summary"] is None
    assert "error" not in crowded.columns and "covered" not in crowded.columns and "error" not in str(crowded)
    assert crowded.params["refusals"][0] == (
        "3 of 3 held-out launches ran more ranks on a host than it has cores (up to 4 ranks on 2 cores): the ranks "
        "took turns on the cores, which no prediction of the machine's network describes"
    )
    loaded = fpgacomm.validate(pred, with_machine(tmp_path, launches, cores=64, load=80.0))
    assert loaded.params["refusals"][0] == (
        "3 of 3 held-out launches started under load (1-minute load average up "
        "to 80.0 on 64 cores): other work, or the launch just before, still "
        "occupied the machine; leave a minute between launches, on an idle host"
    )
    # The launches as they were taken: refused exactly where their own env says so.
    as_taken = fpgacomm.validate(pred, launches)
    env = Result.read_json(launches[0]).env
    crowding = max(env["ranks_per_node"].values()) > env["machine"]["cores"]
    assert any("more ranks on a host than it has cores" in r for r in as_taken.params["refusals"]) == crowding
    if as_taken.params["refusals"]:
        text = validation.format_validation(as_taken)
        assert "# no accuracy claimed:" in text and "error" not in text.split("# no accuracy")[0]


def test_one_launch_per_point_claims_nothing(tmp_path, launches):
    measured = times(launches[:1])
    points = {("tree", RANKS, size): (values[0], 0.5 * values[0], 2 * values[0]) for size, values in measured.items()}
    result = fpgacomm.validate(prediction(tmp_path, points), with_machine(tmp_path, launches[:1], cores=64, load=0.1))
    assert result.params["refusals"] == [
        "2 of 2 points were measured in one launch only: there is no spread to tell "
        "their error from; measure each point in 3 launches or more"
    ]
    # One point of two measured in one launch is enough to claim nothing: the smallest size in three
    # launches, the largest in one (two launches cut to their smallest size).
    quiet = with_machine(tmp_path, launches, cores=64, load=0.1)
    smallest = min(measured)
    for path in quiet[1:]:
        cut = Result.read_json(path)
        Result(
            cut.benchmark,
            cut.params,
            cut.env,
            [row for row in cut.rows if row["size"] == smallest],
            cut.units,
            cut.samples,
        ).write(path)
    mixed = fpgacomm.validate(prediction(tmp_path, points), quiet)
    assert [row["launches"] for row in mixed.rows] == [3, 1]
    assert mixed.params["refusals"] == [
        "1 of 2 points were measured in one launch only: there is no spread to tell "
        "their error from; measure each point in 3 launches or more"
    ]


def test_the_command_prints_saves_and_draws(tmp_path, capsys, launches):
    measured = times(launches)
    # 20 times the measured median: far beyond any spread of three launches, so the claim stands.
    points = {
        ("tree", RANKS, size): (20 * median(values), 15 * median(values), 25 * median(values))
        for size, values in measured.items()
    }
    pred, out, figure = prediction(tmp_path, points), tmp_path / "validation.json", tmp_path / "validation.png"
    quiet = with_machine(tmp_path, launches, cores=64, load=0.5)
    status = cli.main(["validate", pred, *quiet, "--json", str(out), "-o", str(figure)])
    text, err = capsys.readouterr()
    assert status == 0 and "Traceback" not in err
    assert text.startswith(f"# fpgacomm validate: {pred} against 3 held-out launches (2 points)")
    saved = Result.read_json(str(out))
    assert [row["error"] for row in saved.rows] == pytest.approx([19.0, 19.0])
    assert [row["covered"] for row in saved.rows] == ["no", "no"]
    assert (
        "# accuracy per rank count and size class, and per rank count and what ran" in text
        and saved.params["summary"][-1]["coverage"] == 0.0
    )
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The saved file draws as the Result does, and prints through fpgacomm's text reports.
    assert plot.figure_for(saved).axes[0].get_title().startswith("prediction with its 95 % interval")
    from fpgacomm import report

    assert report.format_text(saved) == validation.format_validation(saved)


def test_a_file_that_is_not_a_prediction_is_one_clear_error(tmp_path, capsys, launches):
    status = cli.main(["validate", launches[0], *launches])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"validate: {launches[0]} is not a prediction: it is a gather Result with columns schedule, " in err
    assert "give the file of fpgacomm predict --json first" in err


def test_a_prediction_without_a_usable_interval_is_one_clear_error(tmp_path, capsys, launches):
    broken = prediction(tmp_path, {("tree", RANKS, 65536): (1e-3, 2e-3, 3e-3)})
    status = cli.main(["validate", broken, *launches])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        f"fpgacomm: error: validate: {broken} is not a usable prediction: at tree gather at "
        f"{RANKS} ranks and 64 KiB its time and interval are (0.002, 0.001, 0.003), where "
        "positive times with low <= time <= high are needed; write it again with "
        "fpgacomm predict\n"
    )


def test_measured_files_that_match_no_predicted_point_are_listed(tmp_path, capsys, launches):
    other = prediction(tmp_path, {("ring", 16, 1 << 20): (1e-3, 9e-4, 1.1e-3)})
    status = cli.main(["validate", other, *launches[:2]])
    _, err = capsys.readouterr()
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("fpgacomm: error: validate: measured files that match no predicted point: ")
    for path in launches[:2]:
        assert f"{path} (tree gather at {RANKS} ranks and 64 KiB, tree gather at {RANKS} ranks and 128 KiB)" in err
    assert f"the prediction {other} has ring gather at 16 ranks, 1 MiB to 1 MiB" in err


def test_a_launch_given_twice_is_one_clear_error(tmp_path, capsys, launches):
    pred = prediction(tmp_path, {("tree", RANKS, 65536): (1e-3, 9e-4, 1.1e-3)})
    status = cli.main(["validate", pred, launches[0], launches[1], os.path.dirname(launches[0])])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        f"fpgacomm: error: validate: {launches[0]}, {launches[1]} given more than once; each "
        "file is one launch, give it once\n"
    )


def test_a_folder_of_launches_is_read_without_its_campaign_index(tmp_path, launches):
    folder = tmp_path / "campaign"
    folder.mkdir()
    for path in launches:
        Result.read_json(path).write(str(folder / os.path.basename(path)))
    (folder / "index.json").write_text('{"schema": "fpgacomm.calibration-index/1", "launches": []}')
    measured = times(launches)
    points = {
        ("tree", RANKS, size): (median(values), 0.5 * median(values), 2 * median(values))
        for size, values in measured.items()
    }
    result = fpgacomm.validate(prediction(tmp_path, points), str(folder))
    assert len(result.params["measured"]) == LAUNCHES and {row["launches"] for row in result.rows} == {LAUNCHES}


def test_missing_files_are_one_clear_error(tmp_path, capsys):
    pred = prediction(tmp_path, {("tree", 4, 65536): (1e-3, 9e-4, 1.1e-3)})
    status = cli.main(["validate", pred, "missing.json"])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        "fpgacomm: error: validate: missing.json: no such file; give Result JSON files " "written with --json\n"
    )
    status = cli.main(["validate", pred])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        "fpgacomm: error: validate: give a prediction and the measured launches (fpgacomm "
        "validate PREDICTION.json MEASURED...), or a calibration campaign to cross-validate "
        "(fpgacomm validate --cv DIR)\n"
    )


def test_measured_points_without_a_prediction_are_left_out_and_named(tmp_path, launches):
    measured = times(launches)
    smallest = min(measured)
    points = {
        ("tree", RANKS, smallest): (
            20 * median(measured[smallest]),
            15 * median(measured[smallest]),
            25 * median(measured[smallest]),
        )
    }
    result = fpgacomm.validate(prediction(tmp_path, points), with_machine(tmp_path, launches, cores=64, load=0.5))
    assert [row["size"] for row in result.rows] == [smallest]
    assert result.params["unpredicted"] == [f"tree gather at {RANKS} ranks and 128 KiB"]
    assert (
        f"# measured but not predicted, left out: tree gather at {RANKS} ranks and 128 KiB"
        in validation.format_validation(result)
    )


def test_a_b_eff_launch_is_read_as_its_ring_time_per_message_and_neighbour(tmp_path):
    # fpgacomm beff's row time is its whole loop; calibrate run records b_eff per message and neighbour.
    rows = [
        {
            "pattern": "ring",
            "size": s,
            "loop_length": 100,
            "time": 0.5,
            "bandwidth": 8e9,
            "pair_bandwidth": 1e9,
            "validation": "pass",
            "validation_errors": 0,
        }
        for s in (1 << 16, 1 << 20)
    ]
    units = {
        "pattern": "",
        "size": "B",
        "loop_length": "",
        "time": "s",
        "bandwidth": "B/s",
        "pair_bandwidth": "B/s",
        "validation": "",
        "validation_errors": "",
    }
    paths = []
    for k in range(3):
        path = tmp_path / f"beff-{k}.json"
        Result(
            "beff",
            {},
            {"ranks": 4, "ranks_per_node": {"host": 4}, "machine": {"cores": 64, "load_before": 0.1}},
            rows,
            units,
        ).write(str(path))
        paths.append(str(path))
    pred = prediction(tmp_path, {("beff", 4, 1 << 16): (65536 / 1e9, 6e-5, 7e-5)})
    result = fpgacomm.validate(pred, paths)
    assert [(row["experiment"], row["schedule"], row["size"], row["measured"]) for row in result.rows] == [
        ("beff", "ring", 1 << 16, 65536 / 1e9)
    ]
    assert result.params["unpredicted"] == ["b_eff ring at 4 ranks and 1 MiB"]


def test_predictions_of_several_schedules_join_and_a_point_predicted_twice_is_refused(tmp_path, capsys, launches):
    measured = times(launches)
    smallest, largest = min(measured), max(measured)
    first = prediction(tmp_path, {("tree", RANKS, smallest): (2e-3, 1e-3, 4e-3)}, "tree-small.json")
    second = prediction(tmp_path, {("tree", RANKS, largest): (2e-3, 1e-3, 4e-3)}, "tree-large.json")
    result = fpgacomm.validate(first, [second, *launches])
    assert [row["size"] for row in result.rows] == [smallest, largest] and result.params["unpredicted"] == []
    assert result.params["prediction"] == f"{first}, {second}" and result.params["measured"] == launches
    again = prediction(tmp_path, {("tree", RANKS, smallest): (3e-3, 1e-3, 4e-3)}, "again.json")
    status = cli.main(["validate", first, again, *launches])
    _, err = capsys.readouterr()
    assert status == 2 and err == (
        f"fpgacomm: error: validate: {again} predicts tree gather at {RANKS} ranks and "
        "64 KiB again; give each point's prediction once\n"
    )
