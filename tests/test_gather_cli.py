"""fpgacomm gather: real ranks under mpirun, and its errors."""

import pytest
from fpgacomm import Result
from processes import fpgacomm

pytestmark = pytest.mark.mpi


def test_tree_gather_prints_the_stage_table_and_writes_json(tmp_path):
    target = tmp_path / "gather.json"
    run = fpgacomm(
        "gather", "--schedule", "tree", "--mem", "D", "--sizes", "1K:4K", "-i", "2", "--json", str(target), ranks=5
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "# fpgacomm gather: gather, mem D, control barrier, ports 2, virtual ports 2"
    assert lines[1] == (
        "# set-up, transfer, barrier: the time split by what held the gather up, stage by stage; " "they add up to time"
    )
    assert lines[2].split() == [
        "schedule",
        "nodes",
        "size",
        "stages",
        "time",
        "throughput",
        "set-up",
        "transfer",
        "barrier",
        "validation",
    ]
    rows = [line.split() for line in lines[3:]]
    assert [row[2] + row[3] for row in rows] == ["1KiB", "2KiB", "4KiB"]
    assert all(row[0] == "tree" and row[1] == "5" and row[4] == "2" and row[-1] == "pass" for row in rows)
    result = Result.read_json(target)
    assert result.benchmark == "gather" and [row["stages"] for row in result.rows] == [2, 2, 2]
    assert result.params["control"] == "barrier" and result.params["virtual_ports"] == 2


def test_without_barriers_the_phases_still_add_up_to_the_time(tmp_path):
    """--control local: ranks are in different stages at once; the phases,
    split on their common time line, add up to the longest rank's time
    (docs/METHODS.md), never more (as per-stage maxima summed did)."""
    target = tmp_path / "local.json"
    run = fpgacomm(
        "gather",
        "--schedule",
        "ring",
        "--ports",
        "4",
        "--control",
        "local",
        "--mem",
        "H",
        "--sizes",
        "64K:1M",
        "-i",
        "3",
        "--json",
        str(target),
        ranks=4,
    )
    assert run.returncode == 0, run.stderr
    result = Result.read_json(target)
    for row in result.rows:
        phases = row["setup"] + row["transfer"] + row["barrier"]
        assert row["transfer"] <= row["time"] and phases <= row["time"] * (1 + 1e-9), row
        assert phases > 0.9 * row["time"], row  # the rest is the loop between stages
    for key, stages in result.samples.items():
        if key.endswith(("/setup", "/transfer", "/barrier")):
            assert min(stages) >= 0, key


def test_fabric_runs_the_simulator():
    run = fpgacomm("gather", "--fabric", "vcsn", "--nodes", "4,9", "--sizes", "64K:128K")
    assert run.returncode == 0, run.stderr
    assert "(simulated)" in run.stdout.splitlines()[0]
    rows = [line.split() for line in run.stdout.splitlines() if line.strip().startswith("tree")]
    assert [(row[1], row[2] + row[3]) for row in rows] == [
        ("4", "64KiB"),
        ("4", "128KiB"),
        ("9", "64KiB"),
        ("9", "128KiB"),
    ], run.stdout


def test_gather_errors_are_one_clear_message():
    cases = [
        (("gather", "--nodes", "4,9"), 2, "--nodes sets simulated node counts; give --fabric"),
        (("gather", "--fabric", "vcsn", "--mem", "D"), None, "--mem applies to real runs"),
        (("gather", "--fabric", "vcsn", "--nodes", "4,x"), None, "--nodes '4,x'"),
        (("gather", "--sizes", "8"), 1, "gather needs at least 2 ranks"),
        (("gather", "--sizes", "1024G", "--mem", "D"), 3, "exceed the device's memory"),
        (("gather", "--root", "3", "--sizes", "8"), 3, "root 3; give a node from 0 to 2"),
        (("gather", "--mem", "Z", "--sizes", "8"), 2, "Z"),
    ]
    for args, ranks, message in cases:
        run = fpgacomm(*args, ranks=ranks)
        assert run.returncode == 2, (args, run.stderr)
        assert message in run.stderr and run.stderr.count(message) == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr
