"""fpgacomm calibrate run and fit, and predict, as a user runs them: one small
launch on 2 real ranks, the fit from that one launch, a prediction from the
fit, and the bad input that must stop with status 2 and one message."""

import json
import os

import numpy as np
import pytest
from fpgacomm import Result
from fpgacomm.calibration import campaign, host_copy
from fpgacomm.calibration.families import FAMILIES
from processes import fpgacomm

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    folder = tmp_path_factory.mktemp("campaign")
    run = fpgacomm("calibrate", "run", str(folder), "--sizes", "64K", "-i", "4", "--seed", "7", ranks=2, timeout=600)
    assert run.returncode == 0, run.stderr
    return folder, run


def test_rank_counts_are_powers_of_two_and_k_three_where_possible():
    assert campaign.rank_counts(8) == [2, 4, 8]
    assert campaign.rank_counts(6) == [2, 4, 6]
    assert campaign.rank_counts(4) == [2, 3, 4]
    assert campaign.rank_counts(2) == [2]


def test_drawn_sizes_are_log_uniform_distinct_and_follow_the_seed():
    sizes = campaign.drawn_sizes(np.random.default_rng(1), 200, 1 << 22)
    assert len(set(sizes)) == 200 and min(sizes) >= 1 and max(sizes) <= 1 << 22
    # Log-uniform: about as many below 2 KiB (half the log range) as above.
    below = sum(size < 2048 for size in sizes)
    assert 60 < below < 140
    assert campaign.drawn_sizes(np.random.default_rng(1), 8, 1 << 22) == campaign.drawn_sizes(
        np.random.default_rng(1), 8, 1 << 22
    )


def test_a_launch_is_one_result_with_every_family_and_an_index(launched):
    folder, run = launched
    index = json.loads((folder / "index.json").read_text())
    assert len(index["launches"]) == 1
    result = Result.read_json(folder / index["launches"][0]["file"])
    assert result.benchmark == "calibration" and result.params["seed"] == 7 and result.params["ranks"] == 2
    assert {row["family"] for row in result.rows} == set(FAMILIES)
    ping = sorted(row["size"] for row in result.rows if row["family"] == "pingpong")
    assert ping == result.params["pingpong_sizes"] and len(ping) == campaign.PINGPONG_SIZES
    gathers = {(row["schedule"], row["ranks"], row["size"]) for row in result.rows if row["family"] == "gather"}
    assert gathers == {(schedule, 2, 65536) for schedule in ("ring", "tree", "vlink", "mpi")}
    assert all(row["time"] > 0 and row["load"] is not None for row in result.rows)
    # Blocks passed on from core to core: each cached block at every thread count up to the cores.
    passes = {(row["size"], row["pairs"]) for row in result.rows if row["family"] == "host_pass"}
    threads = host_copy.thread_counts(os.cpu_count())
    assert passes == {(block, count) for block in host_copy.CACHED_BLOCKS for count in threads}
    assert len(result.params["order"]) == len(result.params["task_seconds"])
    assert f"written to {folder}" in run.stdout


def test_fit_from_one_launch_says_it_cannot_bootstrap_and_predict_reads_it(launched, tmp_path):
    folder, _ = launched
    platform = tmp_path / "platform.json"
    run = fpgacomm("calibrate", "fit", str(folder), "-o", str(platform), "--draws", "5")
    assert run.returncode == 0, run.stderr
    assert "too few launches to bootstrap (1)" in run.stdout
    assert "residual: (simulated - measured) / measured" in run.stdout
    assert "b_eff's messages past 128 KiB pass through the caches the cores share" in run.stdout
    document = json.loads(platform.read_text())
    assert document["schema"] == "fpgacomm.platform/1" and document["preset"] == "cluster"
    assert all(item["value"] >= 0 for item in document["parameters"].values() if not isinstance(item["value"], str))
    assert 1 <= len(document["draws"]) <= 5
    assert set(document["calibration"]["experiments"]) == {
        "gather/ring",
        "gather/tree",
        "gather/vlink",
        "gather/mpi",
        "beff/ring",
        "mbw_mr",
    }
    prediction = tmp_path / "pred.json"
    run = fpgacomm(
        "predict",
        "--fabric",
        str(platform),
        "--schedule",
        "ring",
        "--nodes",
        "4,16",
        "--sizes",
        "64K,1M",
        "--json",
        str(prediction),
    )
    assert run.returncode == 0, run.stderr
    assert "per size as at the largest calibrated rank count" in run.stdout
    rows = Result.read_json(prediction).rows
    assert [(row["nodes"], row["size"]) for row in rows] == [(4, 65536), (4, 1 << 20), (16, 65536), (16, 1 << 20)]
    assert all(row["low"] < row["time"] < row["high"] and row["experiment"] == "gather" for row in rows)


def _one_message(run, *words):
    assert run.returncode == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("fpgacomm")]
    assert len(errors) == 1 and "Traceback" not in run.stderr, run.stderr
    assert all(word in errors[0] for word in words), errors[0]


def test_a_folder_without_a_family_the_fit_needs_names_it(launched, tmp_path):
    folder, _ = launched
    launch = Result.read_json(next(folder.glob("launch-*.json")))
    launch.rows = [row for row in launch.rows if row["family"] != "mbw_mr"]
    launch.write_json(tmp_path / "launch-without-mbw_mr.json")
    _one_message(fpgacomm("calibrate", "fit", str(tmp_path), "-o", str(tmp_path / "p.json")), "mbw_mr", "calibrate run")
    assert not (tmp_path / "p.json").exists()


def test_bad_input_stops_with_status_2_and_one_message(tmp_path):
    _one_message(fpgacomm("calibrate", "fit", str(tmp_path), "-o", str(tmp_path / "p.json")), "no launch")
    _one_message(fpgacomm("predict", "--fabric", "cluster", "--nodes", "0", "--sizes", "64K"), "rank count 0")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "fpgacomm.platform/2", "preset": "cluster", "parameters": {}}))
    _one_message(fpgacomm("predict", "--fabric", str(other), "--nodes", "4", "--sizes", "64K"), "schema")
    _one_message(
        fpgacomm("predict", "--fabric", "beff_520n", "--schedule", "tree", "--nodes", "4", "--sizes", "64K"), "tree"
    )
    _one_message(fpgacomm("calibrate", "run", str(tmp_path / "c"), ranks=1), "at least 2 ranks")
