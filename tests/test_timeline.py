"""fpgacomm timeline: the analysis of a staged-transfer timeline on hand-made rows with known answers, its
text, its figure, and what it refuses."""

import pytest
from fpgacomm import Result, cli
from fpgacomm.benchmarks.osu import TIMELINE_UNITS
from fpgacomm.figures import timeline as timeline_figure
from fpgacomm.results import timeline


def chunk(index, enqueued, start, length, copy_done, posted, done, direction="send"):
    return {
        "rank": 0,
        "size": 8,
        "direction": direction,
        "chunk": index,
        "offset": 4 * index,
        "bytes": 4,
        "copy_enqueued": enqueued,
        "copy_done": copy_done,
        "mpi_posted": posted,
        "mpi_done": done,
        "queued_to_submit": 0.25 * start,
        "submit_to_start": 0.75 * start,
        "start_to_end": length,
    }


def test_busy_overlap_idle_and_latencies_of_two_send_chunks():
    # Copies on the device [1, 2] and [2, 3], MPI [2, 4] and [3, 5]: the
    # window is [0, 5], idle [0, 1], two stages busy [2, 3].
    rows = [chunk(0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0), chunk(1, 0.0, 2.0, 1.0, 3.0, 3.0, 5.0)]
    (summary,) = timeline.summarize(rows)
    assert summary["window"] == 5.0 and summary["chunks"] == 2
    assert summary["busy"] == {"d2h": 2.0, "mpi": 3.0, "h2d": 0}
    assert summary["bytes"] == {"d2h": 8, "mpi": 8, "h2d": 0}
    assert summary["idle"] == pytest.approx(1.0) and summary["overlap"] == pytest.approx(1.0)
    assert summary["mpi_per_chunk"] == 2.0 and summary["limit"] == "mpi"
    # Copies seen done at 2 and 3 after enqueueing at 0, MPI posted as soon as each was.
    assert summary["copies"] == {
        "d2h": {"enqueue_to_start": pytest.approx(1.5), "start_to_end": 1.0, "on_host": 2.5, "handover": 0.0}
    }


def test_three_stages_at_once_count_once_as_overlap():
    # A receive's copy to the device [1, 3] beside a send's copy [0, 2] and
    # MPI [0, 4] and [1, 2]: [1, 2] has all three busy.
    rows = [chunk(0, 0.0, 0.0, 2.0, 2.0, 0.0, 4.0), chunk(0, 0.5, 0.5, 2.0, 3.0, 1.0, 2.0, direction="recv")]
    (summary,) = timeline.summarize(rows)
    assert summary["busy"] == {"d2h": 2.0, "mpi": 4.0, "h2d": 2.0}
    assert summary["overlap"] == pytest.approx(3.0) and summary["idle"] == 0
    # Each direction apart; the receive's copy enqueued at 0.5 minus its MPI seen done at 2 (these rows
    # need not be causal).
    assert summary["copies"]["d2h"]["handover"] == -2.0 and summary["copies"]["h2d"]["handover"] == -1.5
    assert summary["copies"]["h2d"]["enqueue_to_start"] == 0.5 and summary["copies"]["d2h"]["enqueue_to_start"] == 0


def write_timeline(path, rows, benchmark="osu_bw_timeline"):
    Result(benchmark, {"test": "bw"}, {}, rows, TIMELINE_UNITS).write_json(path)
    return str(path)


TWO_SENDS = [chunk(0, 0.0, 1.0, 1.0, 2.0, 2.0, 4.0), chunk(1, 0.0, 2.0, 1.0, 3.0, 3.0, 5.0)]


def test_the_command_prints_each_rank_and_size(tmp_path, capsys):
    path = write_timeline(tmp_path / "timeline.json", TWO_SENDS)
    assert cli.main(["timeline", path]) == 0
    assert capsys.readouterr().out == (
        "rank 0  size 8 B  2 chunks  window 5000.000 ms\n"
        "  d2h  busy  2000.000 ms  40.0 %      0.00 GB/s while busy\n"
        "       per copy: enqueue->start 1500000.0 us, start->end 1000000.0 us, enqueue->done on the host "
        "2500000.0 us; copy done->MPI posted 0.0 us\n"
        "  mpi  busy  3000.000 ms  60.0 %      0.00 GB/s while busy\n"
        "       per chunk: posted->done 2000000.0 us\n"
        "  two or more busy 1000.000 ms (20.0 %), all idle 1000.000 ms (20.0 %)\n"
        "  limit: mpi (busy 60.0 % of the window)\n"
    )


def test_the_figure_draws_each_stage_s_busy_share_per_rank(tmp_path):
    rows = TWO_SENDS + [{**row, "rank": 1, "direction": "recv"} for row in TWO_SENDS]
    path = write_timeline(tmp_path / "timeline.json", rows)
    figure = timeline_figure.figure(Result.read_json(path))
    shares = {(ax.get_title(), line.get_label()): list(line.get_ydata()) for ax in figure.axes for line in ax.lines}
    assert shares == {
        ("osu_bw_timeline, rank 0", "device-to-host copies"): [40.0],
        ("osu_bw_timeline, rank 0", "MPI"): [60.0],
        ("osu_bw_timeline, rank 0", "all idle"): [20.0],
        ("osu_bw_timeline, rank 1", "MPI"): [60.0],
        ("osu_bw_timeline, rank 1", "host-to-device copies"): [40.0],
        ("osu_bw_timeline, rank 1", "all idle"): [20.0],
    }
    assert cli.main(["timeline", path, "-o", str(tmp_path / "stages.png")]) == 0
    assert (tmp_path / "stages.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "make,message",
    [
        (
            lambda tmp: write_timeline(tmp / "empty.json", []),
            "empty.json: holds no staged chunks; record one with "
            "fpgacomm osu TEST D D --path staged --timeline FILE",
        ),
        (
            lambda tmp: write_timeline(tmp / "bw.json", TWO_SENDS, benchmark="osu_bw"),
            "bw.json: a Result of osu_bw, not a timeline; record one with",
        ),
        (lambda tmp: str(tmp / "missing.json"), "missing.json: no such file"),
        (
            lambda tmp: (tmp / "broken.json").write_text("{") and str(tmp / "broken.json"),
            "broken.json: not an fpgacomm " "Result",
        ),
    ],
)
def test_bad_input_is_one_message_and_status_2(tmp_path, capsys, make, message):
    assert cli.main(["timeline", make(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("fpgacomm: error: ")
