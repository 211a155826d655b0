"""fpgacomm compare on real ranks: two single jobs of one command give no
verdict (one job a side) and fail nothing; one command against itself finds
no difference; latency from device buffers (PoCL) against host buffers is
slower at every size, with intervals that exclude 1. Few sizes and short
sweeps: the point is the verdict, not the figure."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fpgacomm import Result
from processes import ENV, fpgacomm, gone_within, holding

pytestmark = pytest.mark.mpi


def compare_runs(tmp_path, commands, rounds, *options):
    arguments = [argument for command in commands for argument in ("--run", command)]
    run = fpgacomm(
        "compare",
        *arguments,
        "--rounds",
        str(rounds),
        "--out",
        str(tmp_path / "runs"),
        "--json",
        str(tmp_path / "comparison.json"),
        *options,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    return Result.read(tmp_path / "comparison.json"), run.stdout


def latency(kinds, sizes, iterations):
    return (
        f"mpirun -np 2 {sys.executable} -m fpgacomm osu latency -m {sizes} -i {iterations} -x 10 " f"{' '.join(kinds)}"
    )


def test_one_command_against_itself_finds_no_difference(tmp_path):
    # At 99 % a comparison flags a size where none differs at most 1 time in 100 (a flaky test at 95 % would
    # fail 1 time in 20); 7 launches a side can still flag a size after Holm over 13 sizes (the smallest
    # p, 0.0006, times 13 is below 0.01): this test can fail.
    command = latency(("H", "H"), "1:4K", 100)
    comparison, text = compare_runs(tmp_path, [command, command], 7, "--level", "99%")
    assert comparison.params["level"] == 0.99
    assert [row["size"] for row in comparison.rows] == [1 << k for k in range(13)]
    # No size is called different ("undecided", an interval beside 1 that the corrected test does not back, is
    # no such claim).
    assert {row["verdict"] for row in comparison.rows} <= {"no difference", "undecided"}, text
    assert all(row["n_base"] == row["n_candidate"] == 7 for row in comparison.rows)


def test_device_buffers_are_slower_than_host_buffers_at_every_size(tmp_path):
    comparison, text = compare_runs(tmp_path, [latency(("H", "H"), "1:64", 50), latency(("D", "D"), "1:64", 50)], 7)
    assert len(comparison.rows) == 7
    for row in comparison.rows:
        assert row["verdict"] == "slower" and row["ratio_low"] > 1, text


def test_two_single_jobs_of_one_command_give_no_verdict_and_fail_nothing(tmp_path):
    # The pattern a new user tries first: the same command run twice as two jobs, each of several rounds.
    for name in ("before", "same"):
        job = subprocess.run(
            f"{latency(('H', 'H'), '1:64K', 50)} --rounds 3 --json {tmp_path / name}.json",
            shell=True,
            capture_output=True,
            text=True,
            env=ENV,
            timeout=300,
        )
        assert job.returncode == 0, job.stderr
    run = fpgacomm(
        "compare",
        str(tmp_path / "before.json"),
        str(tmp_path / "same.json"),
        "--threshold",
        "5%",
        "--fail-on-regression",
        "--json",
        str(tmp_path / "comparison.json"),
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    comparison = Result.read(tmp_path / "comparison.json")
    assert len(comparison.rows) == 17 and {row["verdict"] for row in comparison.rows} <= {
        "one job a side",
        "jobs differ",
    }
    assert "it says whether two jobs differ, not two set-ups" in run.stdout


def test_the_time_limit_ends_the_launch_running_and_everything_it_started(tmp_path):
    command = f"sleep 300.{os.getpid()}"  # a command line of this test's own
    started = time.monotonic()
    run = fpgacomm(
        "--timeout", "5", "compare", "--run", command, "--run", command, "--out", str(tmp_path / "runs"), timeout=60
    )
    assert run.returncode == 124, run.stderr
    assert time.monotonic() - started < 5 + 10
    assert gone_within(lambda: holding(command), 5) == []
    assert (
        f"compare: time limit (--timeout): launch 1 of 7 of A ended with every process it started; the outputs "
        f"of the launches are in {tmp_path / 'runs'}"
    ) == run.stderr.strip().splitlines()[-1]
    record = json.loads((tmp_path / "runs" / "A" / "launches.json").read_text())
    assert record["launches"][0]["interrupted"] == "time limit (--timeout)" and record["launches"][0]["status"] is None
    assert not (tmp_path / "runs" / "B" / "01.txt").exists()


def test_sigterm_to_compare_ends_its_mpirun_launch_with_every_rank(tmp_path):
    out = tmp_path / "runs"
    command = f"mpirun -np 2 {sys.executable} -m fpgacomm osu latency -m 1:4M -i 100000"
    compare = subprocess.Popen(
        [sys.executable, "-m", "fpgacomm", "compare", "--run", command, "--run", command, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 60
        while len(holding(str(out))) < 3 and time.monotonic() < deadline:  # mpirun and its 2 ranks
            time.sleep(0.2)
        assert len(holding(str(out))) >= 3
        compare.send_signal(signal.SIGTERM)
        _, stderr = compare.communicate(timeout=30)
    finally:
        compare.kill()
    assert compare.returncode == 143, stderr
    assert gone_within(lambda: holding(str(out)), 5) == [], stderr
    assert f"the outputs of the launches are in {out}" in stderr.strip().splitlines()[-1]
    record = json.loads((out / "A" / "launches.json").read_text())
    assert record["launches"][0]["interrupted"] == "interrupted by SIGTERM"
    time.sleep(2)  # nothing of the launch writes into the campaign afterwards
    assert sorted(os.listdir(out / "A")) in (
        ["01.err", "01.txt", "launches.json"],
        ["01.err", "01.json", "01.txt", "launches.json"],
    )
    if (out / "A" / "01.json").exists():  # rank 0 saved what it had measured when mpirun ended it
        # compare ends the launch's whole session: a rank hears SIGTERM from mpirun or from compare itself.
        assert Result.read(out / "A" / "01.json").incomplete.startswith("interrupted by SIGTERM")


def test_a_first_launch_without_a_result_ends_the_campaign_at_once(tmp_path):
    run = fpgacomm(
        "compare",
        "--run",
        "echo hello",
        "--run",
        "echo hello",
        "--rounds",
        "3",
        "--out",
        str(tmp_path / "runs"),
        timeout=60,
    )
    assert run.returncode == 2, run.stderr
    assert (
        f"--run 'echo hello': the output of its first launch ({tmp_path / 'runs' / 'A' / '01.txt'}) holds no "
        "result to compare" in run.stderr
    )
    assert sorted(os.listdir(tmp_path / "runs" / "A")) == ["01.err", "01.txt", "launches.json"]
    assert not (tmp_path / "runs" / "B").joinpath("01.txt").exists()
    assert "Traceback" not in run.stderr


def test_the_result_path_goes_through_the_environment_and_the_command_line_stays_the_users(tmp_path):
    """`cd X && fpgacomm ... | cat`: an appended --json would land on cat."""
    command = f"cd {tmp_path} && mpirun -np 2 {sys.executable} -m fpgacomm osu latency -m 1:4 -i 20 | cat"
    run = fpgacomm(
        "compare", "--run", command, "--run", command, "--rounds", "2", "--out", str(tmp_path / "runs"), timeout=300
    )
    assert run.returncode == 0, run.stderr
    for side in "AB":
        for launch in ("01", "02"):
            assert Result.read(tmp_path / "runs" / side / f"{launch}.json").benchmark == "osu_latency"
    refused = fpgacomm(
        "compare",
        "--run",
        "fpgacomm osu latency --json=x.json",
        "--run",
        "fpgacomm osu latency",
        "--out",
        str(tmp_path / "other"),
        timeout=60,
    )
    assert refused.returncode == 2 and "gives each launch its own --json (through FPGACOMM_JSON)" in refused.stderr
