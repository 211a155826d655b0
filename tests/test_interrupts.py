"""Interrupts end every rank at once, and keep what was measured.

Each case starts a long `osu bw` sweep under mpirun (2 ranks, --json), waits
until its rows are coming (printed live, size by size), sends one signal,
and checks within 5 s: every rank gone, the status, what rank 0 saved, and no
temporary file left beside it.

| case                | signal to | mpirun's status | ranks see | saved Result (--json)          |
|---------------------|-----------|-----------------|-----------|--------------------------------|
| SIGINT to rank 0    | rank 0    | 130             | rank 0    | incomplete, "SIGINT", N sizes  |
| SIGTERM to rank 0   | rank 0    | 143             | rank 0    | incomplete, "SIGTERM", N sizes |
| SIGINT to rank 1    | rank 1    | 130             | rank 1    | none asked of rank 1 (*)       |
| SIGTERM to mpirun   | mpirun    | 1 (Open MPI's)  | SIGTERM   | incomplete, "SIGTERM from mpirun", N sizes |
| SIGINT to mpirun    | mpirun    | 1 (Open MPI's)  | SIGTERM   | incomplete, "SIGTERM from mpirun", N sizes |
| Ctrl-C, a big run   | mpirun's group | 1          | SIGTERM   | every sample so far (a process of its own writes) |
| SIGTERM to every rank at once | each rank | 143   | each rank | incomplete, 10 trials of 10    |
| --timeout           | rank 0's own | 124          | rank 0    | --json and --csv, "time limit (--timeout)" |
| SIGHUP to rank 0    | rank 0    | 129             | rank 0    | incomplete, "SIGHUP", N sizes  |
| SIGTERM, peer SIGSTOPped | either rank | 143         | the watcher | rank 0 signalled: incomplete, "SIGTERM" |
| suite, rank 0 SIGINT| rank 0    | 130             | rank 0    | its run folder: finished Results, marked incomplete |

Open MPI 4.1's mpirun, signalled with SIGINT or SIGTERM, sends every rank
SIGCONT at once, SIGTERM 1 s later and SIGKILL 1 s after that
(odls_base_sigkill_timeout), and exits with status 1 whatever the ranks do;
so the ranks see SIGTERM and rank 0 has that second to save: it writes in
a child process of its own session, which mpirun's SIGKILL does not reach.
(*) When rank 1 alone is signalled, it gives rank 0 interrupts.PEER_WAIT
seconds (Slurm signals every rank at once), then aborts the job; rank 0,
waiting for it inside MPI, is ended by mpirun (SIGTERM) and saves an
incomplete Result, or nothing when it is killed first: either is right, a
half-written file is not.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import processes
import pytest
from fpgacomm import Result
from fpgacomm.runtime import interrupts
from fpgacomm.runtime.interrupts import PEER_WAIT, TIME_LIMIT_GRACE
from processes import GONE_WITHIN, Job, command, gone_within, rank_pids, rows_coming, start, working_in

pytestmark = pytest.mark.mpi

ENV = processes.LIVE
SWEEP = ("osu", "bw", "-m", "1:64M", "-i", "200")  # minutes in all; rows of small sizes come fast


def only_the_result_is_left(folder, name: str) -> None:
    """Nothing but `name` (if saved) in the folder: no temporary file of a write."""
    left = sorted(os.listdir(folder))
    assert left in ([], [name]), f"left behind: {left}"


@pytest.mark.parametrize(
    "target, number, status",
    [
        ("rank0", signal.SIGINT, 130),
        ("rank0", signal.SIGTERM, 143),
        ("mpirun", signal.SIGTERM, 1),
        ("mpirun", signal.SIGINT, 1),
    ],
    ids=["SIGINT-rank0", "SIGTERM-rank0", "SIGTERM-mpirun", "SIGINT-mpirun"],
)
def test_a_signal_to_rank_0_or_mpirun_ends_every_rank_and_saves_the_sizes_measured(tmp_path, target, number, status):
    job = Job(*SWEEP, "--json", "bw.json", cwd=tmp_path)
    job.wait_for(rows_coming(10))
    ended, seconds, _ = job.signal_and_wait(target, number)
    assert seconds < GONE_WITHIN, f"processes left {seconds:.1f} s after the signal"
    assert ended == status, job.stderr
    # The ranks get SIGTERM from mpirun, whatever mpirun got, and say so.
    seen = "SIGTERM from mpirun" if target == "mpirun" else signal.Signals(number).name
    saved = Result.read(tmp_path / "bw.json")
    printed = job.rows()
    assert saved.incomplete.startswith(f"interrupted by {seen}: {len(saved.rows)} of 27 sizes measured")
    assert 10 <= len(saved.rows) < 27
    # The rows printed are the rows saved, size by size (the last one unprinted when the signal came as it was).
    sizes = [row["size"] for row in saved.rows]
    assert [int(line.split()[0]) for line in printed] in (sizes, sizes[:-1])
    assert json.loads((tmp_path / "bw.json").read_text())["incomplete"] == saved.incomplete
    assert f"{saved.incomplete}; saved in bw.json, marked incomplete" in job.stderr
    only_the_result_is_left(tmp_path, "bw.json")


def test_sigint_to_rank_1_ends_every_rank_with_130(tmp_path):
    job = Job(*SWEEP, "--json", "bw.json", cwd=tmp_path)
    job.wait_for(rows_coming(10))
    ended, seconds, _ = job.signal_and_wait("rank1", signal.SIGINT)
    assert PEER_WAIT <= seconds < PEER_WAIT + GONE_WITHIN and ended == 130, job.stderr
    assert (
        f"rank 1: interrupted by SIGINT; ending every rank within {PEER_WAIT:g} s (rank 0 saves what was "
        "measured first)" in job.stderr
    )
    if (tmp_path / "bw.json").exists():  # rank 0 reached a check before mpirun ended it (see the table)
        assert Result.read(tmp_path / "bw.json").incomplete
    only_the_result_is_left(tmp_path, "bw.json")


@pytest.mark.parametrize(
    "output, number, status",
    [("bw.csv", signal.SIGINT, 130), ("bw.json", signal.SIGHUP, 129)],
    ids=["csv-SIGINT", "SIGHUP"],
)
def test_a_csv_or_sighup_saves_the_sizes_measured_too(tmp_path, output, number, status):
    """A CSV asked for is saved incomplete as JSON is; SIGHUP (a closed terminal) ends the run as SIGTERM does."""
    job = Job(*SWEEP, f"--{output.split('.')[1]}", output, cwd=tmp_path)
    job.wait_for(rows_coming(5))
    ended, seconds, _ = job.signal_and_wait("rank0", number)
    assert seconds < GONE_WITHIN and ended == status, job.stderr
    saved = Result.read(tmp_path / output)
    assert saved.incomplete.startswith(f"interrupted by {signal.Signals(number).name}: ") and len(saved.rows) >= 5
    only_the_result_is_left(tmp_path, output)


def test_a_suite_interrupted_keeps_what_it_finished_in_its_own_folder_marked_incomplete(tmp_path):
    from fpgacomm import suite

    job = Job("suite", "results", "-m", "1:4M", "-i", "50", cwd=tmp_path)
    job.wait_for(lambda lines: sum("-> " in line for line in lines) >= 2, timeout=120)  # two Results written
    ended, seconds, _ = job.signal_and_wait("rank0", signal.SIGINT)
    assert seconds < GONE_WITHIN and ended == 130, job.stderr
    [folder] = [path for path in (tmp_path / "results").iterdir()]  # no latest: no run is complete
    marker = suite.read_marker(folder)
    assert not marker["complete"] and marker["status"].startswith("incomplete: interrupted by SIGINT")
    assert (
        f"the {len(marker['files'])} files it wrote are in {Path('results') / folder.name}, marked incomplete "
        "(fpgacomm-run.txt)" in job.stderr
    )
    assert sorted(marker["files"]) == sorted(p.name for p in folder.iterdir() if p.name != suite.MARKER)
    finished = [Result.read_json(folder / name) for name in marker["files"]]
    assert [result.incomplete for result in finished[:2]] == [None, None]  # the two it finished
    assert [r.benchmark for r in finished[:2]] == ["osu_latency", "osu_latency"]
    if len(finished) > 2:  # the one interrupted: its sizes so far
        assert finished[2].incomplete.startswith("interrupted by SIGINT: ")


@pytest.mark.parametrize("stopped, signalled", [(0, 1), (1, 0)], ids=["rank0-stopped", "rank1-stopped"])
def test_sigterm_to_a_rank_whose_peer_is_stopped_ends_the_job_within_seconds(tmp_path, stopped, signalled):
    """The signalled rank waits in MPI for a peer that never answers (SIGSTOP):
    no next iteration checks the flag, so the interrupt watcher ends it
    (interrupts.GRACE later), saving on rank 0 the sizes measured."""
    job = Job("--timeout", "60", *SWEEP, "--json", "bw.json", cwd=tmp_path)
    job.wait_for(rows_coming(5))
    os.kill(job.ranks()[stopped], signal.SIGSTOP)
    time.sleep(0.5)
    ended, seconds, _ = job.signal_and_wait(f"rank{signalled}", signal.SIGTERM)
    # The watcher's grace, rank 1's wait for rank 0, then the abort.
    assert seconds < GONE_WITHIN + PEER_WAIT and ended == 143, job.stderr
    if signalled == 0:
        saved = Result.read(tmp_path / "bw.json")
        assert saved.incomplete.startswith("interrupted by SIGTERM: ") and len(saved.rows) >= 5
    else:
        assert "rank 1: interrupted by SIGTERM; ending every rank" in job.stderr
    assert "time limit" not in job.stderr


def test_the_time_limit_stops_the_sweep_and_saves_the_sizes_measured_in_json_and_csv(tmp_path):
    """--timeout asks rank 0 to stop and save, as an interrupt does, and the
    other ranks wait for its end: the sizes measured are in --json and
    --csv, marked incomplete, status 124."""
    limit = 8
    job = Job("--timeout", str(limit), *SWEEP, "--json", "bw.json", "--csv", "bw.csv", cwd=tmp_path)
    started = time.monotonic()
    status = job.process.wait(timeout=limit + TIME_LIMIT_GRACE + 30)
    assert status == 124, job.stderr
    assert time.monotonic() - started < limit + TIME_LIMIT_GRACE + 10
    saved = Result.read(tmp_path / "bw.json")
    assert saved.incomplete == f"time limit (--timeout): {len(saved.rows)} of 27 sizes measured", saved.incomplete
    assert 1 <= len(saved.rows) < 27
    as_csv = Result.read(tmp_path / "bw.csv")
    assert as_csv.incomplete == saved.incomplete and [r["size"] for r in as_csv.rows] == [r["size"] for r in saved.rows]
    for _ in range(50):  # the rows reach us through a pipe: give the reader its moment
        if len(job.rows()) >= len(saved.rows) - 1:
            break
        time.sleep(0.1)
    assert [int(line.split()[0]) for line in job.rows()] in (
        [r["size"] for r in saved.rows],
        [r["size"] for r in saved.rows][:-1],
    )
    assert f"rank 0: time limit of {limit} s exceeded (--timeout); stopping, saving what was measured" in job.stderr
    assert f"{saved.incomplete}; saved in bw.json and bw.csv, marked incomplete" in job.stderr
    assert "aborting" not in job.stderr  # ended by itself within the grace
    assert "rank 1: time limit" not in job.stderr  # rank 0's limit alone stops the run
    assert sorted(os.listdir(tmp_path)) == ["bw.csv", "bw.json"]


def test_a_suite_past_its_time_limit_marks_its_folder_and_says_where_as_its_last_line(tmp_path):
    from fpgacomm import suite

    # The full set: the quick one can end within the limit on an idle machine.
    job = Job("--timeout", "25", "suite", "results", "--full", "-m", "1:4M", "-i", "50", cwd=tmp_path)
    status = job.process.wait(timeout=120)
    assert status == 124, job.stderr
    [folder] = [path for path in (tmp_path / "results").iterdir()]
    marker = suite.read_marker(folder)
    assert marker["status"].startswith("incomplete: time limit (--timeout)"), marker
    ours = [
        line for line in job.stderr.splitlines() if line.startswith(("suite:", "fpgacomm:")) and "rank 1" not in line
    ]
    assert ours[-1] == (
        f"suite: stopped ({marker['status'][len('incomplete: '):]}); the {len(marker['files'])} "
        f"files it wrote are in {Path('results') / folder.name}, marked incomplete (fpgacomm-run.txt)"
    )


def _latency_of_millions(tmp_path, *options) -> subprocess.Popen:
    """osu latency of 150000 iterations a size, 1 B to 1 KiB, saving big.json in
    tmp_path: mpirun started in a session of its own, its outputs piped."""
    return start(
        *("osu", "latency", "-m", "1:1K", "-i", "150000", *options, "--json", "big.json"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        cwd=tmp_path,
        start_new_session=True,
    )


def _landed(tmp_path, stderr: str) -> Result:
    """big.json, once the process writing it has ended: the writer may finish after mpirun has gone (making
    and writing ~250 MB of JSON takes ~6 s on an idle machine and minutes on a loaded one; that it lands at
    all is the point, not how fast), alone in the folder."""
    assert not gone_within(lambda: working_in(tmp_path), 300), "the writing process still runs after 5 minutes"
    assert sorted(os.listdir(tmp_path)) == ["big.json"], stderr
    return Result.read_json(tmp_path / "big.json")


def test_ctrl_c_in_a_run_of_millions_of_samples_saves_them_all(tmp_path):
    """The issue's run: Ctrl-C (SIGINT to mpirun's process group) 12 s in,
    with 20 rounds rather than 10, so that 12 s fall inside the measurement
    on an idle machine too (10 rounds end in about 11 s there). mpirun gives
    the ranks SIGTERM and kills them a second later; what rank 0 measured
    is written whole by a process of its own."""
    job = _latency_of_millions(tmp_path, "-x", "10", "--rounds", "20")
    time.sleep(12)
    assert job.poll() is None
    os.killpg(job.pid, signal.SIGINT)
    _, stderr = job.communicate(timeout=30)
    saved = _landed(tmp_path, stderr)
    assert saved.incomplete.startswith("interrupted by SIGTERM from mpirun: "), stderr
    # Every size measured keeps each of its 150000 samples (how many sizes 12 s reach depends on the load).
    assert (
        saved.incomplete.endswith(f"round 1: {len(saved.samples or {})} of 11 sizes")
        or "rounds complete; round" in saved.incomplete
    ), saved.incomplete
    assert all(len(values) == 150000 for values in (saved.samples or {}).values())


@pytest.mark.parametrize("how", ["sigterm-to-rank-0", "ctrl-c-to-mpirun"])
def test_an_interrupt_while_rank_0_writes_the_finished_runs_file_leaves_it_whole(tmp_path, how):
    """Every round measured, rank 0 writing its millions of samples (seconds),
    rank 1 done: SIGTERM to rank 0 (as Slurm's scancel sends it), or Ctrl-C
    to mpirun, which then kills rank 0 within a second without a SIGTERM
    first. The file is written by a process of its own from the start, and
    lands whole: the finished run's Result, every sample of every round."""
    job = _latency_of_millions(tmp_path, "--rounds", "3")
    try:
        ranks = {}
        deadline = time.monotonic() + 120
        while len(ranks) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            ranks = rank_pids(job.pid)
        # The file being written has no name yet (O_TMPFILE): an open descriptor into the folder, "#inode
        # (deleted)", held by the writing process (rank 0's child, in a session of its own).
        while not working_in(tmp_path, holding_a_file=True) and job.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert working_in(tmp_path, holding_a_file=True), "nothing wrote big.json"
        if how == "sigterm-to-rank-0":
            os.kill(ranks[0], signal.SIGTERM)
        else:
            os.killpg(job.pid, signal.SIGINT)
        _, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    saved = _landed(tmp_path, stderr)
    assert saved.incomplete is None, saved.incomplete
    assert len(saved.samples) == 3 * 11 and all(len(values) == 150000 for values in saved.samples.values())
    if how == "sigterm-to-rank-0":
        assert "every size was measured: process " in stderr and "is still writing big.json, and finishes" in stderr


@pytest.mark.parametrize("trial", range(10))
def test_sigterm_to_every_rank_at_the_same_instant_saves_every_time(tmp_path, trial):
    """As Slurm delivers scancel --signal=TERM: rank 1 gives rank 0 its turn
    to save before it ends the job."""
    job = Job(*SWEEP, "--json", "bw.json", cwd=tmp_path)
    job.wait_for(rows_coming(3))
    ranks = job.ranks()
    for pid in (ranks[1], ranks[0]) if trial % 2 else (ranks[0], ranks[1]):
        os.kill(pid, signal.SIGTERM)
    status = job.process.wait(timeout=PEER_WAIT + GONE_WITHIN + 10)
    assert status == 143, job.stderr
    saved = Result.read(tmp_path / "bw.json")
    assert saved.incomplete.startswith("interrupted by SIGTERM: ") and len(saved.rows) >= 3
    only_the_result_is_left(tmp_path, "bw.json")


def test_a_billion_rounds_are_refused_with_the_estimate_in_under_2_s_more_than_a_bad_option(tmp_path):
    """Round orders are made one round at a time and the rounds' rows
    counted before anything runs: the refusal costs no more than mpirun's
    start-up, which a refused option (--rounds 0) measures beside it."""

    def run(rounds):
        started = time.monotonic()
        done = subprocess.run(
            command("osu", "latency", "-m", "1:8", "--rounds", rounds, ranks=2),
            capture_output=True,
            text=True,
            env=ENV,
            cwd=tmp_path,
            timeout=120,
        )
        return done, time.monotonic() - started

    baseline, baseline_seconds = run("0")
    assert baseline.returncode == 2, baseline.stderr
    refused, seconds = run("1000000000")
    assert refused.returncode == 2, refused.stderr
    assert seconds - baseline_seconds < 2.0, (seconds, baseline_seconds)
    assert "1000000000 rounds of 4 sizes: the 2 ranks on host " in refused.stderr
    assert "4e+09 rows of rounds at about 1024 bytes each" in refused.stderr
    assert "give fewer --rounds, sizes or iterations (-i), or raise the limit with --max-memory SIZE" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_rounds_whose_samples_pass_the_memory_limit_are_refused_after_the_first_round(tmp_path):
    """The issue's `--rounds 100000 -i 10000`: the rows fit, the samples of
    100000 rounds do not; the first round counts them, and the run ends
    there with the estimate, status 2."""
    done = subprocess.run(
        command("osu", "latency", "-m", "1:8", "-i", "10000", "-x", "10", "--rounds", "100000", ranks=2),
        capture_output=True,
        text=True,
        env=ENV,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "100000 rounds of 4 sizes: the 2 ranks on host " in done.stderr
    assert "4e+09 timed samples at about 80 bytes each, 4e+05 rows of rounds" in done.stderr
    assert "Traceback" not in done.stderr


def test_rounds_that_cannot_end_within_the_time_limit_say_so_after_the_first(tmp_path):
    limit = 8
    job = Job(
        "--timeout",
        str(limit),
        "osu",
        "latency",
        "-m",
        "1:8",
        "-i",
        "100",
        "-x",
        "10",
        "--rounds",
        "100000",
        "--json",
        "r.json",
        cwd=tmp_path,
    )
    assert job.process.wait(timeout=limit + TIME_LIMIT_GRACE + 30) == 124, job.stderr
    assert "fpgacomm: at the first round's speed the 99999 rounds to come need about " in job.stderr
    assert "(--timeout): the run will end incomplete; give fewer --rounds or a longer --timeout" in job.stderr
    saved = Result.read(tmp_path / "r.json")
    assert saved.incomplete.startswith("time limit (--timeout): ") and " of 100000 rounds complete" in saved.incomplete


def test_a_write_outliving_its_process_finishes_after_a_sigkill(tmp_path):
    """What mpirun does to rank 0 a second after asking it to end (SIGKILL
    to it and its process group): the write goes on in a process of its own
    session, and lands whole."""
    script = (
        f"import time; from fpgacomm.runtime import interrupts\n"
        f"def write():\n"
        f"    time.sleep(1.5)\n"
        f"    open({str(tmp_path / 'kept')!r}, 'w').write('whole')\n"
        f"try:\n"
        f"    interrupts.outliving(write, slow=lambda: print('slow', flush=True))\n"
        f"except interrupts.StillWriting as writing:\n"
        f"    print(writing, flush=True)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stdout.readline() == "slow\n"  # after interrupts.SLOW_WRITE
    os.killpg(process.pid, signal.SIGKILL)  # the process and its group, as a launcher ends a rank
    process.wait()
    deadline = time.monotonic() + 10
    while not (tmp_path / "kept").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # the file, made, gets its text at once
    assert (tmp_path / "kept").read_text() == "whole"


def test_an_interrupted_sweeps_result_is_made_in_the_writing_child_not_before_the_fork():
    """Making a sweep's Result (millions of samples merged over rounds) took
    most of the second mpirun leaves between SIGTERM and SIGKILL; made
    before the fork, a SIGKILL under load lost the whole run. Deferred, it
    is made where it is written, and its incomplete text is known at once."""
    text = "interrupted by SIGTERM: 3 of 9 sizes measured"
    made_in = []  # the pids of the processes that made it

    def make():
        made_in.append(os.getpid())
        return Result("osu_latency", {}, {}, [], {}, incomplete=text)

    stop = interrupts.interrupted(signal.SIGTERM)
    interrupts.defer_result(stop, make, text)
    assert interrupts.has_result(stop) and interrupts.incomplete(stop) == text and made_in == []
    read, write = os.pipe()
    # The child tells what it wrote and which processes made the Result (its own made_in, after the fork).
    interrupts.outliving(lambda: os.write(write, f"{stop.result.incomplete}|{made_in}|{os.getpid()}".encode()))
    os.close(write)
    with os.fdopen(read) as told:
        written, makers, child = told.read().split("|")
    assert written == text and makers == f"[{child}]" and int(child) != os.getpid()
    assert made_in == []  # the parent, which mpirun may SIGKILL at any moment, never made it
    assert getattr(interrupts.interrupted(signal.SIGINT), "result", None) is None  # nothing measured: no Result
