"""fpgacomm osu for collectives and one-sided tests, under mpirun."""

import pytest
from fpgacomm import Result
from processes import fpgacomm

pytestmark = pytest.mark.mpi


def test_allreduce_prints_omb_text_with_nccl_columns_and_writes_json(tmp_path):
    target = tmp_path / "allreduce.json"
    run = fpgacomm(
        "osu", "allreduce", "--mem", "D", "-m", "4:4K", "-i", "3", "-x", "1", "-c", "-f", "--json", str(target), ranks=3
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("# OSU MPI-OpenCL Allreduce Latency Test")
    assert "# Datatype: MPI_CHAR." in lines
    header = next(line for line in lines if line.startswith("# Size"))
    assert "Avg Latency(us)" in header and "Busbw(MB/s)" in header and "Staging(%)" in header
    rows = [line.split() for line in lines if line[:1].isdigit()]
    assert [int(row[0]) for row in rows] == [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert all(row[2] == "Pass" for row in rows)
    result = Result.read_json(target)
    assert result.params["busbw_factor"] == 2 * 2 / 3 and result.params["ranks_per_node"] == 3
    assert all(row["busbw"] > 0 and 0 < row["staging_share"] < 1 for row in result.rows)


def test_put_bw_prints_window_and_synchronisation():
    run = fpgacomm(
        "osu",
        "put_bw",
        "--mem",
        "D",
        "-s",
        "fence",
        "-w",
        "allocate",
        "-m",
        "1K:8K",
        "-i",
        "3",
        "-W",
        "4",
        "-c",
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    assert "# Window creation: MPI_Win_allocate" in run.stdout
    assert "# Synchronization: MPI_Win_fence" in run.stdout
    assert run.stdout.count("Pass") == 4


def test_collective_and_one_sided_errors_are_one_clear_message():
    cases = [
        (("osu", "reduce", "-m", "1:2", "-T", "mpi_float"), 3, "no message size of -m holds one MPI_FLOAT (4 bytes)"),
        (("osu", "bcast", "-d", "sycl", "--mem", "P"), 2, "the SYCL interface cannot choose a memory bank"),
        (("osu", "bcast", "-d", "opencl", "--mem", "H!"), 2, "-d opencl puts the buffers in device memory"),
        (("osu", "bcast", "--root", "5", "-m", "8"), 3, "root 5 is out of range for 3 ranks; choose --root 0..2"),
        (("osu", "put_latency", "-m", "8"), 3, "needs exactly 2 ranks, and this run has 3"),
        (("osu", "put_bibw", "-s", "lock"), 2, "osu put_bibw takes -s pscw or fence"),
        (("osu", "allreduce"), 1, "needs at least 2 ranks"),
    ]
    for args, ranks, message in cases:
        run = fpgacomm(*args, ranks=ranks)
        assert run.returncode == 2, (args, run.stderr)
        assert message in run.stderr and run.stderr.count(message) == 1, (args, run.stderr)
        assert "Traceback" not in run.stderr


def test_an_option_that_does_not_apply_is_not_offered():
    """Each test's parser holds the options of its family and test only:
    argparse refuses any other, once, with status 2; --help lists what applies."""
    cases = [
        (("osu", "put_bw", "-T", "mpi_int"), "unrecognized arguments: -T mpi_int"),  # one-sided: MPI_CHAR only
        (("osu", "alltoall", "--root", "1", "-m", "8"), "unrecognized arguments: --root 1"),
        (("osu", "gather", "D", "D"), "takes its buffers' memory kind with --mem, not as words"),
        (("osu", "latency", "--mem", "D"), "unrecognized arguments: --mem\n"),  # D: a kind, where kinds may follow
        (("osu", "allgather", "--path", "staged"), "unrecognized arguments: --path staged"),
        (("osu", "bcast", "-W", "8"), "unrecognized arguments: -W 8"),
        (("osu", "put_latency", "-W", "8"), "unrecognized arguments: -W 8"),
        (("osu", "latency", "-W", "8"), "unrecognized arguments: -W\n"),
        (("osu", "bcast", "--timeline", "t.json"), "unrecognized arguments: --timeline t.json"),
        (
            ("osu", "barrier", "-m", "8"),
            "-m/--message-size is OSU Micro-Benchmarks' option for message sizes, " "and the barrier moves no data",
        ),
    ]
    for args, message in cases:
        run = fpgacomm(*args, ranks=2)
        assert run.returncode == 2, (args, run.stderr)
        assert message in run.stderr and run.stderr.count("error:") == 1, (args, run.stderr)
    offered = {
        test: fpgacomm("osu", test, "--help").stdout
        for test in ("latency", "bw", "allreduce", "bcast", "barrier", "put_latency", "put_bibw")
    }
    assert all(run.startswith(f"usage: fpgacomm osu {test} ") for test, run in offered.items())
    assert "--window-size" in offered["bw"] and "--window-size" not in offered["latency"]
    assert "--timeline" in offered["latency"] and "--timeline" not in offered["bcast"]
    assert "--root" in offered["bcast"] and "--root" not in offered["allreduce"]
    assert "--mem" in offered["allreduce"] and "--mem" not in offered["latency"] and "KIND" in offered["latency"]
    assert "--sync-option" in offered["put_latency"] and "--sync-option" not in offered["bw"]
    assert "default pscw" in offered["put_bibw"] and "--type" not in offered["put_bibw"]
    assert "-m [MIN:]MAX" not in offered["barrier"] and "(default 1:1M)" in offered["allreduce"]
    assert "Not taken, of OSU Micro-Benchmarks 7.4's options for this test: " in offered["barrier"]


def test_omb_flags_d_opencl_and_datatype_with_omb_size_rule(tmp_path):
    """-d opencl gives device buffers, as --mem D; -T mpi_int skips the
    sizes below one element, as OSU Micro-Benchmarks 7.4 does."""
    target = tmp_path / "reduce.json"
    run = fpgacomm(
        "osu",
        "reduce",
        "-d",
        "opencl",
        "-T",
        "mpi_int",
        "-m",
        "1:16",
        "-i",
        "3",
        "-x",
        "1",
        "-c",
        "--json",
        str(target),
        ranks=2,
    )
    assert run.returncode == 0, run.stderr
    assert "# Datatype: MPI_INT." in run.stdout
    assert [int(line.split()[0]) for line in run.stdout.splitlines() if line[:1].isdigit()] == [4, 8, 16]
    result = Result.read_json(target)
    assert result.params["send_kind"] == "D" and result.params["route"] == "staged"
    assert result.params["datatype"] == "MPI_INT"
    # The Result says where the method departs from OSU Micro-Benchmarks': staging and validation.
    notes = result.params["omb_differences"]
    assert len(notes) == 2 and "pinned host memory" in notes[0] and "outside the timed region" in notes[1]
