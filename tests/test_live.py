"""Live output on a terminal: every command runs under mpirun with stdout
and stderr on one pseudo-terminal, as in an interactive shell, and the
terminal's screen, rendered by a terminal emulator (pyte), must hold every
row intact and no progress line at the end, though the progress line was
drawn (FPGACOMM_PROGRESS_AFTER=0: from the first step on). Under mpirun the
rows and the progress line reach the terminal through mpirun, which is
where they raced before they shared one writer (cli/live.py)."""

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from fpgacomm import Result
from fpgacomm.results.report import format_text, summary_line
from loaded import PREFIX as LOAD_WARNING
from processes import ENV, rank_pids, start
from terminal import read_terminal

pytestmark = pytest.mark.mpi

pyte = pytest.importorskip(
    "pyte", reason="the screen tests need pyte (Debian's python3-pyte; scripts/setup.sh " "installs it)"
)

COLUMNS, LINES = 240, 400


def vendors_without_emulator(folder: Path) -> dict:
    """OCL_ICD_VENDORS naming the system's OpenCL platforms but Intel's FPGA
    emulator, whose runtime writes foreign lines straight to the terminal
    (another test keeps those off our outputs): here only fpgacomm's own
    writing is under test, on the default device, PoCL."""
    folder.mkdir()
    for icd in Path("/etc/OpenCL/vendors").glob("*.icd"):
        if "fpga-emu" not in icd.name:
            (folder / icd.name).write_text(icd.read_text())
    return {"OCL_ICD_VENDORS": str(folder)}


def terminal() -> tuple[int, int]:
    """A pseudo-terminal of COLUMNS x LINES: its leader's and follower's descriptors."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    return leader, follower


def on_terminal(tmp_path: Path, *args, ranks: int = 2, stdout=None) -> tuple[list, str]:
    """Runs `mpirun -np RANKS fpgacomm ARGS` on a pseudo-terminal (stdout
    to the file `stdout` instead, when given); returns the screen's lines as
    a terminal shows them at the end, and the bytes written (decoded)."""
    leader, follower = terminal()
    process = start(
        *args,
        ranks=ranks,
        oversubscribe=True,
        env=dict(ENV, FPGACOMM_PROGRESS_AFTER="0", **vendors_without_emulator(tmp_path / "vendors")),
        stdin=subprocess.DEVNULL,
        stdout=stdout or follower,
        stderr=follower,
        cwd=tmp_path,
    )
    os.close(follower)
    written = read_terminal(leader)
    os.close(leader)
    assert process.wait(timeout=300) == 0, written.decode(errors="replace")
    screen = pyte.Screen(COLUMNS, LINES)
    pyte.ByteStream(screen).feed(written)
    lines = [line.rstrip() for line in screen.display if not line.startswith(LOAD_WARNING)]
    while lines and not lines[-1]:
        lines.pop()
    return lines, written.decode(errors="replace")


def assert_rows_intact(lines: list, text: str) -> None:
    """`text`'s lines stand on the screen one after the other, each whole."""
    expected = text.split("\n")
    assert expected[0] in lines, "\n".join(lines)
    start = lines.index(expected[0])
    assert lines[start : start + len(expected)] == expected, "\n".join(lines)


def assert_progress_drawn_and_gone(lines: list, written: str, label: str) -> None:
    assert f"\r\x1b[K{label}: " in written, "the progress line was never drawn"
    # A progress line ends in its elapsed time or the time left ("osu bw: 3 of 23 sizes measured, 12 s, about
    # 30 s left"); the command's own lines may begin with its name too ("suite: writing into ...").
    stale = re.compile(rf"^{re.escape(label)}: (.*, )?[0-9]+ s( left)?$")
    assert not [line for line in lines if stale.match(line)], "\n".join(lines)


@pytest.mark.parametrize(
    "test, args",
    [
        ("bw", ["-m", "1:1M", "-i", "10", "-x", "1", "-f"]),
        ("allreduce", ["-m", "1:64K", "-i", "10", "-x", "1"]),
    ],
)
def test_osu_rows_and_progress_share_the_terminal(tmp_path, test, args):
    lines, written = on_terminal(tmp_path, "osu", test, *args, "--json", "out.json")
    full = "-f" in args
    assert_rows_intact(lines, format_text(Result.read(tmp_path / "out.json"), full=full))
    assert_progress_drawn_and_gone(lines, written, f"osu {test}")


def test_gather_rows_and_progress_share_the_terminal(tmp_path):
    lines, written = on_terminal(
        tmp_path, "gather", "--mem", "H", "--sizes", "1K:256K", "-i", "3", "--json", "gather.json"
    )
    assert_rows_intact(lines, format_text(Result.read(tmp_path / "gather.json")))
    assert_progress_drawn_and_gone(lines, written, "gather")


def test_beff_shows_progress_then_hpcc_table(tmp_path):
    lines, written = on_terminal(tmp_path, "beff", "-m", "6", "-n", "1", "-u", "64", "-l", "8", "--json", "beff.json")
    assert_rows_intact(lines, format_text(Result.read(tmp_path / "beff.json")))
    assert "beff: ring: 7 of 7 sizes measured" in written
    assert_progress_drawn_and_gone(lines, written, "beff")


def test_suite_lines_and_progress_share_the_terminal(tmp_path):
    lines, written = on_terminal(
        tmp_path,
        "suite",
        "out",
        "--full",
        "-m",
        "8",
        "-i",
        "3",
        "-x",
        "1",
        "--beff-max-size",
        "2",
        "--beff-repetitions",
        "1",
    )
    run = tmp_path / "out" / "latest"
    names = sorted(path.stem for path in run.glob("*.json") if not path.name.startswith("fit_"))
    assert len(names) > 30
    for name in names:
        assert f"{summary_line(Result.read(run / f'{name}.json'))}    -> {name}.json" in lines, "\n".join(lines)
    assert "suite: osu_latency_H_H (1 of " in written and "suite: the simulated fabrics (" in written
    assert_progress_drawn_and_gone(lines, written, "suite")


@pytest.mark.parametrize(
    "args, ranks, label, state",
    [
        (["devbw", "-m", "1:4K", "-i", "3", "-x", "1"], 2, "devbw", "rank 1 (2 of 2) copying"),
        (
            ["gather", "--fabric", "vcsn", "--nodes", "4,9", "--sizes", "64K:128K"],
            1,
            "gather --fabric vcsn",
            "4 of 4 points simulated (9 nodes, 131072 bytes)",
        ),
    ],
    ids=["devbw", "gather-fabric"],
)
def test_runs_without_rows_so_far_say_how_far_they_are(tmp_path, args, ranks, label, state):
    lines, written = on_terminal(tmp_path, *args, "--json", "out.json", ranks=ranks)
    assert_rows_intact(lines, format_text(Result.read(tmp_path / "out.json")))
    assert f"{label}: {state}, " in written
    assert_progress_drawn_and_gone(lines, written, label)


def test_with_stdout_in_a_file_the_progress_line_stays_on_the_terminal(tmp_path):
    """stdout to a file, stderr (under mpirun: mpirun's) on the terminal:
    the progress line is drawn on stderr and erased at the end; the file
    holds the rows only."""
    with open(tmp_path / "out.txt", "w") as out:
        lines, written = on_terminal(tmp_path, "osu", "bw", "-m", "1:4M", "-i", "30", "-x", "2", stdout=out)
    assert "\r\x1b[Kosu bw: " in written and " of 23 sizes measured, " in written
    assert written.rstrip("\r\n").endswith("\r\x1b[K") and not [line for line in lines if line]  # erased at the end
    printed = (tmp_path / "out.txt").read_text()
    assert "sizes measured" not in printed and "\x1b" not in printed and len(printed.splitlines()) == 3 + 23


def test_the_clock_moves_every_second_inside_one_size_and_the_time_left_is_estimated(tmp_path):
    """As soon as the first size is done, rank 1 is stopped (SIGSTOP): the
    size going on cannot end, however fast the machine. Two captures of the
    screen 2 s apart show the progress line's clock moved, and the time
    left estimated from the sizes done."""
    leader, follower = terminal()
    process = start(
        "osu",
        "latency",
        "-m",
        "1:1K",
        "-i",
        "300000",
        "-x",
        "10",
        env=dict(ENV, **vendors_without_emulator(tmp_path / "vendors")),
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=tmp_path,
        start_new_session=True,
    )
    os.close(follower)
    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    ranks = {}

    def progress_line(until: bytes | None, seconds: float) -> str:
        stream.feed(read_terminal(leader, until=until, seconds=seconds))
        return screen.display[screen.cursor.y].rstrip()

    try:
        progress_line(b" of 11 sizes measured", 300)
        ranks = rank_pids(process.pid)
        os.kill(ranks[1], signal.SIGSTOP)
        first = progress_line(None, 1.5)  # the clock's next redraws
        second = progress_line(None, 2.0)
    finally:
        for pid in ranks.values():
            os.kill(pid, signal.SIGKILL)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        os.close(leader)
    pattern = re.compile(r"^osu latency: ([0-9]+) of 11 sizes measured, ([0-9]+) s, about ([0-9]+) s left$")
    assert pattern.match(first) and pattern.match(second), (first, second)
    assert pattern.match(first)[1] == pattern.match(second)[1] != "11", (first, second)  # inside one size
    assert int(pattern.match(second)[2]) >= int(pattern.match(first)[2]) + 1, (first, second)


def test_ctrl_c_on_the_terminal_erases_the_progress_line_and_says_ctrl_c(tmp_path):
    """A run on its own terminal (a session whose controlling terminal the
    pty is): Ctrl-C typed there reaches it as the terminal driver's SIGINT.
    The progress line is gone before the ending message, which says Ctrl-C;
    the Result so far is saved."""
    leader, follower = terminal()

    def own_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    # The second point, every stage in full, would take minutes.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fpgacomm",
            "gather",
            "--fabric",
            "dcn_ring",
            "--nodes",
            "4,2000",
            "--sizes",
            "1M",
            "--no-reuse",
            "--json",
            "gather.json",
        ],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=tmp_path,
        preexec_fn=own_terminal,
        env=dict(os.environ, **vendors_without_emulator(tmp_path / "vendors")),
    )
    os.close(follower)
    try:
        written = read_terminal(leader, until=b"point 2 of 2", seconds=120)
        time.sleep(1)
        os.write(leader, b"\x03")  # Ctrl-C, as typed
        written = read_terminal(leader, written, seconds=60)
        process.wait(timeout=60)
    finally:
        process.kill()
        os.close(leader)
    assert process.returncode == 130, written
    screen = pyte.Screen(COLUMNS, LINES)
    pyte.ByteStream(screen).feed(written)
    lines = [line.rstrip() for line in screen.display if line.strip()]
    message = (
        "fpgacomm: interrupted by SIGINT (Ctrl-C): 1 of 2 points simulated; saved in gather.json, marked " "incomplete"
    )
    assert message in lines, "\n".join(lines)
    assert not [line for line in lines if line.startswith("gather --fabric dcn_ring: ")], "\n".join(lines)
    assert Result.read(tmp_path / "gather.json").incomplete == "interrupted by SIGINT (Ctrl-C): 1 of 2 points simulated"
