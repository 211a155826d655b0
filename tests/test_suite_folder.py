"""A suite's run folder says why its run stopped before anything else is
written: making and writing the interrupted benchmark's Result so far
takes a while, and the job may be ended meanwhile (another rank's abort,
mpirun's SIGKILL a second after its SIGTERM). The final status, once
written, stays: a file written after it is listed under it."""

from pathlib import Path

from fpgacomm import suite
from fpgacomm.runtime import interrupts

STOPPED = "incomplete: time limit (--timeout)"


def touch(path: str) -> None:
    Path(path).touch()


def test_a_file_written_after_the_final_status_is_listed_and_keeps_it(tmp_path):
    run = suite.RunFolder(str(tmp_path))
    run.write("first.json", touch)
    run.close("time limit (--timeout)")
    run.write("so_far.json", touch)
    marker = suite.read_marker(tmp_path)
    assert marker["status"] == STOPPED and marker["files"] == ["first.json", "so_far.json"]


class SoFar:
    """The Result so far of an interrupted benchmark, noting the marker's status as it is written."""

    rows = [{"size": 8}]

    def __init__(self, folder: Path, seen: list):
        self.folder, self.seen = folder, seen

    def write_json(self, path: str) -> None:
        self.seen.append(suite.read_marker(self.folder)["status"])
        touch(path)


def test_a_stopped_run_marks_why_before_it_makes_and_writes_the_result_so_far(tmp_path, capsys):
    run = suite.RunFolder(str(tmp_path))
    run.running = "osu_bw_H_H"
    seen = []
    stop = interrupts.interrupted(interrupts.TIME_LIMIT)

    def make():
        seen.append(suite.read_marker(tmp_path)["status"])
        return SoFar(tmp_path, seen)

    interrupts.defer_result(stop, make, "time limit (--timeout): 1 of 3 sizes measured")
    suite._stopped(run, stop)
    assert seen == [STOPPED, STOPPED]  # when the Result so far was made, and when written
    marker = suite.read_marker(tmp_path)
    assert marker["status"] == STOPPED and marker["files"] == ["osu_bw_H_H.json"]
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"suite: stopped (time limit (--timeout)); the 1 files it wrote are in {tmp_path}, marked incomplete "
        "(fpgacomm-run.txt)"
    )
