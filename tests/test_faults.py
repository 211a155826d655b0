"""The fault suite: hostile and careless runs, each refused (status 2, one
message, nothing measured and nothing written) or ended cleanly.

Single-process cases run as plain subprocesses, MPI cases under mpirun with
2 ranks; the table below runs in about 3 minutes on the shared 2-core VM.
Numbered rows are the faults of the reliability report, observed after their fix. Cases already tested
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
| kill -9 of one rank of osu latency --json              | every rank ends, status != 0; rank 0 saves | as expected: lat.json incomplete, |
|                                                        |   the sizes measured, incomplete, or none  |   "interrupted by SIGTERM from mpirun" (was: none) |
| suite killed (kill -9 of mpirun and ranks) mid-run     | its folder "incomplete: running"; latest at the last whole run | as expected |
| 1 suite DIR of the user's files, then suite . there    | files intact; DIR/<UTC time>/ each, marker, DIR/latest | as expected (was: files deleted, status 0) |
| 2 suite into a mount point (a tmpfs) / `.`             | nothing renamed: written into it              | as expected (was: EBUSY after every benchmark) |
|   DIR/latest the user's own, or no symbolic links      | left alone / none, and said                   | as expected |
| 3 fabric bw / gather --fabric / fit --json: disk full  | 2, "cannot write 'F': File too large" (EFBIG, | as expected (was: status 1, internal error, |
|   (RLIMIT_FSIZE), model vcsn > /dev/full               |   as ENOSPC), text printed stands, no file    |   temporary name) |
| 3 fabric bw --json F on a full tmpfs                   | 2, "cannot write 'F': No space left on device" | as expected |
| 3 osu latency --json F, rank 0 under the limit (2 ranks)| 2 on every rank, F named, rows printed        | as expected |
| 3 osu latency --json F, F's folder removed mid-run     | 2, "cannot write 'F': No such file or directory" | as expected |
| 7 -i 99999999999999999999 / 2147483648, -W 4294967296, | 2, "the largest (smallest) value accepted is" | as expected (was: TypeError, status 1) |
|   --root=-2147483649, beff -n 3e9, --packets 1e3,      |                                            |                      |
|   gather --fabric --nodes 4,2147483648                 |                                            |                      |
| 8 fit / plot / timeline / load of "rows": "oops"       | 2, "not an fpgacomm Result ... 'rows' is str" | as expected (was: AttributeError) |
| 9 timeline direction "sideways"                        | 2, one message                             | as expected (was: KeyError) |
| 10 --json x.json --timeline ./x.json                   | 2 before measuring, nothing written        | as expected (was: the Result lost) |
| 11 osu latency H H / D D --binary /tmp (a directory)   | 2, "a directory, not a file"               | as expected (was: accepted / CL_INVALID_VALUE) |
| 12 --max-memory 0, measured and simulated              | 2, "give a size above 0", said in --help   | as expected (was: two meanings) |
| 13 timeline NaN, negative, copy done before enqueued   | 2, "which no measurement gives"            | as expected (was: "window nan ms") |
| 14 launch(2, osu.latency, nosuchkw=3)                  | TypeError itself, before any rank starts   | as expected (was: RuntimeError of interleaved tracebacks) |
| 15 plot of no rows / all NaN                           | 2, "nothing to draw"                       | as expected (was: an empty figure) |
| 17 timeline DIR, plot DIR                              | 2, "a directory, not a Result file"        | as expected (was: "no such file") |
| 4 two hosts, link down at 5 s, --timeout 14            | ends < 24 s, status != 0, host named, nothing left | test_two_hosts.py::test_a_link_that_goes_down_mid_run_ends_the_job_on_both_hosts (was: 164 s, crash) |
| 5 the same, SIGINT to mpirun at 6 s                    | mpirun ends within seconds, sizes saved    | same test (was: 55 s, nothing saved); the rank behind the link ends at its --timeout |
| 6 SIGSTOP rank 0 (or 1), SIGTERM the other             | 143 within seconds, rank 0 saves           | test_interrupts.py::test_sigterm_to_a_rank_whose_peer_is_stopped_ends_the_job_within_seconds (was: 124 after 40 s) |
| 16 SIGHUP to rank 0                                    | 129, sizes saved                           | test_interrupts.py::test_a_csv_or_sighup_saves_the_sizes_measured_too[SIGHUP] |
| --timeout 8 during an osu bw sweep, --json and --csv   | 124, the sizes measured in both, "time limit (--timeout)" | test_interrupts.py::test_the_time_limit_stops_the_sweep_and_saves_the_sizes_measured_in_json_and_csv (was: nothing saved) |
| suite past its --timeout                               | 124, marker "incomplete: time limit", last line says where | test_interrupts.py::test_a_suite_past_its_time_limit_marks_its_folder_and_says_where_as_its_last_line (was: "incomplete: running") |
| Ctrl-C 12 s into osu latency -i 150000 --rounds 10     | every sample measured saved               | test_interrupts.py::test_ctrl_c_in_a_run_of_millions_of_samples_saves_them_all (was: nothing) |
| SIGTERM to every rank at once, 10 trials               | 143, saved every time                      | test_interrupts.py::test_sigterm_to_every_rank_at_the_same_instant_saves_every_time (was: 5 of 8) |
| osu latency -m 1:8 --rounds 1000000000                 | 2 with the estimate, no slower than a bad option | test_interrupts.py::test_a_billion_rounds_are_refused_with_the_estimate_in_under_2_s_more_than_a_bad_option (was: 80 GB and growing) |
| --rounds 100000 -i 10000                               | 2 after the first round, its samples counted | test_interrupts.py::test_rounds_whose_samples_pass_the_memory_limit_are_refused_after_the_first_round (was: growing) |
| --timeout 5 compare --run 'sleep 300'                  | 124, nothing of the launch left            | test_compare_runs.py::test_the_time_limit_ends_the_launch_running_and_everything_it_started (was: sleep left running) |
| SIGTERM to compare --run of mpirun launches            | 143, no process of the campaign 5 s later  | test_compare_runs.py::test_sigterm_to_compare_ends_its_mpirun_launch_with_every_rank (was: the job ran on) |
| link down, mpirun on a third host without ranks        | ends within seconds (Open MPI's keepalive options), host named | test_two_hosts.py::test_a_link_that_goes_down_mid_run_ends_the_job_on_both_hosts[mpirun-on-a-host-without-ranks] (was: still waiting after 151 s) |
| interrupted suite (rank 0 SIGINT)                      | its Results kept in its folder, marked incomplete, said where | test_interrupts.py::test_a_suite_interrupted_keeps_what_it_finished_in_its_own_folder_marked_incomplete |
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
| SIGINT / SIGTERM to a rank or to mpirun                | (signals: tested with the interrupt path)  | test_interrupts.py   |
| under mpirun, stdout closed (| head -1)                 | Open MPI's "SIGPIPE detected", status 1    | Open MPI's own: said in README, nothing to fix |
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fpgacomm import Result, suite
from processes import rank_pids, running

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
FPGACOMM = [sys.executable, "-m", "fpgacomm"]
MPIRUN = ["mpirun", "-np", "2", "--oversubscribe"]
HOST_MEMORY = "of host memory (this rank: "
RAISE = "or raise the limit with --max-memory SIZE"

# (case, command after `fpgacomm`, ranks, extra environment, message fragments). Every
# case ends in status 2 with one message, prints no table and writes nothing.
CASES = [
    (
        "osu bw huge window",
        ["osu", "bw", "-m", "8", "-i", "2", "-W", "100000000"],
        2,
        {},
        ["osu bw: the 2 ranks on host", "would hold about 191 GiB", "1e+08 messages in flight", RAISE],
    ),
    (
        "osu bw multiple buffers",
        ["osu", "bw", "-b", "multiple", "-W", "4096", "-m", "64M:64M", "-i", "2"],
        2,
        {},
        ["osu bw: the 2 ranks", "would hold about 512 GiB", "256 GiB of buffers", RAISE],
    ),
    (
        "osu bibw huge window",
        ["osu", "bibw", "-m", "8", "-i", "2", "-W", "50000000"],
        2,
        {},
        ["osu bibw: the 2 ranks", "1e+08 messages in flight", RAISE],
    ),
    (
        "osu alltoall lowered limit",
        ["osu", "alltoall", "-m", "256M:256M", "-i", "1", "--max-memory", "1G"],
        2,
        {},
        ["osu alltoall: the 2 ranks", "more than the limit of 1 GiB (--max-memory)"],
    ),
    (
        "osu put_bw window",
        ["osu", "put_bw", "-m", "1M:1M", "-i", "2", "-W", "100000"],
        2,
        {},
        ["osu put_bw: the 2 ranks", "would hold about 391 GiB", RAISE],
    ),
    (
        "gather real blocks",
        ["gather", "--mem", "H", "--sizes", "16G", "-i", "1"],
        2,
        {},
        ["gather: the 2 ranks", "would hold about 64 GiB", "32 GiB of buffers", RAISE],
    ),
    (
        "beff real lowered limit",
        ["beff", "-m", "30", "--min-size", "30", "--max-memory", "1G"],
        2,
        {},
        ["beff: the 2 ranks", "6 GiB of buffers", "more than the limit of 1 GiB (--max-memory)"],
    ),
    (
        "overhead samples",
        ["overhead", "-m", "1:1", "-i", "1000000000"],
        2,
        {},
        ["overhead: the 2 ranks", "2e+09 timed samples", RAISE],
    ),
    (
        "devbw samples",
        ["devbw", "H", "-m", "8:8", "-i", "1000000000", "--direction", "h2d"],
        2,
        {},
        ["devbw: the 2 ranks", "2e+09 timed samples", RAISE],
    ),
    (
        "beff sim million nodes",
        ["beff", "--comm-type", "sim", "--nodes", "1000000"],
        None,
        {},
        [
            "fabric: a b_eff ring of 1000000 nodes",
            "GiB of memory (limit 8 GiB, --max-memory)",
            "--max-events N / --max-memory SIZE",
        ],
    ),
    (
        "beff sim lowered limit",
        ["beff", "--comm-type", "sim", "--nodes", "100000", "--max-memory", "100M"],
        None,
        {},
        ["fabric: a b_eff ring of 100000 nodes", "(limit 0.0977 GiB, --max-memory)"],
    ),
    (
        "fabric traffic packets",
        ["fabric", "traffic", "vcsn", "--rate", "1e6", "--packets", "1000000000"],
        None,
        {},
        ["fabric: random traffic of 1000000000 packets", "events to simulate"],
    ),
    (
        "binary that is not there",
        ["osu", "latency", "H", "H", "-m", "8", "--binary", "/nonexistent.xclbin"],
        2,
        {},
        ["cannot read device binary '/nonexistent.xclbin' (--binary)"],
    ),
    (
        "binary that is a directory, H H",
        ["osu", "latency", "H", "H", "-m", "8", "--binary", "/tmp"],
        2,
        {},
        ["cannot read device binary '/tmp' (--binary): a directory, not a file"],
    ),
    (
        "binary that is a directory, D D",
        ["osu", "latency", "D", "D", "-m", "8", "--binary", "/tmp"],
        2,
        {},
        ["cannot read device binary '/tmp' (--binary): a directory, not a file"],
    ),
    ("malformed FPGA_MAPPING", ["osu", "latency", "H", "H", "-m", "8"], 2, {"FPGA_MAPPING": "x:y"}, ["FPGA_MAPPING"]),
]


@pytest.mark.mpi
@pytest.mark.parametrize("case, argv, ranks, environment, fragments", CASES, ids=[case[0] for case in CASES])
def test_refused_before_anything_is_measured_or_written(tmp_path, case, argv, ranks, environment, fragments):
    output = tmp_path / "out.json"
    command = (MPIRUN if ranks else []) + FPGACOMM + argv + ["--json", str(output)]
    started = time.perf_counter()
    run = subprocess.run(
        command, capture_output=True, text=True, timeout=120, cwd=tmp_path, env=dict(ENV, **environment)
    )
    assert run.returncode == 2, run.stderr
    assert run.stdout == "" and "Traceback" not in run.stderr
    assert run.stderr.count("fpgacomm: error: ") == 1, run.stderr
    for fragment in fragments:
        assert fragment in run.stderr, (fragment, run.stderr)
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file
    assert time.perf_counter() - started < 60  # refused up front, not after a sweep


@pytest.mark.mpi
def test_the_limit_counts_every_rank_on_the_host_and_can_be_raised(tmp_path):
    # Each rank holds about 3.2 KiB (a 1 KiB buffer, 2 messages at 1 KiB each, 2 samples):
    # within 6 KiB alone, past it together.
    small = FPGACOMM + ["osu", "bw", "-m", "1K:1K", "-i", "2", "-x", "0", "-W", "2"]
    refused = subprocess.run(
        MPIRUN + small + ["--max-memory", "6K"], capture_output=True, text=True, timeout=120, env=ENV
    )
    assert refused.returncode == 2 and "the 2 ranks on host" in refused.stderr
    assert "would hold about 6.31 KiB" in refused.stderr
    assert "limit of 6 KiB (--max-memory)" in refused.stderr
    passed = subprocess.run(
        MPIRUN + small + ["--max-memory", "1M"], capture_output=True, text=True, timeout=120, env=ENV
    )
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


@pytest.mark.mpi
def test_kill_9_of_one_rank_ends_every_rank_and_keeps_only_a_whole_incomplete_result(tmp_path):
    output = tmp_path / "lat.json"
    mpirun = subprocess.Popen(
        MPIRUN + FPGACOMM + ["osu", "latency", "-m", "1:64", "-i", "1000000", "--json", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        cwd=tmp_path,
    )
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
    # Rank 0, waiting in MPI for the killed rank, gets mpirun's SIGTERM: it saves the sizes measured, marked
    # incomplete, when it can within mpirun's second before SIGKILL; never a fragment.
    assert [p.name for p in tmp_path.iterdir()] in ([], ["lat.json"])
    if output.exists():
        assert Result.read_json(output).incomplete.startswith("interrupted by SIGTERM from mpirun: ")


def _suite(folder, *extra, cwd=None, ranks=2):
    """`fpgacomm suite FOLDER` with the shortest sizes and counts."""
    return subprocess.run(
        MPIRUN[:2]
        + [str(ranks), "--oversubscribe"]
        + FPGACOMM
        + [
            "suite",
            str(folder),
            "-m",
            "1:64",
            "-i",
            "2",
            "-x",
            "1",
            "--beff-max-size",
            "3",
            "--beff-repetitions",
            "1",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
        cwd=cwd,
    )


def _user_files(folder) -> dict:
    """A folder of the user's own: a note and a source file in a subfolder."""
    (folder / "src").mkdir(parents=True)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "src" / "a.c").write_text("int main(void) { return 0; }\n")
    return {"notes.txt": "my notes\n", "src/a.c": "int main(void) { return 0; }\n"}


def _runs(folder) -> list:
    """The run folders fpgacomm made in `folder`, oldest first."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and suite.read_marker(p))


@pytest.mark.mpi
def test_a_suite_in_a_folder_of_the_users_files_or_in_dot_touches_none_of_them(tmp_path):
    """`suite DIR` on the user's project folder, then `suite .` there (as
    into a mount point: nothing is renamed): each run in a folder of its own
    with its marker, DIR/latest at the newest, the user's files as they were."""
    mine = _user_files(tmp_path)
    first = _suite(tmp_path)
    assert first.returncode == 0, first.stderr
    second = _suite(".", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    for name, text in mine.items():
        assert (tmp_path / name).read_text() == text
    runs = _runs(tmp_path)
    assert len(runs) == 2 and sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["latest", "notes.txt", "src"] + [run.name for run in runs]
    )
    assert os.readlink(tmp_path / "latest") == runs[1].name
    assert f"suite: writing into {runs[1].name}" in second.stdout.replace("./", "")
    marker = suite.read_marker(runs[1])
    assert marker["complete"] and marker["status"] == "complete"
    assert sorted(marker["files"]) == sorted(p.name for p in runs[1].iterdir() if p.name != suite.MARKER)
    assert {"osu_latency_H_H.json", "summary.txt", "osu_latency.png"} <= set(marker["files"])
    loaded = fpgacomm_load(str(tmp_path / "latest" / "osu_latency_*.json"))
    assert len(loaded.rows) == 2 * 7  # H H and D D, 1 B .. 64 B


def fpgacomm_load(pattern):
    from fpgacomm import load

    return load(pattern)


@pytest.mark.mpi
def test_a_suite_killed_mid_run_leaves_its_folder_marked_incomplete_and_latest_at_the_last_whole_run(tmp_path):
    complete = _suite(tmp_path)
    assert complete.returncode == 0, complete.stderr
    [previous] = _runs(tmp_path)
    mpirun = subprocess.Popen(
        MPIRUN + FPGACOMM + ["suite", str(tmp_path), "-m", "8", "-i", "1000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(_runs(tmp_path)) < 2:
        assert time.monotonic() < deadline and mpirun.poll() is None, "the suite did not start its run folder"
        time.sleep(0.2)
    time.sleep(1)
    os.killpg(mpirun.pid, signal.SIGKILL)  # mpirun and its ranks at once: nothing of theirs runs again
    mpirun.communicate(timeout=60)
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-s", str(mpirun.pid), "-r", "RSDT"], capture_output=True).stdout:
        assert time.monotonic() < deadline, "the killed ranks did not end"
        time.sleep(0.2)
    killed = [run for run in _runs(tmp_path) if run != previous]
    assert len(killed) == 1
    marker = suite.read_marker(killed[0])
    assert not marker["complete"] and marker["status"].startswith("incomplete: running")
    assert os.readlink(tmp_path / "latest") == previous.name
    assert suite.read_marker(previous)["complete"]


def test_latest_is_left_alone_where_it_is_the_users_and_said_where_links_cannot_be_made(tmp_path, monkeypatch, capsys):
    (tmp_path / "latest").mkdir()  # the user's own folder called latest
    (tmp_path / "latest" / "keep.txt").write_text("mine")
    run = suite.RunFolder(suite.run_folder(str(tmp_path)))
    run.close(None)
    suite._point_latest(str(tmp_path), run.folder)
    assert (tmp_path / "latest" / "keep.txt").read_text() == "mine"
    assert f"{tmp_path / 'latest'} is not fpgacomm's link to a run, left as it is" in capsys.readouterr().out
    (tmp_path / "latest" / "keep.txt").unlink()
    (tmp_path / "latest").rmdir()

    def no_links(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", no_links)
    suite._point_latest(str(tmp_path), run.folder)
    assert not os.path.lexists(tmp_path / "latest")
    assert "this file system has no symbolic links); this run is " in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == [os.path.basename(run.folder)]


@pytest.fixture
def mount_point(tmp_path):
    """A fresh tmpfs of 2 MiB mounted at tmp_path/mnt (root only), unmounted afterwards."""
    point = tmp_path / "mnt"
    point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(point)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root only): {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=True)


@pytest.mark.mpi
def test_a_suite_into_a_mount_point_writes_into_it(mount_point):
    run = _suite(mount_point)
    assert run.returncode == 0, run.stderr
    [folder] = _runs(mount_point)
    assert os.readlink(mount_point / "latest") == folder.name and suite.read_marker(folder)["complete"]
    assert os.path.ismount(mount_point)


def test_a_full_file_system_is_named_with_no_space_left(mount_point):
    with open(mount_point / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * 65536)
                filler.flush()
        except OSError:
            pass
    run = subprocess.run(
        FPGACOMM + ["fabric", "bw", "vcsn", "--json", str(mount_point / "bw.json")],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr == f"fpgacomm: error: cannot write '{mount_point / 'bw.json'}': No space left on device\n"
    assert "64 MiB" in run.stdout  # the table printed before stands
    assert sorted(p.name for p in mount_point.iterdir()) == ["filler"]


# ------------------------------------------------------------------ writes


def _file_limit(blocks: int):
    """A preexec_fn: files past `blocks` KiB fail with EFBIG ("File too
    large") rather than a signal, as a full disk fails with ENOSPC."""
    import resource

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (blocks * 1024, blocks * 1024))

    return limit


@pytest.mark.parametrize(
    "argv, name",
    [
        (["fabric", "bw", "vcsn", "--json"], "bw.json"),
        (["gather", "--fabric", "vcsn", "--sizes", "64K", "--json"], "gather.json"),
    ],
    ids=["fabric", "gather-fabric"],
)
def test_a_file_that_cannot_be_written_is_named_with_the_systems_reason_and_status_2(tmp_path, argv, name):
    run = subprocess.run(
        FPGACOMM + argv + [str(tmp_path / name)],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        preexec_fn=_file_limit(1),
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip().splitlines()[-1] == f"fpgacomm: error: cannot write '{tmp_path / name}': File too large"
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
    assert run.stdout  # the text printed before stands
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no file, no temporary name


def test_fit_into_a_file_that_cannot_be_written(tmp_path):
    path = _result_file(
        tmp_path / "lat.json", rows=[{"size": size, "latency_avg": 1e-6 + size / 1e9} for size in (1, 64, 4096, 65536)]
    )
    run = subprocess.run(
        FPGACOMM + ["fit", path, "--model", "hockney", "--json", str(tmp_path / "fit.json")],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        preexec_fn=_file_limit(1),
    )
    assert run.returncode == 2 and "internal error" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[-1] == f"fpgacomm: error: cannot write '{tmp_path / 'fit.json'}': File too large"
    assert "hockney fit" in run.stdout  # the fit printed before stands


def test_standard_output_on_a_full_device_is_a_usage_error():
    with open("/dev/full", "w") as full:
        run = subprocess.run(
            FPGACOMM + ["model", "vcsn"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, env=ENV
        )
    assert run.returncode == 2
    assert run.stderr == "fpgacomm: error: cannot write 'standard output': No space left on device\n"


@pytest.mark.mpi
def test_a_measured_result_that_cannot_be_written_ends_every_rank_with_status_2(tmp_path):
    """Rank 0 alone under a file size limit (a full disk), its peer free;
    shared memory left out, which the limit would stop too."""
    command = (
        f"[ $OMPI_COMM_WORLD_RANK = 0 ] && ulimit -f 1 && trap '' XFSZ; exec {sys.executable} -m fpgacomm "
        f"osu latency -m 1:64 -i 5 -x 1 --json {tmp_path / 'lat.json'}"
    )
    run = subprocess.run(
        ["mpirun", "-np", "2", "--mca", "btl", "self,tcp", "sh", "-c", command],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert run.returncode == 2, run.stderr
    assert f"fpgacomm: error: cannot write '{tmp_path / 'lat.json'}': File too large" in run.stderr
    assert "internal error" not in run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines() if line[:1].isdigit()][-1] == "64"  # the text stands
    assert list(tmp_path.iterdir()) == []


@pytest.mark.mpi
def test_a_json_whose_folder_is_removed_mid_run_is_named(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    job = subprocess.Popen(
        MPIRUN
        + FPGACOMM
        + ["osu", "latency", "-m", "1:64", "-i", "1000000", "-x", "10", "--json", str(folder / "lat.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    time.sleep(0.5)
    deadline = time.monotonic() + 60
    while not rank_pids(job.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(2)  # past the outputs' check, measuring
    folder.rmdir()
    _, err = job.communicate(timeout=300)
    assert job.returncode == 2, err
    assert f"fpgacomm: error: cannot write '{folder / 'lat.json'}': No such file or directory" in err


@pytest.mark.mpi
def test_two_outputs_on_one_path_are_refused(tmp_path):
    run = subprocess.run(
        MPIRUN
        + FPGACOMM
        + [
            "osu",
            "bw",
            "D",
            "D",
            "--path",
            "staged",
            "-m",
            "8",
            "-i",
            "2",
            "--json",
            "x.json",
            "--timeline",
            "./x.json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
        cwd=tmp_path,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("fpgacomm: error: ") == 1
    assert "--json and --timeline name the same file (./x.json): one would overwrite the other" in run.stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ options


@pytest.mark.mpi
@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["osu", "latency", "-i", "99999999999999999999"],
            "argument -i/--iterations: 99999999999999999999 is too large; the largest value accepted is 2147483647",
        ),
        (["osu", "latency", "-i", "2147483648"], "the largest value accepted is 2147483647"),
        (["osu", "bw", "-W", "4294967296"], "argument -W/--window-size: 4294967296 is too large"),
        (["osu", "reduce", "--root=-2147483649"], "the smallest value accepted is -2147483648"),
        (["beff", "-n", "3000000000"], "argument -n/--repetitions: 3000000000 is too large"),
        (["fabric", "traffic", "vcsn", "--rate", "1", "--packets", "1e3"], "invalid int value: '1e3'"),
        (
            ["gather", "--fabric", "vcsn", "--nodes", "4,2147483648"],
            "give node counts of 2 or more (at most 2147483647)",
        ),
        (
            ["osu", "latency", "--max-memory", "0"],
            "argument --max-memory: '0': give a size above 0, or leave --max-memory out for the default",
        ),
        (["fabric", "bw", "vcsn", "--max-memory", "0"], "give a size above 0, or leave --max-memory out"),
    ],
    ids=[
        "i-huge",
        "i-int32",
        "W",
        "root",
        "beff-n",
        "packets",
        "gather-nodes",
        "max-memory-measured",
        "max-memory-simulated",
    ],
)
def test_integer_options_past_the_cores_int_are_one_usage_error(tmp_path, argv, message):
    run = subprocess.run(MPIRUN + FPGACOMM + argv, capture_output=True, text=True, timeout=120, env=ENV, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert message in run.stderr and run.stderr.count(": error: ") == 1, run.stderr
    assert "internal error" not in run.stderr and run.stdout == ""


def test_max_memory_says_its_one_meaning_in_help():
    for argv in (["osu", "latency", "--help"], ["fabric", "bw", "--help"]):
        run = subprocess.run(FPGACOMM + argv, capture_output=True, text=True, timeout=60, env=ENV)
        assert "K/M/G, above 0" in " ".join(run.stdout.split())


def test_launch_raises_the_functions_own_type_error_before_any_rank_starts():
    from fpgacomm import launch, osu

    started = time.perf_counter()
    with pytest.raises(
        TypeError, match=r"^fpgacomm.benchmarks.osu.latency\(\): got an unexpected keyword argument " r"'nosuchkw'$"
    ):
        launch(2, osu.latency, nosuchkw=3)
    assert time.perf_counter() - started < 5  # no mpirun was started


# ------------------------------------------------------------------ readers


def _result_file(path, **changes):
    from fpgacomm import Result

    result = Result(
        "osu_latency",
        {"mem": ["H", "H"]},
        {},
        [{"size": 1, "latency_avg": 1e-6}, {"size": 2, "latency_avg": 2e-6}],
        {"size": "B", "latency_avg": "s"},
    )
    data = dict(result.to_dict(), **changes)
    path.write_text(json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    "command",
    [["fit", "{path}", "--model", "hockney"], ["plot", "{path}", "-o", "{tmp}/f.png"], ["timeline", "{path}"]],
)
def test_a_result_whose_rows_are_a_string_is_not_a_result(tmp_path, command):
    path = _result_file(tmp_path / "bad.json", rows="oops")
    run = subprocess.run(
        FPGACOMM + [word.format(path=path, tmp=tmp_path) for word in command],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("fpgacomm: error: ") and run.stderr.count("\n") == 1, run.stderr
    assert f"{path}" in run.stderr and "malformed fpgacomm.result/1 result: 'rows' is str" in run.stderr


def test_load_refuses_a_malformed_result_with_the_reason():
    from fpgacomm import Result

    with pytest.raises(ValueError, match="'rows' holds something other than objects"):
        Result.from_dict(dict(json.loads(json.dumps(Result("x", {}, {}, [], {}).to_dict())), rows=[1, 2]))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"direction": "sideways"}, "row 1: direction 'sideways' (a chunk is a send or a recv)"),
        ({"mpi_done": float("nan")}, "row 1: mpi_done nan (a finite number, 0 or more)"),
        ({"start_to_end": -1.0}, "row 1: start_to_end -1.0 (a finite number, 0 or more)"),
        ({"copy_done": 0.5, "copy_enqueued": 1.0}, "row 1: a copy done before it was enqueued"),
    ],
    ids=["direction", "nan", "negative", "ends-before-enqueued"],
)
def test_a_timeline_no_measurement_gives_is_refused(tmp_path, change, message):
    from fpgacomm import Result
    from fpgacomm.benchmarks.osu import TIMELINE_UNITS

    row = {
        "rank": 0,
        "size": 8,
        "direction": "send",
        "chunk": 0,
        "offset": 0,
        "bytes": 8,
        "copy_enqueued": 0.0,
        "copy_done": 2.0,
        "mpi_posted": 2.0,
        "mpi_done": 4.0,
        "queued_to_submit": 0.25,
        "submit_to_start": 0.75,
        "start_to_end": 1.0,
    }
    path = tmp_path / "tl.json"
    Result("osu_bw_timeline", {}, {}, [row, dict(row, chunk=1, **change)], TIMELINE_UNITS).write_json(path)
    run = subprocess.run(FPGACOMM + ["timeline", str(path)], capture_output=True, text=True, timeout=60, env=ENV)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert run.stderr.startswith(f"fpgacomm: error: {path}: {message}, which no measurement gives; record one with")
    assert run.stderr.count("\n") == 1


def test_timeline_and_plot_of_a_directory_say_what_it_is(tmp_path):
    """A timeline is one file: a folder is named as one. plot takes folders
    (their Result files, as compare and fit do): an empty one holds none."""
    expected = {
        "timeline": "a folder, not a file; give the file in it (or its glob)",
        "plot": "holds no Result files (JSON or CSV files written by fpgacomm, or a peer's text output)",
    }
    for argv in (["timeline", str(tmp_path)], ["plot", str(tmp_path), "-o", str(tmp_path / "f.png")]):
        run = subprocess.run(FPGACOMM + argv, capture_output=True, text=True, timeout=60, env=ENV)
        assert run.returncode == 2
        assert run.stderr == f"fpgacomm: error: {tmp_path}: {expected[argv[0]]}\n"


@pytest.mark.parametrize(
    "rows, why",
    [
        ([], "has no rows"),
        ([{"size": 1, "latency_avg": float("nan")}, {"size": 2, "latency_avg": float("nan")}], "has no finite value"),
    ],
    ids=["no-rows", "all-nan"],
)
def test_plot_of_nothing_is_one_message(tmp_path, rows, why):
    path = _result_file(tmp_path / "lat.json", rows=rows)
    run = subprocess.run(
        FPGACOMM + ["plot", path, "-o", str(tmp_path / "f.png")], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert run.returncode == 2 and not (tmp_path / "f.png").exists()
    assert (
        run.stderr == f"fpgacomm: error: nothing to draw: osu_latency ({why}); plot a Result that holds "
        "measurements\n"
    )
