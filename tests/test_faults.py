"""The fault suite: hostile and careless runs, each refused (status 2, one
message, nothing measured and nothing written) or ended cleanly.

Single-process cases run as plain subprocesses, MPI cases under mpirun with
2 ranks; the table below runs in about 40 s. Cases already tested
where their feature lives are listed with that test, not run twice.

| case                                                   | expected                                   | observed (2-core VM) |
|--------------------------------------------------------|--------------------------------------------|----------------------|
| osu bw -m 8 -W 100000000 (2 ranks)                     | 2, "would hold about 191 GiB", no file     | as expected, 2.7 s (was: killed by the kernel after 50 s) |
| osu bw -b multiple -W 4096 -m 64M                      | 2, 512 GiB, 256 GiB of buffers per rank    | as expected, 2.7 s |
| osu bibw -W 50000000                                   | 2, 1e+08 messages in flight per rank       | as expected, 2.7 s |
| osu alltoall -m 256M --max-memory 1G                   | 2, "limit of 1 GiB (--max-memory)"         | as expected, 1.9 s |
| osu put_bw -W 100000 -m 1M                             | 2, "would hold about 391 GiB"              | as expected, 1.9 s |
| gather --mem H --sizes 16G (real)                      | 2, 32 GiB of buffers per rank              | as expected, 2.0 s |
| beff -m 30 --max-memory 1G (real, cpu)                 | 2, 6 GiB of buffers per rank               | as expected, 2.9 s |
| overhead -i 1000000000                                 | 2, 2e+09 timed samples                     | as expected, 2.0 s |
| devbw H -m 8 -i 1000000000                             | 2, 2e+09 timed samples                     | as expected, 2.2 s |
| beff --comm-type sim --nodes 1000000                   | 2, "41.3 GiB of memory (limit 8 GiB"       | as expected, 0.9 s (was: 5 GB and growing) |
| beff --comm-type sim --nodes 100000 --max-memory 100M  | 2, refused at the lowered limit            | as expected, 0.8 s |
| fabric traffic vcsn --rate 1e6 --packets 1000000000    | 2, "events to simulate"                    | as expected, 0.2 s |
| osu latency H H --binary /nonexistent.xclbin           | 2, "cannot read device binary"             | as expected, 2.1 s (was: ignored, status 0) |
| FPGA_MAPPING=x:y osu latency H H                       | 2, FPGA_MAPPING named                      | as expected, 1.9 s (was: ignored, status 0) |
| two ranks of 1 KiB x 2 messages: --max-memory 6K / 1M  | refused (both ranks counted) / runs        | as expected, 3.0 s |
| kill -9 of one rank of osu latency --json              | every rank ends, status != 0, no file      | as expected, 3.3 s |
| suite killed (kill -9 of mpirun and ranks) mid-run     | previous folder intact; one hidden folder  | as expected, 3.0 s |
|   then what the next run does first                    | the stale run folder removed               | as expected |
| stale folders of a live run / a moved-aside previous   | kept / restored in the results' place      | as expected |
| --json nodir/bw.json, a directory, adir (no suffix),   | 2, before measuring, nothing written       | test_cli.py::test_outputs_are_checked_on_every_rank_before_anything_is_measured |
|   --csv o.json, --json in /proc                        |                                            |                      |
| suite afile, suite /proc/results                       | 2, "a file, not a folder" / "cannot write" | test_cli.py::test_the_suite_refuses_a_file_or_an_unwritable_place_for_its_folder |
| suite s5 -m 8 --beff-max-size 99                       | 2 before any measurement, no folder        | test_cli.py::test_suite_checks_every_parts_options_before_measuring |
| FPGACOMM_TIMEOUT=abc, --timeout -5, --timeout nan      | 2, one message                             | test_cli.py::test_a_bad_time_limit_is_one_clear_usage_error |
| model loggp --L -1 ..., loggp G 0, hockney --beta 0,   | 2, the parameter named                     | test_fit_cli.py::test_model_errors_name_the_problem |
|   hockney alpha < 0, packet --header 0 --line-rate 0   |                                            |                      |
| fit on strings, fit on latencies of -1 s               | 2, the column named, no fit printed        | test_fit_cli.py::test_a_fit_refuses_data_no_measurement_gives |
| beff --nodes 50 on a real run, --random-rings 0,       | 2, "applies to" / "at least 1"             | test_beff.py::test_options_that_cannot_apply_are_refused_not_ignored |
|   gather --fabric --root 3                             |                                            |                      |
| simulated gather of 10000000 nodes, --max-events 100   | 2, "would need", limits named              | test_fabric_resources.py::test_cli_refuses_with_status_2_and_one_message |
| b_eff ring, one-sided and virtual streams (Python API) | refused past the limits                    | test_fabric_resources.py::test_the_b_eff_ring_one_sided_and_virtual_streams_are_checked_too |
| a writer killed mid-write (kill -9)                    | old content, no temporary file beside it   | test_result.py::test_a_writer_killed_mid_write_leaves_no_temporary_file_and_the_old_content |
| SIGINT / SIGTERM to a rank or to mpirun                | (signals: tested with the interrupt path)  |                      |
"""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from fpgacomm import suite
from processes import rank_pids, running

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
FPGACOMM = [sys.executable, "-m", "fpgacomm"]
MPIRUN = ["mpirun", "-np", "2", "--oversubscribe"]
HOST_MEMORY = "of host memory (this rank: "
RAISE = "or raise the limit with --max-memory SIZE"

# (case, command after `fpgacomm`, ranks, extra environment, message fragments). Every
# case ends in status 2 with one message, prints no table and writes nothing.
CASES = [
    ("osu bw huge window", ["osu", "bw", "-m", "8", "-i", "2", "-W", "100000000"], 2, {},
     ["osu bw: the 2 ranks on host", "would hold about 191 GiB", "1e+08 messages in flight", RAISE]),
    ("osu bw multiple buffers", ["osu", "bw", "-b", "multiple", "-W", "4096", "-m", "64M:64M", "-i", "2"], 2, {},
     ["osu bw: the 2 ranks", "would hold about 512 GiB", "256 GiB of buffers", RAISE]),
    ("osu bibw huge window", ["osu", "bibw", "-m", "8", "-i", "2", "-W", "50000000"], 2, {},
     ["osu bibw: the 2 ranks", "1e+08 messages in flight", RAISE]),
    ("osu alltoall lowered limit", ["osu", "alltoall", "-m", "256M:256M", "-i", "1", "--max-memory", "1G"], 2, {},
     ["osu alltoall: the 2 ranks", "more than the limit of 1 GiB (--max-memory)"]),
    ("osu put_bw window", ["osu", "put_bw", "-m", "1M:1M", "-i", "2", "-W", "100000"], 2, {},
     ["osu put_bw: the 2 ranks", "would hold about 391 GiB", RAISE]),
    ("gather real blocks", ["gather", "--mem", "H", "--sizes", "16G", "-i", "1"], 2, {},
     ["gather: the 2 ranks", "would hold about 64 GiB", "32 GiB of buffers", RAISE]),
    ("beff real lowered limit", ["beff", "-m", "30", "--min-size", "30", "--max-memory", "1G"], 2, {},
     ["beff: the 2 ranks", "6 GiB of buffers", "more than the limit of 1 GiB (--max-memory)"]),
    ("overhead samples", ["overhead", "-m", "1:1", "-i", "1000000000"], 2, {},
     ["overhead: the 2 ranks", "2e+09 timed samples", RAISE]),
    ("devbw samples", ["devbw", "H", "-m", "8:8", "-i", "1000000000", "--direction", "h2d"], 2, {},
     ["devbw: the 2 ranks", "2e+09 timed samples", RAISE]),
    ("beff sim million nodes", ["beff", "--comm-type", "sim", "--nodes", "1000000"], None, {},
     ["fabric: a b_eff ring of 1000000 nodes", "GiB of memory (limit 8 GiB, --max-memory)",
      "--max-events N / --max-memory SIZE"]),
    ("beff sim lowered limit", ["beff", "--comm-type", "sim", "--nodes", "100000", "--max-memory", "100M"], None, {},
     ["fabric: a b_eff ring of 100000 nodes", "(limit 0.0977 GiB, --max-memory)"]),
    ("fabric traffic packets", ["fabric", "traffic", "vcsn", "--rate", "1e6", "--packets", "1000000000"], None, {},
     ["fabric: random traffic of 1000000000 packets", "events to simulate"]),
    ("binary that is not there", ["osu", "latency", "H", "H", "-m", "8", "--binary", "/nonexistent.xclbin"], 2, {},
     ["cannot read device binary '/nonexistent.xclbin' (--binary)"]),
    ("malformed FPGA_MAPPING", ["osu", "latency", "H", "H", "-m", "8"], 2, {"FPGA_MAPPING": "x:y"},
     ["FPGA_MAPPING"]),
]


@pytest.mark.parametrize("case, argv, ranks, environment, fragments", CASES, ids=[case[0] for case in CASES])
def test_refused_before_anything_is_measured_or_written(tmp_path, case, argv, ranks, environment, fragments):
    output = tmp_path / "out.json"
    command = (MPIRUN if ranks else []) + FPGACOMM + argv + ["--json", str(output)]
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                         env=dict(ENV, **environment))
    assert run.returncode == 2, run.stderr
    assert run.stdout == "" and "Traceback" not in run.stderr
    assert run.stderr.count("fpgacomm: error: ") == 1, run.stderr
    for fragment in fragments:
        assert fragment in run.stderr, (fragment, run.stderr)
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file
    assert time.perf_counter() - started < 60  # refused up front, not after a sweep


def test_the_limit_counts_every_rank_on_the_host_and_can_be_raised(tmp_path):
    # Each rank holds about 3.2 KiB (a 1 KiB buffer, 2 messages at 1 KiB each, 2 samples):
    # within 6 KiB alone, past it together.
    small = FPGACOMM + ["osu", "bw", "-m", "1K:1K", "-i", "2", "-x", "0", "-W", "2"]
    refused = subprocess.run(MPIRUN + small + ["--max-memory", "6K"], capture_output=True, text=True, timeout=120,
                             env=ENV)
    assert refused.returncode == 2 and "the 2 ranks on host" in refused.stderr
    assert "would hold about 6.31 KiB" in refused.stderr
    assert "limit of 6 KiB (--max-memory)" in refused.stderr
    passed = subprocess.run(MPIRUN + small + ["--max-memory", "1M"], capture_output=True, text=True, timeout=120,
                            env=ENV)
    assert passed.returncode == 0, passed.stderr
    assert passed.stdout.splitlines()[-1].split()[0] == "1024"


def _ranks(mpirun: subprocess.Popen, count: int, timeout: float = 30) -> list:
    """The pids of the rank processes under mpirun, by rank, once all `count` have started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ranks = rank_pids(mpirun.pid)
        if len(ranks) == count:
            return [ranks[rank] for rank in sorted(ranks)]
        time.sleep(0.2)
    raise AssertionError("the ranks did not start")


def test_kill_9_of_one_rank_ends_every_rank_and_writes_nothing(tmp_path):
    output = tmp_path / "lat.json"
    mpirun = subprocess.Popen(MPIRUN + FPGACOMM + ["osu", "latency", "-m", "1:64", "-i", "1000000", "--json",
                                                   str(output)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path)
    ranks = _ranks(mpirun, 2)
    time.sleep(2)  # measuring
    os.kill(ranks[1], signal.SIGKILL)
    started = time.monotonic()
    mpirun.communicate(timeout=60)
    assert time.monotonic() - started < 30
    assert mpirun.returncode != 0
    # mpirun may return while a rank it signalled is still on its way out: give the ranks a few seconds.
    deadline = time.monotonic() + 10
    while [pid for pid in ranks if running(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in ranks if running(pid)]
    assert list(tmp_path.iterdir()) == []


def test_a_suite_killed_mid_run_leaves_the_previous_folder_and_the_next_run_clears_its_leftovers(tmp_path):
    outdir = tmp_path / "results"
    outdir.mkdir()
    (outdir / "summary.txt").write_text("the previous run")
    mpirun = subprocess.Popen(MPIRUN + FPGACOMM + ["suite", str(outdir), "-m", "8", "-i", "1000000"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV, start_new_session=True)
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if p.name.startswith(".results.run-")]:
        assert time.monotonic() < deadline and mpirun.poll() is None, "the suite did not start its run folder"
        time.sleep(0.2)
    time.sleep(1)
    os.killpg(mpirun.pid, signal.SIGKILL)  # mpirun and its ranks at once: nothing of theirs runs again
    mpirun.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-s", str(mpirun.pid), "-r", "RSDT"], capture_output=True).stdout:
        assert time.monotonic() < deadline, "the killed ranks did not end"
        time.sleep(0.2)
    assert sorted(p.name for p in outdir.iterdir()) == ["summary.txt"]
    assert (outdir / "summary.txt").read_text() == "the previous run"
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".results.run-")]
    assert len(stale) == 1  # kill -9 leaves it: no code of the run could remove it
    suite._clear_stale(str(tmp_path), "results")  # what the next run does first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    assert (outdir / "summary.txt").read_text() == "the previous run"


def test_clearing_leaves_a_live_runs_folder_and_restores_a_previous_run_moved_aside(tmp_path):
    live = tmp_path / ".results.run-0123abcd"
    live.mkdir()
    (live / suite._OWNER).write_text(f"{socket.gethostname()} {os.getpid()}\n")
    aside = tmp_path / ".results.run-89abcdef.previous"
    aside.mkdir()
    (aside / "summary.txt").write_text("the previous run")
    (tmp_path / ".results.run-notours").mkdir()  # not a run folder's name: not ours to remove
    suite._clear_stale(str(tmp_path), "results")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".results.run-0123abcd", ".results.run-notours", "results"]
    assert (tmp_path / "results" / "summary.txt").read_text() == "the previous run"
