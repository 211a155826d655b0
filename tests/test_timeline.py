"""bench/timeline.py: the analysis of a staged-transfer timeline on hand-made rows with known answers."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import timeline  # noqa: E402


def chunk(index, enqueued, start, length, copy_done, posted, done, direction="send"):
    return {"rank": 0, "size": 8, "direction": direction, "chunk": index, "offset": 4 * index, "bytes": 4,
            "copy_enqueued": enqueued, "copy_done": copy_done, "mpi_posted": posted, "mpi_done": done,
            "queued_to_submit": 0.25 * start, "submit_to_start": 0.75 * start, "start_to_end": length}


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
    assert summary["copies"] == {"d2h": {"enqueue_to_start": pytest.approx(1.5), "start_to_end": 1.0,
                                         "on_host": 2.5, "handover": 0.0}}


def test_three_stages_at_once_count_once_as_overlap():
    # A receive's copy to the device [1, 3] beside a send's copy [0, 2] and
    # MPI [0, 4] and [1, 2]: [1, 2] has all three busy.
    rows = [chunk(0, 0.0, 0.0, 2.0, 2.0, 0.0, 4.0),
            chunk(0, 0.5, 0.5, 2.0, 3.0, 1.0, 2.0, direction="recv")]
    (summary,) = timeline.summarize(rows)
    assert summary["busy"] == {"d2h": 2.0, "mpi": 4.0, "h2d": 2.0}
    assert summary["overlap"] == pytest.approx(3.0) and summary["idle"] == 0
    # Each direction apart; the receive's copy enqueued at 0.5 minus its MPI seen done at 2 (these rows
    # need not be causal).
    assert summary["copies"]["d2h"]["handover"] == -2.0 and summary["copies"]["h2d"]["handover"] == -1.5
    assert summary["copies"]["h2d"]["enqueue_to_start"] == 0.5 and summary["copies"]["d2h"]["enqueue_to_start"] == 0


def test_the_command_reports_and_refuses_what_it_cannot_read(tmp_path, capsys):
    path = tmp_path / "timeline.json"
    path.write_text('{"rows": []}')
    assert timeline.main([str(path)]) == 2
    assert "holds no staged chunks" in capsys.readouterr().err
    assert timeline.main([str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
